// Watching jobs: finding each job's end (its shepherd's result, or a
// shepherd gone without one), sampling its usage, and forgetting a job
// once the server acknowledged its end. One goroutine (watch, started by
// Run) polls; a shepherd this mom started wakes it when reaped
// (Mom.ended).

package mom

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// watch finds job ends and samples usage.
func (m *Mom) watch() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.PollInterval)
	defer t.Stop()
	lastSample := time.Time{}
	for {
		select {
		case <-m.stop:
			return
		case id := <-m.ended:
			m.mu.Lock()
			j := m.jobs[id]
			m.mu.Unlock()
			if j != nil && !m.hasEnded(j) && m.checkJob(j, nil) {
				m.wakeLink()
			}
			continue
		case <-t.C:
		}
		sample := time.Since(lastSample) >= 2*time.Second
		if sample {
			lastSample = time.Now()
		}
		m.mu.Lock()
		var running []*momJob
		for _, j := range m.jobs {
			if j.result == nil && !j.sister {
				running = append(running, j)
			}
		}
		m.mu.Unlock()
		var usage map[int][]shepherd.ProcStat
		if sample {
			// A confined job's usage is its cgroup's (checkJob); the others'
			// are read from their processes: the shepherd's session and
			// what left it, below the shepherd (their subreaper).
			sids := map[int]bool{}
			for _, j := range running {
				if pid := m.shepherdPidOf(j); pid > 0 && j.cg == nil {
					sids[pid] = true
				}
			}
			usage = map[int][]shepherd.ProcStat{}
			if len(sids) > 0 {
				usage = shepherd.JobsProcesses(sids)
			}
		}
		ended := false
		for _, j := range running {
			if m.checkJob(j, usage) {
				ended = true
			}
		}
		if ended {
			m.wakeLink()
		}
	}
}

// checkJob looks for a job's result and, when usage (the processes of
// the jobs, by shepherd, read at once for all) is given, samples its usage;
// it reports whether the job ended.
func (m *Mom) checkJob(j *momJob, usage map[int][]shepherd.ProcStat) bool {
	session := m.view(j).session
	if session.Pgid == 0 {
		var s shepherd.Session
		if shepherd.ReadJSON(filepath.Join(j.dir, shepherd.FileSession), &s) == nil {
			m.mu.Lock()
			j.session = s
			m.mu.Unlock()
			session = s
		}
	}
	var res shepherd.Result
	if err := shepherd.ReadJSON(filepath.Join(j.dir, shepherd.FileResult), &res); err == nil {
		m.setResult(j, &res)
		m.log.Info("job ended", "job", j.spec.JobID, "exit_status", res.ExitStatus, "comment", res.Comment)
		for _, note := range res.Notes {
			// The shepherd's word on the job's prologue or epilogue.
			m.log.Warn(note, "job", j.spec.JobID)
		}
		return true
	}
	if release, gone := m.shepherdGone(j, session); gone {
		// Re-check: the result may have landed between the two looks.
		if err := shepherd.ReadJSON(filepath.Join(j.dir, shepherd.FileResult), &res); err != nil {
			now := time.Now().Unix()
			if session.Pgid == 0 && !j.child {
				// The previous mom stopped while starting it: no shepherd
				// ever ran it, and none can now (the lock is held here
				// while the result is written). It may run elsewhere.
				res = shepherd.Result{ExitStatus: proto.JobExecRetry, End: now, Comment: "job not started: its mom stopped while starting it"}
			} else {
				res = shepherd.Result{ExitStatus: proto.JobExecFail2, Start: session.Start, End: now, Comment: "job's shepherd process died without a result"}
			}
			// The job's processes may outlive their shepherd (it died
			// before recording them): they are in its session, which no
			// other process can join, so they die with it here.
			if pid := m.shepherdPidOf(j); pid > 0 {
				for _, p := range shepherd.SessionProcesses(pid) {
					syscall.Kill(p.PID, syscall.SIGKILL)
				}
			}
			// And what left the session is in its cgroup.
			if j.cg != nil {
				res.Used = cgroupUsage(j.cg)
			}
			m.dropCgroup(j.spec.JobID, j.cg, &res)
			shepherd.WriteJSON(j.dir, shepherd.FileResult, res, 0o600)
			m.log.Warn("job's shepherd is gone without a result", "job", j.spec.JobID, "exit_status", res.ExitStatus, "comment", res.Comment)
		}
		release()
		m.setResult(j, &res)
		return true
	}
	if usage != nil && session.Pgid > 0 {
		var u proto.Usage
		if j.cg != nil {
			u = cgroupUsage(j.cg)
		} else {
			var cpu int64
			for _, p := range usage[m.shepherdPidOf(j)] {
				cpu += p.CPUTicks
				u.MemBytes += p.RSSPages * shepherd.PageSize
				u.VmemBytes += p.VSize
			}
			u.CPUSecs = cpu / shepherd.ClockTicks
		}
		m.mu.Lock()
		j.used.CPUSecs = max(j.used.CPUSecs, u.CPUSecs)
		j.used.MemBytes = max(j.used.MemBytes, u.MemBytes)
		j.used.VmemBytes = max(j.used.VmemBytes, u.VmemBytes)
		if session.Start > 0 {
			now := time.Now().Unix()
			j.used.WallSecs = max(now-session.Start-j.susp.At(now), 0)
		}
		m.mu.Unlock()
	}
	return false
}

