package proto

// Elastic jobs: a running job's allocation grows or shrinks (a select
// with a chunk count range, "2-8:ncpus=4"), and a job gives sister nodes
// back (pbs_release_nodes).
//
// A growth is committed by the server first (the job holds the new
// chunks at once), then the job's first mom has the new nodes' moms join
// the job; a join refused undoes the growth. A shrink goes the other
// way: the first mom ends the job's part on the nodes given back (after
// the grace, or at once), and only then does the server commit the
// smaller allocation, so that a node is free only when nothing of the
// job runs there. The server's store says what the job holds; a mom whose
// allocation differs (a restart in the middle) is brought to it.
const (
	MsgResizeJob    MsgType = 30 // scheduler or owner -> server: ResizeRequest, reply empty
	MsgMomResizeJob MsgType = 46 // server -> first mom: MomResize, reply empty
)

func init() {
	msgNames[MsgResizeJob] = "ResizeJob"
	msgNames[MsgMomResizeJob] = "MomResizeJob"
}

// ResizeRequest changes a running job's allocation. Add names a node per
// chunk to add to the job's ranged chunk spec (schedulers only); Release
// names nodes whose chunks the job gives back (never its first node), All
// every node but the first. A shrink waits Grace seconds for the job to
// let go (0: the default), or none when Immediate.
type ResizeRequest struct {
	JobID     string
	Add       []string
	Release   []string
	All       bool
	Immediate bool
	Grace     int
	Comment   string
	// GiveBack lowers the job's select with the nodes released (what
	// pbs_release_nodes does; always so for a job's owner): the job will
	// not grow onto them again.
	GiveBack bool
}

// MomResize is the allocation a job's first mom must bring the job to:
// the new nodes' moms join it, the parts on nodes no longer listed end
// (after Grace seconds unless Immediate), the node file is rewritten and
// the job is told with its resize signal.
type MomResize struct {
	JobID     string
	RunCount  int
	ExecHost  string
	ExecVnode string
	NodeFile  []string
	Moms      []NodeMom
	Grace     int
	Immediate bool
	// Alloc is ExecVnode typed, as in MomJob.
	Alloc []MomChunk
}
