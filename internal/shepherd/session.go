// The processes of a shepherd's job: the shepherd leads a session of its
// own, which the job's processes are in unless they leave it (setsid, a
// daemon's double fork), and it is the child subreaper of all of them,
// so that those that left are still below it. pbs_mom samples its jobs'
// usage and kills the processes a shepherd that died left, by session;
// the shepherd kills every descendant its job left.

package shepherd

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcStat is the part of /proc/<pid>/stat the mom uses.
type ProcStat struct {
	PID     int
	PPID    int
	PGRP    int
	Session int
	// Ticks of user+system time of the process and its reaped children.
	CPUTicks int64
	RSSPages int64
	VSize    int64
}

// parseProcStat parses one /proc/<pid>/stat line. The command name is in
// parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseProcStat(s string) (ProcStat, error) {
	var p ProcStat
	open := strings.IndexByte(s, '(')
	end := strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return p, errors.New("malformed stat line")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return p, fmt.Errorf("pid: %w", err)
	}
	p.PID = pid
	f := strings.Fields(s[end+1:])
	// f[0] is the state; field n of proc(5) is f[n-3].
	if len(f) < 22 {
		return p, errors.New("short stat line")
	}
	num := func(n int) int64 {
		v, _ := strconv.ParseInt(f[n-3], 10, 64)
		return v
	}
	p.PPID = int(num(4))
	p.PGRP = int(num(5))
	p.Session = int(num(6))
	p.CPUTicks = num(14) + num(15) + num(16) + num(17)
	p.VSize = num(23)
	p.RSSPages = num(24)
	return p, nil
}

// SessionProcesses lists the processes of session sid, without the
// session leader itself (the shepherd).
func SessionProcesses(sid int) []ProcStat { return SessionsProcesses(map[int]bool{sid: true})[sid] }

// SessionsProcesses lists the processes of each session of sids, without
// the session leaders, reading /proc once whatever the number of sessions.
func SessionsProcesses(sids map[int]bool) map[int][]ProcStat {
	out := map[int][]ProcStat{}
	for _, p := range allProcesses() {
		if sids[p.Session] && !sids[p.PID] {
			out[p.Session] = append(out[p.Session], p)
		}
	}
	return out
}

// JobsProcesses lists the processes of each job whose shepherd is one of
// shepherds (each leads the session of its job): those of its session and
// every other process below it, what left the session (setsid, a
// daemon's double fork) and, the shepherd being its subreaper, stayed
// below it. The shepherds themselves are left out; /proc is read once
// whatever the number of jobs (a mom samples all its jobs in one pass).
func JobsProcesses(shepherds map[int]bool) map[int][]ProcStat {
	all := allProcesses()
	out := map[int][]ProcStat{}
	for _, p := range all {
		if shepherds[p.Session] && !shepherds[p.PID] {
			out[p.Session] = append(out[p.Session], p)
		}
	}
	tree := childrenOf(all)
	for sid := range shepherds {
		for _, p := range below(tree, sid) {
			if p.Session != sid {
				out[sid] = append(out[sid], p)
			}
		}
	}
	return out
}

// Descendants lists every live process below pid (read from /proc at
// once): a task's or a job's processes in other sessions too, which the
// (task) shepherd, their subreaper, is the ancestor of.
func Descendants(pid int) []int {
	var out []int
	for _, p := range below(childrenOf(allProcesses()), pid) {
		out = append(out, p.PID)
	}
	return out
}

// EscapedProcesses lists the processes below pid, the leader of a job's
// session and their subreaper, that are not in its session: those of the
// job that left it.
func EscapedProcesses(pid int) []ProcStat {
	var out []ProcStat
	for _, p := range below(childrenOf(allProcesses()), pid) {
		if p.Session != pid {
			out = append(out, p)
		}
	}
	return out
}

// allProcesses reads every process of /proc.
func allProcesses() []ProcStat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]ProcStat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProcStat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// childrenOf maps each parent pid to its children among procs.
func childrenOf(procs []ProcStat) map[int][]ProcStat {
	tree := map[int][]ProcStat{}
	for _, p := range procs {
		tree[p.PPID] = append(tree[p.PPID], p)
	}
	return tree
}

// below lists the processes under pid in tree, nearest first; none for
// pid 0 or 1 (an unknown pid must not stand for every process).
func below(tree map[int][]ProcStat, pid int) []ProcStat {
	if pid <= 1 {
		return nil
	}
	var out []ProcStat
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range tree[next] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out
}

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (ProcStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, false
	}
	p, err := parseProcStat(string(b))
	return p, err == nil
}

// ClockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const ClockTicks = 100

// PageSize converts RSS pages to bytes.
var PageSize = int64(os.Getpagesize())

// childrenCPU is the cpu time of this process's reaped children (with
// that of their own reaped children).
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcStats reads the processes pids (those still there).
func ProcStats(pids []int) []ProcStat {
	var out []ProcStat
	for _, pid := range pids {
		if p, ok := readProcStat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// setChildSubreaper makes this process the parent of its descendants'
// orphans instead of init.
func setChildSubreaper() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}

// signalAll sends sig to the job's process group (and to an interactive
// job's session: signalJob) and to every descendant of the shepherd,
// their subreaper, outside its session: what left the session (setsid, a double
// fork) gets the TERM of a delete or a walltime kill, and its kill_delay,
// as the rest of the job does, and the KILL after it.
func (sh *shepherd) signalAll(sig syscall.Signal) {
	sh.signalJob(sig)
	// Only those outside the session: a process of the job's group gets
	// one TERM, not two (a trap would run twice).
	for _, p := range EscapedProcesses(os.Getpid()) {
		syscall.Kill(p.PID, sig)
	}
}

// killDescendants kills every process below this one (their subreaper:
// the job's processes in any session) and reaps them, so that none is
// left a zombie and their cpu time counts in this process's children's.
// It looks again until no child is left, since a process forking as it
// is killed leaves a child the previous look did not see, and gives up
// after wait (a process stuck in the kernel), saying which were left.
func killDescendants(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for childrenLeft() {
		pids := Descendants(os.Getpid())
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of the job left after %v: %v", wait, pids)
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
	return nil
}
