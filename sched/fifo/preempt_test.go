package fifo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fairshare"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// preemptOn is preemption with OpenPBS's defaults (express_queue,
// normal_jobs; SCR; an express queue from priority 150), order and prio
// as given when not empty.
func preemptOn(prio, order string) Inputs {
	p := &Preemption{QueuePrio: 150, Prio: schedpriv.DefaultPreemptPrio, Order: schedpriv.DefaultPreemptOrder}
	if prio != "" {
		p.Prio, _ = schedpriv.ParsePreemptPrio(prio)
	}
	if order != "" {
		p.Order, _ = schedpriv.ParsePreemptOrder(order)
	}
	return Inputs{Settings: Settings{Preempt: p}}
}

// ago is a stime that many seconds before now.
func ago(secs int) proto.Attr { return a("stime", strconv.FormatInt(now.Unix()-int64(secs), 10)) }

// onNode makes a job running on node with ncpus (exec_vnode).
func onNode(node string, ncpus int) proto.Attr {
	return a("exec_vnode", "("+node+":ncpus="+strconv.Itoa(ncpus)+")")
}

func rerunable(yes bool) proto.Attr {
	if yes {
		return a("Rerunable", "True")
	}
	return a("Rerunable", "False")
}

// fullWorld has two 2-cpu nodes, each held by a normal job (1 on n1,
// started 100 s ago; 2 on n2, started 50 s ago; both rerunnable, an hour
// of walltime), and an express queue (priority 200) beside workq.
func fullWorld(extra ...proto.Attr) *world {
	wall := r("Resource_List", "walltime", "01:00:00")
	return newWorld().queue("express", "Execution", true, a("Priority", "200")).
		node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).node("n2", 2, "free", r("resources_assigned", "ncpus", "2")).
		job(1, "R", "workq", "u", "1:ncpus=2", append([]proto.Attr{wall, ago(100), onNode("n1", 2), rerunable(true)}, extra...)...).
		job(2, "R", "workq", "u", "1:ncpus=2", append([]proto.Attr{wall, ago(50), onNode("n2", 2), rerunable(true)}, extra...)...)
}

