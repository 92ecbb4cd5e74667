// One job's cgroup: starting the job's first process in it, killing
// everything in it, reading what it used, removing it. A Job is written
// into the job's files by the mom that made it and read back by the
// shepherd (and by a restarted mom), so it holds only data.

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/resc"
)

// Limits are what a job may use on this node.
type Limits struct {
	Mem  int64  `json:"mem,omitempty"`  // bytes; 0: none
	Vmem int64  `json:"vmem,omitempty"` // memory and swap, bytes; 0: none
	Cpus CPUSet `json:"cpus,omitempty"` // its own cpus; empty: the node's
	// CPUQuota is cpu time per wall second, in cpus, where the job has no
	// cpus of its own (the node's are shared); 0: none.
	CPUQuota float64 `json:"cpu_quota,omitempty"`
	PidsMax  int64   `json:"pids_max,omitempty"`
	// DenyDevices are the devices the job may not open (v1 devices
	// controller), each "c major:minor": this node's GPUs that are not
	// the job's.
	DenyDevices []string `json:"deny_devices,omitempty"`
}

// Job is one job's cgroup: a directory per v1 hierarchy, or one (v2).
type Job struct {
	ID     string `json:"id"`
	V2     bool   `json:"v2,omitempty"`
	Dirs   []Dir  `json:"dirs"`
	Limits Limits `json:"limits"`
	fs     fileSystem
}

// JoinError says a process could not be started inside the cgroup.
type JoinError struct{ Err error }

func (e *JoinError) Error() string { return "cannot join the job's cgroup: " + e.Err.Error() }
func (e *JoinError) Unwrap() error { return e.Err }

// Exists reports whether any of the job's directories is there.
func (j *Job) Exists() bool {
	for _, d := range j.Dirs {
		if exists(d.Path) {
			return true
		}
	}
	return false
}

