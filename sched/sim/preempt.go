package sim

// Preemption in a replay (Config.Preempting; sched_config's
// preemptive_sched). The policy preempts running jobs for a job of a
// higher rank (core.DecidePreempt, then the job's Run) and resumes the
// jobs it suspended (core.DecideResume), as pbs_sched does; the replay
// carries them out as the server and the moms would, at once:
//
//   - A preemption takes the first of its methods that applies: S
//     suspends the job (it holds nothing, and its run time left waits
//     until it resumes: resuming at t it ends at t + what it had left); R
//     requeues it (every trace job is rerunnable: it goes back to its
//     queue, eligible again, and a later start runs it from the
//     beginning, the work done lost). C never applies: the simulated moms
//     have no checkpoint action. An elastic job is never preempted here
//     (its work model has no pause): a preemption of one fails.
//   - When a preemption fails, the Run it made room for is not carried
//     out (pbs_sched does not ask for it); the job stays queued.
//   - A job's Outcome keeps the start of its last run (a requeued job's
//     first run is lost work) and says it was preempted: its bounded
//     slowdown is then (end - submit) / run time, the time it spent
//     suspended included, and Stats counts the jobs preempted.

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/gopbs/gopbs/sched/core"
)

// preemption is a replay's preemption state.
type preemption struct {
	// suspended are the jobs suspended by preemption, in Seq order, and
	// left the run time each has left.
	suspended []*core.Job
	left      map[*core.Job]int64
	// failedFor are the jobs whose preemptions failed this pass.
	failedFor map[*core.Job]bool
}

func newPreemption() *preemption {
	return &preemption{left: map[*core.Job]int64{}, failedFor: map[*core.Job]bool{}}
}

// replayState is what preemption changes of a replay, owned by Run.
type replayState struct {
	jobs       map[*core.Job]*live
	running    *[]*core.Job
	runCPUs    *[]runCPU
	queued     *[]*core.Job
	queuedCPUs *[]float64
	ordered    *bool
	ends       *endHeap
	byName     map[string]*core.Node
	free       core.Amounts
	// resized is set once an end in ends may be stale.
	resized *bool
}

// newPass starts a pass: no preemption of it failed yet.
func (p *preemption) newPass() { clear(p.failedFor) }

// blocked reports whether a Run of j must not be carried out: a
// preemption made for it failed.
func (p *preemption) blocked(j *core.Job) bool { return p.failedFor[j] }

// preempt carries out d, a DecidePreempt, at t.
func (p *preemption) preempt(rs *replayState, d core.Decision, t int64) {
	v := d.Job
	l := rs.jobs[v]
	if l == nil || l.el != nil || v.State != core.JobRunning {
		p.failedFor[d.For] = true
		return
	}
	for i := 0; i < len(d.Text); i++ {
		switch d.Text[i] {
		case 'S':
			p.suspend(rs, l, t)
			return
		case 'R':
			p.requeue(rs, l, t)
			return
		}
	}
	p.failedFor[d.For] = true // C only: no checkpoint action here
}

// stop takes running job l off its nodes at t: out of running, its
// resources free, its end no longer its end.
func (p *preemption) stop(rs *replayState, l *live, t int64) {
	j := l.core
	var at int
	*rs.running, at = removeRunning(*rs.running, j)
	if at >= 0 {
		j.UsedCPU = (*rs.runCPUs)[at].at(t)
		*rs.runCPUs = slices.Delete(*rs.runCPUs, at, at+1)
	}
	release(rs.byName, rs.free, j.Where)
	l.endAt = -1
	l.preempted = true
	*rs.resized = true
}

// suspend suspends l at t: it holds nothing and keeps its run time left.
func (p *preemption) suspend(rs *replayState, l *live, t int64) {
	left := max(l.endAt-t, 0)
	p.stop(rs, l, t)
	j := l.core
	j.State, j.Released = core.JobSuspended, true
	p.left[j] = left
	i := sort.Search(len(p.suspended), func(k int) bool { return p.suspended[k].Seq > j.Seq })
	p.suspended = slices.Insert(p.suspended, i, j)
}

// requeue puts l back in its queue at t, its work lost.
func (p *preemption) requeue(rs *replayState, l *live, t int64) {
	p.stop(rs, l, t)
	j := l.core
	j.State, j.Where, j.Stime, j.UsedCPU = core.JobQueued, nil, time.Time{}, 0
	l.start = -1
	q := *rs.queued
	i := sort.Search(len(q), func(k int) bool {
		return cmp.Or(q[k].Qtime.Compare(j.Qtime), cmp.Compare(q[k].Seq, j.Seq)) > 0
	})
	*rs.queued = slices.Insert(q, i, j)
	*rs.queuedCPUs = slices.Insert(*rs.queuedCPUs, i, j.Totals["ncpus"])
}

// resume resumes j, suspended by preemption, at t on the chunks it had.
func (p *preemption) resume(rs *replayState, j *core.Job, t int64) {
	l := rs.jobs[j]
	k := slices.Index(p.suspended, j)
	if l == nil || k < 0 {
		return
	}
	p.suspended = slices.Delete(p.suspended, k, k+1)
	j.State, j.Released = core.JobRunning, false
	claim(rs.byName, rs.free, j.Where)
	l.endAt = t + p.left[j]
	delete(p.left, j)
	cpus := cpusOf(j)
	used := j.UsedCPU.Seconds()
	var at int
	*rs.running, at = addRunning(*rs.running, j)
	*rs.runCPUs = slices.Insert(*rs.runCPUs, at, runCPU{cpus: cpus, start: float64(t) - used/cpus})
	rs.ends.push(end{at: l.endAt, job: j})
}

// waiting reports whether jobs are suspended, to be resumed.
func (p *preemption) waiting() bool { return p != nil && len(p.suspended) > 0 }

// unresumed are the jobs still suspended when the replay ends (their
// nodes never came free); they count as never started.
func (p *preemption) unresumed() []*core.Job {
	if p == nil {
		return nil
	}
	return p.suspended
}
