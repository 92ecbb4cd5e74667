// The job's cgroup, when its mom confines jobs: the job's first process
// is born in it, a kill by the kernel for the job's memory limit ends
// the whole job, a suspended (frozen) job is thawed to end, and at the
// end everything in it is killed, counted and the cgroup removed
// (internal/cgroup).

package shepherd

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/proto"
)

// cgroupKillWait bounds the wait for the job's processes to die at its
// end.
const cgroupKillWait = 10 * time.Second

// forkExec starts the job's process, in its cgroup when it has one.
func (sh *shepherd) forkExec(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	if sh.cg == nil {
		return syscall.ForkExec(path, argv, attr)
	}
	return sh.cg.ForkExec(path, argv, attr)
}

// checkOOM ends the whole job once the kernel killed one of its
// processes for its memory limit: the rest would run on without it.
func (sh *shepherd) checkOOM() {
	if sh.cg == nil {
		return
	}
	sh.mu.Lock()
	noted := sh.oomNoted
	sh.mu.Unlock()
	if noted || sh.cg.OOMKills() == 0 || !sh.noteOOM() {
		return
	}
	if err := sh.cg.Kill(cgroupKillWait, nil); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd:", err)
	}
}

// noteOOM records the memory limit as the reason of the job's end, as a
// kill by SIGKILL (unless another reason came first, or the job had no
// limit of its own: a kill by the host's OOM killer is not the job's
// limit), and tells the owner; it reports whether this call noted it.
func (sh *shepherd) noteOOM() bool {
	lim := sh.cg.Limits
	sh.mu.Lock()
	if sh.oomNoted || lim.Mem <= 0 && lim.Vmem <= 0 {
		sh.mu.Unlock()
		return false
	}
	sh.oomNoted = true
	why := ""
	if sh.killReason == "" {
		why = cgroup.LimitComment(lim, sh.set.Node)
		sh.killReason, sh.exitCode = why, proto.ExitSignalBase+int(syscall.SIGKILL)
	}
	sh.mu.Unlock()
	if why != "" {
		sh.appendToStderr("PBS: " + why)
	}
	return true
}

// endCgroup kills what is left of the job, reads what it used and
// removes its cgroup.
func (sh *shepherd) endCgroup() cgroup.Usage {
	reap := func() { childrenLeft() }
	if err := sh.cg.Kill(cgroupKillWait, reap); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd:", err)
	}
	// Dead now: reaped, their cpu is counted.
	childrenLeft()
	u := sh.cg.Usage()
	if u.OOMKills > 0 {
		sh.noteOOM()
	}
	sh.cgEnded = true
	if err := sh.cg.Remove(); err != nil {
		// The mom tries again when it forgets the job.
		fmt.Fprintln(os.Stderr, "shepherd:", err)
		sh.cgLeft = true
	}
	return u
}

// thaw lets a suspended (frozen) job run again, to see the TERM of its
// end or to die of a SIGKILL: a frozen v1 process acts on no signal.
func (sh *shepherd) thaw() {
	if sh.cg == nil || !sh.cg.Frozen() {
		return
	}
	if err := sh.cg.Thaw(cgroupKillWait); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd:", err)
	}
}

// killJob sends the job SIGKILL; a suspended job is thawed after it, so
// that it dies without running again.
func (sh *shepherd) killJob() {
	sh.signalAll(syscall.SIGKILL)
	sh.thaw()
}
