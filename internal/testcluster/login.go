package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// Login is a login host's agent (pbs_login) with a PBS_HOME of its own and
// no server or mom socket in it: its commands reach the server through
// the agent alone.
type Login struct {
	c    *Cluster
	Name string
	Home string
	Conf string

	daemon
}

// AddLogin starts the agent of login host name, with that name's login
// key made from the cluster key (as pbs_setup login-key does), and waits
// for its socket.
func (c *Cluster) AddLogin(name string) *Login {
	c.T.Helper()
	l := &Login{c: c, Name: name, Home: filepath.Join(c.Home, "login-"+name)}
	if err := os.MkdirAll(filepath.Join(l.Home, "auth"), 0o700); err != nil {
		c.T.Fatal(err)
	}
	os.Chmod(l.Home, 0o755)
	cluster, err := proto.LoadKey(filepath.Join(c.Home, "auth", "cluster.key"))
	if err != nil {
		c.T.Fatal(err)
	}
	l.WriteKey(proto.LoginKey(cluster, name))
	l.Conf = filepath.Join(l.Home, "pbs.conf")
	conf := fmt.Sprintf("PBS_HOME=%s\nPBS_EXEC=%s\nPBS_SERVER=localhost\nPBS_BATCH_SERVICE_PORT=%d\nPBS_LOGIN_HOST_NAME=%s\n", l.Home, c.Bin, c.BatchPort, name)
	if err := os.WriteFile(l.Conf, []byte(conf), 0o644); err != nil {
		c.T.Fatal(err)
	}
	l.Start()
	c.T.Cleanup(func() { l.Kill(syscall.SIGTERM) })
	return l
}

// WriteKey replaces the host's login key (for tests of a wrong one).
func (l *Login) WriteKey(key []byte) {
	if err := os.WriteFile(filepath.Join(l.Home, "auth", "login.key"), key, 0o600); err != nil {
		l.c.T.Fatal(err)
	}
}

// Env is the environment of the login host (for commands run there).
func (l *Login) Env() []string {
	return []string{"PBS_CONF_FILE=" + l.Conf, "PATH=" + l.c.Bin + ":/usr/bin:/bin", "HOME=" + l.Home, "LANG=C"}
}

// Socket is the agent's socket.
func (l *Login) Socket() string { return filepath.Join(l.Home, "pbs_login.sock") }

// Start starts pbs_login (again) and waits for its socket.
func (l *Login) Start() {
	l.c.T.Helper()
	os.Remove(l.Socket())
	path, env := l.c.daemonCmd("pbs_login", l.Env())
	l.p = startProc(l.c.T, path, nil, env, filepath.Join(l.Home, "pbs_login.stderr"))
	WaitFor(l.c.T, "pbs_login's socket", 10*time.Second, func() (bool, string) {
		_, err := os.Stat(l.Socket())
		return err == nil, l.Log()
	})
}

// Log returns what the agent wrote to stderr.
func (l *Login) Log() string {
	b, _ := os.ReadFile(filepath.Join(l.Home, "pbs_login.stderr"))
	return string(b)
}

// Run runs a command on the login host.
func (l *Login) Run(name string, args ...string) Result {
	return l.c.RunEnv(l.Env(), name, args...)
}

// RunAs runs a command on the login host as another user, with stdin
// when not empty.
func (l *Login) RunAs(cred Cred, stdin string, name string, args ...string) Result {
	return l.c.RunEnvAs(l.Env(), &cred, stdin, name, args...)
}
