package admit

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/proto"
)

// OpenPBS's entity limits on jobs in a queue or the complex, kept by the
// server at qsub (and when a job enters a queue): max_queued and
// max_queued_res.RES count every unfinished job, queued_jobs_threshold and
// its _res form those waiting in state Q. An array counts as its subjobs.
// The refusals are OpenPBS's words, which workflow tools read ("would
// exceed queue generic's per-user limit"). The scheduler keeps the
// running forms (max_run...).

// entityCountLimits are the count limits a submission is checked against.
var entityCountLimits = []struct {
	attr, resAttr string
	queuedOnly    bool
}{
	{proto.AttrMaxQueued, proto.AttrMaxQueuedRes, false},
	{proto.AttrQueuedJobsThreshold, proto.AttrQueuedJobsThresholdRes, true},
}

// jobsIn is how many jobs j counts as: an array its subjobs not finished
// (or, queuedOnly, those waiting), any other job 1 (or 0 when not
// waiting).
func jobsIn(j *model.Job, queuedOnly bool) int {
	if j.IsArray() {
		if queuedOnly {
			return j.Array.Queued.Count()
		}
		return j.Array.Queued.Count() + j.Array.Running + j.Array.Exiting
	}
	if queuedOnly && j.State != model.StateQueued {
		return 0
	}
	return 1
}

