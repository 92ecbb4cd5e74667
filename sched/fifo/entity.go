package fifo

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/sched/core"
)

// OpenPBS's entity limits on running jobs (max_run, max_run_res.RES and
// their soft forms), kept like the older max_user_run family: a job waits
// while starting it would put its user, group, project or all jobs of
// the server or queue over a limit, with the comment OpenPBS's scheduler
// writes for it.

// entityOver names why starting (or keeping, for a running job) j would
// break one of l's limits in queue ("" the server), or "" when none.
func (cx *Context) entityOver(l core.EntityLimits, j *core.Job, queue string) string {
	why, _ := cx.entityBreach(l, j, queue)
	return why
}

// entityBreach is entityOver with the entity whose limit j breaks.
func (cx *Context) entityBreach(l core.EntityLimits, j *core.Job, queue string) (string, entity) {
	if !l.Set() {
		return "", entity{}
	}
	c := &cx.count().all
	if queue != "" {
		if c = cx.count().queue[queue]; c == nil {
			c = newCounter()
		}
	}
	add := int64(1)
	if j.Running() {
		add = 0
	}
	for _, e := range entitiesOf(j) {
		if lim, ok := l.Run.Limit(e.kind, e.name); ok {
			if float64(c.jobs(e.kind, e.name)+add) > lim.Value {
				return runRefusal(e.kind, e.name, lim.Generic(), queue), e
			}
		}
		for _, r := range slices.Sorted(maps.Keys(l.RunRes)) {
			lim, ok := l.RunRes[r].Limit(e.kind, e.name)
			if !ok {
				continue
			}
			held := c.held(e.kind, e.name, r)
			if !j.Running() {
				want, _ := j.RequestNumber(r)
				held += want
			}
			if held > lim.Value {
				return runResRefusal(e.kind, e.name, lim.Generic(), r, queue), e
			}
		}
	}
	return "", entity{}
}

// entityStatus is the NotNow of a max_run or max_run_res breach: of an
// entity limit (Status.Entity) unless the limit is the overall one.
func entityStatus(plugin, why string, e entity) core.Status {
	if e.kind == entlim.Overall {
		return core.NotNowf(plugin, "%s", why)
	}
	return core.EntityNotNow(plugin, "%s", why)
}

// sharesEntity reports whether running job v counts toward entity e's
// limits (preemption may lift a limit j breaks by suspending v).
func sharesEntity(v *core.Job, e entity) bool {
	switch e.kind {
	case entlim.User:
		return v.Owner == e.name
	case entlim.Group:
		return v.Group == e.name
	case entlim.Project:
		return v.Project == e.name
	}
	return true
}

type entity struct {
	kind entlim.Kind
	name string
}

func entitiesOf(j *core.Job) []entity {
	return []entity{{entlim.User, j.Owner}, {entlim.Group, j.Group}, {entlim.Project, j.Project}, {entlim.Overall, ""}}
}

// jobs is how many running jobs the entity has.
func (k *counter) jobs(kind entlim.Kind, name string) int64 {
	switch kind {
	case entlim.User:
		return k.byUser[name]
	case entlim.Group:
		return k.byGroup[name]
	case entlim.Project:
		return k.byProject[name]
	}
	return k.total
}

// held is what the entity's running jobs hold of r.
func (k *counter) held(kind entlim.Kind, name, r string) float64 {
	switch kind {
	case entlim.User:
		return k.userRes[name][r]
	case entlim.Group:
		return k.groupRes[name][r]
	case entlim.Project:
		return k.projectRes[name][r]
	}
	return k.allRes[r]
}

// runRefusal is OpenPBS's comment for a job held back by max_run.
func runRefusal(k entlim.Kind, name string, generic bool, queue string) string {
	if queue == "" {
		switch {
		case k == entlim.Overall:
			return "Server job limit has been reached."
		case generic && k == entlim.User:
			return "User has reached server running job limit."
		case generic && k == entlim.Group:
			return "Group has reached server running limit."
		case generic:
			return "Project has reached server running limit."
		}
		return fmt.Sprintf("Server job limit reached for %s %s", k.Word(), name)
	}
	switch {
	case k == entlim.Overall:
		return fmt.Sprintf("Queue %s job limit has been reached.", queue)
	case generic && k == entlim.User:
		return fmt.Sprintf("User has reached queue %s running job limit.", queue)
	case generic && k == entlim.Group:
		return fmt.Sprintf("Group has reached queue %s running limit.", queue)
	case generic:
		return fmt.Sprintf("Project has reached queue %s's running limit.", queue)
	}
	return fmt.Sprintf("Queue %s job limit reached for %s %s", queue, k.Word(), name)
}

// runResRefusal is OpenPBS's comment for a job held back by max_run_res.
func runResRefusal(k entlim.Kind, name string, generic bool, r, queue string) string {
	where := "complex"
	if queue != "" {
		where = "queue " + queue
	}
	switch {
	case k == entlim.Overall:
		return fmt.Sprintf("would exceed overall limit on resource %s in %s", r, where)
	case generic && queue == "":
		return fmt.Sprintf("Server per-%s limit reached on resource %s", k.Word(), r)
	case generic:
		return fmt.Sprintf("Queue %s per-%s limit reached on resource %s", queue, k.Word(), r)
	}
	return fmt.Sprintf("would exceed %s %s's limit on resource %s in %s", k.Word(), name, r, where)
}
