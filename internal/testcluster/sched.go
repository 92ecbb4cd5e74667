package testcluster

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Scheduler is a scheduler process (pbs_sched or a site scheduler binary)
// running on the server's PBS_HOME, as on the server host.
type Scheduler struct {
	c    *Cluster
	name string
	daemon
}

// StartScheduler starts the scheduler binary name (for example
// "pbs_sched") and waits until it listens.
func (c *Cluster) StartScheduler(name string, args ...string) *Scheduler {
	c.T.Helper()
	s := &Scheduler{c: c, name: name}
	path, env := c.daemonCmd(name, c.Env())
	s.p = startProc(c.T, path, args, env, filepath.Join(c.Home, name+".stderr"))
	c.mu.Lock()
	c.scheds = append(c.scheds, s)
	c.mu.Unlock()
	ok, _ := Poll(20*time.Second, func() (bool, string) {
		if s.p.exited() {
			c.T.Fatalf("%s exited at start:\n%s", name, c.SchedStderr(name))
		}
		return strings.Contains(c.SchedLog(), "scheduler ready"), ""
	})
	if !ok {
		c.T.Fatalf("%s did not start:\n%s", name, c.SchedStderr(name))
	}
	return s
}

// Crash sends SIGKILL and returns at once, as a crash would leave things
// for a service manager that restarts the scheduler immediately.
func (s *Scheduler) Crash() {
	if s.p == nil {
		return
	}
	s.p.cmd.Process.Signal(syscall.SIGKILL)
	s.p = nil
}

// SchedStderr returns what a scheduler binary wrote to stderr.
func (c *Cluster) SchedStderr(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Home, name+".stderr"))
	return string(b)
}
