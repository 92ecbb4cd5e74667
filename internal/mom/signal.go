// Signals: the server's qsig, qdel, suspend and resume of a job here,
// and the kill of a job the server says must not run here. Suspend
// freezes a confined job's whole cgroup (what left its session stops
// too) and resume thaws it; a job without a cgroup that can freeze gets
// SIGSTOP and SIGCONT of its process group and of what left its session
// (below its shepherd, their subreaper). signalJob runs
// on the goroutine of the server's connection, killOrphan on the server
// link's.

package mom

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/proto"
)

// signalJob delivers a qsig, qdel or suspend/resume to a job here.
func (m *Mom) signalJob(req *proto.MomSignal) error {
	m.mu.Lock()
	j := m.jobs[req.JobID]
	m.mu.Unlock()
	if j == nil {
		return proto.Errorf(proto.PBSE_UNKJOBID, "%s is not running on %s", req.JobID, m.cfg.NodeName)
	}
	v := m.view(j)
	if v.result != nil {
		return nil // already ended; its end is being reported
	}
	sig, special, ok := signals.Parse(req.Signal)
	if !ok {
		return proto.Errorf(proto.PBSE_UNKSIG, "%s", req.Signal)
	}
	if special == signals.Delete {
		// The shepherd runs the TERM-then-KILL sequence; it does so even if
		// this mom restarts in between. The marker covers a shepherd that
		// has not started the job yet (see shepherd.Run).
		// The marker carries the delete's kill delay (qdel -W, else the
		// job's kill_delay) to the shepherd.
		if err := shepherd.MarkDeleted(j.dir, req.KillDelay); err != nil {
			return fmt.Errorf("delete %s: %w", req.JobID, err)
		}
		if _, err := os.Stat(filepath.Join(j.dir, shepherd.FileSession)); err != nil {
			return nil
		}
		if err := syscall.Kill(m.shepherdPidOf(j), syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal shepherd of %s: %w", req.JobID, err)
		}
		return nil
	}
	if err := m.learnSession(j, &v); err != nil {
		return err
	}
	if special == signals.Resume {
		// The site's execjob_preresume hooks may keep the job suspended
		// (hooks.go).
		if err := m.execjobHooks(hook.ExecjobPreresume, &j.spec, nil, map[string]any{proto.AttrJobState: "S"}); err != nil {
			return err
		}
	}
	frozen, err := m.freezeJob(j, special)
	if err != nil {
		return fmt.Errorf("%s %s: %w", special, req.JobID, err)
	}
	if !frozen {
		switch special {
		case signals.Suspend:
			sig = syscall.SIGSTOP
		case signals.Resume:
			sig = syscall.SIGCONT
		}
		err := syscall.Kill(-v.session.Pgid, sig)
		if err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("signal %s: %w", req.JobID, err)
		}
		if pid := m.shepherdPidOf(j); err == nil && isShepherdOf(pid, j.dir) {
			// What left the job's session (setsid, a daemon's double fork)
			// is below its shepherd, their subreaper: suspend stops it
			// too, and qsig reaches it. Only while the job's process group
			// is there (after it, the shepherd's children are its epilogue
			// and stage-out), and only below the job's live shepherd (not
			// a process that took a dead one's pid).
			for _, p := range shepherd.EscapedProcesses(pid) {
				syscall.Kill(p.PID, sig)
			}
		}
		if j.spec.Interactive != nil {
			// Its shell's jobs each have a process group of their own; all
			// of them are in the shepherd's session.
			for _, p := range shepherd.SessionProcesses(m.shepherdPidOf(j)) {
				syscall.Kill(p.PID, sig)
			}
		}
		if sig == syscall.SIGKILL && j.cg != nil && j.cg.Frozen() {
			// A frozen v1 process acts on no signal until thawed; the
			// kill is the job's end all the same.
			j.cg.Thaw(freezeWait)
		}
	}
	m.noteSuspended(j, special)
	if special == signals.Suspend || special == signals.Resume {
		// Suspended time is not walltime (the shepherd reads it there).
		s, err := shepherd.NoteSuspension(j.dir, special == signals.Suspend, time.Now().Unix())
		if err != nil {
			m.log.Warn("cannot note the job's suspension: its walltime counts it", "job", req.JobID, "error", err)
		}
		m.mu.Lock()
		j.susp = s
		m.mu.Unlock()
	}
	if !frozen {
		// Its tasks here are in sessions of their own (a frozen cgroup
		// holds them already).
		m.signalTasks(j, sig)
	}
	m.forwardSignal(j, req)
	m.log.Info("job signalled", "job", req.JobID, "signal", req.Signal)
	if special == signals.Suspend {
		m.laterJobHooks(hook.ExecjobPostsuspend, j.spec, map[string]any{proto.AttrJobState: "S"}, "the job is suspended all the same")
	}
	return nil
}

