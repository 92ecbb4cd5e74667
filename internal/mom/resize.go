// Resizing a running job on its first mom (the server's MsgMomResizeJob,
// proto/resize.go): the moms of nodes the job gains join it, those of
// nodes it gives back end their part (after a grace for the job to let
// go, or at once), the others learn the new allocation, and the job's
// node file is replaced in one rename; the job is told with its resize
// signal. A repeated request for the allocation the job has already is
// carried out again harmlessly (joins and ends are idempotent), which is
// how the server brings a mom back to its store after a restart.

package mom

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/proto"
)

// resizeJob brings a job to the allocation req describes.
func (m *Mom) resizeJob(req *proto.MomResize) error {
	m.mu.Lock()
	j := m.jobs[req.JobID]
	m.mu.Unlock()
	switch {
	case j == nil || j.sister:
		return proto.Errorf(proto.PBSE_UNKJOBID, "%s does not run on %s", req.JobID, m.cfg.NodeName)
	case j.spec.RunCount != req.RunCount:
		return proto.Errorf(proto.PBSE_BADSTATE, "run %d of job %s is not the one running on %s", req.RunCount, req.JobID, m.cfg.NodeName)
	case m.hasEnded(j):
		return proto.Errorf(proto.PBSE_BADSTATE, "job %s has ended", req.JobID)
	}
	j.resizeMu.Lock()
	defer j.resizeMu.Unlock()
	m.mu.Lock()
	old := j.spec
	m.mu.Unlock()
	next := old
	next.ExecHost, next.ExecVnode, next.Alloc, next.NodeFile, next.Moms = req.ExecHost, req.ExecVnode, req.Alloc, req.NodeFile, req.Moms
	removed := gone(sisterMoms(&old), sisterMoms(&next))
	grew := len(gone(sisterMoms(&next), sisterMoms(&old))) > 0 || old.ExecVnode != next.ExecVnode && len(removed) == 0
	if len(removed) > 0 && !req.Immediate {
		// Told first, so that it can let go of the nodes within the grace.
		m.signalResize(j)
	}
	if len(removed) > 0 {
		grace := req.Grace
		if req.Immediate {
			grace = 0
		}
		used := m.endSistersGrace(&old, removed, grace)
		m.mu.Lock()
		j.releasedUsed = j.releasedUsed.Plus(used)
		m.mu.Unlock()
	}
	// Every sister of the new allocation joins or learns it (a join of a
	// job a sister holds already updates its part).
	if err := m.joinSisters(&next); err != nil {
		return err
	}
	// Known here before the node file says so: a task the job starts on
	// a new node as soon as it reads the file is let through.
	m.mu.Lock()
	j.spec.ExecHost, j.spec.ExecVnode, j.spec.Alloc, j.spec.NodeFile, j.spec.Moms = next.ExecHost, next.ExecVnode, next.Alloc, next.NodeFile, next.Moms
	m.mu.Unlock()
	if err := m.rewriteJobFiles(j, &next); err != nil {
		return err
	}
	m.log.Info("job resized", "job", req.JobID, "exec_vnode", req.ExecVnode, "gave_back", len(removed))
	if grew {
		m.signalResize(j)
	}
	m.laterJobHooks(hook.ExecjobResize, next, nil, "the job's new allocation stands")
	return nil
}

// signalResize tells a job its allocation changes: its resize signal to
// the job's own process (the script's shell), which traps it; not to its
// process group, whose other members (a sleep, a launcher) would die of
// a signal they do not expect.
func (m *Mom) signalResize(j *momJob) {
	if j.spec.ResizeSignal == "" {
		return
	}
	sig, special, ok := signals.Parse(j.spec.ResizeSignal)
	pid := m.view(j).session.Pgid
	if pid == 0 {
		// Not yet seen by the watcher: the shepherd's own record. None
		// means the script has not started: it reads the node file then.
		var s shepherd.Session
		if shepherd.ReadJSON(filepath.Join(j.dir, shepherd.FileSession), &s) == nil {
			pid = s.Pgid
		}
	}
	if ok && special == "" && pid > 0 {
		if err := syscall.Kill(pid, sig); err != nil {
			m.log.Warn("cannot send the resize signal", "job", j.spec.JobID, "signal", j.spec.ResizeSignal, "error", err)
		}
	}
}

// gone lists the moms of a that b does not have.
func gone(a, b []proto.NodeMom) []proto.NodeMom {
	var out []proto.NodeMom
	for _, x := range a {
		found := false
		for _, y := range b {
			if x.Node == y.Node {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// rewriteJobFiles records a job's new allocation in its job file and
// replaces its node file (PBS_NODEFILE) in one rename.
func (m *Mom) rewriteJobFiles(j *momJob, next *proto.MomJob) error {
	var jf shepherd.JobFile
	if err := shepherd.ReadJSON(filepath.Join(j.dir, shepherd.FileJob), &jf); err != nil {
		return err
	}
	jf.ExecHost, jf.ExecVnode, jf.Alloc, jf.NodeFile, jf.Moms = next.ExecHost, next.ExecVnode, next.Alloc, next.NodeFile, next.Moms
	if err := shepherd.WriteJSON(j.dir, shepherd.FileJob, jf, 0o600); err != nil {
		return err
	}
	nodes := strings.Join(next.NodeFile, "\n")
	if nodes != "" {
		nodes += "\n"
	}
	return atomicfile.Write(filepath.Join(j.dir, shepherd.FileNodes), []byte(nodes), 0o644)
}

// updateSister is a repeated join of a job a sister holds: its part learns
// the job's new allocation (its nodes for tasks, its node file).
func (m *Mom) updateSister(j *momJob, job *proto.MomJob) error {
	m.mu.Lock()
	j.spec.ExecHost, j.spec.ExecVnode, j.spec.Alloc, j.spec.NodeFile, j.spec.Moms = job.ExecHost, job.ExecVnode, job.Alloc, job.NodeFile, job.Moms
	m.mu.Unlock()
	return m.rewriteJobFiles(j, job)
}

// waitTasksGone waits up to grace for j's tasks here to end by themselves.
func (m *Mom) waitTasksGone(j *momJob, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		m.mu.Lock()
		n := len(j.tasks)
		m.mu.Unlock()
		if n == 0 && !hasTaskFiles(j.dir) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hasTaskFiles reports whether a job directory records a live task.
func hasTaskFiles(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), shepherd.TaskFilePrefix) {
			return true
		}
	}
	return false
}
