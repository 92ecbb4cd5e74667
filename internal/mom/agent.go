package mom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"gopbs/internal/config"
	"gopbs/internal/connlimit"
	"gopbs/internal/fault"
	"gopbs/internal/signals"
	"gopbs/proto"
)

// Version is reported to the server.
const Version = "23.06.06"

// Config is what a mom needs from its caller.
type Config struct {
	Home       string
	NodeName   string
	ServerAddr string // host:port of the server's daemon listener
	Port       int    // PBS_MOM_SERVICE_PORT
	KeyFile    string
	// SocketPath is the Unix socket through which local commands reach the
	// server; "" disables forwarding.
	SocketPath string
	Logger     hclog.Logger
	// PollInterval is how often job ends are looked for; zero means 250ms.
	PollInterval time.Duration
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
	momConf *MomConfig

	mu         sync.Mutex
	jobs       map[string]*momJob // by job id
	interval   time.Duration
	serverName string

	// staging holds the early stage-ins (the server's stage-in requests)
	// this mom is copying or has not yet reported, by job id.
	staging  map[string]*earlyStage
	stageDir string // mom_priv/stagein: one record per early stage-in
	spool    string // PBS_HOME/undelivered: files whose stage-out failed

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
	session   sessionInfo
	result    *jobResult // set once, when the job ended
	suspended bool
	used      proto.Usage // peaks from polling
}

// jobView is a copy of a job's changing fields.
type jobView struct {
	session sessionInfo
	result  *jobResult // shared, never modified once set
	used    proto.Usage
}

