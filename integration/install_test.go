package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// guide is docs/install.md performed on hosts in network namespaces, each
// with the packages unpacked into a root directory of its own: the
// commands are the packages' (root/opt/gopbs/...), the daemons are
// started by their units' ExecStart lines (root/lib/systemd/system), with
// systemd's readiness protocol, and pbs.conf and PBS_HOME are where
// pbs_setup puts them under the root.
type guide struct {
	*netCluster
	debs  map[string]string // package name: .deb
	roots map[string]string // host name: its root directory
}

// root is host h's root directory.
func (g *guide) root(h *netHost) string { return g.roots[h.name] }

// install unpacks the packages into h's root, as dpkg -i would.
func (g *guide) install(h *netHost, pkgs ...string) {
	g.t.Helper()
	for _, p := range pkgs {
		if out, err := exec.Command("dpkg-deb", "-x", g.debs[p], g.root(h)).CombinedOutput(); err != nil {
			g.t.Fatalf("install %s on %s: %v\n%s", p, h.name, err, out)
		}
	}
}

// env is a process's environment on h: its pbs.conf, and the packages'
// PATH (/etc/profile.d/gopbs.sh's).
func (g *guide) env(h *netHost) []string {
	r := g.root(h)
	return []string{"PBS_CONF_FILE=" + filepath.Join(r, "etc/pbs.conf"), "PATH=" + r + "/opt/gopbs/bin:" + r + "/opt/gopbs/sbin:/usr/bin:/bin", "LANG=C", "HOME=" + g.dir}
}

// cmd runs an installed program on h, as user (nil: root), in dir.
func (g *guide) cmd(h *netHost, user *testcluster.Cred, dir, stdin, prog string, args ...string) testcluster.Result {
	path := filepath.Join(g.root(h), "opt/gopbs/bin", prog)
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(g.root(h), "opt/gopbs/sbin", prog)
	}
	argv := []string{"netns", "exec", h.ns}
	if user != nil {
		argv = append(argv, "setpriv", fmt.Sprintf("--reuid=%d", user.UID), fmt.Sprintf("--regid=%d", user.GID), "--clear-groups")
	}
	c := exec.Command("ip", append(append(argv, path), args...)...)
	c.Env = g.env(h)
	c.Dir = dir
	return runResult(c, stdin)
}

// must is cmd as root in the test's directory, failing the test unless
// it exits 0.
func (g *guide) must(h *netHost, prog string, args ...string) string {
	g.t.Helper()
	r := g.cmd(h, nil, g.dir, "", prog, args...)
	if r.Code != 0 {
		g.t.Fatalf("%s %s on %s: %s", prog, strings.Join(args, " "), h.name, r)
	}
	return r.Stdout
}

// enable is systemctl enable --now UNIT on h: the unit's ExecStart line
// under h's root, started as systemd starts a Type=notify unit, waited
// for until it says READY=1.
func (g *guide) enable(h *netHost, unit string) *exec.Cmd {
	g.t.Helper()
	c, ready := g.spawn(h, unit)
	if err := ready(); err != nil {
		g.t.Fatalf("%s on %s: %v\n%s", unit, h.name, err, g.log(h, unit))
	}
	return c
}

// spawn starts UNIT's ExecStart on h; ready waits for its READY=1.
func (g *guide) spawn(h *netHost, unit string) (*exec.Cmd, func() error) {
	g.t.Helper()
	text, err := os.ReadFile(filepath.Join(g.root(h), "lib/systemd/system", unit))
	if err != nil {
		g.t.Fatalf("%s on %s: %v", unit, h.name, err)
	}
	start := ""
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			start = v
		}
	}
	sock := filepath.Join(g.dir, fmt.Sprintf("notify-%s-%s-%d", h.name, unit, time.Now().UnixNano()))
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		g.t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(g.dir, h.name+"-"+unit+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	c := exec.Command("ip", "netns", "exec", h.ns, filepath.Join(g.root(h), start))
	c.Env = append(g.env(h), "NOTIFY_SOCKET="+sock)
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		g.t.Fatal(err)
	}
	go func() { c.Wait(); logf.Close() }()
	g.procs = append(g.procs, c)
	return c, func() error {
		defer l.Close()
		l.SetReadDeadline(time.Now().Add(60 * time.Second))
		buf := make([]byte, 256)
		n, err := l.Read(buf)
		if err != nil {
			return err
		}
		if got := string(buf[:n]); got != "READY=1" {
			return fmt.Errorf("said %q, want READY=1", got)
		}
		return nil
	}
}

