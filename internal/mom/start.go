// Starting a job: the job directory's files and the shepherd process
// (the server's run requests, several jobs at once). runJob runs on the
// goroutine of the server's connection (or one of runJobs' workers) and
// takes Mom.mu only to look up and record the job.

package mom

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// startWorkers bounds how many of one request's jobs start at once. A
// start waits mostly for the disk (the job file's fsyncs) and for the
// shepherd's fork: several at once overlap those waits, so a batch of
// short jobs starts in a fraction of the time one after another takes.
const startWorkers = 8

// runJobs starts the jobs of one run request (distinct jobs, as the
// server sends them) and says how each start went.
func (m *Mom) runJobs(jobs []proto.MomJob) *proto.MomJobsReply {
	reply := &proto.MomJobsReply{Results: make([]proto.ObjectError, len(jobs))}
	unhealthy := m.checkBeforeStart(jobs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(startWorkers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				reply.Results[i].Name = jobs[i].JobID
				if unhealthy != "" && m.newRun(&jobs[i]) {
					pe := proto.Errorf(proto.PBSE_MOMREJECT, ": node %s failed its node check: %s", m.cfg.NodeName, unhealthy)
					reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
					continue
				}
				if err := m.runJob(&jobs[i]); err != nil {
					pe := momError(err)
					reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
				}
			}
		}()
	}
	wg.Wait()
	return reply
}

