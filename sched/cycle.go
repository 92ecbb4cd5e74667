package sched

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"gopbs/internal/place"
	"gopbs/internal/resc"
	"gopbs/proto"
)

// Event says why a cycle runs.
type Event = proto.SchedCmd

// Events (see proto.SchedCmd).
const (
	EventNew   = proto.SchedNew
	EventTerm  = proto.SchedTerm
	EventTime  = proto.SchedTime
	EventRecyc = proto.SchedRecyc
	EventCmd   = proto.SchedCmdSet
	EventFirst = proto.SchedFirst
)

// Placement is one chunk of a job on one node.
type Placement = place.Placement

// DecisionKind is what a decision does.
type DecisionKind uint8

// Decision kinds.
const (
	DecideRun DecisionKind = iota + 1
	DecideComment
	DecideHold
	DecideDelete
)

// Decision is one thing a policy wants done.
type Decision struct {
	Kind  DecisionKind
	Job   *Job
	Nodes []string // Run: the node of each chunk
	Text  string   // Run: comment on start; Comment: the comment; Hold, Delete: the reason
}

// Cycle is one scheduling cycle as a policy sees it: read-only inputs and
// a record of decisions.
type Cycle struct {
	Now      time.Time
	Event    Event
	Snapshot *Snapshot
	// Log is for the policy's own messages; it goes to sched_logs.
	Log hclog.Logger

	decisions []Decision
	commented map[string]string
}

// NewCycle builds a cycle (for tests and simulators; the toolkit builds
// its own).
func NewCycle(now time.Time, ev Event, snap *Snapshot, log hclog.Logger) *Cycle {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Cycle{Now: now, Event: ev, Snapshot: snap, Log: log, commented: map[string]string{}}
}

// Run asks to start job j with chunk i on nodes[i] (or all chunks on
// nodes[0]); comment, when not empty, becomes the job's comment.
func (c *Cycle) Run(j *Job, nodes []string, comment string) {
	c.decisions = append(c.decisions, Decision{Kind: DecideRun, Job: j, Nodes: nodes, Text: comment})
	c.commented[j.ID] = comment
}

// Comment sets j's comment, if it differs from what the job has.
func (c *Cycle) Comment(j *Job, text string) {
	if prev, ok := c.commented[j.ID]; ok && prev == text || !ok && j.Comment == text {
		return
	}
	c.commented[j.ID] = text
	c.decisions = append(c.decisions, Decision{Kind: DecideComment, Job: j, Text: text})
}

// Hold puts a system hold on j, with reason as its comment.
func (c *Cycle) Hold(j *Job, reason string) {
	c.decisions = append(c.decisions, Decision{Kind: DecideHold, Job: j, Text: reason})
}

// Delete deletes j (a job that can never run), with reason as its comment.
func (c *Cycle) Delete(j *Job, reason string) {
	c.decisions = append(c.decisions, Decision{Kind: DecideDelete, Job: j, Text: reason})
}

// Decisions returns what the policy decided, in order.
func (c *Cycle) Decisions() []Decision { return c.decisions }

// Ledger tracks what a cycle's decisions take: free resources per node,
// and running jobs and assigned resources per server, queue, user and
// group, starting from the snapshot. Policies record each start in it so
// that later decisions of the same cycle see less.
type Ledger struct {
	snap *Snapshot
	free map[string]map[string]float64
	// cands are the nodes that are up, built once; their Free maps are the
	// entries of free, so starts are seen. cursor is where the last
	// placement ended (next fit).
	cands  []*place.Node
	cursor int
	// freeTotal sums the free amounts over the up nodes: a job asking for
	// more in total cannot fit and is refused without a search.
	freeTotal map[string]float64
	// capacity is, per resource, the most any known node has with nothing
	// running: a chunk asking for more can never run.
	capacity map[string]float64
	known    int
	running  counter
	queue    map[string]*counter
	assigned map[string]float64            // server-wide, from running jobs
	qassign  map[string]map[string]float64 // per queue
}

type counter struct {
	total   int64
	byUser  map[string]int64
	byGroup map[string]int64
}

func newCounter() *counter {
	return &counter{byUser: map[string]int64{}, byGroup: map[string]int64{}}
}

func (c *counter) add(j *Job) {
	c.total++
	c.byUser[j.User]++
	c.byGroup[j.Group]++
}

// checked resources for the server's and queues' resource limits
// (reference §2.4 checks 10 and 11).
var limitResources = []string{proto.ResMem, proto.ResNcpus, proto.ResNodect}

// NewLedger starts a ledger from a snapshot.
func NewLedger(s *Snapshot) *Ledger {
	l := &Ledger{snap: s, free: map[string]map[string]float64{}, running: *newCounter(),
		queue: map[string]*counter{}, assigned: map[string]float64{}, qassign: map[string]map[string]float64{},
		freeTotal: map[string]float64{}, capacity: map[string]float64{}}
	for _, n := range s.Nodes {
		f := map[string]float64{}
		for r, v := range n.Available {
			if !resc.Consumable(r) {
				continue
			}
			if x, ok := resc.Number(r, v); ok {
				used, _ := resc.Number(r, n.Assigned[r])
				f[r] = x - used
			}
		}
		l.free[n.Name] = f
		if n.Up {
			l.cands = append(l.cands, &place.Node{Name: n.Name, Avail: n.Available, Free: f})
			for r, v := range f {
				l.freeTotal[r] += v
			}
		}
		if n.Known {
			l.known++
			for r, v := range n.Available {
				if resc.Consumable(r) {
					if x, ok := resc.Number(r, v); ok && x > l.capacity[r] {
						l.capacity[r] = x
					}
				}
			}
		}
	}
	for _, j := range s.Jobs {
		if j.Running() {
			l.charge(j)
		}
	}
	return l
}

