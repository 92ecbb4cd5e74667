package fifo

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// TestEntityLimits: OpenPBS's max_run and max_run_res (issue 30) hold a
// job back with OpenPBS's comment, per user, group, project, named or
// generic, and overall, on the server or a queue; their soft forms rank
// jobs for preemption as the older soft limits do.
func TestEntityLimits(t *testing.T) {
	t.Parallel()
	// u runs job 1 (2 cpus of n1, project proj1); n2 is free.
	base := func(attrs ...proto.Attr) *world {
		w := newWorld().node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).node("n2", 4, "free").
			job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true), a("project", "proj1"))
		w.server.Attrs = append(w.server.Attrs, attrs...)
		return w
	}
	onQueue := func(w *world, attrs ...proto.Attr) *world {
		w.queues[0].Attrs = append(w.queues[0].Attrs, attrs...)
		return w
	}
	next := func(w *world) *world { return w.job(2, "Q", "workq", "u", "1:ncpus=2", a("project", "proj1")) }
	for _, tt := range []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"server, every user", next(base(a("max_run", "[u:PBS_GENERIC=1]"))), Inputs{}, []string{"comment 2 User has reached server running job limit."}},
		{"server, a named user over the generic", next(base(a("max_run", "[u:PBS_GENERIC=1],[u:u=2]"))), Inputs{}, []string{"run 2 n1"}},
		{"server, the named user", next(base(a("max_run", "[u:u=1]"))), Inputs{}, []string{"comment 2 Server job limit reached for user u"}},
		{"server, another user's limit", next(base(a("max_run", "[u:v=1]"))), Inputs{}, []string{"run 2 n1"}},
		{"server, overall", next(base(a("max_run", "[o:PBS_ALL=1]"))), Inputs{}, []string{"comment 2 Server job limit has been reached."}},
		{"server, a project", next(base(a("max_run", "[p:proj1=1]"))), Inputs{}, []string{"comment 2 Server job limit reached for project proj1"}},
		{"queue, every group", next(onQueue(base(), a("max_run", "[g:PBS_GENERIC=1]"))), Inputs{}, []string{"comment 2 Group has reached queue workq running limit."}},
		{"queue, every project", next(onQueue(base(), a("max_run", "[p:PBS_GENERIC=1]"))), Inputs{}, []string{"comment 2 Project has reached queue workq's running limit."}},
		{"queue, overall", next(onQueue(base(), a("max_run", "[o:PBS_ALL=1]"))), Inputs{}, []string{"comment 2 Queue workq job limit has been reached."}},
		{"server, cpus of every user", next(base(r("max_run_res", "ncpus", "[u:PBS_GENERIC=3]"))), Inputs{}, []string{"comment 2 Server per-user limit reached on resource ncpus"}},
		{"server, cpus of the named user", next(base(r("max_run_res", "ncpus", "[u:u=3]"))), Inputs{}, []string{"comment 2 would exceed user u's limit on resource ncpus in complex"}},
		{"server, cpus within the limit", next(base(r("max_run_res", "ncpus", "[u:u=4]"))), Inputs{}, []string{"run 2 n1"}},
		{"queue, overall cpus", next(onQueue(base(), r("max_run_res", "ncpus", "[o:PBS_ALL=3]"))), Inputs{}, []string{"comment 2 would exceed overall limit on resource ncpus in queue workq"}},
		{"soft: the user over it is preempted by another user's normal job",
			func() *world {
				w := fullWorld()
				w.server.Attrs = append(w.server.Attrs, a("max_run_soft", "[u:PBS_GENERIC=1]"))
				return w.job(3, "Q", "workq", "v", "1:ncpus=2")
			}(),
			preemptOn("express_queue, normal_jobs, server_softlimits", ""), []string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"an express job of the user preempts the user's normal job to stay within max_run",
			func() *world {
				w := newWorld().queue("express", "Execution", true, a("Priority", "200")).node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).node("n2", 4, "free").
					job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true))
				w.server.Attrs = append(w.server.Attrs, a("max_run", "[u:PBS_GENERIC=1]"))
				return w.job(2, "Q", "express", "u", "1:ncpus=2")
			}(),
			preemptOn("", ""), []string{"preempt 1 SCR for 2", "run 2 n1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcome(tt.w.run(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
