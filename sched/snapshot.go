package sched

import (
	"strconv"
	"strings"

	"gopbs/internal/model"
	"gopbs/internal/resc"
	"gopbs/proto"
)

// Snapshot is the state a cycle decides on. Policies must not modify it.
type Snapshot struct {
	Server *Server
	Queues []*Queue // in the server's order
	Nodes  []*Node  // sorted by name
	Jobs   []*Job   // every unfinished job, in submission order

	queueByName map[string]*Queue
	nodeByName  map[string]*Node
}

// Queue returns a queue by name (nil when unknown).
func (s *Snapshot) Queue(name string) *Queue { return s.queueByName[name] }

// Node returns a node by name (nil when unknown).
func (s *Snapshot) Node(name string) *Node { return s.nodeByName[name] }

// Limits are the running-job limits of the server or a queue; -1 means
// none.
type Limits struct {
	MaxRunning  int64
	MaxUserRun  int64
	MaxGroupRun int64
}

// Server is the server object.
type Server struct {
	Name               string
	Limits             Limits
	DefaultQueue       string
	ResourcesAvailable map[string]string
	ResourcesMax       map[string]string
	ResourcesAssigned  map[string]string
	Attrs              map[string]string // every plain attribute as the server sent it
}

// Queue is a queue.
type Queue struct {
	Name               string
	Execution          bool // queue_type Execution (else Route)
	Enabled            bool
	Started            bool
	Priority           int64
	Limits             Limits
	ResourcesAvailable map[string]string
	ResourcesMax       map[string]string
	ResourcesAssigned  map[string]string
	Attrs              map[string]string
}

// Node is an execution node.
type Node struct {
	Name   string
	States []string // free, offline, down, state-unknown, job-busy, busy...
	// Up is true when the node may take jobs: its mom reports, and it is
	// neither offline nor busy (load above max_load).
	Up bool
	// Known is false while the node's mom has not reported since the
	// server started: its resources are not known yet.
	Known     bool
	Available map[string]string // resources_available
	Assigned  map[string]string // resources_assigned
	Loadave   float64
	MaxLoad   float64 // -1 when not set
	IdealLoad float64 // -1 when not set
	Attrs     map[string]string
}

// Job is an unfinished job. Fields whose attributes were not fetched
// (Options.JobAttrs) are zero.
type Job struct {
	ID       string
	Seq      int64
	Name     string
	User     string // euser
	Group    string // egroup
	Queue    string
	State    byte // Q H W R E S T
	Priority int64
	Ctime    int64
	Qtime    int64
	Etime    int64
	Comment  string
	Holds    string
	ExecHost string
	// Resources is Resource_List.
	Resources map[string]string
	Select    resc.Select
	Place     resc.Place
	// Used is resources_used.
	Used  map[string]string
	Attrs map[string]string
}

// Queued reports whether the job waits to run (state Q).
func (j *Job) Queued() bool { return j.State == 'Q' }

// Running reports whether the job holds resources (R, E, S).
func (j *Job) Running() bool { return j.State == 'R' || j.State == 'E' || j.State == 'S' }

// Resource returns a Resource_List value as a number (bytes, seconds, or
// the count) and whether the job asked for it.
func (j *Job) Resource(name string) (float64, bool) {
	v, ok := j.Resources[name]
	if !ok {
		return 0, false
	}
	return resc.Number(name, v)
}

// Walltime is the job's walltime in seconds, or -1 without one.
func (j *Job) Walltime() int64 {
	if v, ok := j.Resource(proto.ResWalltime); ok {
		return int64(v)
	}
	return -1
}

// BaseJobAttrs are the job attributes every snapshot carries: what the
// Job fields need. A policy that reads others (Job.Attrs) names them in
// Options.JobAttrs; fetching fewer attributes is what keeps a snapshot of
// 100,000 jobs fast.
var BaseJobAttrs = []string{
	proto.AttrJobOwner, proto.AttrEuser, proto.AttrEgroup, proto.AttrJobState, proto.AttrQueue,
	proto.AttrPriority, proto.AttrQtime, proto.AttrComment, proto.AttrResourceList,
}

// nodeAttrs are the node attributes a snapshot asks for.
var nodeAttrs = []string{
	proto.AttrNodeState, proto.AttrResourcesAvail, proto.AttrResourcesAssigned,
	proto.AttrNodeLoadave, proto.AttrNodeMaxLoad, proto.AttrNodeIdealLoad, proto.AttrNodeNtype,
}

// split sorts a status object's attributes into plain ones and resource
// lists.
func split(attrs []proto.Attr) (plain map[string]string, res map[string]map[string]string) {
	plain = make(map[string]string, len(attrs))
	res = map[string]map[string]string{}
	for _, a := range attrs {
		if a.Resource == "" {
			plain[a.Name] = a.Value
			continue
		}
		m := res[a.Name]
		if m == nil {
			m = map[string]string{}
			res[a.Name] = m
		}
		m[a.Resource] = a.Value
	}
	return plain, res
}

