package integration

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Several hosts on one machine (issue 7): network namespaces joined by a
// bridge, one per host, each with its own address and /etc/hosts, running
// pbs_server, pbs_sched and two moms apart. A mom is cut off from the
// server and healed; the scheduler lives on its own host; commands come
// from a host that only runs a mom. The test hosts use TEST-NET-1
// (192.0.2.0/24), which exists only inside these namespaces.

// netHost is one test host.
type netHost struct {
	name, ns, addr, veth, port string // port: its end on the bridge
	home, conf                 string
}

type netCluster struct {
	t     *testing.T
	bin   string
	dir   string
	sw    string // the bridge's namespace
	hosts map[string]*netHost
	procs []*exec.Cmd
}

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetCluster makes the hosts (names: srv, sch, a, b) or skips the test
// where namespaces cannot be made.
func newNetCluster(t *testing.T) *netCluster {
	return newNetHosts(t, []string{"srv", "sch", "a", "b"}, func(h *netHost) string {
		return "PBS_SERVER=pbssrv\nPBS_SCHEDULER_HOST=pbssch\n"
	})
}

// newNetHosts makes the named hosts (host "x" is "pbsx" in every /etc/hosts);
// conf gives each host's pbs.conf lines beyond PBS_HOME, PBS_EXEC and
// PBS_MOM_NODE_NAME.
func newNetHosts(t *testing.T, names []string, conf func(h *netHost) string) *netCluster {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	var rnd [3]byte
	rand.Read(rnd[:])
	tag := hex.EncodeToString(rnd[:])
	nc := &netCluster{t: t, bin: testcluster.Build(t), sw: "pbssw" + tag, hosts: map[string]*netHost{}}
	if out, err := exec.Command("ip", "netns", "add", nc.sw).CombinedOutput(); err != nil {
		t.Skipf("cannot make network namespaces here: %v %s", err, out)
	}
	t.Cleanup(nc.stop)
	dir, err := os.MkdirTemp("", "pbsnet")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	nc.dir = dir
	ipCmd(t, "-n", nc.sw, "link", "add", "br0", "type", "bridge")
	ipCmd(t, "-n", nc.sw, "link", "set", "br0", "up")
	var hostsFile bytes.Buffer
	hostsFile.WriteString("127.0.0.1 localhost\n")
	for i, name := range names {
		h := &netHost{name: name, ns: "pbs" + name + tag, addr: fmt.Sprintf("192.0.2.%d", i+1),
			veth: "v" + name + tag, port: "p" + name + tag}
		h.home = filepath.Join(dir, name)
		h.conf = filepath.Join(h.home, "pbs.conf")
		nc.hosts[name] = h
		fmt.Fprintf(&hostsFile, "%s pbs%s\n", h.addr, name)
		ipCmd(t, "netns", "add", h.ns)
		ipCmd(t, "link", "add", h.veth, "type", "veth", "peer", "name", h.port)
		ipCmd(t, "link", "set", h.veth, "netns", h.ns)
		ipCmd(t, "link", "set", h.port, "netns", nc.sw)
		ipCmd(t, "-n", nc.sw, "link", "set", h.port, "master", "br0", "up")
		ipCmd(t, "-n", h.ns, "addr", "add", h.addr+"/24", "dev", h.veth)
		ipCmd(t, "-n", h.ns, "link", "set", h.veth, "up")
		ipCmd(t, "-n", h.ns, "link", "set", "lo", "up")
	}
	for _, h := range nc.hosts {
		// ip netns exec mounts /etc/netns/<ns>/hosts over /etc/hosts.
		etc := filepath.Join("/etc/netns", h.ns)
		if err := os.MkdirAll(etc, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, "hosts"), hostsFile.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"auth", "mom_priv"} {
			os.MkdirAll(filepath.Join(h.home, d), 0o755)
		}
		os.Chmod(filepath.Join(h.home, "auth"), 0o700)
		lines := fmt.Sprintf("PBS_HOME=%s\nPBS_EXEC=%s\nPBS_MOM_NODE_NAME=%s\n", h.home, nc.bin, h.name) + conf(h)
		if err := os.WriteFile(h.conf, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return nc
}

func (nc *netCluster) stop() {
	for _, p := range nc.procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range nc.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.Process.Kill()
		}
	}
	// Jobs left by the test die with their shepherds' sessions.
	pids, _ := filepath.Glob(filepath.Join(nc.dir, "*", "mom_priv", "jobs", "*", "shepherd.pid"))
	for _, f := range pids {
		var pid int
		if b, err := os.ReadFile(f); err == nil {
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 1 {
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	}
	for _, h := range nc.hosts {
		exec.Command("ip", "netns", "del", h.ns).Run()
		os.RemoveAll(filepath.Join("/etc/netns", h.ns))
	}
	exec.Command("ip", "netns", "del", nc.sw).Run()
	if nc.dir != "" && !nc.t.Failed() {
		os.RemoveAll(nc.dir)
	} else if nc.dir != "" {
		nc.t.Logf("kept %s", nc.dir)
	}
}

// start runs daemon on host h in its namespace.
func (nc *netCluster) start(h *netHost, daemon string) *exec.Cmd {
	nc.t.Helper()
	logf, err := os.OpenFile(filepath.Join(h.home, daemon+".stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		nc.t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", h.ns, filepath.Join(nc.bin, daemon))
	cmd.Env = []string{"PBS_CONF_FILE=" + h.conf, "PATH=" + nc.bin + ":/usr/bin:/bin", "LANG=C"}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		nc.t.Fatal(err)
	}
	nc.procs = append(nc.procs, cmd)
	return cmd
}

// run runs a command on host h.
func (nc *netCluster) run(h *netHost, stdin string, name string, args ...string) testcluster.Result {
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.ns, filepath.Join(nc.bin, name)}, args...)...)
	cmd.Env = []string{"PBS_CONF_FILE=" + h.conf, "PATH=" + nc.bin + ":/usr/bin:/bin", "LANG=C", "HOME=" + nc.dir}
	cmd.Dir = nc.dir
	return runResult(cmd, stdin)
}

