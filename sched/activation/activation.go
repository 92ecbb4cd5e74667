package activation

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/filter"
	"github.com/gopbs/gopbs/internal/jobjson"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// Environment of an activation filter, besides filter.EnvKind and
// filter.EnvJobID.
const (
	EnvPass          = "PBS_FILTER_PASS"
	EnvJobIndex      = "PBS_FILTER_JOB_INDEX"
	EnvBackfill      = "PBS_FILTER_BACKFILL"
	EnvResourceCount = "PBS_FILTER_RESOURCE_COUNT"
	EnvExecVnode     = "PBS_FILTER_EXEC_VNODE"
	EnvQueue         = "PBS_FILTER_QUEUE"
	EnvUser          = "PBS_FILTER_USER"
	// EnvRunning is 1 when the job runs already and the candidate
	// resources would grow it (an elastic job; exit 0 grows it, anything
	// else leaves them to others), else 0. EnvMinChunks, EnvMaxChunks and
	// EnvChunks are its select's range and the chunks it holds with the
	// candidates (0 for a job without a range).
	EnvRunning   = "PBS_FILTER_RUNNING"
	EnvMinChunks = "PBS_FILTER_MIN_CHUNKS"
	EnvMaxChunks = "PBS_FILTER_MAX_CHUNKS"
	EnvChunks    = "PBS_FILTER_CHUNKS"
)

// cycleMargin is kept free at the end of a cycle for applying its
// decisions: filters still running then time out.
const cycleMargin = 20 * time.Second

// Filters is the activation hook (fifo.Activation) that runs the filter
// programs. It belongs to one scheduler; cycles run one at a time.
type Filters struct {
	pass     int
	reader   sched.CycleReader
	deadline time.Time
	log      core.Logger
	// approved are this cycle's jobs every filter said 0 to: if the
	// server then refuses the start, the filters are called to revert.
	approved map[string]approval
}

type approval struct {
	chain filter.Chain
	data  []byte
}

// Name is the hook's name in comments and logs.
func (f *Filters) Name() string { return "activation_filter" }

// BeginCycle is called before each cycle with what the cycle may read of
// the server and when it must end.
func (f *Filters) BeginCycle(r sched.CycleReader, deadline time.Time, log core.Logger) {
	f.pass++
	f.reader, f.deadline, f.log = r, deadline, log
	if f.log == nil {
		f.log = core.NopLogger{}
	}
	f.approved = map[string]approval{}
}

// EndCycle reverts the filters of approved jobs the server did not start
// (it re-checks every start against live state and may refuse one).
func (f *Filters) EndCycle(notStarted []string) {
	for _, id := range notStarted {
		a, ok := f.approved[id]
		if !ok {
			continue
		}
		file, remove, err := filter.TempFile(a.data)
		if err != nil {
			f.log.Error("cannot revert activation filters", "job", id, "error", err)
			continue
		}
		for _, r := range a.chain.Revert(context.Background(), file, len(a.chain.Programs)) {
			f.log.Info("activation filter reverted: the server did not start the job", "job", id, "filter", r.Program, "result", r.Reason())
		}
		remove()
	}
	f.approved = nil
}

// programs is the chain for a job of queue: the queue's own first.
func programs(cx *fifo.Context, queue string) []string {
	var out []string
	if q := cx.World.Queue(queue); q != nil {
		out = append(out, q.ActivationFilters...)
	}
	return append(out, cx.Settings.ActivationFilters...)
}

// Activate runs the chain for one candidate start.
func (f *Filters) Activate(cx *fifo.Context, c fifo.Candidate) core.Status {
	progs := programs(cx, c.Job.Queue)
	if len(progs) == 0 {
		return core.OK
	}
	if f.reader == nil {
		return core.NotNowf(f.Name(), "activation filters cannot run: no server connection this cycle")
	}
	st, err := f.jobStatus(c.Job.ID)
	if err != nil {
		return core.NotNowf(f.Name(), "activation filters cannot run: %v", err)
	}
	data, err := jobjson.Encode(st, f.reader.ServerName(), cx.World.Now, time.Local)
	if err != nil {
		return core.NotNowf(f.Name(), "activation filters cannot run: %v", err)
	}
	file, remove, err := filter.TempFile(data)
	if err != nil {
		return core.NotNowf(f.Name(), "activation filters cannot run: %v", err)
	}
	defer remove()
	chain := filter.Chain{Programs: progs, Timeout: cx.Settings.FilterTimeout, Env: f.env(c)}
	ctx, cancel := context.WithDeadline(context.Background(), f.deadline.Add(-cycleMargin))
	defer cancel()
	_, ref := chain.Run(ctx, file, func(_ int, r filter.Result) error {
		if r.Exit0() {
			return nil
		}
		return &filter.Refusal{Result: r}
	})
	if ref == nil {
		f.log.Debug("activation filters say start", "job", c.Job.ID, "filters", len(progs))
		if f.approved != nil {
			f.approved[c.Job.ID] = approval{chain: chain, data: data}
		}
		return core.OK
	}
	// Those that said 0 may have taken something for the job (a
	// license): they give it back, last first.
	for _, r := range chain.Revert(context.Background(), file, ref.Index) {
		f.log.Info("activation filter reverted", "job", c.Job.ID, "filter", r.Program, "result", r.Reason())
	}
	s := f.outcome(cx, c, ref.Result)
	f.log.Info("activation filter refused a start", "job", c.Job.ID, "filter", ref.Result.Program, "result", ref.Result.Reason(), "outcome", s.String())
	return s
}