// runJob starts a job's shepherd. A repeated request for the run already
// going is accepted without starting it twice.
func (m *Mom) runJob(job *proto.MomJob) error {
	m.mu.Lock()
	if old, ok := m.jobs[job.JobID]; ok {
		running := old.result == nil
		m.mu.Unlock()
		if old.spec.RunCount == job.RunCount {
			return nil
		}
		if running {
			return proto.Errorf(proto.PBSE_MOMREJECT, ": run %d of job %s is still running here", old.spec.RunCount, job.JobID)
		}
		m.forget(old)
		m.mu.Lock()
	}
	m.mu.Unlock()
	usr, err := m.jobOwner(job)
	if err != nil {
		return err
	}
	// The site's execjob_begin, then execjob_prologue hooks judge the
	// job before anything of it exists here (hooks.go).
	if err := m.execjobHooks(hook.ExecjobBegin, job, usr, nil); err != nil {
		return err
	}
	if err := m.execjobHooks(hook.ExecjobPrologue, job, usr, nil); err != nil {
		return err
	}
	if err := m.launchHooks(job, usr); err != nil {
		return err
	}
	applyUseCp(job, m.mc().UseCp)
	gpus, err := m.takeGPUs(job)
	if err != nil {
		return err
	}
	started := false
	defer func() {
		if !started && gpus != nil {
			m.mu.Lock()
			m.releaseGPUs(job.JobID)
			m.mu.Unlock()
		}
	}()
	var cg *cgroup.Job
	if m.conf != nil {
		// Before anything of the job exists: a mom that cannot confine
		// the job refuses it, and the server puts it back in its queue.
		if cg, err = m.makeCgroup(job, gpus); err != nil {
			return fmt.Errorf("on %s: cannot make the job's cgroup: %w", m.cfg.NodeName, err)
		}
	}
	defer func() {
		if !started && cg != nil {
			m.dropCgroup(job.JobID, cg, nil)
			m.releaseCpus(job.JobID)
		}
	}()
	if job.TaskCookie, err = newTaskCookie(); err != nil {
		return err
	}
	// Every other mom of the job takes its part before anything of the
	// job starts: a start is whole or refused.
	if err := m.joinSisters(job); err != nil {
		return err
	}
	defer func() {
		if !started {
			m.abortSisters(job, sisterMoms(job))
		}
	}()
	dir := filepath.Join(m.jobsDir, job.JobID)
	os.RemoveAll(dir)
	if !m.dirs.take(dir, 0) {
		if err := os.Mkdir(dir, 0o711); err != nil {
			return fmt.Errorf("job directory: %w", err)
		}
	}
	script := job.Script
	job.Script = nil
	set := m.shepherdSettings()
	// Named here, once, and recorded with the job: the shepherd, the
	// job's tasks and this mom (restarted too) use this name.
	tmpdir := shepherd.NewTmpDir(set, job.JobID)
	// Not fsynced here: the shepherd makes it durable (durableAfter).
	if err := shepherd.WriteJSONVolatile(dir, shepherd.FileJob, shepherd.JobFile{MomJob: *job, OwnerAccount: usr, Settings: set, Cgroup: cg, GPUs: gpus, TmpDir: tmpdir}, 0o600); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("job file: %w", err)
	}
	if err := writeOwned(filepath.Join(dir, shepherd.FileScript), script, 0o700, usr); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("job script: %w", err)
	}
	nodes := strings.Join(job.NodeFile, "\n")
	if nodes != "" {
		nodes += "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, shepherd.FileNodes), []byte(nodes), 0o644); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("node file: %w", err)
	}
	if len(job.StageIn) > 0 || len(job.StageOut) > 0 {
		if err := shepherd.WriteJSON(dir, shepherd.FileStage, m.stageConfig(), 0o600); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("stage file: %w", err)
		}
	}
	logf, err := os.OpenFile(filepath.Join(dir, shepherd.FileLog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("shepherd log: %w", err)
	}
	defer logf.Close()
	// The shepherd makes the TMPDIR when no spare is there.
	tookTmp := m.tmpDirs.take(tmpdir, usr.UID)
	cmd := exec.Command(m.exe, shepherd.Arg, dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The job is known here before its script can ask for a task (pbsdsh
	// as its first line): a task request waits on mu until it is listed.
	m.mu.Lock()
	if err := cmd.Start(); err != nil {
		m.mu.Unlock()
		os.RemoveAll(dir)
		if tookTmp {
			os.Remove(tmpdir)
		}
		return fmt.Errorf("start shepherd: %w", err)
	}
	started = true
	pid := cmd.Process.Pid
	j := &momJob{spec: *job, dir: dir, shepherdPid: pid, child: true, ownerUID: int64(usr.UID), cg: cg, gpus: gpus, tmpDir: tmpdir}
	m.jobs[job.JobID] = j
	m.mu.Unlock()
	m.metrics.Started()
	go func() {
		// Reap it while this mom lives (init does after) and look at its
		// result at once rather than at the next poll.
		cmd.Wait()
		m.mu.Lock()
		j.reaped = true
		m.mu.Unlock()
		select {
		case m.ended <- job.JobID:
		default:
		}
	}()
	m.log.Info("job started", "job", job.JobID, "run", job.RunCount, "user", job.EUser, "shepherd", pid)
	return fault.Hit(fault.MomAfterStart)
}

// jobOwner resolves a job's owner here and checks that this mom may act
// as them: root only when the server's acl_roots allows it, and a mom not
// running as root only for its own user.
func (m *Mom) jobOwner(job *proto.MomJob) (*asuser.Account, error) {
	usr, err := asuser.Lookup(job.EUser, job.EGroup)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: %v", m.cfg.NodeName, err)
	}
	if usr.UID == 0 && !job.AllowRoot {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: jobs of root run only when the server's acl_roots allows them", m.cfg.NodeName)
	}
	if os.Geteuid() != 0 && usr.UID != uint32(os.Geteuid()) {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: this pbs_mom runs as uid %d and can run only that user's jobs", m.cfg.NodeName, os.Geteuid())
	}
	return usr, nil
}

// writeOwned writes a file and gives it to the job's owner.
func writeOwned(path string, data []byte, mode os.FileMode, usr *asuser.Account) error {
	// The file is the job's script, which its shepherd may execute: a
	// process this mom forks meanwhile (another job's shepherd) would hold
	// a copy of the descriptor open for writing until it execs, and the
	// script's exec would fail with "text file busy". Forks take
	// syscall.ForkLock exclusively, so none happens while it is held.
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, data, mode)
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		return os.Chown(path, int(usr.UID), int(usr.GID))
	}
	return nil
}