// runResult runs cmd with stdin and returns what it printed and its exit
// status (-1 when it could not run).
func runResult(cmd *exec.Cmd, stdin string) testcluster.Result {
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return testcluster.Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

func (nc *netCluster) must(h *netHost, name string, args ...string) string {
	nc.t.Helper()
	r := nc.run(h, "", name, args...)
	if r.Code != 0 {
		nc.t.Fatalf("%s %s on %s: %s", name, strings.Join(args, " "), h.name, r)
	}
	return r.Stdout
}

// waitFor polls cond for up to timeout.
func (nc *netCluster) waitFor(what string, timeout time.Duration, cond func() bool) {
	nc.t.Helper()
	waitFor(nc.t, what, timeout, cond)
}

func (nc *netCluster) jobAttr(id, attr string) string {
	return nc.jobAttrOn(nc.hosts["srv"], id, attr)
}

// jobAttrOn reads a job's attribute with qstat on host h.
func (nc *netCluster) jobAttrOn(h *netHost, id, attr string) string {
	r := nc.run(h, "", "qstat", "-x", "-f", id)
	for _, line := range strings.Split(r.Stdout, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && k == attr {
			return v
		}
	}
	return ""
}

func (nc *netCluster) nodeState(node string) string {
	return nc.nodeStateOn(nc.hosts["srv"], node)
}

// nodeStateOn reads a node's state with pbsnodes on host h.
func (nc *netCluster) nodeStateOn(h *netHost, node string) string {
	r := nc.run(h, "", "pbsnodes", node)
	for _, line := range strings.Split(r.Stdout, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && k == "state" {
			return v
		}
	}
	return ""
}

func TestSeveralHosts(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostNetns)
	nc := newNetCluster(t)
	srv, sch, a, b := nc.hosts["srv"], nc.hosts["sch"], nc.hosts["a"], nc.hosts["b"]
	nc.start(srv, "pbs_server")
	nc.waitFor("pbs_server", 20*time.Second, func() bool { return nc.run(srv, "", "qstat", "-B").Code == 0 })
	key, err := os.ReadFile(filepath.Join(srv.home, "auth", "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*netHost{sch, a, b} {
		if err := os.WriteFile(filepath.Join(h.home, "auth", "cluster.key"), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{
		"set server acl_roots = root@*",
		"set server scheduling = False",
		"set server node_check_rate = 3",
		"set server node_fail_requeue = 4",
		// No timer cycles during the test: the requeued job must start a
		// cycle by itself.
		"set server scheduler_iteration = 600",
		"create node a Mom=pbsa",
		"create node b Mom=pbsb",
		"set node a resources_available.ncpus = 1",
		"set node b resources_available.ncpus = 1",
	} {
		nc.must(srv, "qmgr", "-c", cmd)
	}
	nc.start(a, "pbs_mom")
	nc.start(b, "pbs_mom")
	for _, n := range []string{"a", "b"} {
		nc.waitFor("node "+n+" free", 20*time.Second, func() bool { return nc.nodeState(n) == "free" })
	}
	// The job can only start on a for now.
	nc.must(srv, "pbsnodes", "-o", "b")
	nc.start(sch, "pbs_sched")
	nc.waitFor("pbs_sched", 20*time.Second, func() bool {
		// The home is this test's: every day's file of it.
		log := testcluster.ReadDaily(filepath.Join(sch.home, "sched_logs"), time.Time{})
		return strings.Contains(log, "scheduler ready")
	})
	nc.must(srv, "qmgr", "-c", "set server scheduling = True")

	// Submitted from b, a host that runs only a mom: through b's mom.
	beats := filepath.Join(nc.dir, "beats.log")
	r := nc.run(b, beatScript(beats, 12), "qsub")
	if r.Code != 0 {
		t.Fatalf("qsub from host b: %s", r)
	}
	id := strings.TrimSpace(r.Stdout)
	// The scheduler on its own host starts it on a.
	nc.waitFor("job running on a", 30*time.Second, func() bool {
		return nc.jobAttr(id, "job_state") == "R" && strings.HasPrefix(nc.jobAttr(id, "exec_host"), "a/")
	})
	firstPid := ""
	nc.waitFor("the first beat", 10*time.Second, func() bool {
		data, _ := os.ReadFile(beats)
		if f := strings.Fields(string(data)); len(f) >= 3 {
			firstPid = f[1]
		}
		return firstPid != ""
	})

	// Cut a off: its mom can no longer reach the server, nor the server it.
	ipCmd(t, "-n", nc.sw, "link", "set", a.port, "down")
	nc.must(srv, "pbsnodes", "-c", "b")
	nc.waitFor("node a down", 20*time.Second, func() bool { return strings.Contains(nc.nodeState("a"), "down") })
	// Requeued per policy and started again by the scheduler, on b.
	nc.waitFor("job rerun on b", 40*time.Second, func() bool {
		return nc.jobAttr(id, "job_state") == "R" && strings.HasPrefix(nc.jobAttr(id, "exec_host"), "b/")
	})
	var pid int
	fmt.Sscan(firstPid, &pid)
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("job %s runs on b while its first copy (pid %d) still runs on the cut-off host a", id, pid)
	}
	if r := nc.run(b, "", "qstat", id); r.Code != 0 || !strings.Contains(r.Stdout, id) {
		t.Fatalf("qstat from host b during the partition: %s", r)
	}

	// Healed: a comes back, and its old copy's end changes nothing.
	ipCmd(t, "-n", nc.sw, "link", "set", a.port, "up")
	nc.waitFor("node a free again", 30*time.Second, func() bool { return nc.nodeState("a") == "free" })
	nc.waitFor("job finished", 60*time.Second, func() bool { return nc.jobAttr(id, "job_state") == "F" })
	if got := nc.jobAttr(id, "Exit_status"); got != "0" {
		t.Errorf("Exit_status %q, want 0 (run on b)", got)
	}
	if got := nc.jobAttr(id, "exec_host"); !strings.HasPrefix(got, "b/") {
		t.Errorf("finished on %q, want b", got)
	}
	checkNoOverlap(t, beats)
}