func TestPreemption(t *testing.T) {
	t.Parallel()
	express := func(w *world, seq int, sel string) *world { return w.job(seq, "Q", "express", "x", sel) }
	for _, tt := range []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"an express job preempts the last started normal job, by the first method",
			express(fullWorld(), 3, "1:ncpus=2"), preemptOn("", ""),
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"preemption off: it waits",
			express(fullWorld(), 3, "1:ncpus=2"), Inputs{},
			[]string{"comment 3 " + cNodes}},
		{"only the victims needed: one cpu from the last started",
			express(fullWorld(), 3, "1:ncpus=1"), preemptOn("", ""),
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"both jobs when it needs both nodes",
			express(fullWorld(), 3, "2:ncpus=2"), preemptOn("", ""),
			[]string{"preempt 2 SCR for 3", "preempt 1 SCR for 3", "run 3 n1+n2"}},
		{"a normal job preempts nobody (equal rank)",
			fullWorld().job(3, "Q", "workq", "u", "1:ncpus=2"), preemptOn("", ""),
			[]string{"comment 3 " + cNodes}},
		{"an express job does not preempt an express job of its queue (equal rank)",
			newWorld().queue("express", "Execution", true, a("Priority", "200")).node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).
				job(1, "R", "express", "u", "1:ncpus=2", ago(10), onNode("n1", 2), rerunable(true)).job(2, "Q", "express", "x", "1:ncpus=2"),
			preemptOn("", ""), []string{"comment 2 " + cNodes}},
		{"a higher express queue preempts a lower one",
			newWorld().queue("express", "Execution", true, a("Priority", "200")).queue("urgent", "Execution", true, a("Priority", "300")).
				node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).
				job(1, "R", "express", "u", "1:ncpus=2", ago(10), onNode("n1", 2), rerunable(true)).job(2, "Q", "urgent", "x", "1:ncpus=2"),
			preemptOn("", ""), []string{"preempt 1 SCR for 2", "run 2 n1"}},
		{"order R: a job not rerunnable is not a victim",
			express(fullWorld(rerunable(false)), 3, "1:ncpus=2"), preemptOn("", "R"),
			[]string{"comment 3 " + cNodes}},
		{"order SCR: a job not rerunnable is suspended or checkpointed",
			express(fullWorld(rerunable(false)), 3, "1:ncpus=2"), preemptOn("", ""),
			[]string{"preempt 2 SC for 3", "run 3 n2"}},
		{"checkpoint n: not checkpointed",
			express(fullWorld(a("Checkpoint", "n")), 3, "1:ncpus=2"), preemptOn("", "CR"),
			[]string{"preempt 2 R for 3", "run 3 n2"}},
		{"percentages of walltime left choose the methods",
			express(fullWorld(), 3, "1:ncpus=2"), preemptOn("", "R 99 S"),
			[]string{"preempt 2 S for 3", "run 3 n2"}}, // 50 s of an hour used: 98% left
		{"the lowest rank first: a job over its fair share before the last started",
			express(newWorld().queue("express", "Execution", true, a("Priority", "200")).
				node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).node("n2", 2, "free", r("resources_assigned", "ncpus", "2")).
				job(1, "R", "workq", "hog", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true)).
				job(2, "R", "workq", "light", "1:ncpus=2", ago(50), onNode("n2", 2), rerunable(true)), 3, "1:ncpus=2"),
			withHog(preemptOn("express_queue, normal_jobs, fairshare", "")),
			[]string{"preempt 1 SCR for 3", "run 3 n1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(tt.w.run(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Soft limits (max_user_run_soft, max_group_run_soft on a queue or the
// server): every job of a user or group over one ranks at
// queue_softlimits or server_softlimits, below normal_jobs when
// preempt_prio lists it so, else as a normal job; a queued job ranks as
// it would once started.
func TestPreemptionSoftLimits(t *testing.T) {
	t.Parallel()
	queueSoft := func(name, v string) *world {
		w := fullWorld()
		w.queues[0].Attrs = append(w.queues[0].Attrs, a(name, v))
		return w
	}
	serverSoft := func(name, v string) *world {
		w := fullWorld()
		w.server.Attrs = append(w.server.Attrs, a(name, v))
		return w
	}
	listed := preemptOn("express_queue, normal_jobs, server_softlimits, queue_softlimits", "")
	for _, tt := range []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"another user's job preempts the last started job of a user over the queue's soft limit",
			queueSoft("max_user_run_soft", "1").job(3, "Q", "workq", "v", "1:ncpus=2"), listed,
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"over the server's group soft limit",
			serverSoft("max_group_run_soft", "1").job(3, "Q", "workq", "v", "1:ncpus=2"), listed,
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"softlimits not in preempt_prio: a job over them counts as normal",
			queueSoft("max_user_run_soft", "1").job(3, "Q", "workq", "v", "1:ncpus=2"), preemptOn("", ""),
			[]string{"comment 3 " + cNodes}},
		{"at the limit is not over it",
			queueSoft("max_user_run_soft", "2").job(3, "Q", "workq", "v", "1:ncpus=2"), listed,
			[]string{"comment 3 " + cNodes}},
		{"the user's own next job would be over too: equal rank, nobody preempted",
			queueSoft("max_user_run_soft", "1").job(3, "Q", "workq", "u", "1:ncpus=2"), listed,
			[]string{"comment 3 " + cNodes}},
		{"the group's limit counts the group, not the user",
			serverSoft("max_group_run_soft", "2").job(3, "Q", "workq", "v", "1:ncpus=2"), listed,
			[]string{"comment 3 " + cNodes}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(tt.w.run(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Run limits (max_running, max_user_run, max_group_run on the server or
// a queue) are lifted by preemption as OpenPBS does: the job preempts
// running jobs of a lower rank that count toward the limit it is at, the
// fewest needed, and never one of equal rank.
func TestPreemptionForRunLimits(t *testing.T) {
	t.Parallel()
	server := func(w *world, attrs ...proto.Attr) *world {
		w.server.Attrs = append(w.server.Attrs, attrs...)
		return w
	}
	// spare is fullWorld with a third node, free: room is not what
	// holds a job back.
	spare := func() *world { return fullWorld().node("n3", 2, "free") }
	express := func(w *world, user string) *world { return w.job(3, "Q", "express", user, "1:ncpus=2") }
	for _, tt := range []struct {
		name string
		w    *world
		want []string
	}{
		{"max_running: the last started normal job goes though a node is free",
			express(server(spare(), a("max_running", "2")), "x"),
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"the victim frees both the limit and the room",
			express(server(fullWorld(), a("max_running", "2")), "x"),
			[]string{"preempt 2 SCR for 3", "run 3 n2"}},
		{"max_user_run: only the user's own job counts toward it",
			func() *world {
				w := server(newWorld().queue("express", "Execution", true, a("Priority", "200")), a("max_user_run", "1")).
					node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).node("n2", 2, "free", r("resources_assigned", "ncpus", "2")).node("n3", 2, "free")
				w.job(1, "R", "workq", "x", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true))
				w.job(2, "R", "workq", "u", "1:ncpus=2", ago(50), onNode("n2", 2), rerunable(true))
				return express(w, "x")
			}(),
			[]string{"preempt 1 SCR for 3", "run 3 n1"}},
		{"a queue's limit: its jobs count, the job runs beside them",
			func() *world {
				w := spare()
				w.queues[1].Attrs = append(w.queues[1].Attrs, a("max_running", "1"))
				w.job(4, "R", "express", "y", "1:ncpus=1", ago(10), onNode("n3", 1), rerunable(true))
				w.nodes[2].Attrs = append(w.nodes[2].Attrs, r("resources_assigned", "ncpus", "1"))
				return w.job(3, "Q", "express", "x", "1:ncpus=1")
			}(),
			[]string{"comment 3 " + cQueueLimit}}, // job 4 is of equal rank: never a victim
		{"equal rank: a normal job waits at the limit",
			server(spare(), a("max_running", "2")).job(3, "Q", "workq", "x", "1:ncpus=2"),
			[]string{"comment 3 " + cServerLimit}},
		{"preemption off: it waits at the limit",
			express(server(spare(), a("max_running", "2")), "x"),
			nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := preemptOn("", "")
			want := tt.want
			if want == nil {
				in, want = Inputs{}, []string{"comment 3 " + cServerLimit}
			}
			got := outcome(tt.w.run(in))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, want)
			}
		})
	}
}

