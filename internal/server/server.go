package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/mailer/sendmail"
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Version is reported as pbs_version.
const Version = "23.06.06"

// Config is what the server needs from its caller.
type Config struct {
	Home       string // PBS_HOME
	ServerName string // short name used in job ids
	Host       string // this host's short name
	// SocketPath is the Unix socket for local commands.
	SocketPath string
	// TCPAddr is the listen address for daemons (":15001"); "" disables.
	TCPAddr string
	// MomPort is the default Port of new nodes (PBS_MOM_SERVICE_PORT).
	MomPort int
	// SchedAddr is host:port of the scheduler; "" disables scheduling.
	SchedAddr string
	// SchedPriv and SchedLogs are the scheduler's directories as this
	// host's pbs.conf has them, shown by qmgr list sched ("" shows none).
	SchedPriv, SchedLogs string
	// KeyFile is the cluster key, created if missing.
	KeyFile string
	// StorePath is the directory holding the store (server_priv).
	StorePath string
	// AccountingDir is server_priv/accounting.
	AccountingDir string
	Store         store.Options
	Logger        hclog.Logger
	// IdleTimeout closes a client connection that sends nothing for this
	// long; zero means 10 minutes.
	IdleTimeout time.Duration
	// Local and Remote are the connection budgets of the Unix socket and
	// of the TCP port (zero fields: connlimit.DefaultBudget). Each class
	// has its own, so remote junk cannot lock out local commands.
	Local, Remote connlimit.Budget
	// Now overrides the clock in tests.
	Now func() time.Time
	// Sendmail is the mailer for job mail (PBS_SENDMAIL); "" sends none.
	Sendmail string
	// MetricsAddr is where Prometheus metrics are served at /metrics
	// (PBS_SERVER_METRICS, host:port); "" serves none.
	MetricsAddr string
	// Shared, when set, is the store already open, which Close leaves
	// open: a replicated group's member (internal/ha) owns it, and its
	// commits go through the group's log. A store without a server
	// record is then initialised as a fresh PBS_HOME (through the log).
	Shared *store.Store
	// Fence, when set, says whether this server still leads its group:
	// a mom's report is granted a lease only while it does, so a leader
	// cut off from the majority stops renewing leases at once.
	Fence func() error
	// UnixListener and TCPListener, when set, are the listeners for
	// SocketPath and TCPAddr, already open: a replicated group's member
	// hands over those it followed with, so that no command or daemon is
	// refused while it takes over.
	UnixListener, TCPListener net.Listener
	// Group, when set, describes the replicated group for qstat -Bf;
	// ChangeGroup adds (add) or removes a member by its batch address
	// (qmgr's server_members += or -=).
	Group       func() (members []string, leader string, term uint64)
	ChangeGroup func(add bool, member string) error
}

