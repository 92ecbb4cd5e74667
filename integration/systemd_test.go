package integration

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// unitFile reads a systemd unit's KEY=VALUE lines (the last of a key).
func unitFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && line[0] != '#' {
			out[k] = v
		}
	}
	return out
}

// The service units in packaging/systemd pass systemd-analyze verify (on
// a root holding the binaries where their ExecStart names them), and
// their ExecStart lines, run as systemd runs a Type=notify unit, start
// daemons that say READY=1 once they serve (and STOPPING=1 when they
// stop); the mom's unit stops the mom alone (KillMode=process), so that
// its jobs' shepherds live on. pbs_login's unit, with a login key in
// place, says READY=1 too.
func TestSystemdUnits(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd)")
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := testcluster.Build(t)
	units := filepath.Join(root, "packaging", "systemd")
	names := []string{"pbs_server.service", "pbs_sched.service", "pbs_mom.service", "pbs_login.service"}

	fake := t.TempDir()
	for _, d := range []string{"opt/gopbs/sbin", "etc/systemd/system", "usr/lib/systemd"} {
		os.MkdirAll(filepath.Join(fake, d), 0o755)
	}
	if out, err := exec.Command("cp", "-a", "/usr/lib/systemd/system", filepath.Join(fake, "usr/lib/systemd")).CombinedOutput(); err != nil {
		t.Fatalf("copy systemd's units: %v\n%s", err, out)
	}
	var paths []string
	execs := map[string]string{}
	for _, n := range names {
		u := unitFile(t, filepath.Join(units, n))
		execs[n] = u["ExecStart"]
		if u["Type"] != "notify" || u["Restart"] != "on-failure" || u["LimitNOFILE"] == "" {
			t.Errorf("%s: Type %q Restart %q LimitNOFILE %q", n, u["Type"], u["Restart"], u["LimitNOFILE"])
		}
		prog := filepath.Base(u["ExecStart"])
		if u["ExecStart"] != "/opt/gopbs/sbin/"+prog {
			t.Fatalf("%s: ExecStart %q is not a daemon in /opt/gopbs/sbin", n, u["ExecStart"])
		}
		// A copy: systemd-analyze --root resolves a link inside the root.
		b, err := os.ReadFile(filepath.Join(bin, prog))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(fake, "opt/gopbs/sbin", prog), b, 0o755)
		unit, _ := os.ReadFile(filepath.Join(units, n))
		os.WriteFile(filepath.Join(fake, "etc/systemd/system", n), unit, 0o644)
		paths = append(paths, "/etc/systemd/system/"+n)
	}
	if mom := unitFile(t, filepath.Join(units, "pbs_mom.service")); mom["KillMode"] != "process" || mom["Delegate"] != "yes" {
		t.Errorf("pbs_mom.service: KillMode %q Delegate %q, want process and yes", mom["KillMode"], mom["Delegate"])
	}
	if sched := unitFile(t, filepath.Join(units, "pbs_sched.service")); !strings.Contains(sched["After"], "pbs_server.service") {
		t.Errorf("pbs_sched.service is not ordered after pbs_server.service: %q", sched["After"])
	}
	out, err := exec.Command(analyze, append([]string{"verify", "--root=" + fake}, paths...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}

	// The ExecStart lines, with the binaries where this test built them.
	home, err := os.MkdirTemp("", "sd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	conf := filepath.Join(home, "pbs.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("PBS_HOME=%s\nPBS_SERVER=localhost\nPBS_BATCH_SERVICE_PORT=%d\nPBS_MOM_SERVICE_PORT=%d\nPBS_SCHEDULER_SERVICE_PORT=%d\n",
		home, testcluster.FreePort(t), testcluster.FreePort(t), testcluster.FreePort(t))), 0o644)
	sock := filepath.Join(home, "notify")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	state := func() string {
		l.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 256)
		n, err := l.Read(buf)
		if err != nil {
			return err.Error()
		}
		return string(buf[:n])
	}
	env := append(os.Environ(), "PBS_CONF_FILE="+conf, "NOTIFY_SOCKET="+sock)
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Kill()
			p.Wait()
		}
	}()
	for _, n := range names {
		if n == "pbs_login.service" {
			// A login host's key, as pbs_setup login-key makes it.
			cluster, err := proto.LoadKey(filepath.Join(home, "auth", "cluster.key"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(home, "auth", "login.key"), proto.LoginKey(cluster, config.ShortHostname()), 0o600)
		}
		cmd := exec.Command(strings.Replace(execs[n], "/opt/gopbs/sbin", bin, 1))
		cmd.Env = env
		logf, _ := os.Create(filepath.Join(home, n+".log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		if got := state(); got != "READY=1" {
			b, _ := os.ReadFile(filepath.Join(home, n+".log"))
			t.Fatalf("%s: %q, want READY=1\n%s", n, got, b)
		}
		if n == "pbs_server.service" {
			q := exec.Command(filepath.Join(bin, "qstat"), "-B")
			q.Env = env
			if out, err := q.CombinedOutput(); err != nil {
				t.Errorf("qstat -B once the server said READY=1: %v\n%s", err, out)
			}
		}
	}
	procs[0].Process.Signal(syscall.SIGTERM)
	if got := state(); got != "STOPPING=1" {
		t.Errorf("the server stopping: %q, want STOPPING=1", got)
	}
}

// scripts/package.sh builds the three Debian packages: each with its
// version, dependencies and files where the units and pbs_setup expect
// them, maintainer scripts that never name PBS_HOME, and binaries that
// run from where they are unpacked.
func TestPackages(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb is not installed")
	}
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The binaries this test run built with scripts/build.sh: linking
	// them all again would take a minute.
	bin := testcluster.Build(t)
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "package.sh"), dist)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PACKAGE_BIN="+bin, "DPKG_DEB_COMPRESSOR_TYPE=none")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("package.sh: %v\n%s", err, out)
	}
	debs := strings.Fields(string(out))
	if len(debs) != 3 {
		t.Fatalf("package.sh made %v", debs)
	}
	want := map[string][]string{
		"gopbs-client":    {"./opt/gopbs/bin/qsub", "./opt/gopbs/bin/qstat", "./opt/gopbs/bin/qmgr", "./opt/gopbs/sbin/pbs_setup", "./opt/gopbs/sbin/pbs_login", "./lib/systemd/system/pbs_login.service", "./etc/profile.d/gopbs.sh"},
		"gopbs-server":    {"./opt/gopbs/sbin/pbs_server", "./opt/gopbs/sbin/pbs_sched", "./lib/systemd/system/pbs_server.service", "./lib/systemd/system/pbs_sched.service"},
		"gopbs-execution": {"./opt/gopbs/sbin/pbs_mom", "./opt/gopbs/sbin/pbs_shepherd", "./lib/systemd/system/pbs_mom.service"},
	}
	unpacked := t.TempDir()
	for _, deb := range debs {
		field := func(f string) string {
			out, err := exec.Command("dpkg-deb", "--field", deb, f).Output()
			if err != nil {
				t.Fatalf("dpkg-deb --field %s %s: %v", deb, f, err)
			}
			return strings.TrimSpace(string(out))
		}
		name := field("Package")
		if v := field("Version"); !strings.HasPrefix(v, "23.06.06") {
			t.Errorf("%s: version %q", name, v)
		}
		if name != "gopbs-client" && !strings.Contains(field("Depends"), "gopbs-client (= "+field("Version")+")") {
			t.Errorf("%s: Depends %q", name, field("Depends"))
		}
		list, err := exec.Command("dpkg-deb", "--contents", deb).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range want[name] {
			if !strings.Contains(string(list), f+"\n") {
				t.Errorf("%s lacks %s:\n%s", name, f, list)
			}
		}
		for _, bad := range []string{"pbsbench", "swfsynth", "acctsynth", "/var/spool/pbs", "etc/pbs.conf"} {
			if strings.Contains(string(list), bad) {
				t.Errorf("%s ships %s", name, bad)
			}
		}
		ctl := t.TempDir()
		if out, err := exec.Command("dpkg-deb", "--control", deb, ctl).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, s := range []string{"postinst", "prerm"} {
			if b, err := os.ReadFile(filepath.Join(ctl, s)); err == nil && (strings.Contains(string(b), "spool") || strings.Contains(string(b), "PBS_HOME=")) {
				t.Errorf("%s's %s touches PBS_HOME:\n%s", name, s, b)
			}
		}
		if out, err := exec.Command("dpkg-deb", "-x", deb, unpacked).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	for _, prog := range []string{"bin/qsub", "bin/qstat", "sbin/pbs_setup"} {
		out, err := exec.Command(filepath.Join(unpacked, "opt/gopbs", prog), "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "usage") {
			t.Errorf("%s --help from the package: %v\n%s", prog, err, out)
		}
	}
	if out, err := exec.Command(filepath.Join(unpacked, "opt/gopbs/sbin/pbs_server"), "-version").CombinedOutput(); err != nil || !strings.Contains(string(out), "pbs_version = 23.06.06") {
		t.Errorf("pbs_server -version from the package: %v\n%s", err, out)
	}
}
