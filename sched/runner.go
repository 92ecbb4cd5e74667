package sched

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/daemon"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/logging"
	"github.com/gopbs/gopbs/internal/logging/logclass"
	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// Policy decides what runs (core.Policy: the same policy runs here and in
// the simulator).
type Policy = core.Policy

// UsageKeeper is implemented by policies that keep fair-share usage
// (the FIFO policy does). The runner restores the usage from
// sched_priv/usage at start (a file it cannot read is set aside with a
// message naming it, never silently replaced), shows the policy once more
// the jobs it follows that have finished (World.Ended, with their final
// resources_used), and saves the usage every SyncEvery, on CONFIGURE and
// at exit.
type UsageKeeper interface {
	RestoreUsage(*schedpriv.UsageState)
	// UsageState is the usage to save (nil: nothing to keep) and whether
	// it changed since the last call.
	UsageState() (*schedpriv.UsageState, bool)
	Following() []string
	SyncEvery() time.Duration
}

// UsageReporter is a UsageKeeper that also shows its fair-share usage
// for display, without taking it as saved (UsageState clears its changed
// mark): pbs_sched's metrics read it after each cycle.
type UsageReporter interface {
	Usage() schedpriv.Usage // a copy; nil when fair share is off
}

// CycleReader reads from the server, during a cycle, what the world does
// not hold: a job's every attribute (activation filters get the job as
// qstat -f shows it).
type CycleReader interface {
	JobStatus(id string) (proto.Status, error)
	ServerName() string
}

// CycleAware is a policy that does I/O of its own during a cycle
// (activation filters): the runner calls BeginCycle before each Schedule
// with the cycle's reader, the time the cycle must end by, and a logger,
// and EndCycle once the plan is applied, with the jobs whose start the
// server refused (what a filter took for them can be given back).
type CycleAware interface {
	BeginCycle(r CycleReader, deadline time.Time, log core.Logger)
	EndCycle(notStarted []string)
}

// cycleReader reads over the cycle's connection.
type cycleReader struct {
	c    *proto.Client
	name string
}

func (r cycleReader) ServerName() string { return r.name }

func (r cycleReader) JobStatus(id string) (proto.Status, error) {
	jobs, errs, err := r.c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
	switch {
	case err != nil:
		return proto.Status{}, err
	case len(errs) > 0:
		return proto.Status{}, &proto.Error{Code: errs[0].Code, Text: errs[0].Text}
	case len(jobs) != 1:
		return proto.Status{}, fmt.Errorf("job %s: %d status objects", id, len(jobs))
	}
	return jobs[0], nil
}

// Config is what a scheduler reads of its host's pbs.conf: where its
// files are, its port, its metrics listener. Main fills it from pbs.conf
// (ConfigFrom); a scheduler that runs Run itself may fill it by hand.
type Config struct {
	// SchedPriv is the directory of the policy files (sched_config,
	// holidays, resource_group, dedicated_time, usage), made if missing.
	SchedPriv string
	// KeyFile is the cluster key (PBS_HOME/auth/cluster.key) the server's
	// cycle connections are authenticated with.
	KeyFile string
	// Port is the TCP port the server connects to for each cycle
	// (PBS_SCHEDULER_SERVICE_PORT).
	Port int
	// MetricsAddr is the Prometheus listener's address (PBS_SCHED_METRICS);
	// "" for none.
	MetricsAddr string
}

// ConfigFrom is the scheduler's part of a loaded pbs.conf.
func ConfigFrom(c *config.Config) Config {
	return Config{SchedPriv: c.SchedPriv(), KeyFile: c.KeyFile(), Port: c.SchedPort, MetricsAddr: c.SchedMetrics}
}

// LoadConfig reads this host's pbs.conf (PBS_CONF_FILE, else
// /etc/pbs.conf, and the PBS_* environment over it) as Main does.
func LoadConfig() (Config, error) {
	c, err := config.Load()
	if err != nil {
		return Config{}, err
	}
	return ConfigFrom(c), nil
}

// Options configure Run.
type Options struct {
	Name    string // program name for logs ("pbs_sched")
	Version string
	Config  Config
	Logger  hclog.Logger
	// CycleLimit bounds one cycle (fetch, decide, apply); zero means 3
	// minutes, the classic alarm.
	CycleLimit time.Duration
	// JobAttrs are job attributes the policy reads besides BaseJobAttrs.
	JobAttrs []string
}