// Server is a running pbs_server.
type Server struct {
	cfg    Config
	log    hclog.Logger
	st     *store.Store
	commit *store.Committer
	acct   *accounting.Writer
	mailer *sendmail.Sender // nil: no job mail
	key    []byte
	now    func() time.Time

	mu     sync.RWMutex
	server *model.Object
	// resources are the built-in resources and the site's custom ones
	// (resources.go): every resource value the server takes is read as
	// its type there. Replaced whole, under mu, when a definition
	// changes; read without mu by what parses a request before taking
	// it (rt).
	resources atomic.Pointer[resc.Table]
	queues    map[string]*model.Object
	nodes     map[string]*model.Object
	// schedObj is the sched object's own attributes (schedobj.go).
	schedObj *model.Object
	// nodeOrder caches the names of nodes in order (sortedNodes); nil
	// once a node is created or deleted.
	nodeOrder atomic.Pointer[[]string]
	// jobs holds every job, array parent and subjob that is a job of its
	// own (queued alone, running, exiting); jobList the same in
	// listLess order (queue_rank, then key), each array's parent before
	// its subjobs. A subjob still in
	// its parent's queued indices is in neither (arrays.go).
	jobs    map[model.JobKey]*model.Job
	jobList []*model.Job
	// ended keeps what is left of an array's finished subjobs, by
	// parent and index.
	ended   map[int64]map[int]*model.SubjobEnd
	nextSeq int64
	// resvs are the reservations by sequence number (resv.go); denied
	// keeps, in memory, why the scheduler denied the recent ones.
	resvs map[int64]*model.Resv
	// resvParsed caches each reservation's nodes as read (resvholds.go),
	// keyed by the text and table it was read from.
	resvParsed map[int64]resvParsed
	denied     map[string]resvDenied
	// retryAsked is, per degraded reservation, the retry time a cycle was
	// asked for (resvTick), so that each asks once.
	retryAsked map[int64]int64
	// leaseCeiling is the longest lease granted by any run of the
	// server, in seconds (stored); fenceUntil is when every lease an
	// earlier run (or an earlier leader) could have granted has lapsed:
	// no job is requeued for its node's silence before then.
	leaseCeiling int64
	fenceUntil   time.Time
	counts       counters
	held         holdings

	users userCache
	// ev numbers and publishes the changes of jobs (events.go).
	ev jobEvents

	// runtime holds what moms report, per node name (under mu; not
	// persisted: moms report again after a restart).
	runtime map[string]*nodeRuntime
	// stageAsked is when each job's early stage-in was last sent to its
	// mom (not durable: after a restart the server's start counts).
	stageAsked map[model.JobKey]time.Time
	// resizing holds the jobs whose resize (or resync) is under way
	// (resize.go).
	resizing map[model.JobKey]bool
	// checkpointing holds the jobs a preemption checkpointed, until their
	// mom reports their end and they are requeued (preempt.go; not
	// durable: after a restart their requeue is an R record, not a C).
	checkpointing map[model.JobKey]bool
	// dependants maps a job to the jobs that wait for it (an after form
	// not yet met naming it). Derived from the jobs, never stored:
	// rebuilt at load (depend.go).
	dependants map[int64]map[int64]bool
	started    time.Time
	// epoch names this run of the server, so that a scheduler's cached
	// job versions are not used across a restart.
	epoch string

	sched    schedState
	momPool  momPool
	starting startGate    // jobs whose start their mom has not answered yet
	hosts    hostResolver // staging hosts resolved, for the checks under mu
	shutdown shutdownState

	listeners   []net.Listener
	localLimit  *connlimit.Limiter
	remoteLimit *connlimit.Limiter
	// metrics is always kept (counting costs next to nothing); it is
	// served only when metricsListener is (Config.MetricsAddr).
	metrics         *metrics.Server
	metricsListener *metrics.Listener
	wg              sync.WaitGroup
	stop            chan struct{}
	stopOnce        sync.Once
}