// shepherdStartGrace is how long a job directory without a session may
// wait for the shepherd a previous mom forked just before it stopped.
const shepherdStartGrace = 30 * time.Second

// shepherdGone reports whether j's shepherd has certainly exited. A
// shepherd this mom started is gone once reaped. One inherited from a
// previous mom is gone when its lock can be taken; the lock is then held
// until release is called, so that no late shepherd can start the job
// while its end is being recorded.
func (m *Mom) shepherdGone(j *momJob, session shepherd.Session) (release func(), gone bool) {
	noop := func() {}
	if j.child {
		m.mu.Lock()
		defer m.mu.Unlock()
		return noop, j.reaped
	}
	if session.Pgid == 0 {
		if fi, err := os.Stat(filepath.Join(j.dir, shepherd.FileJob)); err != nil || time.Since(fi.ModTime()) < shepherdStartGrace {
			return noop, false
		}
	}
	return m.claimShepherdLock(j)
}

// claimShepherdLock takes the lock a live shepherd of j holds; it fails
// while one lives. While the caller holds it no shepherd can start j.
func (m *Mom) claimShepherdLock(j *momJob) (release func(), ok bool) {
	noop := func() {}
	f, err := os.OpenFile(filepath.Join(j.dir, shepherd.FileLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return noop, false // cannot tell: keep waiting
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return noop, false // a shepherd holds it
	}
	if isShepherdOf(m.shepherdPidOf(j), j.dir) {
		// A shepherd of a mom from before shepherds took the lock.
		f.Close()
		return noop, false
	}
	return func() { unlockClose(f) }, true
}

// isShepherdOf reports whether pid is a live "pbs_shepherd --shepherd dir"
// or "pbs_mom --shepherd dir" (its command line, so a reused pid is not
// mistaken for it).
func isShepherdOf(pid int, dir string) bool { return runsFor(pid, shepherd.Arg, dir) }

// runsFor reports whether pid is a live "<program> arg dir" (a job's
// shepherd or a task shepherd of the job in dir).
func runsFor(pid int, arg, dir string) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	return len(args) == 3 && args[1] == arg && filepath.Clean(args[2]) == filepath.Clean(dir)
}

// shepherdPidOf is j's shepherd's pid (its session id), from the mom's
// record or the shepherd's own.
func (m *Mom) shepherdPidOf(j *momJob) int {
	if j.shepherdPid > 0 {
		return j.shepherdPid
	}
	b, err := os.ReadFile(filepath.Join(j.dir, shepherd.FileShepherd))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// forget removes an acknowledged job: its directory and its TMPDIR are
// kept for later jobs when they may be, else removed.
func (m *Mom) forget(j *momJob) {
	m.mu.Lock()
	if j.forgotten {
		m.mu.Unlock()
		return
	}
	j.forgotten = true
	if m.jobs[j.spec.JobID] == j {
		delete(m.jobs, j.spec.JobID)
	}
	cgroupLeft := j.result != nil && j.result.CgroupLeft
	m.mu.Unlock()
	// Gone with the job's end (its shepherd removes it), unless something
	// of the job could not be killed then. Only then: a later run of the
	// job has a cgroup of the same name.
	if cgroupLeft {
		m.log.Warn("the job's shepherd could not remove its cgroup", "job", j.spec.JobID)
		m.dropCgroup(j.spec.JobID, j.cg, nil)
	}
	// The job's shepherd left its TMPDIR empty for this (shepherd.IsSpareTmpDir);
	// one not kept goes, as a TMPDIR always does at its job's end.
	if tmp := j.tmpDir; tmp != "" && (j.ownerUID < 0 || !m.tmpDirs.put(tmp, uint32(j.ownerUID))) {
		os.RemoveAll(tmp)
	}
	if m.dirs.put(j.dir, 0) {
		return
	}
	if err := os.RemoveAll(j.dir); err != nil {
		m.log.Error("cannot remove job directory", "dir", j.dir, "error", err)
	}
}
