// The Mom: pbs_mom's type, its construction (mom_priv, the cluster key,
// the jobs a previous mom left) and its life (Run, Close). The other roles
// are in files of their own (see doc.go).
//
// Locking: Mom.mu guards the jobs map, each momJob's changing fields
// (see momJob), the early stage-ins, the report interval and the server's
// name. Run starts the goroutines of every role; Close waits for them.

package mom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/stagecopy"
	"github.com/gopbs/gopbs/proto"
)

// Version is reported to the server.
const Version = "23.06.06"

// Config is what a mom needs from its caller.
type Config struct {
	Home       string
	NodeName   string
	ServerAddr string // host:port of the server's daemon listener
	// ServerAddrs, when set, are the batch addresses of a replicated
	// server group's members (PBS_SERVER_PEERS): the mom talks to
	// whichever leads (proto.DialGroup).
	ServerAddrs []string
	Port        int // PBS_MOM_SERVICE_PORT
	KeyFile     string
	// SocketPath is the Unix socket through which local commands reach the
	// server; "" disables forwarding.
	SocketPath string
	Logger     hclog.Logger
	// PollInterval is how often job ends are looked for; zero means 250ms.
	PollInterval time.Duration
	// MetricsAddr is where Prometheus metrics are served at /metrics
	// (PBS_MOM_METRICS, host:port); "" serves none.
	MetricsAddr string
	// Python is the interpreter site hooks run with (PBS_PYTHON; Debian's
	// python3 when empty).
	Python string
	// Ready, when set, is called once the mom listens (pbs_mom tells
	// systemd).
	Ready func()
}

// Mom is a running pbs_mom.
type Mom struct {
	cfg     Config
	log     hclog.Logger
	key     []byte
	exe     string // the shepherd's program: pbs_shepherd beside pbs_mom, else pbs_mom
	jobsDir string
	dirs    *dirPool // emptied job directories, for the next jobs
	tmpDirs *dirPool // emptied TMPDIRs, for the next jobs
	// live is mom_priv/config as in force: replaced whole by Reload
	// (SIGHUP), read by every goroutine through mc().
	live atomic.Pointer[liveConfig]
	host ownHost      // its names and addresses, found once at start
	conf *confinement // mom_priv/cgroups; nil: jobs are not confined
	// gpus are the node's GPUs (gpus.go), found once at start.
	gpus []gpuDev

	mu         sync.Mutex
	jobs       map[string]*momJob // by job id
	gpuAlloc   *cgroup.Allocator  // the GPUs' indices; nil without GPUs
	interval   time.Duration
	serverName string

	// staging holds the early stage-ins (the server's stage-in requests)
	// this mom is copying or has not yet reported, by job id.
	staging  map[string]*earlyStage
	stageDir string // mom_priv/stagein: one record per early stage-in
	spool    string // PBS_HOME/undelivered: files whose stage-out failed
	partials string // mom_priv/partials: the partial files of copies (stagecopy)

	// The node health check (nodecheck.go): checkMu is held while one
	// runs; firstCheck is closed once the first periodic check has run
	// (nil without periodic checks); health is the last verdict ("" healthy),
	// healthSeq counts checks, reportedSeq is the healthSeq of the last
	// report the server answered, and reported is closed (and replaced)
	// at each answer. The last four are guarded by mu.
	checkMu     sync.Mutex
	firstCheck  chan struct{}
	endCheck    chan struct{} // asks nodeChecks for a jobend check
	health      string
	healthSeq   uint64
	reportedSeq uint64
	reported    chan struct{}

	// leaseRenewed is when the server last renewed the jobs' lease, and
	// lease for how long (mu held; for the metrics).
	leaseRenewed time.Time
	lease        time.Duration

	// metrics are always counted, served when MetricsAddr is set; the
	// budgets are the listeners' (local: the Unix socket).
	metrics                 *metrics.Mom
	localLimit, remoteLimit *connlimit.Limiter

	// hk are the site hooks the server gave this mom (hooks.go).
	hk momHooks

	kick      chan struct{} // wakes the server link (a job ended)
	ended     chan string   // a shepherd this mom started has exited
	listeners []net.Listener
	wg        sync.WaitGroup
	stop      chan struct{}
	stopOnce  sync.Once
}