// view copies j's changing fields under mu.
func (m *Mom) view(j *momJob) jobView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return jobView{session: j.session, result: j.result, used: j.used}
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
		cfg:      cfg,
		log:      cfg.Logger,
		jobsDir:  filepath.Join(cfg.Home, "mom_priv", "jobs"),
		jobs:     map[string]*momJob{},
		staging:  map[string]*earlyStage{},
		stageDir: filepath.Join(cfg.Home, "mom_priv", "stagein"),
		spool:    filepath.Join(cfg.Home, "undelivered"),
		interval: 10 * time.Second,
		kick:     make(chan struct{}, 1),
		ended:    make(chan string, 64),
		stop:     make(chan struct{}),
	}
	if err := os.MkdirAll(m.jobsDir, 0o751); err != nil {
		return nil, fmt.Errorf("mom_priv: %w", err)
	}
	dirs, err := newJobDirPool(filepath.Join(cfg.Home, "mom_priv", "spare"), dirPoolMax)
	if err != nil {
		return nil, err
	}
	m.dirs = dirs
	if err := os.MkdirAll(m.stageDir, 0o700); err != nil {
		return nil, fmt.Errorf("mom_priv: %w", err)
	}
	// Owners create their own directory here when a stage-out fails (as
	// /tmp: sticky, so no one removes another's).
	if err := os.MkdirAll(m.spool, 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if err := os.Chmod(m.spool, 0o1777|os.ModeSticky); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find the pbs_mom executable for job shepherds: %w", err)
	}
	m.exe = exe
	if sh := filepath.Join(filepath.Dir(exe), ShepherdBinary); exists(sh) {
		m.exe = sh
	}
	key, err := proto.LoadKey(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w (copy the server's PBS_HOME/auth/cluster.key here, mode 0600)", err)
	}
	m.key = key
	m.momConf = DefaultMomConfig()
	path := filepath.Join(cfg.Home, "mom_priv", "config")
	if f, err := os.Open(path); err == nil {
		c, err := ParseMomConfig(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, w := range c.Warnings {
			m.log.Warn("mom_priv/config", "note", w)
		}
		if err := checkMomConfig(c, cfg.ServerAddr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		m.momConf = c
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range unrunPelogs(filepath.Join(cfg.Home, "mom_priv")) {
		m.log.Warn("mom_priv/"+name+" is not run: this mom runs only the prologue and the epilogue (and their .<jobtype> variants)", "file", name)
	}
	m.tmpDirs = newTmpDirPool(filepath.Dir(jobTmpDir(m.shepherdSettings(), "")), m.cfg.NodeName, dirPoolMax)
	if err := m.recover(); err != nil {
		return nil, err
	}
	if err := m.recoverStaging(); err != nil {
		return nil, err
	}
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
		var jf jobFile
		err := readJSON(filepath.Join(dir, fileJob), &jf)
		j.spec = jf.MomJob
		if jf.OwnerAccount != nil {
			j.ownerUID = int64(jf.OwnerAccount.UID)
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && !exists(filepath.Join(dir, fileShepherd)) && !exists(filepath.Join(dir, fileSession)) {
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
		if b, err := os.ReadFile(filepath.Join(dir, fileShepherd)); err == nil {
			j.shepherdPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		readJSON(filepath.Join(dir, fileSession), &j.session)
		var res jobResult
		if readJSON(filepath.Join(dir, fileResult), &res) == nil {
			j.result = &res
		}
		m.jobs[j.spec.JobID] = j
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
		go m.acceptLoop(ul, connlimit.New("local", localBudget, m.log.Named("conn")), m.relay)
	}
	m.resumeStaging()
	m.wg.Add(3)
	go m.acceptLoop(l, connlimit.New("remote", remoteBudget, m.log.Named("conn")), m.serveServer)
	go m.serverLink()
	go m.watch()
	m.log.Info("mom ready", "node", m.cfg.NodeName, "port", m.cfg.Port, "server", m.cfg.ServerAddr, "jobs", len(m.jobs))
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

// Connection budgets. The TCP port serves only the server (its pool of
// connections); the Unix socket serves the commands of this host's users,
// each of whom gets a share, so that one user's idle connections cannot
// lock out the others, nor open an unbounded number of server connections.
var (
	remoteBudget = connlimit.Budget{Max: 512, PerPeer: 256, Pending: 64, PerPeerPending: 16}
	localBudget  = connlimit.Budget{Max: 1024, PerPeer: 64, Pending: 128, PerPeerPending: 16}
)

// handshakeTimeout bounds a peer's Hello, and the server's first tagged
// request after it.
const handshakeTimeout = 3 * time.Second

// acceptLoop serves the connections of l, each admitted by its class's
// budget (per IP address on TCP, per uid on the Unix socket).
func (m *Mom) acceptLoop(l net.Listener, limit *connlimit.Limiter, serve func(net.Conn, *connlimit.Slot)) {
	defer m.wg.Done()
	for {
		nc, err := l.Accept()
		if err != nil {
			if m.stopped() {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		key := connlimit.PeerKey(nc)
		if _, unix := nc.(*net.UnixConn); unix {
			uid, _, err := proto.PeerCreds(nc)
			if err != nil {
				nc.Close()
				continue
			}
			key = connlimit.UIDKey(uid)
		}
		slot := limit.Admit(key, nc)
		if slot == nil {
			continue
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer slot.Release()
			defer nc.Close()
			// The server keeps its connections open for reuse: close them
			// when the mom stops so that stopping does not wait for them.
			done := make(chan struct{})
			defer close(done)
			go func() {
				select {
				case <-m.stop:
					nc.Close()
				case <-done:
				}
			}()
			serve(nc, slot)
		}()
	}
}

// serverLink keeps the connection to the server: status reports every
// interval and job ends as soon as they happen, reconnecting with backoff.
func (m *Mom) serverLink() {
	defer m.wg.Done()
	backoff := 200 * time.Millisecond
	for !m.stopped() {
		c, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: m.cfg.ServerAddr, Role: proto.RoleMom, Name: m.cfg.NodeName, Key: m.key, Timeout: 30 * time.Second})
		if err != nil {
			m.log.Warn("cannot reach the server", "server", m.cfg.ServerAddr, "error", err)
			select {
			case <-m.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
		m.mu.Lock()
		m.serverName = c.ServerName()
		m.mu.Unlock()
		m.log.Info("connected to the server", "server", m.cfg.ServerAddr)
		err = m.talk(c)
		c.Close()
		if err != nil && !m.stopped() {
			m.log.Warn("server connection lost", "error", err)
		}
	}
}

// talk reports status and job ends over one connection until it fails.
func (m *Mom) talk(c *proto.Client) error {
	for {
		if err := m.reportStatus(c); err != nil {
			return err
		}
		if err := m.sendObits(c); err != nil {
			return err
		}
		m.mu.Lock()
		interval := m.interval
		m.mu.Unlock()
		select {
		case <-m.stop:
			return nil
		case <-m.kick:
		case <-time.After(interval):
		}
	}
}

func (m *Mom) reportStatus(c *proto.Client) error {
	st := m.status()
	var reply proto.MomStatusReply
	// The lease counts from before the report left: the server counts
	// its own deadline from when the report arrived, which is later.
	sent := bootNow()
	if err := c.Call(proto.MsgMomStatus, st, &reply); err != nil {
		var pe *proto.Error
		if errors.As(err, &pe) && pe.Code == proto.PBSE_UNKNODE {
			return fmt.Errorf("the server has no node %q (create it with qmgr)", m.cfg.NodeName)
		}
		return err
	}
	deadline := time.Duration(0)
	if reply.Lease > 0 {
		deadline = sent + time.Duration(reply.Lease)*time.Second
	}
	if err := writeLease(leasePath(m.jobsDir), deadline); err != nil {
		// The old lease stands and lapses on time: fencing stays safe.
		m.log.Error("cannot renew the jobs' lease", "error", err)
	}
	m.mu.Lock()
	if reply.Interval > 0 {
		m.interval = time.Duration(reply.Interval) * time.Second
	}
	m.mu.Unlock()
	for _, id := range reply.Kill {
		m.killOrphan(id)
	}
	return nil
}

// status builds the periodic report.
func (m *Mom) status() *proto.MomStatus {
	facts, err := readHostFacts()
	if err != nil {
		m.log.Warn("cannot read host facts", "error", err)
	}
	st := &proto.MomStatus{
		Node: m.cfg.NodeName, Version: Version, Port: m.cfg.Port, Arch: "linux",
		Ncpus: facts.Ncpus, Physmem: facts.Physmem, Loadave: facts.Loadave,
		IdealLoad: m.momConf.IdealLoad, MaxLoad: m.momConf.MaxLoad, Resources: m.momConf.Resources,
		RemoteCopy: m.momConf.Rcp != "",
		UseCpHosts: useCpHosts(m.momConf.UseCp),
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		j := m.jobs[id]
		js := proto.MomJobState{JobID: id, RunCount: j.spec.RunCount, SessionID: j.session.Pgid, Exited: j.result != nil, Suspended: j.suspended, Used: m.scaleUsage(j.used)}
		if j.result == nil && (len(j.spec.StageIn) > 0 || len(j.spec.StageOut) > 0) {
			js.Phase = readPhase(j.dir)
		}
		st.Jobs = append(st.Jobs, js)
	}
	for id := range m.staging {
		st.Staging = append(st.Staging, id)
	}
	sort.Strings(st.Staging)
	return st
}

// sendObits reports every ended job; a job's directory goes only after the
// server has acknowledged its end.
func (m *Mom) sendObits(c *proto.Client) error {
	m.mu.Lock()
	var done []*momJob
	var views []jobView
	for _, j := range m.jobs {
		if j.result != nil {
			done = append(done, j)
			views = append(views, jobView{session: j.session, result: j.result, used: j.used})
		}
	}
	m.mu.Unlock()
	for i, j := range done {
		v := views[i]
		r := v.result
		used := r.Used
		used.CPUSecs = max(used.CPUSecs, v.used.CPUSecs)
		used.MemBytes = max(used.MemBytes, v.used.MemBytes)
		used.VmemBytes = max(used.VmemBytes, v.used.VmemBytes)
		obit := &proto.JobObit{JobID: j.spec.JobID, RunCount: j.spec.RunCount, ExitStatus: r.ExitStatus, Used: m.scaleUsage(used), Start: r.Start, End: r.End, Comment: r.Comment, SessionID: v.session.Pgid, Fenced: r.Fenced,
			StageInFailed: r.StageInFailed, StageOutSpool: r.StageOutSpool}
		if err := fault.Hit(fault.MomBeforeObit); err != nil {
			return err
		}
		if err := c.Call(proto.MsgJobObit, obit, nil); err != nil {
			var pe *proto.Error
			if !errors.As(err, &pe) || transient(pe.Code) {
				// Kept, and sent again on the next connection.
				return err
			}
			m.log.Warn("server refused the job end; dropping it", "job", j.spec.JobID, "error", err)
		}
		m.log.Info("job end reported", "job", j.spec.JobID, "exit_status", r.ExitStatus)
		m.forget(j)
	}
	return m.sendStageReports(c)
}

// transient reports whether a server's refusal may not hold next time (a
// failed commit, a server going down): a job's end is never dropped for
// it, or the server would later take the job for lost and run it again.
func transient(code proto.Code) bool {
	switch code {
	case proto.PBSE_SAVE_ERR, proto.PBSE_SVRDOWN, proto.PBSE_SYSTEM, proto.PBSE_NOCONNECTS, proto.PBSE_INTERNAL:
		return true
	}
	return false
}

// forget removes an acknowledged job: its directory and its TMPDIR are
// kept for later jobs when they may be, else removed.
func (m *Mom) forget(j *momJob) {
	m.mu.Lock()
	if j.forgotten {
		m.mu.Unlock()
		return
	}
	j.forgotten = true
	if m.jobs[j.spec.JobID] == j {
		delete(m.jobs, j.spec.JobID)
	}
	m.mu.Unlock()
	// The job's shepherd left its TMPDIR empty for this (closeTmpDir);
	// one not kept goes, as a TMPDIR always does at its job's end.
	tmp := jobTmpDir(m.shepherdSettings(), j.spec.JobID)
	if j.ownerUID < 0 || !m.tmpDirs.put(tmp, uint32(j.ownerUID)) {
		os.RemoveAll(tmp)
	}
	if m.dirs.put(j.dir, 0) {
		return
	}
	if err := os.RemoveAll(j.dir); err != nil {
		m.log.Error("cannot remove job directory", "dir", j.dir, "error", err)
	}
}

// killOrphan kills a job the server says must not run here.
func (m *Mom) killOrphan(id string) {
	m.mu.Lock()
	j := m.jobs[id]
	m.mu.Unlock()
	if j == nil {
		return
	}
	m.log.Warn("killing a job the server does not run here", "job", id)
	v := m.view(j)
	if v.result == nil && v.session.Pgid > 0 {
		syscall.Kill(-v.session.Pgid, syscall.SIGKILL)
	}
	if v.result == nil && v.session.Pgid == 0 && !j.child {
		// Left by a previous mom that stopped while starting it: if no
		// shepherd holds it, no shepherd ever will run it (the lock is
		// held while its end is recorded), so it goes now, without
		// waiting out the grace a late shepherd would get.
		if release, ok := m.claimShepherdLock(j); ok {
			res := jobResult{ExitStatus: proto.JobExecRetry, End: time.Now().Unix(), Comment: "job not started: the server does not run it here"}
			writeJSONAtomic(j.dir, fileResult, res, 0o600)
			release()
			m.mu.Lock()
			j.result = &res
			m.mu.Unlock()
			v.result = &res
		}
	}
	if v.result != nil {
		m.forget(j)
	}
}

// watch finds job ends and samples usage.
func (m *Mom) watch() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.PollInterval)
	defer t.Stop()
	lastSample := time.Time{}
	for {
		select {
		case <-m.stop:
			return
		case id := <-m.ended:
			m.mu.Lock()
			j := m.jobs[id]
			m.mu.Unlock()
			if j != nil && !m.hasEnded(j) && m.checkJob(j, nil) {
				select {
				case m.kick <- struct{}{}:
				default:
				}
			}
			continue
		case <-t.C:
		}
		sample := time.Since(lastSample) >= 2*time.Second
		if sample {
			lastSample = time.Now()
		}
		m.mu.Lock()
		var running []*momJob
		for _, j := range m.jobs {
			if j.result == nil {
				running = append(running, j)
			}
		}
		m.mu.Unlock()
		var usage map[int][]procStat
		if sample {
			sids := map[int]bool{}
			for _, j := range running {
				if pid := m.shepherdPidOf(j); pid > 0 {
					sids[pid] = true
				}
			}
			usage = sessionsProcesses(sids)
		}
		ended := false
		for _, j := range running {
			if m.checkJob(j, usage) {
				ended = true
			}
		}
		if ended {
			select {
			case m.kick <- struct{}{}:
			default:
			}
		}
	}
}

// checkJob looks for a job's result and, when usage (the processes of
// the jobs' sessions, read at once for all) is given, samples its usage;
// it reports whether the job ended.
func (m *Mom) checkJob(j *momJob, usage map[int][]procStat) bool {
	session := m.view(j).session
	if session.Pgid == 0 {
		var s sessionInfo
		if readJSON(filepath.Join(j.dir, fileSession), &s) == nil {
			m.mu.Lock()
			j.session = s
			m.mu.Unlock()
			session = s
		}
	}
	var res jobResult
	if err := readJSON(filepath.Join(j.dir, fileResult), &res); err == nil {
		m.mu.Lock()
		j.result = &res
		m.mu.Unlock()
		m.log.Info("job ended", "job", j.spec.JobID, "exit_status", res.ExitStatus, "comment", res.Comment)
		for _, note := range res.Notes {
			// The shepherd's word on the job's prologue or epilogue.
			m.log.Warn(note, "job", j.spec.JobID)
		}
		return true
	}
	if release, gone := m.shepherdGone(j, session); gone {
		// Re-check: the result may have landed between the two looks.
		if err := readJSON(filepath.Join(j.dir, fileResult), &res); err != nil {
			now := time.Now().Unix()
			if session.Pgid == 0 && !j.child {
				// The previous mom stopped while starting it: no shepherd
				// ever ran it, and none can now (the lock is held here
				// while the result is written). It may run elsewhere.
				res = jobResult{ExitStatus: proto.JobExecRetry, End: now, Comment: "job not started: its mom stopped while starting it"}
			} else {
				res = jobResult{ExitStatus: proto.JobExecFail2, Start: session.Start, End: now, Comment: "job's shepherd process died without a result"}
			}
			// The job's processes may outlive their shepherd (it died
			// before recording them): they are in its session, which no
			// other process can join, so they die with it here.
			if pid := m.shepherdPidOf(j); pid > 0 {
				for _, p := range sessionProcesses(pid) {
					syscall.Kill(p.PID, syscall.SIGKILL)
				}
			}
			writeJSONAtomic(j.dir, fileResult, res, 0o600)
			m.log.Warn("job's shepherd is gone without a result", "job", j.spec.JobID, "exit_status", res.ExitStatus, "comment", res.Comment)
		}
		release()
		m.mu.Lock()
		j.result = &res
		m.mu.Unlock()
		return true
	}
	if usage != nil && session.Pgid > 0 {
		var cpu, rss, vsz int64
		for _, p := range usage[m.shepherdPidOf(j)] {
			cpu += p.CPUTicks
			rss += p.RSSPages * pageSize
			vsz += p.VSize
		}
		m.mu.Lock()
		j.used.CPUSecs = max(j.used.CPUSecs, cpu/clockTicks)
		j.used.MemBytes = max(j.used.MemBytes, rss)
		j.used.VmemBytes = max(j.used.VmemBytes, vsz)
		if session.Start > 0 {
			j.used.WallSecs = time.Now().Unix() - session.Start
		}
		m.mu.Unlock()
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// shepherdStartGrace is how long a job directory without a session may
// wait for the shepherd a previous mom forked just before it stopped.
const shepherdStartGrace = 30 * time.Second

// shepherdGone reports whether j's shepherd has certainly exited. A
// shepherd this mom started is gone once reaped. One inherited from a
// previous mom is gone when its lock can be taken; the lock is then held
// until release is called, so that no late shepherd can start the job
// while its end is being recorded.
func (m *Mom) shepherdGone(j *momJob, session sessionInfo) (release func(), gone bool) {
	noop := func() {}
	if j.child {
		m.mu.Lock()
		defer m.mu.Unlock()
		return noop, j.reaped
	}
	if session.Pgid == 0 {
		if fi, err := os.Stat(filepath.Join(j.dir, fileJob)); err != nil || time.Since(fi.ModTime()) < shepherdStartGrace {
			return noop, false
		}
	}
	return m.claimShepherdLock(j)
}

// claimShepherdLock takes the lock a live shepherd of j holds; it fails
// while one lives. While the caller holds it no shepherd can start j.
func (m *Mom) claimShepherdLock(j *momJob) (release func(), ok bool) {
	noop := func() {}
	f, err := os.OpenFile(filepath.Join(j.dir, fileLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return noop, false // cannot tell: keep waiting
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return noop, false // a shepherd holds it
	}
	if isShepherdOf(m.shepherdPidOf(j), j.dir) {
		// A shepherd of a mom from before shepherds took the lock.
		f.Close()
		return noop, false
	}
	return func() { f.Close() }, true
}

// isShepherdOf reports whether pid is a live "pbs_shepherd --shepherd dir"
// or "pbs_mom --shepherd dir" (its command line, so a reused pid is not
// mistaken for it).
func isShepherdOf(pid int, dir string) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	return len(args) == 3 && args[1] == ArgShepherd && args[2] == dir
}

// shepherdPidOf is j's shepherd's pid (its session id), from the mom's
// record or the shepherd's own.
func (m *Mom) shepherdPidOf(j *momJob) int {
	if j.shepherdPid > 0 {
		return j.shepherdPid
	}
	b, err := os.ReadFile(filepath.Join(j.dir, fileShepherd))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// serveServer answers the server's requests on the mom port.
func (m *Mom) serveServer(nc net.Conn, slot *connlimit.Slot) {
	c := proto.NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	hello, err := proto.ServerHandshake(c, m.cfg.NodeName, func(r proto.Role) ([]byte, error) {
		if r != proto.RoleServer && r != proto.RoleMom {
			return nil, fmt.Errorf("only the server and other moms may connect to a mom's port")
		}
		return m.key, nil
	})
	if err != nil {
		m.log.Debug("refused a connection", "remote", nc.RemoteAddr().String(), "error", err)
		return
	}
	for {
		if slot.IsEstablished() {
			nc.SetDeadline(time.Now().Add(5 * time.Minute))
		}
		h, body, err := c.Recv()
		if err != nil {
			return
		}
		slot.Established()
		var rerr error
		var body2 any
		if hello.Role == proto.RoleMom {
			// Another mom: only the files of a job's staging list, and
			// the connection carries one transfer.
			m.serveFile(c, hello.Name, h, body)
			return
		}
		switch h.Type {
		case proto.MsgMomStageIn:
			var job proto.MomJob
			if rerr = proto.DecodeBody(body, &job); rerr == nil {
				rerr = m.startEarlyStage(&job)
			}
		case proto.MsgMomRunJobs:
			var jobs proto.MomJobs
			if rerr = proto.DecodeBody(body, &jobs); rerr == nil {
				body2 = m.runJobs(jobs.Jobs)
			}
		case proto.MsgMomRunJob:
			var job proto.MomJob
			if rerr = proto.DecodeBody(body, &job); rerr == nil {
				rerr = m.runJob(&job)
			}
		case proto.MsgMomSignalJob:
			var sig proto.MomSignal
			if rerr = proto.DecodeBody(body, &sig); rerr == nil {
				rerr = m.signalJob(&sig)
			}
		case proto.MsgMomShutdown:
			// Answered first; Run then stops the mom (qterm -m).
			m.log.Info("the server asked the mom to stop (qterm -m); running jobs continue")
		default:
			rerr = proto.Errorf(proto.PBSE_UNKREQ, "%s", h.Type)
		}
		reply := proto.Header{Type: proto.MsgReply, Seq: h.Seq}
		if rerr != nil {
			pe := momError(rerr)
			reply.Code, reply.Text = pe.Code, pe.Error()
			body2 = nil
		}
		if err := c.Send(reply, body2); err != nil {
			return
		}
		if h.Type == proto.MsgMomShutdown {
			m.signalStop()
			return
		}
	}
}

// startWorkers bounds how many of one request's jobs start at once. A
// start waits mostly for the disk (the job file's fsyncs) and for the
// shepherd's fork: several at once overlap those waits, so a batch of
// short jobs starts in a fraction of the time one after another takes.
const startWorkers = 8

// runJobs starts the jobs of one run request (distinct jobs, as the
// server sends them) and says how each start went.
func (m *Mom) runJobs(jobs []proto.MomJob) *proto.MomJobsReply {
	reply := &proto.MomJobsReply{Results: make([]proto.ObjectError, len(jobs))}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(startWorkers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				reply.Results[i].Name = jobs[i].JobID
				if err := m.runJob(&jobs[i]); err != nil {
					pe := momError(err)
					reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
				}
			}
		}()
	}
	wg.Wait()
	return reply
}

// momError gives any failure a PBSE code for the server.
func momError(err error) *proto.Error {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe
	}
	return &proto.Error{Code: proto.PBSE_MOMREJECT, Text: proto.PBSE_MOMREJECT.Message() + ": " + err.Error()}
}

// runJob starts a job's shepherd. A repeated request for the run already
// going is accepted without starting it twice.
func (m *Mom) runJob(job *proto.MomJob) error {
	m.mu.Lock()
	if old, ok := m.jobs[job.JobID]; ok {
		running := old.result == nil
		m.mu.Unlock()
		if old.spec.RunCount == job.RunCount {
			return nil
		}
		if running {
			return proto.Errorf(proto.PBSE_MOMREJECT, ": run %d of job %s is still running here", old.spec.RunCount, job.JobID)
		}
		m.forget(old)
		m.mu.Lock()
	}
	m.mu.Unlock()
	usr, err := m.jobOwner(job)
	if err != nil {
		return err
	}
	applyUseCp(job, m.momConf.UseCp)
	dir := filepath.Join(m.jobsDir, job.JobID)
	os.RemoveAll(dir)
	if !m.dirs.take(dir, 0) {
		if err := os.Mkdir(dir, 0o711); err != nil {
			return fmt.Errorf("job directory: %w", err)
		}
	}
	script := job.Script
	job.Script = nil
	set := m.shepherdSettings()
	// Not fsynced here: the shepherd makes it durable (durableAfter).
	if err := writeJSONVolatile(dir, fileJob, jobFile{MomJob: *job, OwnerAccount: usr, Settings: set}, 0o600); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("job file: %w", err)
	}
	if err := writeOwned(filepath.Join(dir, fileScript), script, 0o700, usr); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("job script: %w", err)
	}
	nodes := strings.Join(job.NodeFile, "\n")
	if nodes != "" {
		nodes += "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, fileNodes), []byte(nodes), 0o644); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("node file: %w", err)
	}
	if len(job.StageIn) > 0 || len(job.StageOut) > 0 {
		if err := writeJSONAtomic(dir, fileStage, m.stageConfig(), 0o600); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("stage file: %w", err)
		}
	}
	logf, err := os.OpenFile(filepath.Join(dir, fileLog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("shepherd log: %w", err)
	}
	defer logf.Close()
	// The shepherd makes the TMPDIR when no spare is there.
	tmpdir := jobTmpDir(set, job.JobID)
	tookTmp := m.tmpDirs.take(tmpdir, usr.UID)
	cmd := exec.Command(m.exe, ArgShepherd, dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		if tookTmp {
			os.Remove(tmpdir)
		}
		return fmt.Errorf("start shepherd: %w", err)
	}
	pid := cmd.Process.Pid
	j := &momJob{spec: *job, dir: dir, shepherdPid: pid, child: true, ownerUID: int64(usr.UID)}
	go func() {
		// Reap it while this mom lives (init does after) and look at its
		// result at once rather than at the next poll.
		cmd.Wait()
		m.mu.Lock()
		j.reaped = true
		m.mu.Unlock()
		select {
		case m.ended <- job.JobID:
		default:
		}
	}()
	m.mu.Lock()
	m.jobs[job.JobID] = j
	m.mu.Unlock()
	m.log.Info("job started", "job", job.JobID, "run", job.RunCount, "user", job.EUser, "shepherd", pid)
	return fault.Hit(fault.MomAfterStart)
}

// jobOwner resolves a job's owner here and checks that this mom may act
// as them: root only when the server's acl_roots allows it, and a mom not
// running as root only for its own user.
func (m *Mom) jobOwner(job *proto.MomJob) (*account, error) {
	usr, err := lookupAccount(job.EUser, job.EGroup)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: %v", m.cfg.NodeName, err)
	}
	if usr.UID == 0 && !job.AllowRoot {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: jobs of root run only when the server's acl_roots allows them", m.cfg.NodeName)
	}
	if os.Geteuid() != 0 && usr.UID != uint32(os.Geteuid()) {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: this pbs_mom runs as uid %d and can run only that user's jobs", m.cfg.NodeName, os.Geteuid())
	}
	return usr, nil
}

// writeOwned writes a file and gives it to the job's owner.
func writeOwned(path string, data []byte, mode os.FileMode, usr *account) error {
	// The file is the job's script, which its shepherd may execute: a
	// process this mom forks meanwhile (another job's shepherd) would hold
	// a copy of the descriptor open for writing until it execs, and the
	// script's exec would fail with "text file busy". Forks take
	// syscall.ForkLock exclusively, so none happens while it is held.
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, data, mode)
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		return os.Chown(path, int(usr.UID), int(usr.GID))
	}
	return nil
}

// signalJob delivers a qsig, qdel or suspend/resume to a job here.
func (m *Mom) signalJob(req *proto.MomSignal) error {
	m.mu.Lock()
	j := m.jobs[req.JobID]
	m.mu.Unlock()
	if j == nil {
		return proto.Errorf(proto.PBSE_UNKJOBID, "%s is not running on %s", req.JobID, m.cfg.NodeName)
	}
	v := m.view(j)
	if v.result != nil {
		return nil // already ended; its end is being reported
	}
	sig, special, ok := signals.Parse(req.Signal)
	if !ok {
		return proto.Errorf(proto.PBSE_UNKSIG, "%s", req.Signal)
	}
	if special == signals.Delete {
		// The shepherd runs the TERM-then-KILL sequence; it does so even if
		// this mom restarts in between. The marker covers a shepherd that
		// has not started the job yet (see RunShepherd).
		// The marker carries the delete's kill delay (qdel -W, else the
		// job's kill_delay) to the shepherd.
		var delay []byte
		if req.KillDelay >= 0 {
			delay = []byte(strconv.FormatInt(req.KillDelay, 10) + "\n")
		}
		if err := os.WriteFile(filepath.Join(j.dir, fileDelete), delay, 0o600); err != nil {
			return fmt.Errorf("delete %s: %w", req.JobID, err)
		}
		if _, err := os.Stat(filepath.Join(j.dir, fileSession)); err != nil {
			return nil
		}
		if err := syscall.Kill(m.shepherdPidOf(j), syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal shepherd of %s: %w", req.JobID, err)
		}
		return nil
	}
	if v.session.Pgid == 0 {
		var s sessionInfo
		if err := waitSession(j.dir, &s, sessionWait); err != nil {
			return proto.Errorf(proto.PBSE_BADSTATE, "%s has not started yet", req.JobID)
		}
		m.mu.Lock()
		j.session = s
		m.mu.Unlock()
		v.session = s
	}
	switch special {
	case signals.Suspend:
		sig = syscall.SIGSTOP
	case signals.Resume:
		sig = syscall.SIGCONT
	}
	if err := syscall.Kill(-v.session.Pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", req.JobID, err)
	}
	m.mu.Lock()
	switch special {
	case signals.Suspend:
		j.suspended = true
	case signals.Resume:
		j.suspended = false
	}
	m.mu.Unlock()
	m.log.Info("job signalled", "job", req.JobID, "signal", req.Signal)
	return nil
}

// relay forwards one local command connection to the server, stamping
// every request with the caller's identity as the kernel reports it. The
// server connection is opened when the first request arrives, so an idle
// local connection costs the server nothing.
func (m *Mom) relay(nc net.Conn, slot *connlimit.Slot) {
	uid, gid, err := proto.PeerCreds(nc)
	if err != nil {
		m.log.Error("cannot read peer credentials", "error", err)
		return
	}
	m.mu.Lock()
	serverName := m.serverName
	m.mu.Unlock()
	var up *proto.Conn
	var srv net.Conn
	defer func() {
		if srv != nil {
			srv.Close()
		}
	}()
	dial := func() (proto.HelloReply, error) {
		var err error
		if srv, err = net.DialTimeout("tcp", m.cfg.ServerAddr, 30*time.Second); err != nil {
			return proto.HelloReply{}, err
		}
		up = proto.NewConn(srv, 0)
		srv.SetDeadline(time.Now().Add(30 * time.Second))
		hello, err := proto.ClientHandshake(up, proto.RoleMom, m.cfg.NodeName, m.key)
		if err != nil {
			m.log.Warn("forwarding: server handshake failed", "error", err)
			return hello, err
		}
		srv.SetDeadline(time.Time{})
		return hello, nil
	}
	if serverName == "" {
		// Not yet connected to the server: the reply needs its name.
		hello, err := dial()
		if err != nil {
			return
		}
		serverName = hello.ServerName
	}
	down := proto.NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := proto.ServerHandshake(down, serverName, func(r proto.Role) ([]byte, error) {
		if r != proto.RoleClient {
			return nil, fmt.Errorf("only commands use this socket")
		}
		return nil, nil
	}); err != nil {
		return
	}
	nc.SetDeadline(time.Time{})
	// A command that stops reading is cut off: it holds up the server's
	// answer behind the mom (which reads no more of it meanwhile).
	down.SetWriteTimeout(proto.WriteTimeout)
	slot.Established()
	who := identity(uid, gid)
	for {
		nc.SetReadDeadline(time.Now().Add(10 * time.Minute))
		h, body, err := down.Recv()
		if err != nil {
			return
		}
		if up == nil {
			if _, err := dial(); err != nil {
				pe := proto.Errorf(proto.PBSE_SYSTEM, "the mom cannot reach the server at %s: %v", m.cfg.ServerAddr, err)
				down.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
				return
			}
		}
		h.As = who
		if err := up.Send(h, rawBody(body)); err != nil {
			return
		}
		for {
			srv.SetReadDeadline(time.Now().Add(5 * time.Minute))
			rh, rbody, err := up.Recv()
			if err != nil {
				return
			}
			if err := down.Send(rh, rawBody(rbody)); err != nil {
				var slow *proto.SlowReaderError
				if errors.As(err, &slow) {
					m.log.Warn("forwarding: connection cut off", "uid", uid, "reason", err)
				}
				return
			}
			if !rh.More || rh.Code != proto.PBSE_NONE {
				break
			}
		}
	}
}

// rawBody passes an already encoded body through unchanged (nil stays nil).
func rawBody(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return rawMessage(b)
}

// identity describes a local caller for the server.
func identity(uid, gid uint32) *proto.Identity {
	id := &proto.Identity{UID: uid, GID: gid, Host: config.ShortHostname(), User: strconv.FormatUint(uint64(uid), 10)}
	if name, err := userName(uid); err == nil {
		id.User = name
	}
	return id
}

// sessionWait bounds how long a signal waits for a job's session file: the
// shepherd writes it just after it starts the job, so a job that is
// already running its script (and may have said so) can be a few
// milliseconds ahead of the file on a busy host.
const sessionWait = 3 * time.Second

// waitSession reads the job's session file, waiting up to wait for the
// shepherd to write it.
func waitSession(dir string, s *sessionInfo, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := readJSON(filepath.Join(dir, fileSession), s)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