// A job being requeued (substate 60) frees its node soon: the express job
// waits for it instead of preempting another.
func TestPreemptionWaitsForLeaving(t *testing.T) {
	t.Parallel()
	w := fullWorld()
	w.jobs[0].Attrs = append(w.jobs[0].Attrs, a("substate", "60"))
	w.job(3, "Q", "express", "x", "1:ncpus=2")
	got := outcome(w.run(preemptOn("", "")))
	if want := []string{"comment 3 " + strings.TrimPrefix(core.CommentPreemptWait, notRunning)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("decisions\n got %q\nwant %q", got, want)
	}
}

// A job suspended by preemption (S, substate 45) holds nothing: it
// resumes when its own chunks are free, before queued jobs of its rank,
// and otherwise stays suspended without a new comment; so even with
// preemption turned off since.
func TestResumePreempted(t *testing.T) {
	t.Parallel()
	suspended := func(w *world) *world {
		return w.job(1, "S", "workq", "u", "1:ncpus=2", a("substate", "45"), ago(100), onNode("n1", 2),
			r("Resource_List", "walltime", "01:00:00"), a("comment", "Job preempted by suspension"))
	}
	for _, in := range []Inputs{preemptOn("", ""), {}} {
		w := suspended(newWorld().node("n1", 2, "free")).job(2, "Q", "workq", "u", "1:ncpus=2")
		if got, want := outcome(w.run(in)), []string{"resume 1 n1", "comment 2 " + cNodes}; !reflect.DeepEqual(got, want) {
			t.Errorf("preempt %v: free node: %q, want %q", in.Settings.Preempt != nil, got, want)
		}
		w = suspended(newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "2"))).
			job(3, "R", "express", "x", "1:ncpus=2", ago(10), onNode("n1", 2))
		if got := outcome(w.run(in)); len(got) != 0 {
			t.Errorf("preempt %v: busy node: %q, want nothing", in.Settings.Preempt != nil, got)
		}
		// Its node free, but the server at max_running (it may have
		// been preempted to lift that limit): it stays suspended.
		w = suspended(newWorld().node("n1", 2, "free").node("n2", 2, "free", r("resources_assigned", "ncpus", "2")))
		w.server.Attrs = append(w.server.Attrs, a("max_running", "1"))
		w.job(3, "R", "express", "x", "1:ncpus=2", ago(10), onNode("n2", 2))
		if got := outcome(w.run(in)); len(got) != 0 {
			t.Errorf("preempt %v: at max_running: %q, want nothing", in.Settings.Preempt != nil, got)
		}
	}
}

