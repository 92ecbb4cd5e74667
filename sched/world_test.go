package sched

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched/core"
)

func status(id string, attrs ...string) proto.Status {
	st := proto.Status{Name: id}
	for i := 0; i+1 < len(attrs); i += 2 {
		name, res, _ := strings.Cut(attrs[i], ".")
		st.Attrs = append(st.Attrs, proto.Attr{Name: name, Resource: res, Value: attrs[i+1]})
	}
	return st
}

func freeNode(name string, ncpus, assigned float64) *core.Node {
	return &core.Node{Name: name, Avail: core.Amounts{"ncpus": ncpus}, Assigned: core.Amounts{"ncpus": assigned}}
}

// TestExpandArrays: an array's parent becomes its waiting subjobs, as many
// as the free cpus hold plus one, within max_run_subjobs, skipping those
// that are jobs of their own; a held array gives none.
func TestExpandArrays(t *testing.T) {
	t.Parallel()
	array := func(id, state, holds, remaining, maxRun string) proto.Status {
		a := []string{"job_state", state, "Hold_Types", holds, "array", "True", "array_indices_remaining", remaining,
			"Resource_List.select", "1:ncpus=2", "Resource_List.ncpus", "2"}
		if maxRun != "" {
			a = append(a, "max_run_subjobs", maxRun)
		}
		return status(id, a...)
	}
	live := func(id, state string) proto.Status {
		parent, _, _ := strings.Cut(id, "[")
		return status(id, "job_state", state, "array_id", parent+"[].srv", "Resource_List.select", "1:ncpus=2")
	}
	for _, c := range []struct {
		name  string
		jobs  []proto.Status
		nodes []*core.Node
		want  string
	}{
		{"free cpus plus one", []proto.Status{array("1[].srv", "Q", "n", "1-100", "")},
			[]*core.Node{freeNode("a", 4, 0), freeNode("b", 4, 2)}, "1[1].srv 1[2].srv 1[3].srv 1[4].srv"},
		{"no free cpus: the one backfilling reserves for", []proto.Status{array("1[].srv", "B", "n", "5-9", "")},
			[]*core.Node{freeNode("a", 4, 4)}, "1[5].srv"},
		{"held", []proto.Status{array("1[].srv", "H", "u", "1-3", "")}, []*core.Node{freeNode("a", 8, 0)}, ""},
		{"begun and held", []proto.Status{array("1[].srv", "B", "u", "1-3", "")}, []*core.Node{freeNode("a", 8, 0)}, ""},
		{"none left", []proto.Status{array("1[].srv", "B", "n", "-", "")}, []*core.Node{freeNode("a", 8, 0)}, ""},
		{"max_run_subjobs counts those running",
			[]proto.Status{array("1[].srv", "B", "n", "2-9", "3"), live("1[1].srv", "R")},
			[]*core.Node{freeNode("a", 16, 2)}, "1[2].srv 1[3].srv 1[1].srv"},
		{"a subjob queued on its own is not made twice",
			[]proto.Status{array("1[].srv", "Q", "n", "1-3", ""), live("1[2].srv", "Q"), status("7.srv", "job_state", "Q")},
			[]*core.Node{freeNode("a", 6, 0)}, "1[1].srv 1[3].srv 1[2].srv 7.srv"},
	} {
		jobs := make([]*core.Job, len(c.jobs))
		for i := range c.jobs {
			jobs[i] = NewCoreJob(c.jobs[i])
		}
		var got []string
		for _, j := range expandArrays(jobs, c.nodes) {
			got = append(got, j.ID)
			if strings.Contains(j.ID, "[]") {
				t.Errorf("%s: the parent %s is a job of the world", c.name, j.ID)
			}
			if j.FromArray != "" && (j.State != core.JobQueued || j.FromArray != "1[].srv" || j.Seq != 1) {
				t.Errorf("%s: made subjob %s: state %c array %q seq %d", c.name, j.ID, j.State, j.FromArray, j.Seq)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%s: %v, want %s", c.name, got, c.want)
		}
	}
}

// A shrink-to-fit job's bounds reach the typed job: queued, its walltime
// is to be chosen; running, it has the one its start chose.
func TestCoreJobShrinkToFit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		st       proto.Status
		min, max time.Duration
		stf      bool
	}{
		{"queued", status("1.srv", "job_state", "Q", "Resource_List.select", "1:ncpus=1", "Resource_List.min_walltime", "00:10:00", "Resource_List.max_walltime", "10:00:00"),
			10 * time.Minute, 10 * time.Hour, true},
		{"no max_walltime", status("2.srv", "job_state", "Q", "Resource_List.select", "1:ncpus=1", "Resource_List.min_walltime", "600"),
			10 * time.Minute, 0, true},
		{"min_walltime 0: any", status("3.srv", "job_state", "Q", "Resource_List.select", "1:ncpus=1", "Resource_List.min_walltime", "0"),
			time.Second, 0, true},
		{"running with its chosen walltime", status("4.srv", "job_state", "R", "Resource_List.select", "1:ncpus=1", "Resource_List.min_walltime", "00:10:00", "Resource_List.walltime", "00:30:00"),
			10 * time.Minute, 0, false},
		{"a plain job", status("5.srv", "job_state", "Q", "Resource_List.select", "1:ncpus=1", "Resource_List.walltime", "00:30:00"), 0, 0, false},
	} {
		j := NewCoreJob(c.st)
		if j.MinWalltime != c.min || j.MaxWalltime != c.max || j.ShrinkToFit() != c.stf {
			t.Errorf("%s: min %v max %v shrink-to-fit %v; want %v %v %v", c.name, j.MinWalltime, j.MaxWalltime, j.ShrinkToFit(), c.min, c.max, c.stf)
		}
	}
}