// Main is a scheduler binary's main: it parses the common daemon flags,
// reads pbs.conf and runs policy until SIGTERM or QUIT. It exits the
// process. With -t [DIR] it only checks the sched_priv files of DIR (by
// default PBS_HOME/sched_priv) and exits (Check).
func Main(name string, policy Policy) {
	common := daemon.Register(flag.CommandLine)
	check := flag.Bool("t", false, "check the sched_priv files (of the directory given after the flags, or PBS_HOME/sched_priv), print every problem as file:line: message, and exit: 0 when they would load, 1 when not")
	flag.Parse()
	if *check {
		os.Exit(checkMain(name, common, flag.Args(), policy))
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q (only -t takes a directory)\n", name, flag.Arg(0))
		os.Exit(CheckBadUsage)
	}
	d, status := common.Start(name, Version, (*config.Config).SchedLogs)
	if d == nil {
		os.Exit(status)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := Run(ctx, policy, Options{Name: name, Version: Version, Config: ConfigFrom(d.Config), Logger: d.Log})
	cancel()
	d.Close()
	if err != nil {
		d.Log.Error("stopped", "error", err)
		os.Exit(1)
	}
}

// Version is the toolkit's version, reported by -version.
const Version = "23.06.06"

// Run serves the server's cycles until ctx ends or a QUIT event.
func Run(ctx context.Context, policy Policy, o Options) error {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.CycleLimit <= 0 {
		o.CycleLimit = 3 * time.Minute
	}
	if o.Config.SchedPriv == "" || o.Config.KeyFile == "" {
		return errors.New("sched.Run: Options.Config needs SchedPriv and KeyFile (LoadConfig reads them from pbs.conf)")
	}
	// A cycle builds a snapshot of every job and node and drops it; with a
	// small heap between cycles the default GC target would collect many
	// times per cycle.
	debug.SetGCPercent(400)
	// Every line gets a PBS event class; sched_config's log_filter drops
	// classes (applied on each successful configure).
	flog := logging.NewFiltered(o.Logger)
	r := &runner{policy: policy, o: o, log: flog, logFilter: flog, dir: o.Config.SchedPriv}
	limit := connlimit.New("remote", schedBudget, r.log.Named("conn").With(logclass.Key, logclass.Security))
	r.metrics = metrics.NewSched(r.log.Named("metrics"), limit)
	if err := os.MkdirAll(r.dir, 0o750); err != nil {
		return fmt.Errorf("sched_priv: %w", err)
	}
	unlock, err := privdir.Lock(r.dir, lockWait)
	if errors.Is(err, privdir.ErrLocked) {
		return fmt.Errorf("another scheduler is running: %w", err)
	}
	if err != nil {
		return err
	}
	defer unlock()
	key, err := proto.LoadKey(o.Config.KeyFile)
	if err != nil {
		return fmt.Errorf("%w (copy the server's PBS_HOME/auth/cluster.key here, mode 0600)", err)
	}
	r.key = key
	if err := privdir.InstallDefaults(r.dir, time.Now().Year()); err != nil {
		return fmt.Errorf("install default sched_priv files: %w", err)
	}
	if err := r.configure(); err != nil {
		return err
	}
	r.restoreUsage()
	defer r.saveUsage(true)
	stopWatch, err := r.watch(ctx)
	if err != nil {
		r.log.Warn("sched_priv changes will not be noticed; send SIGHUP or a CONFIGURE event after editing", "error", err)
	} else {
		defer stopWatch()
	}
	l, err := net.Listen("tcp", ":"+strconv.Itoa(o.Config.Port))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", o.Config.Port, err)
	}
	defer l.Close()
	if addr := o.Config.MetricsAddr; addr != "" {
		ml, err := r.metrics.Listen(addr, r.log.Named("metrics"))
		if err != nil {
			return err
		}
		defer ml.Close()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	quit := make(chan struct{})
	// stop closes, before the listener does, when the scheduler stops
	// (its context ends, or the server asked it to quit).
	stop := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			select {
			case <-hup:
				r.log.Info("SIGHUP: re-reading sched_priv", logclass.Key, logclass.Admin)
				r.configure()
			case <-ctx.Done():
				close(stop)
				l.Close()
				return
			case <-quit:
				close(stop)
				l.Close()
				return
			}
		}
	}()
	r.log.Info("scheduler ready", "port", o.Config.Port, "sched_priv", r.dir, "pid", os.Getpid(), logclass.Key, logclass.System)
	if err := daemon.Notify("READY=1"); err != nil {
		r.log.Warn("cannot tell systemd the scheduler is ready", "error", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	// Connections are served concurrently, so that peers that connect and
	// say nothing cannot hold up the server's; cycles themselves run one
	// at a time (serve takes cycleMu).
	loop := &listen.Loop{
		Listener: l, Handshake: handshakeTimeout, Stop: stop, Conns: &wg, FailOnError: true,
		Limit: limit,
		Serve: func(nc net.Conn, _ listen.Peer, slot *connlimit.Slot) {
			if r.serve(ctx, nc, slot) {
				once.Do(func() { close(quit) })
			}
		},
	}
	return loop.Run()
}

// lockWait is how long a starting scheduler waits for the lock of one
// that is still exiting: a service manager restarts a killed scheduler at
// once, before the kernel has released the dead one's lock.
const lockWait = 10 * time.Second

// schedBudget bounds the scheduler's connections: only the server has
// business here, one cycle at a time, so the budget is small; pending
// connections beyond it are closed oldest first, so a flood of silent
// ones cannot keep the server's out.
var schedBudget = connlimit.Budget{Max: 64, PerPeer: 32, Pending: 32, PerPeerPending: 8}

// handshakeTimeout bounds a peer's Hello and the server's command after
// it; the server sends both at once.
const handshakeTimeout = 3 * time.Second

type runner struct {
	policy Policy
	o      Options
	log    hclog.Logger
	dir    string
	key    []byte
	mu     sync.Mutex // serialises Configure with cycles
	// counted is sched_config's resources: line (mu held): the resources
	// placement counts and matches; empty, all.
	counted []string
	// cycleMu serialises cycles: the job cache and the server's state
	// belong to one cycle at a time.
	cycleMu sync.Mutex
	jobs    jobCache
	// savedUsage is when the fair-share usage was last written.
	savedUsage time.Time

	// logFilter is log's filter, whose mask is sched_config's log_filter
	// (filterMask) and the classes the sched object's log_events leaves
	// out (eventsOff, none while it is unset: logevents.go).
	logFilter  *logging.Filtered
	filterMask uint32
	eventsOff  uint32
	// status is shown as the server's comment (policystatus.go).
	status policyStatus
	// metrics are served when pbs.conf names PBS_SCHED_METRICS.
	metrics *metrics.Sched
}

// jobCache keeps the jobs of the last cycle, so that a cycle fetches only
// the jobs that changed since (the server's version counter), and decodes
// only those.
type jobCache struct {
	epoch   string
	version uint64
	byID    map[string]*core.Job
	// rt is the resource table the cached jobs were read with; another
	// (a definition changed, or sched_config's resources: line) reads
	// every job again.
	rt *resc.Table
	// rtKey says what rt was made of, to tell when it changes.
	rtKey string
}

// configure (re)loads sched_priv into the policy.
func (r *runner) configure() error {
	files, err := privdir.Load(r.dir, time.Local)
	if err != nil {
		r.log.Error("sched_priv rejected; keeping the previous configuration", "error", err)
		r.status.rejected(err)
		return err
	}
	for _, w := range files.Warnings {
		r.log.Warn("sched_priv", "warning", w.String(), logclass.Key, logclass.Admin)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.policy.Configure(files, r.log.Named("policy")); err != nil {
		r.log.Error("configuration rejected by the policy; keeping the previous one", "error", err)
		r.status.rejected(err)
		return err
	}
	r.status.loaded(files)
	r.counted = files.Config.Resources
	r.noteYear(time.Now())
	r.filterMask = uint32(files.Config.LogFilter)
	r.applyLogMask()
	r.log.Info("configuration loaded", "dir", r.dir, "log_filter", logclass.Describe(r.filterMask), "not_logged", logclass.Describe(r.logFilter.Mask()), logclass.Key, logclass.Admin)
	return nil
}

// watch reloads the configuration when a file of sched_priv changes. The
// directory is watched, not the files: editors replace files by renaming.
func (r *runner) watch(ctx context.Context) (func(), error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(r.dir); err != nil {
		w.Close()
		return nil, err
	}
	go func() {
		var settle <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				switch filepath.Base(ev.Name) {
				case "sched_config", "holidays", "resource_group", "dedicated_time":
					// Editors write in several steps: wait for quiet.
					settle = time.After(200 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				r.log.Warn("watching sched_priv", "error", err, logclass.Key, logclass.System)
			case <-settle:
				settle = nil
				r.configure()
			}
		}
	}()
	return func() { w.Close() }, nil
}

// serve runs one cycle on a connection the server opened. It reports
// whether the server asked the scheduler to quit.
func (r *runner) serve(ctx context.Context, nc net.Conn, slot *connlimit.Slot) (quit bool) {
	defer nc.Close()
	// Stop waiting for a peer when the scheduler stops.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			nc.Close()
		case <-done:
		}
	}()
	conn := proto.NewConn(nc, 0)
	hello, err := proto.ServerHandshake(conn, "scheduler", func(hi proto.Hello) ([]byte, error) {
		if hi.Role != proto.RoleServer {
			return nil, errors.New("only the server may connect to the scheduler")
		}
		return r.key, nil
	})
	if err != nil {
		r.log.Debug("refused a connection", "remote", nc.RemoteAddr().String(), "error", err, logclass.Key, logclass.Security)
		return false
	}
	h, body, err := conn.Recv()
	if err != nil || h.Type != proto.MsgSchedCommand {
		r.log.Debug("no command from the peer", "remote", nc.RemoteAddr().String(), "error", err, "type", h.Type)
		return false
	}
	slot.Established()
	nc.SetDeadline(time.Time{}) // the cycle sets its own once it starts
	r.cycleMu.Lock()
	defer r.cycleMu.Unlock()
	var cmd proto.SchedCommand
	if err := proto.DecodeBody(body, &cmd); err != nil {
		r.log.Warn("bad command from the server", "error", err)
		return false
	}
	switch cmd.Cmd {
	case proto.SchedQuit:
		r.log.Info("QUIT from the server", logclass.Key, logclass.System)
		r.saveUsage(true)
		return true
	case proto.SchedConfigure:
		r.log.Info("CONFIGURE from the server", logclass.Key, logclass.Admin)
		r.saveUsage(true)
		r.configure()
		nc.SetDeadline(time.Now().Add(r.o.CycleLimit))
		client := proto.NewClient(conn, hello.Name, r.o.CycleLimit)
		r.readLogEvents(client)
		r.syncComment(client)
		return false
	case proto.SchedNull:
		return false
	}
	start := time.Now()
	deadline := start.Add(r.o.CycleLimit)
	nc.SetDeadline(deadline)
	r.log.Info("scheduling cycle starts", "event", cmd.Cmd.String())
	r.noteYear(start)
	client := proto.NewClient(conn, hello.Name, r.o.CycleLimit)
	r.readLogEvents(client)
	// A start a site's runjob hook refuses (PBSE_HOOKERROR) frees what
	// the plan gave it: as OpenPBS's scheduler goes on with the next job
	// when it learns of the refusal, the cycle plans again without the
	// jobs the hooks refused, until a pass has no such refusal (at most
	// hookPasses passes).
	var hookRefused map[string]bool
	for pass := 1; ; pass++ {
		refused := r.cyclePass(client, hello.Name, cmd, start, deadline, hookRefused)
		if len(refused) == 0 || pass == hookPasses {
			break
		}
		if hookRefused == nil {
			hookRefused = map[string]bool{}
		}
		for _, id := range refused {
			hookRefused[id] = true
		}
		r.log.Info("runjob hooks refused starts; planning the cycle again without them", "refused", len(refused), "pass", pass)
	}
	r.saveUsage(false)
	return false
}

