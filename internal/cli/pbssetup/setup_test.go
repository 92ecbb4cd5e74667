package pbssetup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

type result struct {
	code           int
	stdout, stderr string
}

func runIn(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb, host{name: "h1", exe: "/opt/gopbs/sbin/pbs_setup", getenv: func(string) string { return "" }})
	return result{code, out.String(), errb.String()}
}

// snapshot is every file under dir with its mode and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		v := fi.Mode().String()
		if !fi.IsDir() {
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[strings.TrimPrefix(p, dir)] = v
		return nil
	})
	return out
}

// A server, then an execution host with the server's key: pbs.conf
// written with the other lines kept, PBS_HOME's directories with their
// modes, the key made once, the next steps printed; each set up twice
// ends the same.
func TestSetupServerThenExecution(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, conf := filepath.Join(root, "spool"), filepath.Join(root, "etc", "pbs.conf")
	os.MkdirAll(filepath.Dir(conf), 0o755)
	os.WriteFile(conf, []byte("# the site's\nPBS_WEB=:8080\n"), 0o644)

	r := runIn(t, "server", "--home", home, "--conf", conf)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("server: %+v", r)
	}
	for _, want := range []string{"h1: server host set up: " + conf, "A new cluster key is in " + home + "/auth/cluster.key",
		"ssh HOST pbs_setup execution --server h1 --key /root/cluster.key"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("server's output lacks %q:\n%s", want, r.stdout)
		}
	}
	b, _ := os.ReadFile(conf)
	if want := "# the site's\nPBS_WEB=:8080\nPBS_HOME=" + home + "\nPBS_EXEC=/opt/gopbs\nPBS_SERVER=h1\n"; string(b) != want {
		t.Errorf("pbs.conf:\n%s\nwant\n%s", b, want)
	}
	for d, mode := range map[string]os.FileMode{"auth": 0o700, "server_priv": 0o750, "sched_priv": 0o750, "server_logs": 0o755, "sched_logs": 0o755} {
		fi, err := os.Stat(filepath.Join(home, d))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, mode %v, want %v", d, err, fi.Mode().Perm(), mode)
		}
	}
	key, err := proto.LoadKey(filepath.Join(home, "auth", "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	if r := runIn(t, "server", "--home", home, "--conf", conf); r.code != 0 || strings.Contains(r.stdout, "A new cluster key") {
		t.Errorf("server again: %+v", r)
	}
	if after := snapshot(t, root); !equalMaps(before, after) {
		t.Errorf("a second setup changed the host:\n%v\n%v", before, after)
	}
	if _, err := config.FromValues(parseConf(t, conf)); err != nil {
		t.Errorf("the pbs.conf written does not load: %v", err)
	}

	// An execution host: without the key it stops, naming what it needs.
	exec := filepath.Join(root, "exec")
	econf := filepath.Join(exec, "pbs.conf")
	r = runIn(t, "execution", "--server", "h1", "--home", filepath.Join(exec, "spool"), "--conf", econf)
	if r.code != 1 || !strings.Contains(r.stderr, "role execution needs the cluster key: --key FILE") {
		t.Errorf("execution without the key: %+v", r)
	}
	keyCopy := filepath.Join(root, "key.copy")
	os.WriteFile(keyCopy, key, 0o600)
	args := []string{"execution", "--server", "h1", "--home", filepath.Join(exec, "spool"), "--conf", econf, "--key", keyCopy, "--node", "n7"}
	r = runIn(t, args...)
	if r.code != 0 || !strings.Contains(r.stdout, `qmgr -c "create node n7"`) {
		t.Fatalf("execution: %+v", r)
	}
	if got, err := proto.LoadKey(filepath.Join(exec, "spool", "auth", "cluster.key")); err != nil || !bytes.Equal(got, key) {
		t.Errorf("the execution host's key: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(exec, "spool", "mom_priv")); err != nil || fi.Mode().Perm() != 0o751 {
		t.Errorf("mom_priv: %v", err)
	}
	if vals := parseConf(t, econf); vals[config.KeyMomNodeName] != "n7" || vals[config.KeyServer] != "h1" {
		t.Errorf("the execution host's pbs.conf: %v", vals)
	}
	before = snapshot(t, exec)
	if r := runIn(t, args...); r.code != 0 {
		t.Errorf("execution again: %+v", r)
	}
	if after := snapshot(t, exec); !equalMaps(before, after) {
		t.Errorf("a second setup changed the execution host")
	}
	// Another key where one is installed is refused.
	other := filepath.Join(root, "other.key")
	os.WriteFile(other, bytes.Repeat([]byte{1}, proto.KeySize), 0o600)
	args[len(args)-3] = other
	if r := runIn(t, args...); r.code != 1 || !strings.Contains(r.stderr, "holds another key than") {
		t.Errorf("a different key: %+v", r)
	}
}

// A login host: its key made on the server host from the cluster key
// (never the cluster key itself), installed by pbs_setup login with the
// host's name in pbs.conf; set up twice it ends the same. A client host
// gets pbs.conf and no key.
func TestSetupLoginAndClient(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	srv := filepath.Join(root, "srv")
	if r := runIn(t, "server", "--home", srv, "--conf", filepath.Join(root, "srv.conf")); r.code != 0 {
		t.Fatalf("server: %+v", r)
	}
	if !strings.Contains(runIn(t, "server", "--home", srv, "--conf", filepath.Join(root, "srv.conf")).stdout, "pbs_setup login-key LOGINHOST") {
		t.Errorf("the server's instructions do not tell how to set up a login host")
	}
	keyOut := filepath.Join(root, "l1.key")
	r := runIn(t, "login-key", "l1", "--home", srv, "--out", keyOut)
	if r.code != 0 || !strings.Contains(r.stdout, "pbs_setup login --server SERVER --key /root/login.key --node l1") {
		t.Fatalf("login-key: %+v", r)
	}
	cluster, _ := proto.LoadKey(filepath.Join(srv, "auth", "cluster.key"))
	got, err := proto.LoadKey(keyOut)
	if err != nil || !bytes.Equal(got, proto.LoginKey(cluster, "l1")) || bytes.Equal(got, cluster) {
		t.Fatalf("the login key: %v (want LoginKey(cluster, l1))", err)
	}
	home, conf := filepath.Join(root, "login"), filepath.Join(root, "login.conf")
	args := []string{"login", "--server", "h1", "--key", keyOut, "--node", "l1", "--home", home, "--conf", conf}
	if r := runIn(t, args...); r.code != 0 || !strings.Contains(r.stdout, "Start pbs_login here") {
		t.Fatalf("login: %+v", r)
	}
	if vals := parseConf(t, conf); vals[config.KeyLoginHostName] != "l1" || vals[config.KeyServer] != "h1" {
		t.Errorf("the login host's pbs.conf: %v", vals)
	}
	if b, err := proto.LoadKey(filepath.Join(home, "auth", "login.key")); err != nil || !bytes.Equal(b, got) {
		t.Errorf("auth/login.key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "auth", "cluster.key")); err == nil {
		t.Errorf("a login host got the cluster key")
	}
	before := snapshot(t, home)
	// Again without --key: the installed one stands.
	again := append([]string{"login", "--server", "h1", "--node", "l1"}, args[len(args)-4:]...)
	if r := runIn(t, again...); r.code != 0 {
		t.Errorf("login again: %+v", r)
	}
	if after := snapshot(t, home); !equalMaps(before, after) {
		t.Errorf("a second setup changed the login host")
	}

	chome, cconf := filepath.Join(root, "client"), filepath.Join(root, "client.conf")
	if r := runIn(t, "client", "--server", "h1", "--home", chome, "--conf", cconf); r.code != 0 || !strings.Contains(r.stdout, "set up as login") {
		t.Fatalf("client: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(chome, "auth")); err == nil {
		t.Errorf("a client host got an auth directory")
	}
	if vals := parseConf(t, cconf); vals[config.KeyServer] != "h1" {
		t.Errorf("the client's pbs.conf: %v", vals)
	}
}

// Bad input stops pbs_setup with a message naming what is wrong.
func TestSetupRefusals(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "no role: give server, execution, client or login first"},
		{[]string{"--server", "x"}, 2, "no role"},
		{[]string{"compute"}, 2, `unknown role "compute"`},
		{[]string{"login", "--home", home}, 2, "role login needs --server HOST"},
		{[]string{"login", "--server", "h", "--home", home, "--conf", filepath.Join(home, "pbs.conf")}, 1, "role login needs --key FILE, this host's login key, made on a server host with pbs_setup login-key h1"},
		{[]string{"client", "--server", "h", "--key", "/k", "--home", home}, 2, "--key is not for role client"},
		{[]string{"login-key"}, 2, "login-key needs the login host's name first"},
		{[]string{"login-key", "a/b"}, 2, `login-key "a/b": want a host name`},
		{[]string{"login-key", "l1", "--home", home, "--size", "3"}, 2, "unknown option --size"},
		{[]string{"login-key", "l1", "--home", home}, 2, "login-key is run on a server host, which has the cluster key"},
		{[]string{"server", "--frobnicate"}, 2, "unknown option --frobnicate"},
		{[]string{"server", "--home"}, 2, "option --home needs a value"},
		{[]string{"server", "--home", "relative/dir"}, 2, `--home "relative/dir": want an absolute path`},
		{[]string{"execution", "--home", home}, 2, "role execution needs --server HOST"},
		{[]string{"execution", "--peers", "a:1,b", "--home", home}, 2, `--peers "a:1,b": want host:port`},
		{[]string{"server", "--server", "a/b", "--home", home}, 2, `--server "a/b": want a host name`},
		{[]string{"server", "--node", "n1", "--home", home}, 2, "--node on a server names it in --peers: give --peers too"},
		{[]string{"client", "--server", "s", "--node", "n1", "--home", home}, 2, "--node is for roles server (with --peers), execution and login"},
		{[]string{"server", "--peers", "s1:15001,s2:15001", "--home", home}, 2, `this server is "h1", which --peers does not list`},
		{[]string{"server", "stray", "--home", home}, 2, `unexpected argument "stray"`},
		{[]string{"server", "--home", home, "--key", filepath.Join(home, "none")}, 1, "--key: open"},
	}
	for _, tt := range tests {
		args := tt.args
		if tt.code == 1 && !strings.Contains(strings.Join(args, " "), "--conf") {
			args = append(args, "--conf", filepath.Join(home, "pbs.conf"))
		}
		r := runIn(t, args...)
		if r.code != tt.code || !strings.Contains(r.stderr, "pbs_setup: "+tt.want) {
			t.Errorf("pbs_setup %v: %+v, want exit %d naming %q", tt.args, r, tt.code, tt.want)
		}
	}
}

func parseConf(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals, err := config.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A member of a server group: --peers and its name there (--node) go
// into pbs.conf, PBS_SERVER the name of the cluster in job ids.
func TestSetupGroupMember(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, conf := filepath.Join(root, "spool"), filepath.Join(root, "pbs.conf")
	r := runIn(t, "server", "--server", "gopbs", "--peers", "s1:15001,s2:15001,s3:15001", "--node", "s2", "--home", home, "--conf", conf)
	if r.code != 0 {
		t.Fatalf("server --peers: %+v", r)
	}
	vals := parseConf(t, conf)
	if vals[config.KeyServerHostName] != "s2" || vals[config.KeyServerPeers] != "s1:15001,s2:15001,s3:15001" || vals[config.KeyServer] != "gopbs" {
		t.Errorf("a member's pbs.conf: %v", vals)
	}
}