// The world marks what preemption needs from the status: suspended by
// the scheduler, leaving, rerunnable (an interactive job is not),
// checkpointable.
func TestPreemptWorldFields(t *testing.T) {
	t.Parallel()
	w := newWorld().node("n1", 4, "free").
		job(1, "S", "workq", "u", "1:ncpus=1", a("substate", "45"), onNode("n1", 1)).
		job(2, "S", "workq", "u", "1:ncpus=1", a("substate", "43"), onNode("n1", 1)).
		job(3, "R", "workq", "u", "1:ncpus=1", a("substate", "60"), rerunable(true), a("interactive", "True"), a("Checkpoint", "n"), onNode("n1", 1))
	jobs := map[string]*core.Job{}
	for _, j := range sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs).Jobs {
		jobs[j.ID] = j
	}
	if j := jobs["1.srv"]; !j.Released || j.Running() {
		t.Errorf("scheduler-suspended job: Released %v Running %v", j.Released, j.Running())
	}
	if j := jobs["2.srv"]; j.Released || !j.Running() {
		t.Errorf("operator-suspended job: Released %v Running %v", j.Released, j.Running())
	}
	if j := jobs["3.srv"]; !j.Ending || j.Rerunable || !j.NoCheckpoint {
		t.Errorf("job 3: Ending %v Rerunable %v NoCheckpoint %v", j.Ending, j.Rerunable, j.NoCheckpoint)
	}
}

// withHog adds a fair-share standing in which user hog has used far more
// than its half of the machine, light nothing.
func withHog(in Inputs) Inputs {
	tree, err := schedpriv.ParseResourceGroup(strings.NewReader("hog 10 root 1\nlight 11 root 1\n"), "t", 10)
	if err != nil {
		panic(err)
	}
	in.Standing = fairshare.NewStanding(tree, schedpriv.Usage{"hog": 1000})
	return in
}