// hookPasses bounds the passes of one cycle (see serve).
const hookPasses = 4

// cyclePass fetches the world, decides and applies the decisions, and
// returns the starts a runjob hook refused (nil when the world could not
// be read). Jobs in skip are left out of the world: a hook refused them
// earlier in the cycle.
func (r *runner) cyclePass(client *proto.Client, serverName string, cmd proto.SchedCommand, start, deadline time.Time, skip map[string]bool) []string {
	// The world's time: the host's, or a test build's advanced clock
	// (internal/fault); start and deadline stay on the host's.
	world, err := r.fetch(client, fault.Now(), append(append([]string(nil), BaseJobAttrs...), r.o.JobAttrs...))
	if err != nil {
		r.log.Error("cannot read the server's state", "error", err)
		return nil
	}
	if len(skip) > 0 {
		world.Jobs = slices.DeleteFunc(world.Jobs, func(j *core.Job) bool { return skip[j.ID] })
	}
	r.addEnded(client, world)
	fetched := time.Now()
	r.metrics.Phase(metrics.PhaseFetch, fetched.Sub(start))
	r.mu.Lock()
	if ca, ok := r.policy.(CycleAware); ok {
		ca.BeginCycle(cycleReader{c: client, name: serverName}, deadline, r.log.Named("filters"))
	}
	plan := r.policy.Schedule(world, eventOf(cmd.Cmd), r.log.Named("policy"))
	if ur, ok := r.policy.(UsageReporter); ok {
		r.metrics.SetUsage(ur.Usage())
	}
	r.mu.Unlock()
	decided := time.Now()
	r.metrics.Phase(metrics.PhaseDecide, decided.Sub(fetched))
	var decisions []core.Decision
	if plan != nil {
		decisions = plan.Decisions()
	}
	stats := apply(client, decisions, r.jobs.rt.Counted(), r.log)
	if ca, ok := r.policy.(CycleAware); ok {
		ca.EndCycle(stats.notStarted)
	}
	r.metrics.Phase(metrics.PhaseApply, time.Since(decided))
	r.metrics.Cycle(stats.started, stats.backfilled, stats.refusedBy)
	r.syncComment(client)
	r.log.Info("scheduling cycle ends", "event", cmd.Cmd.String(), "jobs", len(world.Jobs), "nodes", len(world.Nodes),
		"started", stats.started, "refused", stats.refused, "comments", stats.comments,
		"fetch", fetched.Sub(start).String(), "decide", decided.Sub(fetched).String(), "apply", time.Since(decided).String())
	return stats.hookRefused
}