// momJob is one job run by this mom. spec, dir, shepherdPid and child are
// set before the job is shared and never change; the other fields change
// while the job runs and are read and written only with Mom.mu held (view
// takes a consistent copy).
type momJob struct {
	spec        proto.MomJob // without the script
	dir         string
	shepherdPid int
	// child is set when this process started the shepherd: it learns of
	// the shepherd's end by reaping it (reaped). A shepherd inherited from
	// a previous mom is alive while it holds its lock file.
	child  bool
	reaped bool
	// ownerUID is the job's owner as this mom resolved it (-1 when not
	// known: a job file of an older mom); forgotten is set once forget
	// has cleaned up after it (mu held), so that a late second call does
	// not touch the directory of a later run of the same job.
	ownerUID  int64
	forgotten bool
	session   shepherd.Session
	result    *shepherd.Result // set once, when the job ended
	// endCheck is the jobend node check that ran after the job ended
	// (its healthSeq; 0 before): the end is reported only once a report
	// carrying that check's verdict has been answered.
	endCheck uint64
	// cg is the job's cgroup (nil: not confined), set before the job is
	// shared.
	cg   *cgroup.Job
	gpus []int // the GPUs the job has here, set before it is shared
	// tmpDir is the job's TMPDIR here, as its job file records it (set
	// before the job is shared; "" for none).
	tmpDir    string
	suspended bool
	// susp is how long the job has been suspended (FileSuspended): it
	// does not count as walltime.
	susp shepherd.Suspension
	used proto.Usage // peaks from polling

	// sister is set, before the job is shared, for a sister's part of a
	// job of another node's mom (sisters.go): no shepherd, only tasks.
	sister bool
	// tasks are the job's tasks running here, by their task shepherd's
	// pid, and taskUsed what the ended ones used (tasks.go).
	tasks    map[int]*liveTask
	taskUsed proto.Usage
	// woundDown is set on the mother superior once the job's tasks and
	// sisters have ended after its result (windDown), with extraUsed
	// what they used: its end is reported only then.
	woundDown, windingDown bool
	extraUsed              proto.Usage
	// localUsed and sisterUsed are extraUsed's parts: this node's tasks
	// (and the nodes a shrink released), and each sister's, for the
	// end's usage by node.
	localUsed  proto.Usage
	sisterUsed []proto.NodeUsage
	// epilogue is set while the execjob_epilogue hooks run over the
	// ended job (hooks.go): its end is reported after them.
	epilogue bool
	// resizeMu serialises the resizes of the job (resize.go);
	// releasedUsed is what its parts on nodes it gave back used.
	resizeMu     sync.Mutex
	releasedUsed proto.Usage
}

// jobView is a copy of a job's changing fields.
type jobView struct {
	session shepherd.Session
	result  *shepherd.Result // shared, never modified once set
	used    proto.Usage
	extra   proto.Usage // what its tasks and sisters used (momJob.extraUsed)
	local   proto.Usage // of that, its tasks here (momJob.localUsed)
	sisters []proto.NodeUsage
}

// view copies j's changing fields under mu.
func (m *Mom) view(j *momJob) jobView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return jobView{session: j.session, result: j.result, used: j.used}
}

// setResult records j's end. The cpus of its cgroup are free from then:
// its shepherd removed the cgroup before its result, or the mom did.
func (m *Mom) setResult(j *momJob, res *shepherd.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j.result = res
	if res != nil && res.OOMKilled {
		m.metrics.OOMKilled()
	}
	if m.conf != nil && m.conf.alloc != nil {
		m.conf.alloc.Release(j.spec.JobID)
	}
	m.releaseGPUs(j.spec.JobID)
	if res != nil && !j.sister && !j.epilogue && m.hasHooks(hook.ExecjobEpilogue) {
		j.epilogue = true
		go m.epilogueHooks(j, res)
	}
	if len(j.tasks) == 0 && len(sisterMoms(&j.spec)) == 0 {
		j.woundDown = true
	} else if !j.windingDown {
		j.windingDown = true
		go m.windDown(j)
	}
}

// hasEnded reports whether j has its result.
func (m *Mom) hasEnded(j *momJob) bool { return m.view(j).result != nil }

