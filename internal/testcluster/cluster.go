// Package testcluster starts the real daemons as separate processes in a
// temporary PBS_HOME with free ports and runs the real commands against
// them, for integration tests. Nothing is mocked: tests see what a user
// would see.
//
// Binaries are built once per test process into a temporary directory
// (Build); each Cluster has its own pbs.conf, PBS_HOME and ports.
package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/fault"
)

// TB is the part of testing.TB the cluster uses; the benchmark tool
// provides its own.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	Failed() bool
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// ModuleRoot finds the directory holding go.mod above the working
// directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}

// Build compiles every binary of the module once, as scripts/build.sh
// does for scripts/start.sh (static commands, daemons with cgo), and
// returns the directory of the binaries.
func Build(t TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = buildInto("gopbs-bin-", func(dir string) []string { return []string{"bash", "scripts/build.sh", dir} })
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

var (
	faultOnce sync.Once
	faultDir  string
	faultErr  error
)

// BuildFaults compiles the daemons with their fault points armed
// (-tags faultpoints, see internal/fault) once per test process and
// returns their directory.
func BuildFaults(t TB) string {
	t.Helper()
	faultOnce.Do(func() {
		faultDir, faultErr = buildInto("gopbs-fault-bin-", func(dir string) []string {
			return []string{"go", "build", "-tags", "faultpoints", "-o", dir + "/", "./cmd/pbs_server", "./cmd/pbs_mom", "./cmd/pbs_shepherd", "./cmd/pbs_sched"}
		})
	})
	if faultErr != nil {
		t.Fatal(faultErr)
	}
	return faultDir
}

// buildInto runs the build command that command returns for a new
// temporary directory every user can read, from the module root, and
// returns the directory.
func buildInto(prefix string, command func(dir string) []string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	sweepBuilds(prefix)
	// Named after this process, so that a later build can tell a
	// finished process's directory and remove it: a test binary has no
	// moment to remove its own (packages share no TestMain).
	dir, err := os.MkdirTemp("", prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	os.Chmod(dir, 0o755)
	args := command(dir)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return dir, nil
}

// sweepBuilds removes the build directories (prefix<pid>-...) of test
// processes that are gone.
func sweepBuilds(prefix string) {
	ents, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// daemonCmd is the path and environment to start daemon (pbs_server,
// pbs_mom, pbs_sched or a site scheduler) with base environment env: the
// fault build when the cluster has one, with the faults armed for it.
func (c *Cluster) daemonCmd(daemon string, env []string) (string, []string) {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	path := filepath.Join(c.Bin, daemon)
	if c.faultBin != "" {
		if p := filepath.Join(c.faultBin, daemon); fileExists(p) {
			path = p
		}
	}
	if spec := c.faults[daemon]; spec != "" {
		env = append(append([]string(nil), env...), fault.EnvVar+"="+spec)
	}
	if c.faultBin != "" && daemon != "pbs_mom" {
		// The server's and the schedulers' clock is the one AdvanceClock
		// moves; the moms keep the host's (the jobs' real run times).
		env = append(append([]string(nil), env...), fault.ClockEnvVar+"="+c.clockFile())
	}
	return path, env
}

// clockFile is where AdvanceClock writes the clock's offset.
func (c *Cluster) clockFile() string { return filepath.Join(c.Home, "fault_clock") }

// AdvanceClock moves the clock of the cluster's server and schedulers d
// further ahead of the host's (a fault build only: Options.FaultBuild), so
// that a test reaches a time without waiting for it; they see it within
// 50 ms. The moms keep the host's clock.
func (c *Cluster) AdvanceClock(d time.Duration) {
	c.T.Helper()
	if c.faultBin == "" {
		c.T.Fatalf("AdvanceClock: the cluster was not made with Options.FaultBuild")
	}
	c.faultMu.Lock()
	c.clockAhead += d
	ahead := c.clockAhead
	c.faultMu.Unlock()
	if err := atomicfile.Write(c.clockFile(), []byte(ahead.String()+"\n"), 0o644); err != nil {
		c.T.Fatalf("AdvanceClock: %v", err)
	}
}

// Now is the time of the cluster's server and schedulers: the host's,
// advanced by AdvanceClock.
func (c *Cluster) Now() time.Time {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	return time.Now().Add(c.clockAhead)
}

// SetFault arms spec (a GOPBS_FAULTS value, "" to disarm) for the next
// starts of daemon; the cluster must have been made with FaultBuild.
func (c *Cluster) SetFault(daemon, spec string) {
	c.faultMu.Lock()
	defer c.faultMu.Unlock()
	if c.faultBin == "" {
		c.T.Fatalf("SetFault(%s): the cluster was not made with Options.FaultBuild", daemon)
	}
	if c.faults == nil {
		c.faults = map[string]string{}
	}
	c.faults[daemon] = spec
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Ports handed out are drawn from below the kernel's ephemeral range
// (32768 and up on Linux): a port taken from :0 and closed is the next
// one the kernel gives an outgoing connection, which could take it
// before the daemon binds it (seen under parallel tests). Below the
// range only another test process drawing the same number competes.
const (
	portLow  = 10000
	portHigh = 32000 // port+100, a group member's raft port, stays below the range too
)

var (
	portsMu sync.Mutex
	// portsOut is process-wide by nature: every cluster of a test
	// binary draws from the same ports.
	portsOut = map[int]bool{}
)

// FreePort returns a TCP port that was free a moment ago, on every
// address, and whose port+100 (a replicated server's raft port) was too.
func FreePort(t TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := portLow + rand.IntN(portHigh-portLow)
		if portsOut[p] || portsOut[p+100] || !bindable(p) || !bindable(p+100) {
			continue
		}
		portsOut[p], portsOut[p+100] = true, true
		return p
	}
	t.Fatal("no free TCP port found in 1000 tries")
	return 0
}

// bindable says whether port can be listened on, on every address.
func bindable(port int) bool {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Cluster is one PBS_HOME with its daemons.
type Cluster struct {
	T         TB
	Bin       string
	Home      string
	Conf      string
	BatchPort int
	MomPort   int
	SchedPort int

	mu     sync.Mutex
	moms   map[string]*Mom
	scheds []*Scheduler
	server *proc

	serverArgs []string
	started    time.Time // when New was called: the first day of the daily logs read

	faultMu sync.Mutex
	// clockAhead is how far AdvanceClock moved the daemons' clock.
	clockAhead time.Duration
	faultBin   string            // the fault build of the daemons, if any
	faults     map[string]string // daemon -> GOPBS_FAULTS for its next starts
}

// Options adjust a new cluster.
type Options struct {
	// Personality is written to pbs.conf ("" for pbspro).
	Personality string
	// ServerArgs are extra pbs_server flags.
	ServerArgs []string
	// FaultBuild runs the daemons from BuildFaults, so that SetFault can
	// arm their fault points; Faults are armed from the start (daemon
	// name -> GOPBS_FAULTS value).
	FaultBuild bool
	Faults     map[string]string
	// Conf holds further pbs.conf lines ("PBS_SENDMAIL=/path\n").
	Conf string
}

// New creates a PBS_HOME and pbs.conf and starts pbs_server. The cluster is
// stopped when the test ends.
func New(t TB, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{T: t, Bin: Build(t), serverArgs: opts.ServerArgs, started: time.Now()}
	if opts.FaultBuild {
		c.faultBin = BuildFaults(t)
		c.faults = map[string]string{}
		for d, spec := range opts.Faults {
			c.faults[d] = spec
		}
	}
	c.Home = tempHome(t)
	c.BatchPort, c.MomPort, c.SchedPort = FreePort(t), FreePort(t), FreePort(t)
	c.Conf = filepath.Join(c.Home, "pbs.conf")
	conf := fmt.Sprintf("PBS_HOME=%s\nPBS_EXEC=%s\nPBS_SERVER=localhost\nPBS_BATCH_SERVICE_PORT=%d\nPBS_MOM_SERVICE_PORT=%d\nPBS_SCHEDULER_SERVICE_PORT=%d\n",
		c.Home, c.Bin, c.BatchPort, c.MomPort, c.SchedPort)
	if opts.Personality != "" {
		conf += "PBS_PERSONALITY=" + opts.Personality + "\n"
	}
	conf += opts.Conf
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.StartServer()
	t.Cleanup(c.Stop)
	// Tests run as root: let root's jobs in, as a site would with acl_roots.
	c.MustRun("qmgr", "-c", "set server acl_roots = root@*")
	return c
}

// tempHome makes a PBS_HOME every user can traverse (tests run commands
// as other users) under a short path (Unix socket paths are limited).
func tempHome(t TB) string {
	dir, err := os.MkdirTemp("", "pbsh")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() {
		if !t.Failed() || os.Getenv("GOPBS_KEEP") == "" {
			os.RemoveAll(dir)
		} else {
			t.Logf("kept PBS_HOME %s", dir)
		}
	})
	return dir
}

// Env is the environment for commands and daemons of this cluster.
func (c *Cluster) Env() []string {
	env := []string{"PBS_CONF_FILE=" + c.Conf, "PATH=" + c.Bin + ":/usr/bin:/bin", "HOME=" + c.Home, "LANG=C"}
	return env
}

// ServerLog returns what pbs_server wrote to stderr so far.
func (c *Cluster) ServerLog() string {
	b, _ := os.ReadFile(filepath.Join(c.Home, "pbs_server.stderr"))
	return string(b)
}

// StartServer starts pbs_server and waits until it answers.
func (c *Cluster) StartServer() {
	c.T.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	srv := c.startServerProc()
	ok, _ := Poll(20*time.Second, func() (bool, string) {
		if srv.exited() {
			c.server = nil
			c.T.Fatalf("pbs_server exited at start:\n%s", c.ServerLog())
		}
		return c.run(nil, nil, "qstat", "-B").Code == 0, ""
	})
	if !ok {
		c.T.Fatalf("pbs_server did not answer within 20s\n%s", c.ServerLog())
	}
}

// startServerProc starts pbs_server without waiting for it (mu held).
func (c *Cluster) startServerProc() *proc {
	path, env := c.daemonCmd("pbs_server", c.Env())
	c.server = startProc(c.T, path, c.serverArgs, env, filepath.Join(c.Home, "pbs_server.stderr"))
	return c.server
}

// ServerPid is pbs_server's process id (0 when stopped).
func (c *Cluster) ServerPid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return 0
	}
	return c.server.pid()
}

// WaitServerDown waits up to timeout for pbs_server to have exited (a
// crash at a fault point) and reports whether it did; it then counts as
// stopped, and StartServer starts it again.
func (c *Cluster) WaitServerDown(timeout time.Duration) bool {
	c.mu.Lock()
	p := c.server
	c.mu.Unlock()
	if p == nil {
		return true
	}
	if !p.down(timeout) {
		return false
	}
	c.mu.Lock()
	if c.server == p {
		c.server = nil
	}
	c.mu.Unlock()
	return true
}

// StartServerExpectFailure starts pbs_server and returns its exit error and
// output, for tests of refusals to start.
func (c *Cluster) StartServerExpectFailure(timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "pbs_server"))
	cmd.Env = c.Env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// KillServer sends sig (SIGKILL for a crash) to pbs_server and waits until