func (l *Ledger) charge(j *Job) {
	l.running.add(j)
	q := l.queue[j.Queue]
	if q == nil {
		q = newCounter()
		l.queue[j.Queue] = q
	}
	q.add(j)
	qa := l.qassign[j.Queue]
	if qa == nil {
		qa = map[string]float64{}
		l.qassign[j.Queue] = qa
	}
	for _, r := range limitResources {
		if v, ok := j.Resource(r); ok {
			l.assigned[r] += v
			qa[r] += v
		}
	}
}

// Running returns the running jobs: total, of user and of group, on the
// server (queue "") or in a queue.
func (l *Ledger) Running(queue, user, group string) (total, ofUser, ofGroup int64) {
	c := &l.running
	if queue != "" {
		if c = l.queue[queue]; c == nil {
			return 0, 0, 0
		}
	}
	return c.total, c.byUser[user], c.byGroup[group]
}

// Assigned returns the amount of resource r that running jobs hold on the
// server (queue "") or in a queue.
func (l *Ledger) Assigned(queue, r string) float64 {
	if queue == "" {
		return l.assigned[r]
	}
	return l.qassign[queue][r]
}

// Place finds nodes for j among the nodes that are up, with what is
// free now.
func (l *Ledger) Place(j *Job) ([]Placement, error) {
	for r, want := range jobTotals(j) {
		if want > l.freeTotal[r] {
			return nil, fmt.Errorf("%s %g asked, %g free on the nodes that are up", r, want, l.freeTotal[r])
		}
	}
	p, last, err := place.ChunksFrom(j.Select, j.Place, l.cands, nil, l.cursor)
	if err == nil {
		l.cursor = last
	}
	return p, err
}

// jobTotals sums a job's consumable chunk amounts (one cpu for a chunk
// that names none).
func jobTotals(j *Job) map[string]float64 {
	out := map[string]float64{}
	for _, c := range j.Select {
		if _, ok := c.Get(proto.ResNcpus); !ok {
			out[proto.ResNcpus] += float64(c.Count)
		}
		for _, r := range c.Resources {
			if resc.Consumable(r.Name) {
				if v, ok := resc.Number(r.Name, r.Value); ok {
					out[r.Name] += v * float64(c.Count)
				}
			}
		}
	}
	return out
}

// Fits reports whether j could run on the nodes as they would be with
// nothing running (known nodes only, whatever their state). A job that
// does not fit can never run. It is conservative: when every chunk fits
// the largest node and there are nodes enough, the job is taken to fit
// without a search.
func (l *Ledger) Fits(j *Job) error {
	chunks := 0
	simple := true
	for _, c := range j.Select {
		chunks += c.Count
		for _, r := range c.Resources {
			if !resc.Consumable(r.Name) {
				if _, numeric := resc.Number(r.Name, r.Value); !numeric {
					simple = false // a property or host to match: search
				}
				continue
			}
			if v, ok := resc.Number(r.Name, r.Value); ok && v > l.capacity[r.Name] {
				return fmt.Errorf("no node has %s=%s (largest: %g)", r.Name, r.Value, l.capacity[r.Name])
			}
		}
	}
	if simple && chunks <= l.known {
		return nil
	}
	var cands []*place.Node
	for _, n := range l.snap.Nodes {
		if !n.Known {
			continue
		}
		f := map[string]float64{}
		for r, v := range n.Available {
			if resc.Consumable(r) {
				if x, ok := resc.Number(r, v); ok {
					f[r] = x
				}
			}
		}
		cands = append(cands, &place.Node{Name: n.Name, Avail: n.Available, Free: f})
	}
	_, err := place.Chunks(j.Select, j.Place, cands, nil)
	return err
}

// AllKnown reports whether every node's mom has reported since the server
// started (until then, what nodes have is not known).
func (l *Ledger) AllKnown() bool {
	for _, n := range l.snap.Nodes {
		if !n.Known {
			return false
		}
	}
	return len(l.snap.Nodes) > 0
}

// Start records that j will run on p.
func (l *Ledger) Start(j *Job, p []Placement) {
	l.charge(j)
	place.Consume(l.free, p)
	for r, v := range jobTotals(j) {
		l.freeTotal[r] -= v
	}
}

// NodesOf lists the node of each chunk of a placement, for Cycle.Run.
func NodesOf(p []Placement) []string {
	out := make([]string, len(p))
	for i, pc := range p {
		out[i] = pc.Node
	}
	return out
}

// nodeSpec is the RunSpec form of a node list.
func nodeSpec(nodes []string) string { return strings.Join(nodes, "+") }