// New opens (or initialises) the store and loads the state. It does not
// listen yet; call Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = fault.Now // time.Now but in a test build (internal/fault)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	s := &Server{
		cfg:         cfg,
		log:         cfg.Logger,
		now:         cfg.Now,
		localLimit:  connlimit.New("local", cfg.Local, cfg.Logger.Named("conn")),
		remoteLimit: connlimit.New("remote", cfg.Remote, cfg.Logger.Named("conn")),
		stop:        make(chan struct{}),
		runtime:     map[string]*nodeRuntime{},
		stageAsked:  map[model.JobKey]time.Time{},
		started:     cfg.Now(),
		epoch:       strconv.FormatInt(time.Now().UnixNano(), 36),
	}
	s.metrics = metrics.NewServer(s, cfg.Logger.Named("metrics"), s.localLimit, s.remoteLimit)
	if after := cfg.Store.AfterCommit; after != nil {
		cfg.Store.AfterCommit = func(n int, took time.Duration, err error) {
			after(n, took, err)
			s.metrics.Commit(n, took, err)
		}
	} else {
		cfg.Store.AfterCommit = s.metrics.Commit
	}
	s.users.init()
	s.sched.init(s.started)
	s.momPool.init()
	s.starting.init()
	s.shutdown.init()
	for _, dir := range []string{cfg.StorePath, cfg.AccountingDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if cfg.KeyFile != "" {
		key, err := proto.LoadOrCreateKey(cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		s.key = key
	}
	st, fresh, err := cfg.Shared, false, error(nil)
	if st == nil {
		if st, fresh, err = store.Open(cfg.StorePath, cfg.Store); err != nil {
			return nil, err
		}
	} else if snap, err := st.Load(); err != nil {
		return nil, err
	} else {
		fresh = snap.Server == nil
	}
	s.st = st
	if fresh {
		if err := s.initFresh(); err != nil {
			s.closeStore()
			return nil, err
		}
	}
	snap, err := st.Load()
	if err != nil {
		s.closeStore()
		return nil, err
	}
	if snap.Server == nil {
		s.closeStore()
		return nil, fmt.Errorf("store %s has no server record: damaged (left untouched)", st.Path())
	}
	s.loadSnapshot(snap)
	s.fenceUntil = s.started.Add(time.Duration(s.leaseCeiling)*time.Second + fenceSlack)
	acct, err := accounting.New(cfg.AccountingDir)
	if err != nil {
		s.closeStore()
		return nil, err
	}
	s.acct = acct
	s.commit = store.NewCommitter(st, &s.mu, s.rollback)
	if err := s.initEvents(); err != nil {
		s.commit.Close()
		s.closeStore()
		return nil, err
	}
	if err := s.importNodesFile(); err != nil {
		s.commit.Close()
		s.closeStore()
		return nil, fmt.Errorf("nodes file: %w", err)
	}
	if cfg.Sendmail != "" {
		s.mailer = sendmail.New(cfg.Sendmail, 0, 0, s.log.Named("mail"))
	}
	s.log.Info("server state loaded", "store", st.Path(), "jobs", len(s.jobs), "queues", len(s.queues), "nodes", len(s.nodes), "next_job", s.nextSeq)
	return s, nil
}

// initFresh writes the defaults of a new PBS_HOME: queue workq, scheduling
// on, and the invoking user as a manager.
func (s *Server) initFresh() error {
	// Root on the server host is always a manager; the user who created
	// the PBS_HOME is made one there too (a personal cluster run without
	// root).
	manager := ""
	if u, err := user.Current(); err == nil {
		manager = u.Username + "@" + s.cfg.Host
	}
	b := &store.Batch{}
	b.PutServer(model.DefaultServer(s.cfg.ServerName, manager))
	b.PutQueue(model.DefaultQueue())
	b.SetNextSeq(0)
	if err := s.st.Commit([]*store.Batch{b}); err != nil {
		return fmt.Errorf("initialise store: %w", err)
	}
	s.log.Info("initialised a fresh PBS_HOME", "queue", "workq", "manager", manager)
	return nil
}

// loadSnapshot replaces the in-memory state. Callers hold mu or have not
// started serving.
func (s *Server) loadSnapshot(snap *store.Snapshot) {
	// The jobs loaded are no changes: the stream's subscribers resume
	// from the changes kept.
	s.ev.quiet = true
	defer func() { s.ev.quiet = false }()
	s.resetEvents()
	s.server = snap.Server
	s.server.Name = s.cfg.ServerName
	s.resources.Store(resc.NewTable(snap.Resources))
	s.schedObj = snap.Sched
	if s.schedObj == nil {
		s.schedObj = model.NewObject(proto.DefaultSched)
	}
	s.queues = make(map[string]*model.Object, len(snap.Queues))
	for _, q := range snap.Queues {
		s.queues[q.Name] = q
	}
	s.nodes = make(map[string]*model.Object, len(snap.Nodes))
	s.nodeOrder.Store(nil)
	for _, n := range snap.Nodes {
		s.nodes[n.Name] = n
	}
	s.jobs = make(map[model.JobKey]*model.Job, len(snap.Jobs))
	s.jobList = make([]*model.Job, 0, len(snap.Jobs)+len(snap.Subjobs))
	s.counts.reset()
	s.held.reset()
	for _, j := range snap.Jobs {
		j.ShareStrings()
		s.jobs[j.Key()] = j
		s.jobList = append(s.jobList, j)
		s.track(j)
	}
	s.loadSubjobs(snap)
	for _, j := range s.jobList {
		s.settleRank(j)
	}
	sort.Slice(s.jobList, func(a, b int) bool { return listLess(s.jobList[a], s.jobList[b]) })
	s.rebuildDependants()
	s.nextSeq = snap.NextSeq
	s.resvs = make(map[int64]*model.Resv, len(snap.Resvs))
	for _, r := range snap.Resvs {
		s.resvs[r.Seq] = r
	}
	if s.denied == nil {
		s.denied = map[string]resvDenied{}
	}
	s.retryAsked = map[int64]int64{}
	s.leaseCeiling = snap.LeaseCeiling
}

// rollback restores memory from the store after a failed commit. It runs
// under mu. If even the reload fails the server cannot know its state and
// exits; a restart recovers from the last durable state.
func (s *Server) rollback(cause error) {
	s.log.Error("store commit failed; restoring state from the store", "error", cause)
	snap, err := s.st.Load()
	if err != nil {
		s.log.Error("cannot reload the store after a failed commit; exiting", "error", err)
		os.Exit(1)
	}
	next := s.nextSeq
	s.loadSnapshot(snap)
	// Sequence numbers handed out in the failed group are never reused.
	if next > s.nextSeq {
		s.nextSeq = next
	}
}

// Close stops listening, waits for connections to end, stops the scheduler
// and moms when qterm asked for it, and closes the store.
func (s *Server) Close() error {
	s.stopServing(false)
	return s.release()
}

// CloseKeepingListeners stops the server as Close does but leaves its
// Unix and TCP listeners open and returns them (nil for one it has not):
// a deposed leader's member follows on them, so that a command that
// connects meanwhile waits in the kernel's queue rather than being
// refused.
func (s *Server) CloseKeepingListeners() (unix, tcp net.Listener, err error) {
	s.stopServing(true)
	for _, l := range s.listeners {
		listen.Resume(l)
	}
	unix, tcp = listen.ByKind(s.listeners)
	return unix, tcp, s.release()
}

// stopServing stops accepting and waits for the connections being served
// (each answers what it was asked before it ends: conn.go) and for the
// server's loops. keep leaves the listeners open.
func (s *Server) stopServing(keep bool) {
	s.stopOnce.Do(func() { close(s.stop) })
	s.metricsListener.Close()
	for _, l := range s.listeners {
		if keep {
			listen.Interrupt(l)
		} else {
			l.Close()
		}
	}
	s.wg.Wait()
}

// release lets go of what the stopped server holds.
func (s *Server) release() error {
	s.ev.hub.Close()
	s.stopDaemons()
	s.momPool.closeAll()
	s.commit.Close()
	if s.mailer != nil {
		s.mailer.Close(5 * time.Second)
	}
	s.acct.Close()
	return s.closeStore()
}

// closeStore closes the store unless a replicated group's member owns it.
func (s *Server) closeStore() error {
	if s.cfg.Shared != nil {
		return nil
	}
	return s.st.Close()
}

// nowUnix is the current time in Unix seconds.
func (s *Server) nowUnix() int64 { return s.now().Unix() }

// jobID formats a job id for this server.
func (s *Server) jobID(seq int64) string { return model.FormatJobID(seq, s.cfg.ServerName) }

// idOf is j's id on this server from its sequence number: "<seq>[].srv"
// for an array.
func (s *Server) idOf(j *model.Job) string {
	if j.IsArray() {
		return model.FormatArrayID(j.Seq, s.cfg.ServerName)
	}
	return s.jobID(j.Seq)
}

// keyLess orders job keys: by sequence number, an array's parent (index
// NoIndex) before its subjobs.
func keyLess(a, b model.JobKey) bool {
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Index < b.Index
}

// listLess orders jobList: by queue_rank, which is the sequence number
// until qorder swaps two jobs' ranks, then by key. A subjob has its
// parent's rank (orderJob keeps them so), so it follows its parent.
// Listings, and so the scheduler's order, are in this order.
func listLess(a, b *model.Job) bool {
	if a.QueueRank != b.QueueRank {
		return a.QueueRank < b.QueueRank
	}
	return keyLess(a.Key(), b.Key())
}

// settleRank gives a subjob the rank listLess needs, its parent's (mu
// held): its record may predate a qorder of its array. A job's own rank
// is admission's (its sequence number), or what qorder gave it; 0 is a
// rank like any other (job 0's).
func (s *Server) settleRank(j *model.Job) {
	if !j.IsSubjob {
		return
	}
	if p, ok := s.top(j.Seq); ok {
		j.QueueRank = p.QueueRank
	}
}

// jobsAfter is the index in jobList of the first job that follows j
// (mu held).
func (s *Server) jobsAfter(j *model.Job) int {
	return sort.Search(len(s.jobList), func(i int) bool { return listLess(j, s.jobList[i]) })
}

// jobAt is the index in jobList where j is or would go (mu held).
func (s *Server) jobAt(j *model.Job) int {
	return sort.Search(len(s.jobList), func(i int) bool { return !listLess(s.jobList[i], j) })
}

// insertJob adds a new job, array or subjob (mu held).
func (s *Server) insertJob(j *model.Job) {
	j.ShareStrings()
	s.settleRank(j)
	s.jobs[j.Key()] = j
	s.list(j)
	s.track(j)
}

// list puts j in its place in jobList (mu held).
func (s *Server) list(j *model.Job) {
	n := len(s.jobList)
	if n == 0 || listLess(s.jobList[n-1], j) {
		s.jobList = append(s.jobList, j)
		return
	}
	i := s.jobAt(j)
	s.jobList = append(s.jobList, nil)
	copy(s.jobList[i+1:], s.jobList[i:])
	s.jobList[i] = j
}

// unlist takes j out of jobList (mu held).
func (s *Server) unlist(j *model.Job) {
	i := s.jobAt(j)
	if i < len(s.jobList) && s.jobList[i] == j {
		s.jobList = append(s.jobList[:i], s.jobList[i+1:]...)
	}
}

// removeJob drops a job from memory (mu held).
func (s *Server) removeJob(j *model.Job) {
	s.untrack(j)
	s.ev.before = nil // gone: its last change (its end) was its event
	k := j.Key()
	delete(s.jobs, k)
	if j.IsArray() {
		delete(s.ended, j.Seq)
	}
	s.unlist(j)
}

// replaceJob puts c, a changed copy of j, in j's place, keeping the
// counters and the dependency index right (mu held).
func (s *Server) replaceJob(j, c *model.Job, now int64) {
	c.Mtime = now
	s.untrack(j)
	s.unindexDepends(j)
	*j = *c
	j.ShareStrings()
	s.track(j)
	s.indexDepends(j)
}

// transitJob is the update path of a transition of a stored job (mu held,
// inside b's commit): change runs between untrack and track and returns
// the hooks of the transition it made; the job is saved in b and its hooks
// run in the same commit, so that none can be dropped.
func (s *Server) transitJob(b *store.Batch, j *model.Job, now int64, change func() model.Hooks) {
	var h model.Hooks
	s.updateJob(j, func() { h = change() })
	s.save(b, j)
	s.hooks(b, j, h, now)
}

// editJob is the update path of a change of a stored job that asks for no
// hooks (an attribute, a rerun mark, a suspension; mu held, inside b's
// commit): change runs between untrack and track and the job is saved in
// b. A transition's hooks dropped inside it are caught by archtest.
func (s *Server) editJob(b *store.Batch, j *model.Job, change func()) {
	s.updateJob(j, change)
	s.save(b, j)
}

// updateJob runs change on j keeping the counters right (mu held); the
// caller saves it. transitJob and editJob are the paths that also save.
func (s *Server) updateJob(j *model.Job, change func()) {
	s.untrack(j)
	change()
	j.Mtime = s.nowUnix()
	s.track(j)
}

// track counts j in the server's counters and, for a subjob, in its
// array's (mu held); untrack takes it out. Every change of a job's state
// happens between the two.
func (s *Server) track(j *model.Job) {
	j.CacheRequest(s.rt()) // every change of a job ends here: its list is parsed once per change
	s.accrue(j)
	s.noteAfter(j)
	s.counts.add(j)
	s.hold(j, 1)
	s.arrayCount(j, 1)
}

func (s *Server) untrack(j *model.Job) {
	s.noteBefore(j)
	s.counts.remove(j)
	s.hold(j, -1)
	s.arrayCount(j, -1)
}

// lookupJob resolves an id naming one job: a job, an array (its parent),
// or a subjob that is a job of its own (mu held for reading). Other
// subjobs are found with resolve (arrays.go).
func (s *Server) lookupJob(id string) (*model.Job, error) {
	ref, ok := model.ParseJobRef(id)
	if !ok || ref.Kind == model.IDRange {
		return nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	key := model.TopKey(ref.Seq)
	if ref.Kind == model.IDSubjob {
		key.Index = ref.Indices[0].Lo
	}
	j, ok := s.jobs[key]
	if !ok || ref.Kind == model.IDArray && !j.IsArray() {
		return nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	return j, nil
}

// top is job or array seq (mu held).
func (s *Server) top(seq int64) (*model.Job, bool) {
	j, ok := s.jobs[model.TopKey(seq)]
	return j, ok
}

// counters keeps per-queue job counts by state and per-user counts of
// unfinished jobs, so queue limits are checked without scanning all jobs.
type counters struct {
	byQueueState map[string]*[8]int
	// subjobsByQueueState counts the subjobs that are jobs of their own.
	subjobsByQueueState map[string]*[8]int
	byQueueUser         map[string]map[string]int
	byUser              map[string]int
	unfinished          int
	// assigned sums the consumable resources of running jobs per node,
	// from their exec_vnode (resources_assigned, and free space for
	// placement).
	assigned map[string]map[string]float64
	// running counts running jobs per queue, user and group, for the
	// scheduler's limits.
	running int
	// version counts job changes; every job carries the count of its last
	// change. It is never reset, so it only grows while the server runs.
	version uint64
	// entity counts, per scope and entity, the unfinished jobs that are
	// not arrays and what they ask for, for OpenPBS's max_queued limits
	// (entlimits.go); arrays are the unfinished array parents, counted
	// live (their subjobs change state without their parent changing).
	entity map[entityKey]*entityCount
	arrays map[*model.Job]bool
}

// stateSlot orders states as state_count prints them.
func stateSlot(st model.JobState) int {
	switch st {
	case model.StateTransit:
		return 0
	case model.StateQueued:
		return 1
	case model.StateHeld:
		return 2
	case model.StateWaiting:
		return 3
	case model.StateRunning:
		return 4
	case model.StateExiting:
		return 5
	case model.StateFinished:
		return 7
	}
	return 6 // Begun
}

func (c *counters) reset() {
	c.byQueueState = map[string]*[8]int{}
	c.subjobsByQueueState = map[string]*[8]int{}
	c.byQueueUser = map[string]map[string]int{}
	c.byUser = map[string]int{}
	c.unfinished = 0
	c.assigned = map[string]map[string]float64{}
	c.running = 0
	c.entity = map[entityKey]*entityCount{}
	c.arrays = map[*model.Job]bool{}
}

func (c *counters) bump(j *model.Job, d int) {
	byState := c.byQueueState
	if j.IsSubjob {
		// Shown in state_count; the limits count the array once, by its
		// parent.
		byState = c.subjobsByQueueState
	}
	qs := byState[j.Queue]
	if qs == nil {
		qs = &[8]int{}
		byState[j.Queue] = qs
	}
	qs[stateSlot(j.State)] += d
	if j.Active() && j.ExecVnode != "" {
		c.running += d
	}
	if j.Holding() {
		for _, a := range j.Assigned() {
			m := c.assigned[a.Node]
			if m == nil {
				m = map[string]float64{}
				c.assigned[a.Node] = m
			}
			for r, v := range a.Amounts {
				m[r] += float64(d) * v
			}
		}
	}
	if j.Finished() || j.IsSubjob {
		return
	}
	c.unfinished += d
	u := j.User()
	m := c.byQueueUser[j.Queue]
	if m == nil {
		m = map[string]int{}
		c.byQueueUser[j.Queue] = m
	}
	m[u] += d
	if m[u] == 0 {
		delete(m, u)
	}
	c.byUser[u] += d
	if c.byUser[u] == 0 {
		delete(c.byUser, u)
	}
	c.countEntities(j, d)
}

func (c *counters) add(j *model.Job) {
	c.version++
	j.Version = c.version
	c.bump(j, 1)
}
func (c *counters) remove(j *model.Job) { c.bump(j, -1) }

// touch marks j changed for incremental status fetches without any
// count changing.
func (c *counters) touch(j *model.Job) {
	c.version++
	j.Version = c.version
}

// queued returns the unfinished jobs in queue q.
func (c *counters) queued(q string) int {
	qs := c.byQueueState[q]
	if qs == nil {
		return 0
	}
	n := 0
	for i, v := range qs {
		if i != 7 {
			n += v
		}
	}
	return n
}

// stateCount renders "Transit:0 Queued:1 ..." for a queue, or for the
// server when q is "".
func (c *counters) stateCount(q string) (string, int) {
	var total [8]int
	for _, byState := range []map[string]*[8]int{c.byQueueState, c.subjobsByQueueState} {
		for name, qs := range byState {
			if q != "" && name != q {
				continue
			}
			for i, v := range qs {
				total[i] += v
			}
		}
	}
	names := []string{"Transit", "Queued", "Held", "Waiting", "Running", "Exiting", "Begun"}
	out := ""
	sum := 0
	for i, n := range names {
		out += n + ":" + strconv.Itoa(total[i]) + " "
		sum += total[i]
	}
	return out, sum
}

var errStopped = errors.New("server stopped")