// eventOf maps the server's command to the core's event.
func eventOf(cmd proto.SchedCmd) core.Event {
	switch cmd {
	case proto.SchedNew:
		return core.EventNew
	case proto.SchedTerm:
		return core.EventTerm
	case proto.SchedTime:
		return core.EventTime
	case proto.SchedRecyc:
		return core.EventRecyc
	case proto.SchedCmdSet:
		return core.EventCmd
	case proto.SchedFirst:
		return core.EventFirst
	}
	return 0
}

// fetch reads the world over the cycle's connection.
func (r *runner) fetch(c *proto.Client, now time.Time, jobAttrs []string) (*core.World, error) {
	rt, err := r.resources(c)
	if err != nil {
		return nil, fmt.Errorf("resource definitions: %w", err)
	}
	server, err := c.StatusServer(nil)
	if err != nil {
		return nil, fmt.Errorf("server status: %w", err)
	}
	queues, _, err := c.StatusQueues(&proto.StatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("queue status: %w", err)
	}
	var nodes []*core.Node
	_, err = c.StatusEach(proto.MsgStatusNode, &proto.StatusRequest{Attrs: nodeAttrs}, func(part []proto.Status) error {
		for _, st := range part {
			nodes = append(nodes, coreNode(rt, st))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("node status: %w", err)
	}
	jobs, err := r.jobs.fetch(c, jobAttrs, now)
	if err != nil {
		return nil, fmt.Errorf("job status: %w", err)
	}
	w := worldOf(rt, now, server, queues, nodes, jobs)
	resvs, _, err := c.StatusResvs(&proto.StatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("reservation status: %w", err)
	}
	w.SetResvs(coreResvs(rt, resvs))
	return w, nil
}

// resources reads the server's custom resources and makes the table this
// cycle reads values with: their types, counting only what sched_config's
// resources: line names. When it is not the cached jobs' table, the job
// cache starts over.
func (r *runner) resources(c *proto.Client) (*resc.Table, error) {
	sts, _, err := c.StatusResources(&proto.StatusRequest{})
	if err != nil {
		return nil, err
	}
	cs := make([]resc.Custom, 0, len(sts))
	for _, st := range sts {
		plain, _ := split(st.Attrs)
		typ, err := resc.ParseTypeName(plain[proto.AttrResourceType])
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", st.Name, err)
		}
		flags, err := resc.ParseFlags(plain[proto.AttrResourceFlag])
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", st.Name, err)
		}
		def, err := resc.NewCustom(st.Name, typ, flags)
		if err != nil {
			return nil, err
		}
		cs = append(cs, def)
	}
	r.mu.Lock()
	counted := r.counted
	r.mu.Unlock()
	key := fmt.Sprint(cs, counted)
	if key != r.jobs.rtKey || r.jobs.rt == nil {
		r.jobs.rt, r.jobs.rtKey = resc.NewTable(cs).Counting(counted), key
		r.jobs.epoch, r.jobs.byID = "", nil
	}
	return r.jobs.rt, nil
}

