package core

import (
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Policy decides what runs: the contract between a policy and its drivers
// (pbs_sched's runner, the trace simulator, a site's scheduler binary).
// Implementations are pure: no sockets, files or clocks; the world carries
// the time.
type Policy interface {
	// Configure receives the sched_priv files when the scheduler starts,
	// when they change and on a CONFIGURE event; log takes its remarks on
	// options it does not implement. An error keeps the previous
	// configuration.
	Configure(files *schedpriv.Files, log Logger) error
	// Schedule decides one cycle of w, which ev started.
	Schedule(w *World, ev Event, log Logger) *Plan
}

// DecisionKind is what a decision does.
type DecisionKind uint8

// Decision kinds.
const (
	// DecideRun starts a job on exactly the chunks of Where; the server
	// verifies them against live state and refuses a placement that no
	// longer holds (it never places the job again itself).
	DecideRun DecisionKind = iota + 1
	// DecideComment sets the job's comment.
	DecideComment
	// DecideHold puts holds of types Holds on the job, until Until when
	// it is not zero; with no Holds and an Until, the job's hold_until
	// alone holds it (the server lifts it then).
	DecideHold
	// DecideFail ends a job that can never run, with Text as why.
	DecideFail
	// DecideReserve records when and where the job is expected to start
	// (estimated.start_time, estimated.exec_vnode).
	DecideReserve
	// DecideStageIn has the job's stage-in files copied to the node of
	// Where[0] without running it (OpenPBS's pbs_stagein), so that a
	// later run there starts at once: copying takes unknown time, and the
	// job waits anyway.
	DecideStageIn
	// DecideGrow adds the chunks of Where to a running elastic job (a
	// select with a chunk count range), each a copy of its ranged spec;
	// the server verifies them as it verifies a start.
	DecideGrow
	// DecideShrink takes back a running elastic job's chunks on the
	// nodes of Where (above its minimum): the job gets Grace to let go,
	// or none when Immediate.
	DecideShrink
	// DecideConfirmResv confirms reservation Resv on the chunks of
	// Occurrences (one placement per occurrence, from its current one),
	// or, with none, denies it with Text as why (an unconfirmed one goes;
	// a confirmed one that lost a node is left degraded).
	DecideConfirmResv
	// DecidePreempt takes the running job Job off its resources for For,
	// a job of a higher preemption rank that needs them: Text holds the
	// methods to try in order (letters of S suspend, C checkpoint, R
	// requeue, as preempt_order). The server tries them and says which
	// worked; a suspended job's resources are free at once, the others'
	// when the job has left its nodes.
	DecidePreempt
	// DecideResume resumes a job suspended by preemption on the chunks it
	// had (Where); the server verifies they are free.
	DecideResume
	// DecideAccrue tells the server whether the queued job is held back
	// by a run limit on its user, group or project (Limited), which
	// makes it ineligible (it accrues no eligible time), or no longer.
	DecideAccrue
)

// CommentPreemptWait is the comment of a job that waits for the jobs
// preempted for it (requeued, checkpointed) to leave their nodes.
const CommentPreemptWait = "Not Running: Waiting for preempted jobs to leave their nodes"

// Decision is one thing a policy wants done.
type Decision struct {
	Kind  DecisionKind
	Job   *Job
	Where []Chunk   // Run, Reserve
	Start time.Time // Reserve
	Holds string    // Hold
	Until time.Time // Hold
	Text  string    // Run: comment on start; Comment, Hold, Fail: the text
	// Shrink: how the job gives its chunks back.
	Grace     time.Duration
	Immediate bool
	// Backfill marks a Run in a gap before a higher job's reservation
	// (EASY backfilling), for drivers that count such starts apart.
	Backfill bool
	// Walltime is the walltime a Run chose for a shrink-to-fit job
	// (Job.ShrinkToFit), which the job gets as its own; 0 for others.
	Walltime time.Duration
	// ConfirmResv: the reservation and its placements.
	Resv        *Resv
	Occurrences [][]Chunk
	// For is the job a Preempt makes room for.
	For *Job
	// Limited: an Accrue of a job held back by an entity run limit.
	Limited bool
	// Keep marks a Fail of a job that can never run on these nodes: it
	// stays queued with Text as its comment (OpenPBS's "Can Never Run"),
	// for an admin may add a node; a driver that cannot keep it (the
	// simulator) ends it.
	Keep bool
}

// Plan records a cycle's decisions in order.
type Plan struct {
	decisions []Decision
	commented map[string]string // job -> comment set this cycle
	quiet     bool              // Comment records nothing (Quiet)
	stoppedAt *Job              // StoppedAt
}

// NewPlan starts an empty plan.
func NewPlan() *Plan { return &Plan{} }

// Reset empties p for another cycle, keeping its memory.
func (p *Plan) Reset() {
	clear(p.decisions)
	p.decisions = p.decisions[:0]
	clear(p.commented)
	p.quiet = false
	p.stoppedAt = nil
}

// StopAt says the cycle's strict order stopped at queued job j for
// every queue, in an order that does not change with the clock: until j
// can start, no job after it can, and jobs submitted later come after
// it. A simulator skips the cycles that could start nothing (it knows
// when j cannot fit); nil takes it back.
func (p *Plan) StopAt(j *Job) { p.stoppedAt = j }

// StoppedAt is the job StopAt named, nil when none.
func (p *Plan) StoppedAt() *Job { return p.stoppedAt }

// Quiet makes Comment record nothing, for a world whose maker keeps no
// comments (World.NoComments): in a long queue, most of a cycle's
// decisions would be comments.
func (p *Plan) Quiet() { p.quiet = true }

// Run starts j on where; comment, when not empty, becomes its comment.
func (p *Plan) Run(j *Job, where []Chunk, comment string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideRun, Job: j, Where: where, Text: comment})
	p.setCommented(j, comment)
}