// it is gone.
func (c *Cluster) KillServer(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return
	}
	if !c.server.stop(sig, 30*time.Second) {
		c.T.Errorf("pbs_server did not exit within 30s of %v", sig)
	}
	c.server = nil
}

// Stop terminates every daemon of the cluster. Jobs left running by the
// test are killed with their moms' shepherds.
func (c *Cluster) Stop() {
	c.mu.Lock()
	moms := make([]*Mom, 0, len(c.moms))
	for _, m := range c.moms {
		moms = append(moms, m)
	}
	c.mu.Unlock()
	for _, m := range moms {
		m.Kill(syscall.SIGTERM)
		m.killJobs()
	}
	c.mu.Lock()
	scheds := c.scheds
	c.mu.Unlock()
	for _, s := range scheds {
		s.Kill(syscall.SIGTERM)
	}
	c.KillServer(syscall.SIGTERM)
}

// Result is what a command did.
type Result struct {
	Stdout string
	Stderr string
	Code   int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Cred runs a command as another user.
type Cred struct{ UID, GID uint32 }

func (c *Cluster) run(cred *Cred, stdin []byte, name string, args ...string) Result {
	return c.runEnv(c.Env(), cred, stdin, name, args...)
}

// RunEnv runs a command with a different environment (for example another
// personality).
func (c *Cluster) RunEnv(env []string, name string, args ...string) Result {
	return c.runEnv(env, nil, nil, name, args...)
}

// RunEnvAs runs a command with another environment as another user (nil
// for this one), with stdin when not empty.
func (c *Cluster) RunEnvAs(env []string, cred *Cred, stdin string, name string, args ...string) Result {
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	return c.runEnv(env, cred, in, name, args...)
}

func (c *Cluster) runEnv(env []string, cred *Cred, stdin []byte, name string, args ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, name), args...)
	cmd.Env = env
	cmd.Dir = c.Home
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.UID, Gid: cred.GID}}
		cmd.Dir = "/"
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			code = -1
			errb.WriteString(err.Error())
		}
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Run runs a command of the cluster.
func (c *Cluster) Run(name string, args ...string) Result { return c.run(nil, nil, name, args...) }

