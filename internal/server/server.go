package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/hookrun"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/mailer/sendmail"
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/internal/server/state"
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
	// Python is the interpreter site hooks run with (PBS_PYTHON;
	// hookrun.DefaultPython, Debian's python3, when empty).
	Python string
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
	// queues is the queue table (internal/server/state).
	queues *state.Queues
	// resdefs, queueMgmt and nodeMgmt are qmgr's handlers of custom
	// resources, queues and nodes (internal/server/management;
	// handlers.go).
	resdefs   *management.Resources
	queueMgmt *management.Queues
	objMgmt   *management.Objects
	nodeMgmt  *management.Nodes
	// hooks are the site hooks (state.Hooks), hookMgmt qmgr's handler
	// of them, hookRun what runs them (hooks.go); hookFiles says the
	// scripts and configuration files in server_priv/hooks must be
	// written again before the next run.
	siteHooks *state.Hooks
	hookMgmt  *management.Hooks
	hookRun   *hookrun.Runner
	hookFiles atomic.Bool
	// hookAfter queues the runs of hooks whose outcome changes nothing
	// (jobobit) for hookLoop (hookloop.go), which runs them in order.
	hookAfter chan func()
	// momHookCache is what the moms are given of the hooks (hooks.go).
	momHookCache momHooksCache
	// nodes is the node table (internal/server/state): each node's
	// attributes, what its mom reports (not persisted: moms report again
	// after a restart), and its available amounts, typed.
	nodes *state.Nodes
	// schedObj is the sched object's own attributes (schedobj.go).
	schedObj *model.Object
	// jobs is the job table with its indices and counters (internal/
	// server/state): every job, array parent and subjob that is a job of
	// its own. A subjob still in its parent's queued indices is not in it
	// (arrays.go).
	jobs    *state.Jobs
	nextSeq int64
	// resvs is the reservation table (internal/server/state), with why
	// the scheduler denied the recent ones and the retries asked for.
	resvs *state.Resvs
	// leaseCeiling is the longest lease granted by any run of the
	// server, in seconds (stored); fenceUntil is when every lease an
	// earlier run (or an earlier leader) could have granted has lapsed:
	// no job is requeued for its node's silence before then.
	leaseCeiling int64
	fenceUntil   time.Time

	users userCache
	// ev numbers and publishes the changes of jobs (events.go).
	ev jobEvents

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
	started       time.Time
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
		stageAsked:  map[model.JobKey]time.Time{},
		started:     cfg.Now(),
		epoch:       strconv.FormatInt(time.Now().UnixNano(), 36),
	}
	s.jobs = state.New(state.Config{Table: s.rt, HostNodes: func(n []string) []string { return s.nodes.HostNodes(n) }, Now: s.nowUnix, Watch: jobWatch{s}})
	s.resvs = state.NewResvs(s.rt)
	s.queues = state.NewQueues()
	s.resdefs = management.NewResources(mgmtStore{s})
	s.queueMgmt = management.NewQueues(mgmtStore{s}, cfg.Logger.Named("qmgr"))
	s.objMgmt = management.NewObjects(mgmtStore{s}, cfg.Host)
	s.nodeMgmt = management.NewNodes(mgmtStore{s}, cfg.MomPort)
	s.siteHooks = state.NewHooks()
	s.hookAfter = make(chan func(), hookAfterQueue)
	s.hookMgmt = management.NewHooks(mgmtStore{s}, raisedEvents)
	s.hookRun = hookrun.New(hookrun.Config{Python: cfg.Python, Dir: filepath.Join(cfg.StorePath, "hooks"), Logger: cfg.Logger.Named("hook")})
	s.nodes = state.NewNodes(s.rt, s.started)
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
	s.log.Info("server state loaded", "store", st.Path(), "jobs", s.jobs.Len(), "queues", s.queues.Len(), "nodes", s.nodes.Len(), "next_job", s.nextSeq)
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
	s.queues.Load(snap.Queues)
	s.nodes.Load(snap.Nodes)
	s.jobs.Load(snap.Jobs, snap.Subjobs, snap.Ends)
	s.nextSeq = snap.NextSeq
	s.resvs.Load(snap.Resvs)
	s.leaseCeiling = snap.LeaseCeiling
	s.siteHooks.Load(snap.Hooks)
	s.hookFiles.Store(true)
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
	s.hookRun.Close()
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

// replaceJob puts c, a changed copy of j, in j's place, keeping the
// counters and the dependency index right (mu held).
func (s *Server) replaceJob(j, c *model.Job, now int64) {
	c.Mtime = now
	s.jobs.Recount(j, func() {
		*j = *c
		j.ShareStrings()
	})
}

// transitJob is the update path of a transition of a stored job (mu held,
// inside b's commit): change runs inside the table's update path (state.Jobs.Transit) and returns
// the hooks of the transition it made; the job is saved in b and its hooks
// run in the same commit, so that none can be dropped.
func (s *Server) transitJob(b *store.Batch, j *model.Job, now int64, change func() model.Hooks) {
	h := s.jobs.Transit(j, change)
	s.save(b, j)
	s.hooks(b, j, h, now)
}

// editJob is the update path of a change of a stored job that asks for no
// hooks (an attribute, a rerun mark, a suspension; mu held, inside b's
// commit): change runs inside the table's update path and the job is saved in
// b. A transition's hooks dropped inside it are caught by archtest.
func (s *Server) editJob(b *store.Batch, j *model.Job, change func()) {
	s.jobs.Update(j, change)
	s.save(b, j)
}

var errStopped = errors.New("server stopped")