// New prepares a mom: reads mom_priv/config and the cluster key and finds
// the jobs a previous incarnation left running.
func New(cfg Config) (*Mom, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	m := &Mom{
		host:     findOwnHost(),
		cfg:      cfg,
		log:      cfg.Logger,
		jobsDir:  filepath.Join(cfg.Home, "mom_priv", "jobs"),
		jobs:     map[string]*momJob{},
		staging:  map[string]*earlyStage{},
		stageDir: filepath.Join(cfg.Home, "mom_priv", "stagein"),
		spool:    filepath.Join(cfg.Home, "undelivered"),
		partials: filepath.Join(cfg.Home, "mom_priv", stagecopy.PartialsDir),
		interval: 10 * time.Second,
		kick:     make(chan struct{}, 1),
		reported: make(chan struct{}),
		endCheck: make(chan struct{}, 1),
		ended:    make(chan string, 64),
		stop:     make(chan struct{}),
	}
	m.initHooks()
	m.localLimit = connlimit.New("local", localBudget, m.log.Named("conn"))
	m.remoteLimit = connlimit.New("remote", remoteBudget, m.log.Named("conn"))
	m.metrics = metrics.NewMom(m, m.log.Named("metrics"), m.localLimit, m.remoteLimit)
	if err := os.MkdirAll(m.jobsDir, 0o751); err != nil {
		return nil, fmt.Errorf("mom_priv: %w", err)
	}
	if err := checkLayout(filepath.Join(cfg.Home, "mom_priv")); err != nil {
		return nil, err
	}
	dirs, err := newJobDirPool(filepath.Join(cfg.Home, "mom_priv", "spare"), dirPoolMax)
	if err != nil {
		return nil, err
	}
	m.dirs = dirs
	for _, d := range []string{m.stageDir, m.partials} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("mom_priv: %w", err)
		}
	}
	if err := stagecopy.MakeSpool(m.spool); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the pbs_mom executable for job shepherds: %w", err)
	}
	m.exe = exe
	if sh := filepath.Join(filepath.Dir(exe), shepherd.Binary); exists(sh) {
		m.exe = sh
	}
	key, err := proto.LoadKey(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w (copy the server's PBS_HOME/auth/cluster.key here, mode 0600)", err)
	}
	m.key = key
	mc, err := m.readMomConfig()
	if err != nil {
		return nil, err
	}
	m.live.Store(&liveConfig{conf: mc, resources: mc.Resources})
	if nc := mc.NodeCheck; nc.Script != "" && nc.Every > 0 {
		m.firstCheck = make(chan struct{})
	}
	for _, name := range shepherd.UnrunPelogs(filepath.Join(cfg.Home, "mom_priv")) {
		m.log.Warn("mom_priv/"+name+" is not run: this mom runs only the prologue and the epilogue (and their .<jobtype> variants)", "file", name)
	}
	if m.conf, err = loadConfinement(cfg.Home, cfg.NodeName, m.host.names, m.log); err != nil {
		return nil, err
	}
	if err := m.loadGPUs(); err != nil {
		return nil, err
	}
	m.tmpDirs = newTmpDirPool(shepherd.TmpBase(m.shepherdSettings()), m.cfg.NodeName, dirPoolMax)
	if err := m.recover(); err != nil {
		return nil, err
	}
	if err := m.recoverCgroups(); err != nil {
		return nil, err
	}
	if err := m.recoverStaging(); err != nil {
		return nil, err
	}
	stagecopy.RecoverPartials(m.partials, m.log)
	return m, nil
}