// RunStdin runs a command with stdin.
func (c *Cluster) RunStdin(stdin string, name string, args ...string) Result {
	return c.run(nil, []byte(stdin), name, args...)
}

// RunAs runs a command as another user.
func (c *Cluster) RunAs(cred Cred, stdin string, name string, args ...string) Result {
	var in []byte
	if stdin != "" {
		in = []byte(stdin)
	}
	return c.run(&cred, in, name, args...)
}

// MustRun runs a command and fails the test unless it exits 0.
func (c *Cluster) MustRun(name string, args ...string) string {
	c.T.Helper()
	r := c.Run(name, args...)
	if r.Code != 0 {
		c.T.Fatalf("%s %s: %s", name, strings.Join(args, " "), r)
	}
	return r.Stdout
}

// Submit runs qsub with a script on stdin and returns the job id.
func (c *Cluster) Submit(script string, args ...string) string {
	c.T.Helper()
	r := c.RunStdin(script, "qsub", args...)
	if r.Code != 0 {
		c.T.Fatalf("qsub %v: %s", args, r)
	}
	return strings.TrimSuffix(r.Stdout, "\n")
}

// ServerName is the short name of the server in job ids.
func (c *Cluster) ServerName() string { return "localhost" }

// JobAttr returns one attribute from qstat -f (with -x) of a job.
func (c *Cluster) JobAttr(id, name string) (string, bool) {
	r := c.Run("qstat", "-f", "-x", "-1", id)
	for _, line := range strings.Split(r.Stdout, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Seq is the numeric part of a job id.
func Seq(id string) int {
	n, _ := strconv.Atoi(strings.SplitN(id, ".", 2)[0])
	return n
}

// WaitServerExit waits up to timeout for pbs_server to exit by itself (after
// qterm) and returns its exit code, or -1 when it is still running.
func (c *Cluster) WaitServerExit(timeout time.Duration) int {
	c.mu.Lock()
	srv := c.server
	c.mu.Unlock()
	if srv == nil {
		return -1
	}
	code := srv.waitExit(timeout)
	if code >= 0 {
		c.mu.Lock()
		c.server = nil
		c.mu.Unlock()
	}
	return code
}