// stop is systemctl stop: SIGTERM, then the wait for the exit.
func (g *guide) stop(c *exec.Cmd) {
	c.Process.Signal(syscall.SIGTERM)
	for i := 0; i < 200 && c.ProcessState == nil; i++ {
		if c.Process.Signal(syscall.Signal(0)) != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (g *guide) log(h *netHost, unit string) string {
	b, _ := os.ReadFile(filepath.Join(g.dir, h.name+"-"+unit+".log"))
	return string(b)
}

// mpiJob submits the guide's two-node MPI job on h as user from dir and
// checks its four ranks ran, two under each execution host's mom.
func (g *guide) mpiJob(h *netHost, user *testcluster.Cred, dir, hello string, moms ...*netHost) {
	g.t.Helper()
	// The job finds the commands as a login shell would
	// (/etc/profile.d/gopbs.sh): PBS_EXEC from its host's pbs.conf.
	script := "#!/bin/sh\n#PBS -N mpi\n#PBS -j oe\n#PBS -l select=2:ncpus=2:mpiprocs=2\n#PBS -l place=scatter\n" +
		"PATH=$(sed -n 's/^PBS_EXEC=//p' \"$PBS_CONF_FILE\")/bin:$PATH\n" +
		"cd \"$PBS_O_WORKDIR\"\n" +
		"mpirun.openmpi --mca plm_rsh_agent pbs_tmrsh --mca btl self,tcp --mca btl_tcp_if_include 192.0.2.0/24 --mca oob_tcp_if_include 192.0.2.0/24 --hostfile \"$PBS_NODEFILE\" -np 4 " + hello + "\necho \"launcher=$?\"\n"
	r := g.cmd(h, user, dir, script, "qsub")
	if r.Code != 0 {
		g.t.Fatalf("qsub of the MPI job on %s: %s", h.name, r)
	}
	id := strings.TrimSpace(r.Stdout)
	g.waitFor("the MPI job "+id+" to finish", 90*time.Second, func() bool {
		return strings.Contains(g.cmd(h, user, dir, "", "qstat", "-x", "-f", id).Stdout, "job_state = F")
	})
	seq, _, _ := strings.Cut(id, ".")
	out, err := os.ReadFile(filepath.Join(dir, "mpi.o"+seq))
	if err != nil {
		g.t.Fatalf("the MPI job's output: %v\n%s", err, g.cmd(h, user, dir, "", "qstat", "-x", "-f", id).Stdout)
	}
	g.t.Logf("the MPI job %s from %s:\n%s", id, h.name, out)
	perHost := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^hello rank \d of 4 sum 6 under (task|job) (\S+)$`).FindAllStringSubmatch(string(out), -1) {
		for _, mom := range moms {
			if strings.HasPrefix(m[2], g.root(mom)+"/") {
				perHost[mom.name]++
			}
		}
	}
	if !strings.Contains(string(out), "launcher=0\n") || len(perHost) != 2 || perHost[moms[0].name] != 2 || perHost[moms[1].name] != 2 {
		g.t.Errorf("the MPI job %s: want 4 ranks, two on each of %s and %s; got %v:\n%s", id, moms[0].name, moms[1].name, perHost, out)
	}
}

// docs/install.md, step by step: packages built by scripts/package.sh
// installed on a server host, two execution hosts and a login host;
// pbs_setup for each role; the daemons started by their units; a
// two-node Open MPI job submitted by a user on the login host; then the
// same cluster moved to a three-server group, the MPI job again from the
// login host, and a qsub there that still answers with the leader killed.
func TestInstallGuide(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostNetns)
	for _, tool := range []string{"dpkg-deb", "setpriv", "mpicc.openmpi", "mpirun.openmpi", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs it as root on Debian)", tool)
		}
	}
	names := []string{"srv1", "srv2", "srv3", "a", "b", "login"}
	g := &guide{netCluster: newNetHosts(t, names, func(*netHost) string { return "" }), roots: map[string]string{}}
	for _, n := range names {
		g.roots[n] = filepath.Join(g.dir, "root-"+n)
		os.MkdirAll(g.roots[n], 0o755)
	}
	t.Cleanup(func() {
		// Jobs left by a failed test die with their shepherds' sessions.
		pids, _ := filepath.Glob(filepath.Join(g.dir, "root-*", "var/spool/pbs/mom_priv/jobs/*/shepherd.pid"))
		for _, f := range pids {
			var pid int
			if b, err := os.ReadFile(f); err == nil {
				if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 1 {
					syscall.Kill(-pid, syscall.SIGKILL)
				}
			}
		}
	})
	srv1, srv2, srv3, a, b, login := g.hosts["srv1"], g.hosts["srv2"], g.hosts["srv3"], g.hosts["a"], g.hosts["b"], g.hosts["login"]
	home := func(h *netHost) string { return filepath.Join(g.root(h), "var/spool/pbs") }
	at := func(h *netHost, args ...string) []string {
		return append(args, "--home", home(h), "--conf", filepath.Join(g.root(h), "etc/pbs.conf"))
	}

	// 0. The packages.
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(g.dir, "dist")
	pkg := exec.Command("bash", filepath.Join(root, "scripts", "package.sh"), dist)
	pkg.Dir = root
	pkg.Env = append(os.Environ(), "PACKAGE_BIN="+g.bin, "DPKG_DEB_COMPRESSOR_TYPE=none")
	out, err := pkg.CombinedOutput()
	if err != nil {
		t.Fatalf("package.sh: %v\n%s", err, out)
	}
	g.debs = map[string]string{}
	for _, deb := range strings.Fields(string(out)) {
		name, _, _ := strings.Cut(filepath.Base(deb), "_")
		g.debs[name] = deb
	}

	// 1. The server host.
	g.install(srv1, "gopbs-client", "gopbs-server")
	setup := g.must(srv1, "pbs_setup", at(srv1, "server", "--server", "pbssrv1")...)
	if !strings.Contains(setup, "A new cluster key is in") || !strings.Contains(setup, "pbs_setup login-key") {
		t.Errorf("pbs_setup server's instructions:\n%s", setup)
	}
	servers := map[*netHost][2]*exec.Cmd{}
	servers[srv1] = [2]*exec.Cmd{g.enable(srv1, "pbs_server.service"), g.enable(srv1, "pbs_sched.service")}
	clusterKey := filepath.Join(home(srv1), "auth", "cluster.key")

	// 2. The execution hosts, with the cluster key; output written where
	// it is ($usecp: the test's hosts share their file system).
	moms := map[*netHost]*exec.Cmd{}
	for _, h := range []*netHost{a, b} {
		g.install(h, "gopbs-client", "gopbs-execution")
		out := g.must(h, "pbs_setup", at(h, "execution", "--server", "pbssrv1", "--key", clusterKey, "--node", "pbs"+h.name)...)
		create := regexp.MustCompile(`qmgr -c "create node (\S+)"`).FindStringSubmatch(out)
		if create == nil || create[1] != "pbs"+h.name {
			t.Fatalf("pbs_setup execution's instructions:\n%s", out)
		}
		os.WriteFile(filepath.Join(home(h), "mom_priv", "config"), []byte("$usecp *:/ /\n"), 0o644)
		moms[h] = g.enable(h, "pbs_mom.service")
		g.must(srv1, "qmgr", "-c", "create node "+create[1])
	}
	for _, n := range []string{"pbsa", "pbsb"} {
		g.waitFor(n+" free", 30*time.Second, func() bool { return strings.Contains(g.must(srv1, "pbsnodes", n), "state = free") })
	}

	// 3. The login host, with a key of its own.
	loginKey := filepath.Join(g.dir, "pbslogin.login.key")
	g.must(srv1, "pbs_setup", "login-key", "pbslogin", "--home", home(srv1), "--out", loginKey)
	g.install(login, "gopbs-client")
	g.must(login, "pbs_setup", at(login, "login", "--server", "pbssrv1", "--key", loginKey, "--node", "pbslogin")...)
	if _, err := os.Stat(filepath.Join(home(login), "auth", "cluster.key")); err == nil {
		t.Errorf("the login host has the cluster key")
	}
	agent := g.enable(login, "pbs_login.service")
	if _, err := os.Stat(filepath.Join(g.root(login), "opt/gopbs/sbin/pbs_mom")); err == nil {
		t.Errorf("the login host has a mom")
	}

	// 4. A user's two-node MPI job from the login host.
	nobody := &testcluster.Cred{UID: 65534, GID: 65534}
	work := filepath.Join(g.dir, "work")
	os.MkdirAll(work, 0o777)
	os.Chmod(work, 0o777)
	hello := filepath.Join(work, "hello")
	if out, err := exec.Command("mpicc.openmpi", "-o", hello, filepath.Join("testdata", "mpi_hello.c")).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	g.mpiJob(login, nobody, work, hello, a, b)
	if r := g.cmd(login, nil, g.dir, "", "qmgr", "-c", "set server comment = root at the login host"); r.Code == 0 {
		t.Errorf("root on the login host is a manager: %s", r)
	}

	// 5. Three servers as one group: srv1 drained and set aside, srv2 and
	// srv3 with the cluster key, every other host set up again with the
	// group.
	g.stop(servers[srv1][1])
	g.stop(servers[srv1][0])
	if err := os.Rename(filepath.Join(home(srv1), "server_priv"), filepath.Join(home(srv1), "server_priv.single")); err != nil {
		t.Fatal(err)
	}
	peers := "pbssrv1:15001,pbssrv2:15001,pbssrv3:15001"
	g.must(srv1, "pbs_setup", at(srv1, "server", "--server", "gopbs", "--peers", peers, "--node", "pbssrv1")...)
	for _, h := range []*netHost{srv2, srv3} {
		g.install(h, "gopbs-client", "gopbs-server")
		g.must(h, "pbs_setup", at(h, "server", "--server", "gopbs", "--peers", peers, "--node", "pbs"+h.name, "--key", clusterKey)...)
	}
	for _, h := range []*netHost{a, b} {
		g.must(h, "pbs_setup", at(h, "execution", "--server", "gopbs", "--peers", peers, "--node", "pbs"+h.name)...)
		g.stop(moms[h])
		moms[h] = g.enable(h, "pbs_mom.service")
	}
	g.must(login, "pbs_setup", at(login, "login", "--server", "gopbs", "--peers", peers, "--node", "pbslogin")...)
	g.stop(agent)
	g.enable(login, "pbs_login.service")
	// Each member's pbs_server says READY=1 once it serves, as leader or
	// follower; the three start together, as systemctl would on each.
	members := map[string]*exec.Cmd{}
	var readies []func() error
	for _, h := range []*netHost{srv1, srv2, srv3} {
		c, ready := g.spawn(h, "pbs_server.service")
		members["pbs"+h.name+":15001"] = c
		readies = append(readies, ready)
	}
	for i, ready := range readies {
		if err := ready(); err != nil {
			h := []*netHost{srv1, srv2, srv3}[i]
			t.Fatalf("pbs_server on %s: %v\n%s", h.name, err, g.log(h, "pbs_server.service"))
		}
	}
	for _, h := range []*netHost{srv1, srv2, srv3} {
		g.enable(h, "pbs_sched.service")
	}
	var leader string
	g.waitFor("a leader", 30*time.Second, func() bool {
		m := regexp.MustCompile(`server_leader = (\S+)`).FindStringSubmatch(g.cmd(srv2, nil, g.dir, "", "qstat", "-Bf").Stdout)
		if m != nil {
			leader = m[1]
		}
		return m != nil
	})
	for _, n := range []string{"pbsa", "pbsb"} {
		g.must(srv3, "qmgr", "-c", "create node "+n)
	}
	for _, n := range []string{"pbsa", "pbsb"} {
		g.waitFor(n+" free in the group", 30*time.Second, func() bool {
			return strings.Contains(g.cmd(srv1, nil, g.dir, "", "pbsnodes", n).Stdout, "state = free")
		})
	}
	g.mpiJob(login, nobody, work, hello, a, b)

	// The leader's host fails: the login host's qsub answers from the next.
	dead := members[leader]
	if dead == nil {
		t.Fatalf("no member is the leader %q", leader)
	}
	dead.Process.Signal(syscall.SIGKILL)
	r := g.cmd(login, nobody, work, "#!/bin/sh\ntrue\n", "qsub")
	t.Logf("leader %s killed; qsub on the login host: %s", leader, r)
	if r.Code != 0 || !strings.HasSuffix(strings.TrimSpace(r.Stdout), ".gopbs") {
		t.Fatalf("qsub on the login host with the leader killed: %s\n%s", r, g.log(login, "pbs_login.service"))
	}
	id := strings.TrimSpace(r.Stdout)
	for _, h := range []*netHost{srv1, srv2, srv3} {
		if members["pbs"+h.name+":15001"] != dead {
			if q := g.cmd(h, nil, g.dir, "", "qstat", "-x", id); q.Code != 0 {
				t.Errorf("the job qsub printed with the leader killed, on %s: %s", h.name, q)
			}
		}
	}
}