// Backfill is Run for a start that backfills: in a gap before a higher
// job's reservation, which it cannot delay.
func (p *Plan) Backfill(j *Job, where []Chunk, comment string) {
	p.Run(j, where, comment)
	p.decisions[len(p.decisions)-1].Backfill = true
}

// RunFor is Run (or, with backfill, Backfill) of a shrink-to-fit job
// with the walltime chosen for it.
func (p *Plan) RunFor(j *Job, where []Chunk, comment string, backfill bool, wall time.Duration) {
	if backfill {
		p.Backfill(j, where, comment)
	} else {
		p.Run(j, where, comment)
	}
	p.decisions[len(p.decisions)-1].Walltime = wall
}

// setCommented notes the comment a decision of this cycle gives j.
func (p *Plan) setCommented(j *Job, text string) {
	if p.quiet {
		return // Comment records nothing: no need to remember
	}
	if p.commented == nil {
		p.commented = map[string]string{}
	}
	p.commented[j.ID] = text
}

// Comment sets j's comment when it differs from what j has.
func (p *Plan) Comment(j *Job, text string) {
	if p.quiet {
		return
	}
	if prev, ok := p.commented[j.ID]; ok && prev == text || !ok && j.Comment == text {
		return
	}
	p.setCommented(j, text)
	p.decisions = append(p.decisions, Decision{Kind: DecideComment, Job: j, Text: text})
}

// Accrue tells the server whether queued j is held back by a run limit
// on its user, group or project (limited), when the server keeps
// eligible time and thinks otherwise: such a job accrues no eligible
// time, and one no longer held back accrues it again.
func (p *Plan) Accrue(w *World, j *Job, limited bool) {
	if !w.Server.EligibleTimeEnable || j.Accrue == 0 || j.FromArray != "" {
		return
	}
	if limited == (j.Accrue == AccrueIneligible) {
		return
	}
	p.decisions = append(p.decisions, Decision{Kind: DecideAccrue, Job: j, Limited: limited})
}

// Hold holds j (types "s", "u", "o"; "" with an until: by hold_until
// alone), until until unless it is zero.
func (p *Plan) Hold(j *Job, types string, until time.Time, reason string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideHold, Job: j, Holds: types, Until: until, Text: reason})
}

// Fail ends j, which can never run.
func (p *Plan) Fail(j *Job, reason string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideFail, Job: j, Text: reason})
}

// CanNeverRun says that j can never run on these nodes; it stays queued
// saying why (Decision.Keep).
func (p *Plan) CanNeverRun(j *Job, reason string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideFail, Job: j, Text: reason, Keep: true})
}

// Reserve records j's expected start.
func (p *Plan) Reserve(j *Job, start time.Time, where []Chunk) {
	p.decisions = append(p.decisions, Decision{Kind: DecideReserve, Job: j, Start: start, Where: where})
}

// StageIn has j's stage-in files copied to node now, for a later run
// there.
func (p *Plan) StageIn(j *Job, node string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideStageIn, Job: j, Where: []Chunk{{Node: node}}})
}

// Grow adds the chunks of where to the running job j.
func (p *Plan) Grow(j *Job, where []Chunk) {
	p.decisions = append(p.decisions, Decision{Kind: DecideGrow, Job: j, Where: where})
}

// Shrink takes back j's chunks on the nodes of where, with grace for the
// job to let go (none when immediate).
func (p *Plan) Shrink(j *Job, where []Chunk, grace time.Duration, immediate bool) {
	p.decisions = append(p.decisions, Decision{Kind: DecideShrink, Job: j, Where: where, Grace: grace, Immediate: immediate})
}

// ConfirmResv confirms r on one placement per occurrence.
func (p *Plan) ConfirmResv(r *Resv, where [][]Chunk) {
	p.decisions = append(p.decisions, Decision{Kind: DecideConfirmResv, Resv: r, Occurrences: where})
}

// DenyResv refuses r (or leaves it degraded), saying why.
func (p *Plan) DenyResv(r *Resv, why string) {
	p.decisions = append(p.decisions, Decision{Kind: DecideConfirmResv, Resv: r, Text: why})
}

// Preempt takes the running job victim off its resources for j, trying
// methods in order (letters of S, C, R).
func (p *Plan) Preempt(victim *Job, methods string, j *Job) {
	p.decisions = append(p.decisions, Decision{Kind: DecidePreempt, Job: victim, Text: methods, For: j})
}

// Resume resumes j, suspended by preemption, on the chunks it had.
func (p *Plan) Resume(j *Job) {
	p.decisions = append(p.decisions, Decision{Kind: DecideResume, Job: j, Where: j.Where})
}

// Decisions returns the decisions in order.
func (p *Plan) Decisions() []Decision { return p.decisions }