// recover loads the job directories left by a previous run.
func (m *Mom) recover() error {
	ents, err := os.ReadDir(m.jobsDir)
	if err != nil {
		return fmt.Errorf("mom_priv/jobs: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(m.jobsDir, e.Name())
		j := &momJob{dir: dir, ownerUID: -1}
		var jf shepherd.JobFile
		err := shepherd.ReadJSON(filepath.Join(dir, shepherd.FileJob), &jf)
		j.spec = jf.MomJob
		j.cg = jf.Cgroup
		// A job suspended before this mom started is still frozen.
		j.suspended = j.cg != nil && j.cg.Frozen()
		j.susp = shepherd.ReadSuspension(j.dir)
		j.suspended = j.suspended || j.susp.Since > 0
		j.gpus = jf.GPUs
		j.sister = jf.Sister
		j.tmpDir = jf.TmpDirPath()
		if jf.OwnerAccount != nil {
			j.ownerUID = int64(jf.OwnerAccount.UID)
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && !exists(filepath.Join(dir, shepherd.FileShepherd)) && !exists(filepath.Join(dir, shepherd.FileSession)) {
				// The previous mom stopped while writing the job's files:
				// no shepherd can have started it (one starts after they
				// are all written), and the server never heard it took
				// the job. Nothing to keep.
				m.log.Info("removing the directory of a job start that never completed", "dir", dir)
				os.RemoveAll(dir)
				continue
			}
			m.log.Error("unreadable job directory left aside", "dir", dir, "error", err)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, shepherd.FileShepherd)); err == nil {
			j.shepherdPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if j.sister {
			if exists(filepath.Join(dir, shepherd.FileResult)) {
				// Its end was under way when the previous mom stopped.
				m.jobs[j.spec.JobID] = j
				m.endSisterJob(j, "task killed: its job ended")
				continue
			}
			m.jobs[j.spec.JobID] = j
			if m.gpuAlloc != nil {
				m.gpuAlloc.Hold(j.spec.JobID, j.gpus)
			}
			m.log.Info("recovered a job's part as a sister", "job", j.spec.JobID, "run", j.spec.RunCount)
			continue
		}
		shepherd.ReadJSON(filepath.Join(dir, shepherd.FileSession), &j.session)
		var res shepherd.Result
		if shepherd.ReadJSON(filepath.Join(dir, shepherd.FileResult), &res) == nil {
			j.result = &res
		}
		m.jobs[j.spec.JobID] = j
		if j.result != nil {
			// Its tasks and sisters may not have been ended: again
			// (ending is idempotent), before its end is reported.
			j.woundDown = len(sisterMoms(&j.spec)) == 0
			if !j.woundDown {
				j.windingDown = true
				defer func() { go m.windDown(j) }()
			}
		}
		if j.result == nil && m.gpuAlloc != nil {
			m.gpuAlloc.Hold(j.spec.JobID, j.gpus)
		}
		m.log.Info("recovered job", "job", j.spec.JobID, "run", j.spec.RunCount, "ended", j.result != nil)
	}
	return nil
}

// Run serves until ctx ends or Close.
func (m *Mom) Run(ctx context.Context) error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(m.cfg.Port))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", m.cfg.Port, err)
	}
	m.listeners = append(m.listeners, l)
	if m.cfg.SocketPath != "" {
		os.Remove(m.cfg.SocketPath)
		ul, err := net.Listen("unix", m.cfg.SocketPath)
		if err != nil {
			l.Close()
			return fmt.Errorf("listen on %s: %w", m.cfg.SocketPath, err)
		}
		os.Chmod(m.cfg.SocketPath, 0o666)
		m.listeners = append(m.listeners, ul)
		m.wg.Add(1)
		go m.acceptLoop(ul, m.localLimit, m.newRelay().Serve)
	}
	if m.cfg.MetricsAddr != "" {
		ml, err := m.metrics.Listen(m.cfg.MetricsAddr, m.log.Named("metrics"))
		if err != nil {
			for _, l := range m.listeners {
				l.Close()
			}
			return err
		}
		defer ml.Close()
	}
	m.resumeStaging()
	if m.mc().NodeCheck.Script != "" {
		m.wg.Add(1)
		go m.nodeChecks()
	}
	m.wg.Add(4)
	go m.acceptLoop(l, m.remoteLimit, m.serveServer)
	go m.serverLink()
	go m.watch()
	go m.hookLoop()
	m.log.Info("mom ready", "node", m.cfg.NodeName, "port", m.cfg.Port, "server", m.cfg.ServerAddr, "jobs", len(m.jobs))
	if m.cfg.Ready != nil {
		m.cfg.Ready()
	}
	select {
	case <-ctx.Done():
	case <-m.stop:
	}
	m.Close()
	return nil
}

// Close stops the mom. Running jobs keep running under their shepherds.
func (m *Mom) Close() {
	m.signalStop()
	m.wg.Wait()
}

// signalStop starts stopping without waiting, so that a request handler
// can call it.
func (m *Mom) signalStop() {
	m.stopOnce.Do(func() {
		close(m.stop)
		for _, l := range m.listeners {
			l.Close()
		}
	})
}

func (m *Mom) stopped() bool {
	select {
	case <-m.stop:
		return true
	default:
		return false
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