// ForkExec is syscall.ForkExec with the new process born in the job's
// cgroup, so that everything it starts is in it too, whatever session
// or parent it later takes. v2 creates it there (clone3's
// CLONE_INTO_CGROUP). v1 has no such call: the calling thread alone
// moves into the job's cgroup for the fork (a v1 "tasks" file moves one
// thread) and back out, since a child is born in its forking thread's
// cgroups. (Moving the whole caller moves every one of its threads
// twice; stopping the child at its exec with ptrace makes Go fork
// without vfork: both cost more.) A failure to join is a *JoinError.
func (j *Job) ForkExec(argv0 string, argv []string, attr *syscall.ProcAttr) (int, error) {
	a := *attr
	sys := syscall.SysProcAttr{}
	if attr.Sys != nil {
		sys = *attr.Sys
	}
	a.Sys = &sys
	if j.V2 {
		fd, err := syscall.Open(j.Dirs[0].Path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return 0, &JoinError{fmt.Errorf("open %s: %w", j.Dirs[0].Path, err)}
		}
		defer syscall.Close(fd)
		sys.UseCgroupFD, sys.CgroupFD = true, fd
		return syscall.ForkExec(argv0, argv, &a)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := strconv.Itoa(syscall.Gettid())
	entered, err := j.enterThread(tid)
	if err != nil {
		j.leaveThread(tid, entered)
		return 0, &JoinError{err}
	}
	pid, err := syscall.ForkExec(argv0, argv, &a)
	if lerr := j.leaveThread(tid, entered); lerr != nil {
		// A thread of the caller stays in the job's cgroup: Kill spares
		// the caller, but say so.
		fmt.Fprintln(os.Stderr, "cgroup:", lerr)
	}
	return pid, err
}

// enterThread moves the calling thread (tid) into the job's v1
// directories; it returns how many it entered.
func (j *Job) enterThread(tid string) (int, error) {
	for i, d := range j.Dirs {
		if d.Home == "" {
			return i, fmt.Errorf("no way back from %s (a job record of an older mom?)", d.Path)
		}
		if err := writeFile(filepath.Join(d.Path, "tasks"), tid); err != nil {
			return i, err
		}
	}
	return len(j.Dirs), nil
}

// leaveThread moves thread tid from the first n of the job's
// directories back to where it came from.
func (j *Job) leaveThread(tid string, n int) error {
	var first error
	for _, d := range j.Dirs[:n] {
		if err := writeFile(filepath.Join(d.Home, "tasks"), tid); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Join moves process pid (all its threads) into the job's cgroup (a
// process already running: its children born before stay where they
// are, so a job's first process is better started with ForkExec).
func (j *Job) Join(pid int) error {
	for _, d := range j.Dirs {
		if err := writeFile(filepath.Join(d.Path, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return &JoinError{err}
		}
	}
	return nil
}

// Procs lists the processes in the job's cgroup (in any of its
// directories), without the caller.
func (j *Job) Procs() []int {
	self := os.Getpid()
	var out []int
	for _, d := range j.Dirs {
		b, err := os.ReadFile(filepath.Join(d.Path, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 && pid != self && !slices.Contains(out, pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// Kill kills every process in the cgroup and waits up to wait until it
// is empty, calling idle between looks (a parent reaps its children
// there). v2 kills the whole cgroup at once (cgroup.kill, Linux 5.14);
// otherwise each process gets SIGKILL, again until none is left, so a
// process forked meanwhile is caught at the next look. A frozen
// (suspended) job dies too.
func (j *Job) Kill(wait time.Duration, idle func()) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		pids := j.Procs()
		if len(pids) == 0 {
			return nil
		}
		if !j.V2 || writeFile(filepath.Join(j.Dirs[0].Path, "cgroup.kill"), "1") != nil {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		j.thawForKill() // a suspended job
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup of %s: %d processes left after %v (%v)", j.ID, len(pids), wait, pids)
		}
		if idle != nil {
			idle()
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Usage is what the cgroup counted.
type Usage struct {
	// CPUNanos is the cpu time of every process that was in it (v2; v1
	// counts none: the shepherd does).
	CPUNanos int64
	MemPeak  int64 // peak memory, bytes (0: not counted)
	VmemPeak int64 // peak memory and swap, bytes (0: not counted)
	OOMKills int64 // processes the kernel killed for the memory limit
}

// Usage reads the job's usage so far (peaks, not samples). Counters the
// host does not keep stay 0.
func (j *Job) Usage() Usage {
	var u Usage
	for _, d := range j.Dirs {
		p := func(name string) string { return filepath.Join(d.Path, name) }
		if j.V2 {
			u.CPUNanos = keyedValue(p("cpu.stat"), "usage_usec") * 1000
			if d.has(Memory) {
				u.MemPeak = readInt(p("memory.peak"))
				if exists(p("memory.swap.peak")) {
					u.VmemPeak = u.MemPeak + readInt(p("memory.swap.peak"))
				}
			}
			u.OOMKills = j.OOMKills()
			continue
		}
		if d.has(Memory) {
			u.MemPeak = readInt(p("memory.max_usage_in_bytes"))
			u.VmemPeak = readInt(p("memory.memsw.max_usage_in_bytes"))
			u.OOMKills = keyedValue(p("memory.oom_control"), "oom_kill")
		}
	}
	return u
}

// OOMKills is how many of the job's processes the kernel killed for its
// memory limit (0 without the memory controller).
func (j *Job) OOMKills() int64 {
	for _, d := range j.Dirs {
		if !d.has(Memory) {
			continue
		}
		if j.V2 {
			return keyedValue(filepath.Join(d.Path, "memory.events"), "oom_kill")
		}
		return keyedValue(filepath.Join(d.Path, "memory.oom_control"), "oom_kill")
	}
	return 0
}

// Remove removes the job's directories (they must hold no process); one
// already gone is not an error.
func (j *Job) Remove() error {
	var first error
	for _, d := range j.Dirs {
		if err := fsOf(j.fs).Rmdir(d.Path); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("remove %s: %w", d.Path, err)
		}
	}
	return first
}

// Destroy kills what is in the cgroup and removes it.
func (j *Job) Destroy(wait time.Duration) error {
	if err := j.Kill(wait, nil); err != nil {
		return err
	}
	return j.Remove()
}

// staleKillWait bounds the wait for a leftover cgroup's processes to die.
const staleKillWait = 5 * time.Second

func readInt(path string) int64 {
	s, err := readTrim(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// keyedValue reads the value of key from a "key value" lines file
// (cpu.stat, memory.events, memory.oom_control).
func keyedValue(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return parseKeyed(string(b), key)
}

func parseKeyed(s, key string) int64 {
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// LimitComment is the comment of a job the kernel killed for its memory
// limit here (its mem, else its vmem).
func LimitComment(lim Limits, node string) string {
	what, size := "memory", lim.Mem
	if size <= 0 {
		what, size = "vmem", lim.Vmem
	}
	return fmt.Sprintf("Job killed: %s limit of %s exceeded on node %s (cgroup)", what, resc.FormatSize(size), node)
}