// checkEntityLimits refuses j in queue q when it would put one of its
// entities over max_queued, queued_jobs_threshold or their _res forms of
// q or of the server (mu held). The jobs are counted as they change
// (state.Jobs.Entity); only the unfinished arrays are looked at here.
func (v View) checkEntityLimits(j *model.Job, q *model.Object) error {
	for _, scope := range []struct {
		obj   *model.Object
		queue string
	}{{q, q.Name}, {v.Server, ""}} {
		for _, lim := range entityCountLimits {
			if text, ok := scope.obj.Get(lim.attr); ok {
				l, err := entlim.Parse(text, model.EntityCount)
				if err != nil {
					continue // stored canonical: cannot happen
				}
				if err := v.overCount(j, l, scope.queue, lim.queuedOnly); err != nil {
					return err
				}
			}
			for _, r := range slices.Sorted(maps.Keys(scope.obj.Resources[lim.resAttr])) {
				l, err := entlim.Parse(scope.obj.Resources[lim.resAttr][r], model.EntityAmount(v.Table, r))
				if err != nil {
					continue
				}
				if err := v.overAmount(j, l, r, scope.queue, lim.queuedOnly); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// counted is what the jobs of entity kind/name in scope queue come to
// (mu held), without j: the jobs (or those waiting, queuedOnly), or with
// r the amount of resource r they ask for.
func (v View) counted(j *model.Job, kind entlim.Kind, name, queue, r string, queuedOnly bool) float64 {
	// share is what one job comes to (an array as its subjobs).
	share := func(o *model.Job) float64 {
		n := float64(jobsIn(o, queuedOnly))
		if r != "" {
			req, err := o.Request()
			if err != nil {
				return 0 // the state counted no amounts of it either
			}
			n *= req.Numbers[r]
		}
		return n
	}
	total := 0.0
	if n, ok := v.Jobs.Entity(queue, kind, name); ok {
		switch {
		case r == "" && queuedOnly:
			total = float64(n.Queued)
		case r == "":
			total = float64(n.Jobs)
		case queuedOnly:
			total = n.QueuedAmounts[r]
		default:
			total = n.Amounts[r]
		}
	}
	if v.Jobs.Holds(j) && !j.IsArray() && same(j, kind, name, queue) {
		total -= share(j) // j is counted already (a job moving between queues): not twice
	}
	for o := range v.Jobs.UnfinishedArrays() {
		if o != j && same(o, kind, name, queue) {
			total += share(o)
		}
	}
	return total
}

// same reports whether o counts for the entity kind/name of scope queue
// ("" the complex) (mu held).
func same(o *model.Job, kind entlim.Kind, name, queue string) bool {
	if o.Finished() || o.IsSubjob || (queue != "" && o.Queue != queue) {
		return false
	}
	switch kind {
	case entlim.User:
		return o.EUser == name
	case entlim.Group:
		return o.EGroup == name
	case entlim.Project:
		return o.Project == name
	}
	return true
}

func (v View) overCount(j *model.Job, l entlim.Limits, queue string, queuedOnly bool) error {
	for _, e := range state.Entities(j) {
		lim, ok := l.Limit(e.Kind, e.Name)
		if !ok {
			continue
		}
		n := float64(jobsIn(j, false)) + v.counted(j, e.Kind, e.Name, queue, "", queuedOnly)
		if n > lim.Value {
			return &proto.Error{Code: proto.PBSE_ENTLIMCT, Text: countRefusal(e.Kind, e.Name, lim.Generic(), queue, queuedOnly)}
		}
	}
	return nil
}

func (v View) overAmount(j *model.Job, l entlim.Limits, r, queue string, queuedOnly bool) error {
	want := func(o *model.Job) float64 {
		req, err := o.Request()
		if err != nil {
			return 0
		}
		return req.Numbers[r] * float64(jobsIn(o, false))
	}
	for _, e := range state.Entities(j) {
		lim, ok := l.Limit(e.Kind, e.Name)
		if !ok {
			continue
		}
		sum := want(j) + v.counted(j, e.Kind, e.Name, queue, r, queuedOnly)
		if sum > lim.Value {
			return &proto.Error{Code: proto.PBSE_ENTLIMRESC, Text: amountRefusal(e.Kind, e.Name, lim.Generic(), r, queue, queuedOnly)}
		}
	}
	return nil
}

// countRefusal is OpenPBS's refusal of a job over a count limit.
func countRefusal(k entlim.Kind, name string, generic bool, queue string, queuedOnly bool) string {
	where, state, ofState := "complex", "", ""
	if queue != "" {
		where = "queue " + queue
	}
	if queuedOnly {
		state, ofState = " in 'Q' state", " of jobs in 'Q' state"
	}
	switch {
	case k == entlim.Overall:
		return fmt.Sprintf("Maximum number of jobs%s already in %s", state, where)
	case generic && queue == "":
		return fmt.Sprintf("would exceed complex's per-%s limit%s", k.Word(), ofState)
	case generic && k == entlim.User:
		// OpenPBS's words: "queue generic's", whatever the queue.
		return "would exceed queue generic's per-user limit" + ofState
	case generic:
		return fmt.Sprintf("would exceed queue %s's per-%s limit%s", queue, k.Word(), ofState)
	}
	return fmt.Sprintf("Maximum number of jobs%s for %s %s already in %s", state, k.Word(), name, where)
}

// amountRefusal is OpenPBS's refusal of a job over a resource limit.
func amountRefusal(k entlim.Kind, name string, generic bool, r, queue string, queuedOnly bool) string {
	where := "complex"
	if queue != "" {
		where = "queue " + queue
	}
	tail := ""
	if queuedOnly {
		tail = " for jobs in 'Q' state"
	}
	switch {
	case k == entlim.Overall:
		return fmt.Sprintf("would exceed limit on resource %s in %s%s", r, where, tail)
	case generic:
		return fmt.Sprintf("would exceed per-%s limit on resource %s in %s%s", k.Word(), r, where, tail)
	}
	return fmt.Sprintf("would exceed %s %s's limit on resource %s in %s%s", k.Word(), name, r, where, tail)
}

// The two styles of limits, as OpenPBS has them: the old attributes and
// the entity limits may not both be set (on the server or any queue),
// for they would count the same jobs twice over different rules.
var (
	oldStyleLimits = []string{proto.AttrMaxRunning, proto.AttrMaxUserRun, proto.AttrMaxGroupRun,
		proto.AttrMaxUserRunSoft, proto.AttrMaxGroupRunSoft, proto.AttrMaxUserRes, proto.AttrMaxGroupRes,
		proto.AttrMaxUserResSoft, proto.AttrMaxGroupResSoft, proto.AttrMaxQueuable, proto.AttrMaxUserQueuable}
	newStyleLimits = []string{proto.AttrMaxRun, proto.AttrMaxRunSoft, proto.AttrMaxRunRes, proto.AttrMaxRunResSoft,
		proto.AttrMaxQueued, proto.AttrMaxQueuedRes, proto.AttrQueuedJobsThreshold, proto.AttrQueuedJobsThresholdRes}
)

// CheckLimitStyles refuses setting a limit of one style while one of the
// other is set anywhere (mu held).
func (v View) CheckLimitStyles(attrs []proto.Attr) error {
	for _, a := range attrs {
		var other []string
		switch {
		case slices.Contains(oldStyleLimits, a.Name):
			other = newStyleLimits
		case slices.Contains(newStyleLimits, a.Name):
			other = oldStyleLimits
		default:
			continue
		}
		objs := []*model.Object{v.Server}
		for _, q := range v.Queues.All() {
			objs = append(objs, q)
		}
		for _, o := range objs {
			for _, name := range other {
				_, plain := o.Attrs[name]
				if plain || len(o.Resources[name]) > 0 {
					where := "the server"
					if o != v.Server {
						where = "queue " + o.Name
					}
					return proto.Errorf(proto.PBSE_MIXENTLIMS, "(%s cannot be set while %s has %s: old-style limits (max_running, max_user_run, max_user_res...) and entity limits (max_run, max_queued...) cannot be mixed)", a.FullName(), where, name)
				}
			}
		}
	}
	return nil
}