// noteSuspended records a suspend or resume of j (special: signals.Suspend,
// signals.Resume, else nothing).
func (m *Mom) noteSuspended(j *momJob, special string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch special {
	case signals.Suspend:
		j.suspended = true
	case signals.Resume:
		j.suspended = false
	}
}

// freezeWait bounds how long suspend waits for the kernel to freeze
// every process of a job (and resume to thaw them).
const freezeWait = 10 * time.Second

// freezeJob suspends or resumes a job whose cgroup can be frozen: the
// whole cgroup, so that what left the job's session stops too. It
// reports false (nothing done) for anything else, or a job without such
// a cgroup, which gets SIGSTOP and SIGCONT as without cgroups.
func (m *Mom) freezeJob(j *momJob, special string) (bool, error) {
	if special != signals.Suspend && special != signals.Resume || j.cg == nil || !j.cg.CanFreeze() {
		return false, nil
	}
	if special == signals.Suspend {
		return true, j.cg.Freeze(freezeWait)
	}
	return true, j.cg.Thaw(freezeWait)
}

// sessionWait bounds how long a signal waits for a job's session file: the
// shepherd writes it just after it starts the job, so a job that is
// already running its script (and may have said so) can be a few
// milliseconds ahead of the file on a busy host.
const sessionWait = 3 * time.Second

// learnSession fills in v's session, and j's, when the mom does not know
// it yet: the shepherd writes it just after it starts the job.
func (m *Mom) learnSession(j *momJob, v *jobView) error {
	if v.session.Pgid != 0 {
		return nil
	}
	var s shepherd.Session
	if err := waitSession(j.dir, &s, sessionWait); err != nil {
		return proto.Errorf(proto.PBSE_BADSTATE, "%s has not started yet", j.spec.JobID)
	}
	m.mu.Lock()
	j.session = s
	m.mu.Unlock()
	v.session = s
	return nil
}

// waitSession reads the job's session file, waiting up to wait for the
// shepherd to write it.
func waitSession(dir string, s *shepherd.Session, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := shepherd.ReadJSON(filepath.Join(dir, shepherd.FileSession), s)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killOrphan kills a job the server says must not run here.
func (m *Mom) killOrphan(id string) {
	m.mu.Lock()
	j := m.jobs[id]
	m.mu.Unlock()
	if j == nil {
		return
	}
	m.log.Warn("killing a job the server does not run here", "job", id)
	if j.sister {
		// Not on the server link's goroutine: the tasks may take their
		// kill_delay to end.
		go m.endSisterJob(j, "task killed: the server does not run its job")
		return
	}
	v := m.view(j)
	if v.result == nil && v.session.Pgid > 0 {
		syscall.Kill(-v.session.Pgid, syscall.SIGKILL)
		if j.cg != nil {
			// What left the session too; the shepherd then records the
			// end and removes the cgroup.
			if err := j.cg.Kill(cgroupKillWait, nil); err != nil {
				m.log.Error("cannot kill a job's cgroup", "job", id, "error", err)
			}
		}
	}
	if v.result == nil && v.session.Pgid == 0 && !j.child {
		// Left by a previous mom that stopped while starting it: if no
		// shepherd holds it, no shepherd ever will run it (the lock is
		// held while its end is recorded), so it goes now, without
		// waiting out the grace a late shepherd would get.
		if release, ok := m.claimShepherdLock(j); ok {
			res := shepherd.Result{ExitStatus: proto.JobExecRetry, End: time.Now().Unix(), Comment: "job not started: the server does not run it here"}
			m.dropCgroup(id, j.cg, &res)
			shepherd.WriteJSON(j.dir, shepherd.FileResult, res, 0o600)
			release()
			m.setResult(j, &res)
			v.result = &res
		}
	}
	if v.result != nil {
		m.forget(j)
	}
}
