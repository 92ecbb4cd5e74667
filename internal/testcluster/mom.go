package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Mom is one pbs_mom of a cluster, with its own PBS_HOME and pbs.conf as
// a second host would have.
type Mom struct {
	c    *Cluster
	Name string
	Home string
	Conf string
	Port int

	daemon // Kill, WaitDown, WaitExit, Pid: jobs keep running under their shepherds
}

// MomOptions adjust a new mom.
type MomOptions struct {
	// Config is written to mom_priv/config.
	Config string
	// Files are written to mom_priv, by name (mom_priv/cgroups).
	Files map[string]string
	// Conf holds further lines of the mom's pbs.conf
	// ("PBS_MOM_METRICS=127.0.0.1:9103\n").
	Conf string
}

// AddMom creates node name (Mom=localhost, Port=a free port), gives the
// mom its own PBS_HOME with a copy of the cluster key, starts it and waits
// until the server shows the node free.
func (c *Cluster) AddMom(name string, opts MomOptions) *Mom {
	c.T.Helper()
	m := c.AddMomNoWait(name, opts)
	c.WaitNodeState(name, "free", 20*time.Second)
	return m
}

// AddMomNoWait is AddMom without waiting for the node to be free.
func (c *Cluster) AddMomNoWait(name string, opts MomOptions) *Mom {
	c.T.Helper()
	m := &Mom{c: c, Name: name, Port: FreePort(c.T)}
	m.Home = filepath.Join(c.Home, "mom-"+name)
	for _, d := range []string{"auth", "mom_priv"} {
		if err := os.MkdirAll(filepath.Join(m.Home, d), 0o755); err != nil {
			c.T.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(m.Home, "auth"), 0o700)
	key, err := os.ReadFile(filepath.Join(c.Home, "auth", "cluster.key"))
	if err != nil {
		c.T.Fatalf("cluster key: %v", err)
	}
	if err := os.WriteFile(filepath.Join(m.Home, "auth", "cluster.key"), key, 0o600); err != nil {
		c.T.Fatal(err)
	}
	config := opts.Config
	if !strings.Contains(config, "$tmpdir") {
		// A host of its own has a /tmp of its own: the TMPDIRs of a job's
		// parts on two moms of this host must not be one directory.
		tmp := filepath.Join(m.Home, "tmp")
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			c.T.Fatal(err)
		}
		os.Chmod(tmp, 0o1777)
		config = "$tmpdir " + tmp + "\n" + config
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(m.Home, "mom_priv", "config"), []byte(config), 0o644); err != nil {
			c.T.Fatal(err)
		}
	}
	for name, text := range opts.Files {
		if err := os.WriteFile(filepath.Join(m.Home, "mom_priv", name), []byte(text), 0o644); err != nil {
			c.T.Fatal(err)
		}
	}
	m.Conf = filepath.Join(m.Home, "pbs.conf")
	conf := fmt.Sprintf("PBS_HOME=%s\nPBS_EXEC=%s\nPBS_SERVER=localhost\nPBS_BATCH_SERVICE_PORT=%d\nPBS_MOM_SERVICE_PORT=%d\nPBS_MOM_NODE_NAME=%s\n",
		m.Home, c.Bin, c.BatchPort, m.Port, name) + opts.Conf
	if err := os.WriteFile(m.Conf, []byte(conf), 0o644); err != nil {
		c.T.Fatal(err)
	}
	c.MustRun("qmgr", "-c", fmt.Sprintf("create node %s Mom=localhost,Port=%d", name, m.Port))
	c.mu.Lock()
	if c.moms == nil {
		c.moms = map[string]*Mom{}
	}
	c.moms[name] = m
	c.mu.Unlock()
	m.Start()
	return m
}

// Env is the environment of the mom's host (for commands run there).
func (m *Mom) Env() []string {
	return []string{"PBS_CONF_FILE=" + m.Conf, "PATH=" + m.c.Bin + ":/usr/bin:/bin", "HOME=" + m.Home, "LANG=C"}
}

// Start starts pbs_mom (again).
func (m *Mom) Start() {
	m.c.T.Helper()
	path, env := m.c.daemonCmd("pbs_mom", m.Env())
	m.p = startProc(m.c.T, path, nil, env, filepath.Join(m.Home, "pbs_mom.stderr"))
}

// Log returns what the mom wrote to stderr.
func (m *Mom) Log() string {
	b, _ := os.ReadFile(filepath.Join(m.Home, "pbs_mom.stderr"))
	return string(b)
}

// killJobs kills the shepherds and jobs the mom left (at test end).
func (m *Mom) killJobs() {
	dirs, _ := filepath.Glob(filepath.Join(m.Home, "mom_priv", "jobs", "*", "shepherd.pid"))
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && pid > 1 {
			syscall.Kill(-pid, syscall.SIGKILL) // the shepherd's session
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// NodeState returns the state pbsnodes shows for a node.
func (c *Cluster) NodeState(name string) string {
	r := c.Run("qmgr", "-c", "list node "+name)
	for _, line := range strings.Split(r.Stdout, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && k == "state" {
			return v
		}
	}
	return ""
}

// WaitNodeState waits until a node's state is want.
func (c *Cluster) WaitNodeState(name, want string, timeout time.Duration) {
	c.T.Helper()
	ok, st := Poll(timeout, func() (bool, string) {
		st := c.NodeState(name)
		return st == want, st
	})
	if !ok {
		c.mu.Lock()
		m := c.moms[name]
		c.mu.Unlock()
		momLog := "(no mom of that name started by the test)"
		if m != nil {
			momLog = m.Log()
		}
		c.T.Fatalf("node %s is %q, want %q after %v\n%s\nits mom:\n%s", name, st, want, timeout, c.ServerLog(), momLog)
	}
}

// WaitJobState waits until a job's state is one of want (letters) and
// returns it.
func (c *Cluster) WaitJobState(id, want string, timeout time.Duration) string {
	c.T.Helper()
	var st string
	WaitFor(c.T, fmt.Sprintf("job %s in one of the states %q", id, want), timeout, func() (bool, string) {
		st, _ = c.JobAttr(id, "job_state")
		return st != "" && strings.Contains(want, st), fmt.Sprintf("state %q", st)
	})
	return st
}

// Mom returns the mom of node name added with AddMom (nil if none).
func (c *Cluster) Mom(name string) *Mom {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moms[name]
}
