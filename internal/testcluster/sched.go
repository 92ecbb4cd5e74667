package testcluster

import (
	"os"
	"os/exec"
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
	cmd  *exec.Cmd
	done chan struct{}
}

// StartScheduler starts the scheduler binary name (for example
// "pbs_sched") and waits until it listens.
func (c *Cluster) StartScheduler(name string, args ...string) *Scheduler {
	c.T.Helper()
	s := &Scheduler{c: c, name: name}
	logf, err := os.OpenFile(filepath.Join(c.Home, name+".stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.T.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(c.Bin, name), args...)
	cmd.Env = c.Env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.T.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	c.mu.Lock()
	c.scheds = append(c.scheds, s)
	c.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.SchedLog(), "scheduler ready") {
		select {
		case <-done:
			c.T.Fatalf("%s exited at start:\n%s", name, c.SchedStderr(name))
		default:
		}
		if time.Now().After(deadline) {
			c.T.Fatalf("%s did not start:\n%s", name, c.SchedStderr(name))
		}
		time.Sleep(30 * time.Millisecond)
	}
	return s
}

// Kill sends sig to the scheduler and waits for it to exit.
func (s *Scheduler) Kill(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// SchedLog returns today's sched_logs file.
func (c *Cluster) SchedLog() string {
	b, _ := os.ReadFile(filepath.Join(c.Home, "sched_logs", time.Now().Format("20060102")))
	return string(b)
}

// SchedStderr returns what a scheduler binary wrote to stderr.
func (c *Cluster) SchedStderr(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Home, name+".stderr"))
	return string(b)
}