// preemptive_sched turns the sched_config settings into the cycle's.
func TestPreemptInputs(t *testing.T) {
	t.Parallel()
	cfg, err := schedpriv.ParseConfig(strings.NewReader("preemptive_sched: true prime\npreempt_queue_prio: 120\npreempt_order: \"S 50 R\"\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	in := InputsAt(&schedpriv.Files{Config: cfg}, now)
	if p := in.Settings.Preempt; p == nil || p.QueuePrio != 120 || p.Order.String() != "S 50 R" || p.Prio.String() != "express_queue, normal_jobs" {
		t.Fatalf("prime time: %+v", in.Settings.Preempt)
	}
	cfg.Prime.PreemptiveSched = false
	if in := InputsAt(&schedpriv.Files{Config: cfg}, now); in.Settings.Preempt != nil {
		t.Fatal("preemption on with preemptive_sched false")
	}
}

// Per-user and per-group resource limits (max_user_res.R,
// max_group_res.R on the server or a queue) hold a job back when what
// its user or group would hold with it goes over; with preemption a job
// held back so preempts lower-ranked jobs of that user or group; their
// soft forms rank the jobs over them at server_softlimits /
// queue_softlimits.
func TestResourceLimits(t *testing.T) {
	t.Parallel()
	// u runs job 1 (2 cpus of n1); n2 is free.
	base := func(attrs ...proto.Attr) *world {
		w := newWorld().queue("express", "Execution", true, a("Priority", "200")).
			node("n1", 4, "free", r("resources_assigned", "ncpus", "2")).node("n2", 4, "free").
			job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true))
		w.server.Attrs = append(w.server.Attrs, attrs...)
		return w
	}
	onQueue := func(w *world, attrs ...proto.Attr) *world {
		w.queues[0].Attrs = append(w.queues[0].Attrs, attrs...)
		return w
	}
	for _, tt := range []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"the server's per-user limit holds the user's next job back, not another user's",
			base(r("max_user_res", "ncpus", "3")).job(2, "Q", "workq", "u", "1:ncpus=2").job(3, "Q", "workq", "v", "1:ncpus=2"),
			Inputs{}, []string{"comment 2 Would exceed user u's limit on resource ncpus in complex", "run 3 n1"}},
		{"within the limit it runs",
			base(r("max_user_res", "ncpus", "4")).job(2, "Q", "workq", "u", "1:ncpus=2"),
			Inputs{}, []string{"run 2 n1"}},
		{"a queue's per-group limit",
			onQueue(base(), r("max_group_res", "ncpus", "2")).job(2, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{}, []string{"comment 2 Would exceed group ug's limit on resource ncpus in queue workq"}},
		{"the limit of another queue does not count",
			onQueue(base(), r("max_group_res", "ncpus", "2")).job(2, "Q", "express", "u", "1:ncpus=1"),
			Inputs{}, []string{"run 2 n1"}},
		{"an express job of the user preempts the user's normal job to stay within the limit",
			base(r("max_user_res", "ncpus", "2")).job(2, "Q", "express", "u", "1:ncpus=2"),
			preemptOn("", ""), []string{"preempt 1 SCR for 2", "run 2 n1"}},
		{"a victim taken for one limit and not needed once another is lifted is given back",
			func() *world {
				w := newWorld().queue("express", "Execution", true, a("Priority", "200")).
					node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).node("n2", 2, "free", r("resources_assigned", "ncpus", "2")).node("n3", 2, "free").
					job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true)).
					job(2, "R", "workq", "w", "1:ncpus=2", ago(50), onNode("n2", 2), rerunable(true))
				w.server.Attrs = append(w.server.Attrs, a("max_running", "2"), a("max_user_run", "1"))
				return w.job(3, "Q", "express", "u", "1:ncpus=2")
			}(),
			preemptOn("", ""), []string{"preempt 1 SCR for 3", "run 3 n1"}},
		{"lifting the user's limit brings the group's: the candidates are gone over again",
			func() *world {
				w := newWorld().queue("express", "Execution", true, a("Priority", "200")).
					node("n1", 2, "free", r("resources_assigned", "ncpus", "2")).node("n2", 2, "free", r("resources_assigned", "ncpus", "2")).node("n3", 2, "free").
					job(1, "R", "workq", "u", "1:ncpus=2", ago(100), onNode("n1", 2), rerunable(true)).
					job(2, "R", "workq", "b", "1:ncpus=2", ago(50), onNode("n2", 2), rerunable(true), a("egroup", "ug"))
				w.server.Attrs = append(w.server.Attrs, r("max_user_res", "ncpus", "2"), r("max_group_res", "ncpus", "2"))
				return w.job(3, "Q", "express", "u", "1:ncpus=2")
			}(),
			preemptOn("", ""), []string{"preempt 1 SCR for 3", "preempt 2 SCR for 3", "run 3 n1"}},
		{"soft: the user over it is preempted by another user's normal job",
			func() *world {
				w := fullWorld()
				w.server.Attrs = append(w.server.Attrs, r("max_user_res_soft", "ncpus", "2"))
				return w.job(3, "Q", "workq", "v", "1:ncpus=2")
			}(),
			preemptOn("express_queue, normal_jobs, server_softlimits", ""), []string{"preempt 2 SCR for 3", "run 3 n2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(tt.w.run(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