func num(m map[string]string, name string, def int64) int64 {
	v, ok := m[name]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

func limits(m map[string]string) Limits {
	return Limits{
		MaxRunning:  num(m, proto.AttrMaxRunning, -1),
		MaxUserRun:  num(m, proto.AttrMaxUserRun, -1),
		MaxGroupRun: num(m, proto.AttrMaxGroupRun, -1),
	}
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// NewSnapshot builds a snapshot from status answers (exported for tests
// and simulators that have status objects of their own).
func NewSnapshot(server proto.Status, queues, nodes, jobs []proto.Status) *Snapshot {
	js := make([]*Job, len(jobs))
	for i := range jobs {
		js[i] = NewJob(jobs[i])
	}
	return assemble(server, queues, nodes, js)
}

// assemble builds a snapshot around jobs already decoded.
func assemble(server proto.Status, queues, nodes []proto.Status, jobs []*Job) *Snapshot {
	s := &Snapshot{queueByName: map[string]*Queue{}, nodeByName: map[string]*Node{}}
	plain, res := split(server.Attrs)
	s.Server = &Server{
		Name: server.Name, Limits: limits(plain), DefaultQueue: plain[proto.AttrDefaultQueue],
		ResourcesAvailable: orEmpty(res[proto.AttrResourcesAvail]), ResourcesMax: orEmpty(res[proto.AttrResourcesMax]),
		ResourcesAssigned: orEmpty(res[proto.AttrResourcesAssigned]), Attrs: plain,
	}
	for _, st := range queues {
		plain, res := split(st.Attrs)
		q := &Queue{
			Name: st.Name, Execution: plain[proto.AttrQueueTypeQ] == "Execution",
			Enabled: plain[proto.AttrEnabled] == "True", Started: plain[proto.AttrStarted] == "True",
			Priority: num(plain, proto.AttrQPriority, 0), Limits: limits(plain),
			ResourcesAvailable: orEmpty(res[proto.AttrResourcesAvail]), ResourcesMax: orEmpty(res[proto.AttrResourcesMax]),
			ResourcesAssigned: orEmpty(res[proto.AttrResourcesAssigned]), Attrs: plain,
		}
		s.Queues = append(s.Queues, q)
		s.queueByName[q.Name] = q
	}
	for _, st := range nodes {
		plain, res := split(st.Attrs)
		n := &Node{Name: st.Name, States: strings.Split(plain[proto.AttrNodeState], ","),
			Available: orEmpty(res[proto.AttrResourcesAvail]), Assigned: orEmpty(res[proto.AttrResourcesAssigned]),
			MaxLoad: -1, IdealLoad: -1, Attrs: plain, Known: true, Up: true}
		for _, state := range n.States {
			switch state {
			case model.NodeUnknown:
				n.Known = false
				n.Up = false
			case model.NodeDown, model.NodeOffline, model.NodeBusy:
				n.Up = false
			}
		}
		n.Loadave, _ = strconv.ParseFloat(plain[proto.AttrNodeLoadave], 64)
		if v, err := strconv.ParseFloat(plain[proto.AttrNodeMaxLoad], 64); err == nil {
			n.MaxLoad = v
		}
		if v, err := strconv.ParseFloat(plain[proto.AttrNodeIdealLoad], 64); err == nil {
			n.IdealLoad = v
		}
		s.Nodes = append(s.Nodes, n)
		s.nodeByName[n.Name] = n
	}
	s.Jobs = jobs
	return s
}

// NewJob decodes one job's status.
func NewJob(st proto.Status) *Job {
	plain, res := split(st.Attrs)
	state := byte('?')
	if v := plain[proto.AttrJobState]; v != "" {
		state = v[0]
	}
	j := &Job{
		ID: st.Name, Name: plain[proto.AttrJobName], User: plain[proto.AttrEuser], Group: plain[proto.AttrEgroup],
		Queue: plain[proto.AttrQueue], State: state, Priority: num(plain, proto.AttrPriority, 0),
		Ctime: num(plain, proto.AttrCtime, 0), Qtime: num(plain, proto.AttrQtime, 0), Etime: num(plain, proto.AttrEtime, 0),
		Comment: plain[proto.AttrComment], Holds: plain[proto.AttrHoldTypes], ExecHost: plain[proto.AttrExecHost],
		Resources: orEmpty(res[proto.AttrResourceList]),
		Used:      orEmpty(res[proto.AttrResourcesUsed]), Attrs: plain,
	}
	if j.User == "" {
		j.User, _, _ = strings.Cut(plain[proto.AttrJobOwner], "@")
	}
	j.Seq, _ = model.ParseJobSeq(j.ID)
	if v, ok := j.Resources[proto.ResSelect]; ok {
		j.Select, _ = resc.ParseSelect(v)
	}
	if v, ok := j.Resources[proto.ResPlace]; ok {
		j.Place, _ = resc.ParsePlace(v)
	}
	return j
}