func (f *Filters) jobStatus(id string) (proto.Status, error) {
	st, err := f.reader.JobStatus(id)
	if err != nil {
		return proto.Status{}, fmt.Errorf("reading job %s: %w", id, err)
	}
	return st, nil
}

func (f *Filters) env(c fifo.Candidate) []string {
	cpus := 0.0
	for _, ch := range c.Where {
		cpus += ch.Amounts()["ncpus"]
	}
	backfill, running := "0", "0"
	if c.Backfill {
		backfill = "1"
	}
	minC, maxC, chunks := 0, 0, 0
	if c.Job.Select.Elastic() >= 0 {
		minC, maxC, chunks = c.Job.Select.NodeCount(), c.Job.Select.MaxNodeCount(), len(c.Where)
	}
	if c.Running {
		running = "1"
		chunks += len(c.Job.Where)
	}
	return filter.Env(filter.EnvKind, "activation", filter.EnvJobID, c.Job.ID,
		EnvPass, strconv.Itoa(f.pass), EnvJobIndex, strconv.Itoa(c.Index), EnvBackfill, backfill,
		EnvResourceCount, strconv.FormatFloat(cpus, 'f', -1, 64), EnvExecVnode, sched.ExecVnode(c.Where),
		EnvQueue, c.Job.Queue, EnvUser, c.Job.Owner, EnvRunning, running,
		EnvMinChunks, strconv.Itoa(minC), EnvMaxChunks, strconv.Itoa(maxC), EnvChunks, strconv.Itoa(chunks))
}

// outcome turns the refusing filter's result into the pipeline's status.
func (f *Filters) outcome(cx *fifo.Context, c fifo.Candidate, r filter.Result) core.Status {
	name := f.Name()
	who := "activation filter " + r.Program + " (" + r.Reason() + ")"
	code := -1
	if r.Outcome == filter.Exited {
		code = r.Code
	}
	switch {
	case c.Running:
		// For a running job only 0 means anything: no growth now.
		return core.NotNowf(name, "%s refused growing the running job", who)
	case code == 3:
		until := f.holdUntil(cx, c.Job)
		return core.Waitf(name, until, "held until %s by %s", until.Format("Mon Jan 02 at 15:04:05"), who)
	case code == 4:
		return core.Neverf(name, "job failed by %s", who)
	case c.Backfill:
		return core.NotNowf(name, "%s refused a backfill start", who)
	case code == 1:
		return core.Status{Code: core.Block, Plugin: name, Reason: who + ": no job of equal or lower priority starts after it this cycle"}
	}
	return core.Status{Code: core.Keep, Plugin: name, Reason: who + ": its resources are kept for it"}
}

// holdUntil is when exit 3 lets the job go: its hold_until when that is
// ahead (a filter may have just set it with qalter: read it afresh), else
// now + default_hold_duration.
func (f *Filters) holdUntil(cx *fifo.Context, j *core.Job) time.Time {
	now := cx.World.Now
	until := j.HoldUntil
	if st, err := f.jobStatus(j.ID); err == nil {
		if v, ok := st.Get(proto.AttrHoldUntil); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				until = time.Unix(n, 0)
			}
		}
	}
	if until.After(now) {
		return until
	}
	d := cx.Settings.DefaultHoldDuration
	if d <= 0 {
		d = schedpriv.DefaultHoldDuration
	}
	return now.Add(d)
}

// Policy is pbs_sched's policy: the FIFO pipeline with activation
// filters.
type Policy struct {
	*fifo.Policy
	Filters *Filters
}

// NewPolicy builds it.
func NewPolicy() *Policy {
	f := &Filters{log: core.NopLogger{}}
	pl := fifo.DefaultPipeline()
	pl.Activations = []fifo.Activation{f}
	return &Policy{Policy: &fifo.Policy{Pipeline: pl}, Filters: f}
}

// BeginCycle hands the cycle's server connection to the filters.
func (p *Policy) BeginCycle(r sched.CycleReader, deadline time.Time, log core.Logger) {
	p.Filters.BeginCycle(r, deadline, log)
}

// EndCycle tells the filters which approved starts did not happen.
func (p *Policy) EndCycle(notStarted []string) { p.Filters.EndCycle(notStarted) }