// fetch returns every unfinished job, asking only for those changed since
// the last call when the server is the same run.
func (jc *jobCache) fetch(c *proto.Client, attrs []string, now time.Time) ([]*core.Job, error) {
	req := &proto.StatusRequest{Attrs: attrs, LiveSubjobs: true, Alloc: true}
	if jc.epoch != "" {
		req.Since, req.Epoch = jc.version, jc.epoch
	}
	// Jobs are converted as the frames arrive. A full answer is the job
	// list; an incremental one the jobs changed since, merged below with
	// the cache in the order of the live list.
	var got []*core.Job
	reply, err := c.StatusEach(proto.MsgStatusJob, req, func(part []proto.Status) error {
		for _, st := range part {
			j := newCoreJob(jc.rt, st)
			j.EligibleAsOf = now // its eligible_time is the server's of about now
			got = append(got, j)
		}
		return nil
	})
	if err != nil {
		jc.epoch = ""
		return nil, err
	}
	incremental := req.Epoch != "" && reply.Epoch == req.Epoch && reply.Live != nil
	jobs := got
	if incremental {
		changed := make(map[string]*core.Job, len(got))
		for _, j := range got {
			changed[j.ID] = j
		}
		next := make(map[string]*core.Job, len(reply.Live))
		jobs = make([]*core.Job, 0, len(reply.Live))
		for _, id := range reply.Live {
			j := changed[id]
			if j == nil {
				if j = jc.byID[id]; j == nil {
					// Not cached and not sent: start over with a full fetch.
					jc.epoch = ""
					return jc.fetch(c, attrs, now)
				}
			}
			next[id] = j
			jobs = append(jobs, j)
		}
		jc.byID = next
	} else {
		jc.byID = make(map[string]*core.Job, len(got))
		for _, j := range got {
			jc.byID[j.ID] = j
		}
	}
	jc.epoch, jc.version = reply.Epoch, reply.Version
	return jobs, nil
}

