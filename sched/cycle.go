package sched

import (
	"sort"
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
	snap     *Snapshot
	free     map[string]map[string]float64
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
		queue: map[string]*counter{}, assigned: map[string]float64{}, qassign: map[string]map[string]float64{}}
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
	var cands []*place.Node
	for _, n := range l.snap.Nodes {
		if n.Up {
			cands = append(cands, &place.Node{Name: n.Name, Avail: n.Available, Free: l.free[n.Name]})
		}
	}
	return place.Chunks(j.Select, j.Place, cands, nil)
}

// Fits reports whether j could run on the nodes as they would be with
// nothing running (known nodes only, whatever their state). A job that
// does not fit can never run.
func (l *Ledger) Fits(j *Job) error {
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
	sort.Slice(cands, func(a, b int) bool { return cands[a].Name < cands[b].Name })
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
	for _, pc := range p {
		f := l.free[pc.Node]
		if _, ok := pc.Chunk.Get(proto.ResNcpus); !ok {
			f[proto.ResNcpus]--
		}
		for _, r := range pc.Chunk.Resources {
			if resc.Consumable(r.Name) {
				if v, ok := resc.Number(r.Name, r.Value); ok {
					f[r.Name] -= v
				}
			}
		}
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