type applyStats struct {
	started, refused, comments int
	backfilled                 int            // of started, those whose decision backfilled
	refusedBy                  map[string]int // refused and lost runs by reason (the metrics' label)
	notStarted                 []string       // runs refused or lost
	hookRefused                []string       // runs a runjob hook refused (PBSE_HOOKERROR)
}

// refusalLost is the reason of runs lost with their request (no answer
// from the server), among the refusals' reasons (PBS error texts).
const refusalLost = "run request failed"

// refusal counts n runs not started for why.
func (st *applyStats) refusal(why string, n int) {
	if st.refusedBy == nil {
		st.refusedBy = map[string]int{}
	}
	st.refusedBy[why] += n
}

// refusalReason is the reason label of a refused start: the PBS error
// code's standard text, a small fixed set (the text the server sent
// names jobs and nodes).
func refusalReason(code proto.Code) string {
	if m := strings.TrimSpace(code.Message()); m != "" {
		return m
	}
	return "PBS error " + strconv.Itoa(int(code))
}

// apply carries out decisions in order; consecutive starts and comments
// go in one request each. A start names its exact placement, which the
// server verifies.
// counted are the resources placement counted (RunSpec.Counted).
func apply(c *proto.Client, ds []core.Decision, counted []string, log hclog.Logger) applyStats {
	var st applyStats
	var runs []proto.RunSpec
	var runJobs []*core.Job         // the jobs of runs, in order
	var runBackfill []bool          // whether each run backfills
	arrayNoted := map[string]bool{} // arrays whose comment was set this cycle
	failed := map[string]bool{}     // jobs and arrays deleted as never able to run
	var alters []proto.AlterRequest
	flushRuns := func() {
		if len(runs) == 0 {
			return
		}
		res, err := c.RunJobs(runs)
		if err == nil {
			err = fault.Hit(fault.SchedMidCycle)
		}
		if err != nil {
			log.Error("run request failed", "jobs", len(runs), "error", err)
			for _, r := range runs {
				st.notStarted = append(st.notStarted, r.JobID)
			}
			st.refusal(refusalLost, len(runs))
			runs, runJobs, runBackfill = runs[:0], runJobs[:0], runBackfill[:0]
			return
		}
		for i, r := range res {
			if r.Code == proto.PBSE_NONE {
				st.started++
				if runBackfill[i] {
					st.backfilled++
				}
				log.Debug("job started", "job", runs[i].JobID, "nodes", runs[i].Nodes)
				continue
			}
			st.refused++
			st.refusal(refusalReason(r.Code), 1)
			st.notStarted = append(st.notStarted, runs[i].JobID)
			if r.Code == proto.PBSE_HOOKERROR {
				st.hookRefused = append(st.hookRefused, runs[i].JobID)
			}
			log.Info("the server refused to start a job", "job", runs[i].JobID, "reason", r.Text)
			alters = append(alters, comment(shared(runJobs[i]), "Not Running: PBS Error: "+r.Text))
		}
		runs, runJobs, runBackfill = runs[:0], runJobs[:0], runBackfill[:0]
	}
	// Preemptions go in one request before the start they make room for;
	// a start whose preemption failed is not asked for, nor one whose
	// victims leave their nodes only later (requeued, checkpointed): it
	// starts in a later cycle.
	var preempts []proto.PreemptSpec
	failedFor := map[string]string{}
	pendingFor := map[string]bool{}
	flushPreempts := func() {
		if len(preempts) == 0 {
			return
		}
		res, err := c.PreemptJobs(preempts)
		if err != nil {
			log.Error("preempt request failed", "jobs", len(preempts), "error", err)
			for _, p := range preempts {
				failedFor[p.For] = err.Error()
			}
		}
		for i, r := range res {
			p := preempts[i]
			switch r.Method {
			case 0:
				failedFor[p.For] = r.Text
				log.Info("job not preempted", "job", p.JobID, "for", p.For, "methods", p.Methods, "reason", r.Text)
			case proto.PreemptSuspend:
				log.Info("job preempted by suspension", "job", p.JobID, "for", p.For)
			default:
				pendingFor[p.For] = true
				log.Info("job preempted", "job", p.JobID, "for", p.For, "method", string(rune(r.Method)))
			}
		}
		preempts = preempts[:0]
	}
	flushAlters := func() {
		if len(alters) == 0 {
			return
		}
		res, err := c.AlterJobs(alters)
		if err != nil {
			log.Error("comment request failed", "jobs", len(alters), "error", err)
		}
		for i, r := range res {
			if r.Code != proto.PBSE_NONE {
				log.Debug("comment not set", "job", alters[i].JobID, "reason", r.Text)
			} else {
				st.comments++
			}
		}
		alters = alters[:0]
	}
	for _, d := range ds {
		switch d.Kind {
		case core.DecideConfirmResv:
			flushRuns()
			flushAlters()
			req := &proto.ResvConfirm{ID: d.Resv.ID, Reason: d.Text}
			for _, where := range d.Occurrences {
				req.Nodes = append(req.Nodes, ExecVnode(where))
			}
			if err := c.ConfirmResv(req); err != nil {
				log.Warn("reservation verdict refused", "resv", d.Resv.ID, "error", err)
			} else {
				log.Info("reservation verdict", "resv", d.Resv.ID, "confirmed", len(req.Nodes) > 0, "reason", d.Text)
			}
		case core.DecidePreempt:
			flushRuns()
			preempts = append(preempts, proto.PreemptSpec{JobID: d.Job.ID, Methods: d.Text, For: d.For.ID})
		case core.DecideResume:
			flushRuns()
			flushPreempts()
			if err := c.SignalJob(d.Job.ID, signals.Resume); err != nil {
				log.Info("suspended job not resumed", "job", d.Job.ID, "error", err)
			} else {
				log.Info("job resumed after preemption", "job", d.Job.ID)
			}
		case core.DecideRun:
			flushPreempts()
			if why, failed := failedFor[d.Job.ID]; failed || pendingFor[d.Job.ID] {
				text := core.CommentPreemptWait
				if failed {
					text = "Not Running: Preemption failed: " + why
				}
				st.notStarted = append(st.notStarted, d.Job.ID)
				alters = append(alters, comment(shared(d.Job), text))
				continue
			}
			where := make([]string, len(d.Where))
			for i, c := range d.Where {
				where[i] = c.Node
			}
			runs = append(runs, proto.RunSpec{JobID: d.Job.ID, Where: where, Comment: d.Text, Counted: counted, Walltime: int64(d.Walltime / time.Second)})
			if d.Walltime > 0 {
				// OpenPBS's scheduler says so of a shrink-to-fit job.
				log.Info("Job will run for duration="+resc.FormatDuration(int64(d.Walltime/time.Second)), "job", d.Job.ID)
			}
			runJobs = append(runJobs, d.Job)
			runBackfill = append(runBackfill, d.Backfill)
		case core.DecideComment:
			flushRuns()
			if a := d.Job.FromArray; a != "" {
				// Said once on the array: its waiting subjobs have no
				// record of their own to carry it.
				if arrayNoted[a] {
					continue
				}
				arrayNoted[a] = true
			}
			alters = append(alters, comment(shared(d.Job), d.Text))
		case core.DecideAccrue:
			flushRuns()
			v := strconv.Itoa(int(core.AccrueEligible))
			if d.Limited {
				v = strconv.Itoa(int(core.AccrueIneligible))
			}
			alters = append(alters, proto.AlterRequest{JobID: d.Job.ID, Attrs: []proto.Attr{{Name: proto.AttrAccrueType, Value: v}}})
		case core.DecideHold:
			flushRuns()
			flushAlters()
			holds := d.Holds
			if holds == "" && d.Until.IsZero() {
				holds = "s"
			}
			if holds != "" {
				if err := c.HoldJob(d.Job.ID, holds); err != nil {
					log.Warn("hold failed", "job", d.Job.ID, "error", err)
					continue
				}
			}
			attrs := []proto.Attr{}
			if d.Text != "" {
				attrs = append(attrs, proto.Attr{Name: proto.AttrComment, Value: d.Text})
			}
			if !d.Until.IsZero() {
				attrs = append(attrs, proto.Attr{Name: proto.AttrHoldUntil, Value: strconv.FormatInt(d.Until.Unix(), 10)})
			}
			if len(attrs) > 0 {
				alters = append(alters, proto.AlterRequest{JobID: d.Job.ID, Attrs: attrs})
			}
		case core.DecideFail:
			// A subjob made from its array can never run for what it
			// shares with every waiting sibling: the array goes, once.
			id := shared(d.Job)
			if failed[id] {
				continue
			}
			failed[id] = true
			if d.Keep {
				// It stays queued, saying why (OpenPBS's Can Never Run).
				if d.Job.Comment != d.Text {
					alters = append(alters, comment(id, d.Text))
					log.Info("job can never run on these nodes: left queued", "job", id, "reason", d.Text)
				}
				continue
			}
			flushRuns()
			alters = append(alters, comment(id, d.Text))
			flushAlters()
			if err := c.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
				log.Warn("delete failed", "job", id, "error", err)
			} else {
				log.Info("job deleted: it can never run", "job", id, "reason", d.Text)
			}
		case core.DecideStageIn:
			flushRuns()
			if len(d.Where) == 0 {
				continue
			}
			if err := c.StageInJob(d.Job.ID, d.Where[0].Node); err != nil {
				log.Warn("stage-in request refused", "job", d.Job.ID, "node", d.Where[0].Node, "error", err)
			} else {
				log.Info("early stage-in asked for", "job", d.Job.ID, "node", d.Where[0].Node)
			}
		case core.DecideGrow, core.DecideShrink:
			flushRuns()
			flushAlters()
			req := &proto.ResizeRequest{JobID: d.Job.ID}
			for _, c := range d.Where {
				if d.Kind == core.DecideGrow {
					req.Add = append(req.Add, c.Node)
				} else if !slices.Contains(req.Release, c.Node) {
					req.Release = append(req.Release, c.Node)
				}
			}
			req.Grace, req.Immediate = int(d.Grace/time.Second), d.Immediate
			if err := c.ResizeJob(req); err != nil {
				log.Warn("resize refused", "job", d.Job.ID, "add", req.Add, "release", req.Release, "error", err)
			} else {
				log.Info("job resized", "job", d.Job.ID, "add", req.Add, "release", req.Release)
			}
		case core.DecideReserve:
			// What qstat -f shows as estimated.start_time and
			// estimated.exec_vnode (and qstat -T lists).
			flushRuns()
			alters = append(alters, proto.AlterRequest{JobID: shared(d.Job), Attrs: []proto.Attr{
				{Name: proto.AttrEstimated, Resource: "start_time", Value: strconv.FormatInt(d.Start.Unix(), 10)},
				{Name: proto.AttrEstimated, Resource: "exec_vnode", Value: ExecVnode(d.Where)},
			}})
		}
	}
	flushPreempts()
	flushRuns()
	flushAlters()
	return st
}

// shared is where what j shares with its array is said or done (its
// comment, its estimate, that it can never run): on the array for a
// subjob made from it, else on j.
func shared(j *core.Job) string {
	if j.FromArray != "" {
		return j.FromArray
	}
	return j.ID
}

func comment(id, text string) proto.AlterRequest {
	return proto.AlterRequest{JobID: id, Attrs: []proto.Attr{{Name: proto.AttrComment, Value: text}}}
}
