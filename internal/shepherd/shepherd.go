package shepherd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/stagecopy"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Arg makes pbs_mom run as a job's shepherd:
// pbs_mom --shepherd <jobdir>, and is pbs_shepherd's first argument.
const Arg = "--shepherd"

// Binary is the static shepherd pbs_mom starts when it is
// installed beside it: it starts in a fraction of pbs_mom's time (no
// dynamic loader, no C library), which a short job pays on its way in and
// out.
const Binary = "pbs_shepherd"

// Run is the body of "pbs_mom --shepherd <jobdir>": run the job,
// wait for it and record the result. It returns the process exit status.
func Run(dir string) int {
	// The lock says "a shepherd lives here" to a mom that restarted and
	// no longer is this process's parent; it dies with the process.
	lock, err := os.OpenFile(filepath.Join(dir, FileLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "shepherd: lock:", err)
		return 1
	}
	defer lock.Close()
	if _, err := os.Stat(filepath.Join(dir, FileResult)); err == nil {
		// A restarted mom found no shepherd and gave the job up (its
		// predecessor stopped while starting this one): never run it.
		return 0
	}
	// Only the shepherd records its pid: the mom that forked it knows it,
	// and a mom that restarts finds it here.
	writeFileVolatile(dir, FileShepherd, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	var job JobFile
	if err := ReadJSON(filepath.Join(dir, FileJob), &job); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd:", err)
		return 1
	}
	// Catch the mom's SIGTERM from the start: before the job exists it
	// must not kill the shepherd (the delete marker covers that window).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	sh := &shepherd{dir: dir, job: &job.MomJob, usr: job.OwnerAccount, set: job.Settings, cg: job.Cgroup, gpus: job.GPUs, tmpdir: job.TmpDirPath(), sigs: sigs}
	res := sh.run()
	if sh.term != nil {
		// A job that ended before its shell did (a failed start) says
		// why; the shell's own end was told already.
		sh.term.finish(res.ExitStatus, res.Comment)
	}
	if sh.cg != nil && !sh.cgEnded {
		// The job never ran in it (a failed stage-in, prologue or start).
		if err := sh.cg.Destroy(cgroupKillWait); err != nil {
			fmt.Fprintln(os.Stderr, "shepherd:", err)
			res.CgroupLeft = true
		}
	}
	sh.syncForResult()
	if err := WriteJSON(dir, FileResult, res, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd: cannot record the result:", err)
		return 1
	}
	return 0
}

type shepherd struct {
	dir  string
	job  *proto.MomJob
	set  Settings
	usr  *asuser.Account // as the mom resolved it
	pgid int
	sigs chan os.Signal
	// term is an interactive job's terminal, relayed to its qsub.
	term *terminal
	cg   *cgroup.Job // the job's cgroup; nil: not confined
	gpus []int       // the node's GPUs the job has
	// tmpdir is the job's TMPDIR, as the mom named it (JobFile.TmpDir).
	tmpdir string
	// cgEnded is set once the job's end emptied its cgroup and removed it
	// (or failed to: cgLeft).
	cgEnded, cgLeft bool
	// momUmask is the umask the shepherd started with (the mom's), for
	// the prologue and epilogue; the job's own (jobUmask) replaces it.
	momUmask int

	mu         sync.Mutex
	killReason string // set when the shepherd itself killed the job
	exitCode   int    // replaces the exit status when killReason is set
	fenced     bool   // killed because the lease lapsed
	oomNoted   bool   // the kernel killed in the job's cgroup for its memory limit

	// syncMu serialises making the job's files durable; synced says the
	// job file and the session file are.
	syncMu sync.Mutex
	synced bool
}

// durableAfter is how long a job runs before its job file and session
// file are made durable. The mom and the shepherd write them without
// waiting for the disk (each new file's fsync takes milliseconds, more
// than a short job's whole run): a job that ends sooner makes its job
// file durable with its result. A host that crashes within that time
// loses at most that the job had started: the mom then finds it never
// started, and it is requeued, as the server requeues the jobs of a
// failed node; a job that runs longer is found started and lost.
const durableAfter = time.Second

// syncRunning makes the job file and the session file durable.
func (sh *shepherd) syncRunning() {
	sh.syncMu.Lock()
	defer sh.syncMu.Unlock()
	if sh.synced {
		return
	}
	syncFiles(sh.dir, FileJob, FileSession)
	sh.synced = true
}

// syncForResult makes the job file durable before the result is written
// (the result's own fsyncs then cover both names): a result is reported
// after a crash only with its job file.
func (sh *shepherd) syncForResult() {
	sh.syncMu.Lock()
	defer sh.syncMu.Unlock()
	if !sh.synced {
		if err := atomicfile.SyncFile(filepath.Join(sh.dir, FileJob)); err != nil {
			fmt.Fprintln(os.Stderr, "shepherd: job file:", err)
		}
	}
}

func (sh *shepherd) fail(code int, format string, args ...any) Result {
	now := time.Now().Unix()
	return Result{ExitStatus: code, Start: now, End: now, Comment: fmt.Sprintf(format, args...)}
}

func (sh *shepherd) run() Result {
	job := sh.job
	usr := sh.usr
	if usr == nil {
		// A job file of a mom that did not record the account.
		var err error
		if usr, err = asuser.Lookup(job.EUser, job.EGroup); err != nil {
			return sh.fail(proto.JobExecFailUID, "job exec failed: %v", err)
		}
		sh.usr = usr
	}
	sh.momUmask = syscall.Umask(0o022)
	// The job's umask (-W umask, else the mom's) holds for everything made
	// for it from here on: staged-in files, the output files, its
	// processes. The shepherd's own files in the job directory set their
	// modes explicitly (writeFileAtomic).
	syscall.Umask(sh.jobUmask())
	asOther := os.Geteuid() == 0 && usr.UID != 0
	if os.Geteuid() != 0 && usr.UID != uint32(os.Geteuid()) {
		return sh.fail(proto.JobExecFailUID, "job exec failed: pbs_mom runs as uid %d and cannot run jobs of %s", os.Geteuid(), job.EUser)
	}
	tmpdir := sh.tmpdir
	if err := openTmpDir(tmpdir, usr, asOther); err != nil {
		// What is there is not removed: the mom removes the job's
		// TMPDIR (its name) when it forgets the job.
		return sh.fail(proto.JobExecFail1, "job exec failed: TMPDIR %s: %v", tmpdir, err)
	}
	defer closeTmpDir(tmpdir)
	path, argv, env, dir := sh.command(tmpdir)

	// Stage-in before anything of the job exists: a failed copy leaves no
	// output files, and the server makes the job wait (StageInFailed).
	stg, err := sh.stager(dir)
	if err != nil {
		return sh.fail(proto.JobExecFail1, "job exec failed: %v", err)
	}
	if stg != nil && len(job.StageIn) > 0 && !job.StagedIn {
		sh.setPhase(phaseStageIn)
		err := sh.stageIn(stg, job.StageIn)
		sh.setPhase("")
		switch {
		case errors.Is(err, errDeleted):
			return sh.fail(proto.ExitSignalBase+int(syscall.SIGTERM), "job deleted before it started")
		case errors.Is(err, errFenced):
			res := sh.fail(proto.JobExecRerun, "%s", "job not started: "+err.Error())
			res.Fenced = true
			return res
		case err != nil:
			res := sh.fail(proto.JobExecFail1, "%v", err)
			res.StageInFailed = true
			return res
		}
	}

	if job.Interactive != nil {
		// Reached once the job's files are in: "ready" means the shell
		// follows (after the prologue). Run closes it.
		if res, stop := sh.mayStart(); stop {
			return res
		}
		if sh.term, err = sh.openTerminal(); err != nil {
			return sh.terminalFailed(err)
		}
		path, argv = sh.shellCommand()
		env = interactiveEnv(env, sh.term.tty, sh.term.term, sh.term.x11Env)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return sh.fail(proto.JobExecFail1, "job exec failed: %v", err)
	}
	defer devnull.Close()
	outFD, errFD, err := sh.openOutput()
	if err != nil {
		return sh.fail(proto.JobExecFail1, "job exec failed: %v", err)
	}
	closeOutput := func() {
		syscall.Close(outFD)
		if errFD != outFD {
			syscall.Close(errFD)
		}
	}
	if res, stop := sh.mayStart(); stop {
		closeOutput()
		return res
	}
	// From here the epilogue runs whatever happens to the job, as
	// OpenPBS's mom runs it for every job it took on, started or not.
	if res, stop := sh.prologue(int(devnull.Fd()), outFD, errFD); stop {
		closeOutput()
		sh.epilogue(&res)
		return res
	}
	if res, stop := sh.mayStart(); stop {
		// The prologue took its time: the lease may have lapsed, or the
		// job been deleted, meanwhile.
		closeOutput()
		sh.epilogue(&res)
		return res
	}
	attr := &syscall.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []uintptr{devnull.Fd(), uintptr(outFD), uintptr(errFD)},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	if sh.term != nil {
		attr.Files[0] = sh.term.stdio()[0].Fd()
		if sh.term.tty {
			// In the terminal's foreground: ^C and ^Z reach it.
			attr.Sys.Foreground, attr.Sys.Ctty = true, int(sh.term.slave.Fd())
		}
	}
	if asOther {
		attr.Sys.Credential = &syscall.Credential{Uid: usr.UID, Gid: usr.GID, Groups: usr.Groups}
	}
	// The shepherd adopts the job's orphans (it is their subreaper): once
	// the job's process has ended, having no child left then proves that
	// nothing of the job is left, without reading every process of the
	// host, which costs more than the rest of a short job's bookkeeping.
	adopting := setChildSubreaper() == nil
	// As subreaper the shepherd reaps every process of the job in the
	// end: what its children used from here is what the job used.
	cpu0 := childrenCPU()
	start := time.Now()
	pid, err := sh.forkExec(path, argv, attr)
	var joinErr *cgroup.JoinError
	for _, fallback := range []string{usr.Home, "/"} {
		if err == nil || attr.Dir == fallback || errors.As(err, &joinErr) {
			continue
		}
		// The working directory may be gone or closed to the owner (the
		// error does not say whether chdir or exec failed): start in the
		// home directory, then in /, as PBS does, and say so.
		if _, serr := os.Stat(path); serr != nil {
			break
		}
		sh.writeAsOwner(errFD, fmt.Sprintf("PBS: cannot start in %s (%v); starting in %s\n", attr.Dir, err, fallback))
		attr.Dir = fallback
		pid, err = sh.forkExec(path, argv, attr)
	}
	closeOutput()
	if errors.As(err, &joinErr) {
		// Not the job's fault: it may run elsewhere, or here later.
		res := sh.fail(proto.JobExecRetry, "job not started on %s: %v", sh.set.Node, err)
		sh.epilogue(&res)
		return res
	}
	if sh.term != nil {
		sh.term.started()
	}
	if err != nil {
		res := sh.fail(proto.JobExecFail2, "job exec failed: cannot execute %s: %v", path, err)
		sh.epilogue(&res)
		return res
	}
	sh.pgid = pid
	fault.Hit(fault.ShepherdStarted)
	if err := WriteJSONVolatile(sh.dir, FileSession, Session{Pgid: pid, Start: start.Unix()}, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd: session file:", err)
	}
	durable := time.AfterFunc(durableAfter, sh.syncRunning)
	// The mom writes the delete marker and then signals only if the
	// session file exists; looking for the marker after writing the
	// session file means one of the two always sees the other.
	if sh.deleteAsked() {
		sh.sigs <- syscall.SIGTERM
	}

	done := make(chan struct{})
	go sh.supervise(sh.sigs, done, start)
	ws, ru := waitJob(pid, adopting)
	durable.Stop()
	close(done)
	end := time.Now()
	var cgUsed cgroup.Usage
	if sh.cg != nil {
		// Everything the job started, in its session or not: dead, and
		// reaped here (orphans come to the subreaper).
		cgUsed = sh.endCgroup()
	}
	// Leftover processes of the job die with it: as their subreaper the
	// shepherd is the ancestor of every one, those that left its session
	// (setsid, a double fork) too, which a kill of the session alone
	// would leave running, unseen by the mom and the scheduler.
	if adopting {
		if err := killDescendants(cgroupKillWait); err != nil {
			fmt.Fprintln(os.Stderr, "shepherd:", err)
		}
	} else {
		for _, p := range SessionProcesses(os.Getpid()) {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	res := Result{Start: start.Unix(), End: end.Unix()}
	cpu := max(time.Duration(ru.Utime.Nano()+ru.Stime.Nano()), childrenCPU()-cpu0, time.Duration(cgUsed.CPUNanos))
	res.Used.CPUSecs = int64(cpu / time.Second)
	res.Used.MemBytes = ru.Maxrss * 1024
	res.Used.WallSecs = max(int64(end.Sub(start)/time.Second)-ReadSuspension(sh.dir).At(end.Unix()), 0)
	// The cgroup's counts are peaks over every process of the job, the
	// escaped ones too.
	res.Used.MemBytes = max(res.Used.MemBytes, cgUsed.MemPeak)
	res.Used.VmemBytes = max(res.Used.VmemBytes, cgUsed.VmemPeak)
	switch {
	case ws.Exited():
		res.ExitStatus = ws.ExitStatus()
	case ws.Signaled():
		res.ExitStatus = proto.ExitSignalBase + int(ws.Signal())
	default:
		res.ExitStatus = proto.JobExecFail2
	}
	sh.mu.Lock()
	if sh.killReason != "" {
		res.Comment = sh.killReason
		if sh.exitCode != 0 {
			res.ExitStatus = sh.exitCode
		}
	}
	res.Fenced = sh.fenced
	res.OOMKilled = sh.oomNoted
	sh.mu.Unlock()
	if sh.term != nil {
		// qsub exits with the shell's status now, not after the
		// epilogue and the stage-out, which cannot change it.
		sh.term.finish(res.ExitStatus, "")
	}
	res.CgroupLeft = sh.cgLeft
	sh.epilogue(&res)
	if stg != nil && !res.Fenced {
		sh.stageOut(stg, &res)
	}
	if res.ExitStatus == 0 {
		sh.removeOutput()
	}
	return res
}

// mayStart checks, just before the prologue and again before the script,
// that the job may still start here: stop is set, with the result to
// record, when the mom's lease lapsed (the server may start the job
// elsewhere) or the job was deleted.
func (sh *shepherd) mayStart() (res Result, stop bool) {
	if lapsed, why := leaseLapsed(LeasePath(filepath.Dir(sh.dir))); lapsed {
		res := sh.fail(proto.JobExecRerun, "%s", why)
		res.Fenced = true
		return res, true
	}
	if sh.deleteAsked() {
		return sh.fail(proto.ExitSignalBase+int(syscall.SIGTERM), "job deleted before it started"), true
	}
	return Result{}, false
}

// prologue runs the job's prologue and then Torque's user prologue, as
// the owner, with the job's output files as theirs; stop is set, with the
// result to record, when either stops the job (the user prologue does not
// run after a prologue that did).
func (sh *shepherd) prologue(stdin, outFD, errFD int) (res Result, stop bool) {
	if sh.set.PelogDir == "" {
		return Result{}, false
	}
	for _, p := range []struct {
		name string
		cmd  pelogCmd
	}{
		{filePrologue, pelogCmd{Args: prologueArgs(sh.job, sh.usr), Env: pelogEnv(sh.usr.Home), Dir: sh.set.PelogDir, Umask: sh.momUmask}},
		{filePrologueUser, pelogCmd{Args: userPrologueArgs(sh.job, sh.usr), Env: userPelogEnv(sh.usr), Dir: sh.homeOr("/"), Umask: sh.jobUmask(), As: sh.usr}},
	} {
		c := p.cmd
		c.Path = pelogPath(sh.set.PelogDir, p.name, sh.job.JobType)
		c.Files = [3]int{stdin, outFD, errFD}
		c.Limit = time.Duration(sh.set.PrologAlarm) * time.Second
		run := runPelog(c)
		switch actionOf(run.Code) {
		case prologueAbort:
			sh.writeAsOwner(errFD, "PBS: job aborted: prologue "+run.String()+"\n")
			res = sh.fail(proto.JobExecFail2, "Job aborted: prologue %s", run)
		case prologueRequeue:
			res = sh.fail(proto.JobExecRetry, "prologue %s", run)
		default:
			continue
		}
		res.Notes = append(res.Notes, "prologue failed: "+run.String())
		return res, true
	}
	return Result{}, false
}

// epilogue runs Torque's user epilogue, as the owner, and then the job's
// epilogue after the job ended as res says, appending to the job's output
// and error files, and notes their failures in res; the job's end stands
// whatever they do.
func (sh *shepherd) epilogue(res *Result) {
	if sh.set.PelogDir == "" {
		return
	}
	home := sh.homeOr("")
	var files [3]int
	var closeFiles func()
	for _, p := range []struct {
		name string
		cmd  pelogCmd
	}{
		// The owner's programs start in / without a home, the mom's in
		// mom_priv (mom_priv is closed to the owner).
		{fileEpilogueUser, pelogCmd{Env: userPelogEnv(sh.usr), Dir: cmp.Or(home, "/"), Umask: sh.jobUmask(), As: sh.usr}},
		{fileEpilogue, pelogCmd{Env: pelogEnv(sh.usr.Home), Dir: cmp.Or(home, sh.set.PelogDir), Umask: sh.momUmask}},
	} {
		c := p.cmd
		c.Path = pelogPath(sh.set.PelogDir, p.name, sh.job.JobType)
		if found, _, _ := checkPelog(c.Path, uint32(os.Geteuid()), c.As != nil); !found {
			continue
		}
		if closeFiles == nil {
			files, closeFiles = sh.epilogueFiles()
			defer closeFiles()
		}
		c.Args = epilogueArgs(sh.job, sh.usr, sh.pgid, res, sh.set)
		c.Files = files
		c.Limit = time.Duration(sh.set.PrologAlarm) * time.Second
		if run := runPelog(c); run.failed() {
			res.Notes = append(res.Notes, "epilogue failed: "+run.String())
		}
	}
}

// jobUmask is the job's umask: its -W umask, else the mom's.
func (sh *shepherd) jobUmask() int {
	if sh.job.HasUmask {
		return int(sh.job.Umask & 0o777)
	}
	return sh.momUmask
}

// homeOr is where a prologue or epilogue starts: the owner's home, or
// fallback when it is not a directory.
func (sh *shepherd) homeOr(fallback string) string {
	if fi, err := os.Stat(sh.usr.Home); err == nil && fi.IsDir() {
		return sh.usr.Home
	}
	return fallback
}

// epilogueFiles opens the epilogue's standard input (/dev/null) and the
// job's output and error files for appending, as the owner; a file that
// cannot be opened is replaced by /dev/null.
func (sh *shepherd) epilogueFiles() (files [3]int, closeAll func()) {
	var opened []int
	devnull := func(flags int) int {
		fd, err := syscall.Open(os.DevNull, flags|syscall.O_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		opened = append(opened, fd)
		return fd
	}
	appendTo := func(path string) int {
		if path == "" {
			return devnull(syscall.O_WRONLY)
		}
		fd, err := asuser.Open(sh.usr, path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "shepherd: epilogue output %s: %v\n", path, err)
			return devnull(syscall.O_WRONLY)
		}
		opened = append(opened, fd)
		return fd
	}
	out, errp := sh.stdPaths()
	files[0] = devnull(syscall.O_RDONLY)
	files[1] = appendTo(out)
	files[2] = files[1]
	if errp != out {
		files[2] = appendTo(errp)
	}
	return files, func() {
		for _, fd := range opened {
			syscall.Close(fd)
		}
	}
}

// removeOutput removes the output and error files that Remove_Files
// (qsub -R) names, after a job that exited 0, as the owner. A stream
// joined into the other's file (-j) has no file of its own: the file
// goes only when the stream that owns it is named.
func (sh *shepherd) removeOutput() {
	job := sh.job
	out, errp := sh.stdPaths()
	var paths []string
	if job.RemoveOutput && job.JoinPath != "eo" {
		paths = append(paths, out)
	}
	if job.RemoveError && job.JoinPath != "oe" {
		paths = append(paths, errp)
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := asuser.Run(sh.usr, func() error { return syscall.Unlink(p) }); err != nil && !errors.Is(err, syscall.ENOENT) {
			fmt.Fprintf(os.Stderr, "shepherd: Remove_Files: cannot remove %s: %v\n", p, err)
		}
	}
}

// waitJob waits for the job's process pid and returns how it ended.
// While the shepherd adopts orphans, those that end meanwhile are reaped
// too (they would stay zombies until the job ends otherwise).
func waitJob(pid int, adopting bool) (syscall.WaitStatus, syscall.Rusage) {
	which := pid
	if adopting {
		which = -1
	}
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		got, err := syscall.Wait4(which, &ws, 0, &ru)
		switch {
		case err == syscall.EINTR || err == nil && got != pid:
			continue
		case err != nil:
			return 0, syscall.Rusage{}
		}
		return ws, ru
	}
}

// childrenLeft reaps the adopted orphans that have ended and reports
// whether any child of the shepherd still lives.
func childrenLeft() bool {
	for {
		got, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR || err == nil && got > 0:
			continue
		case err == syscall.ECHILD:
			return false
		default:
			return true // alive (got 0) or cannot tell
		}
	}
}

// errDeleted and errFenced stop a stage-in: the job was deleted, or the
// mom's lease lapsed (the server may start the job elsewhere).
var (
	errDeleted = errors.New("job deleted")
	errFenced  = errors.New("lost contact with the server")
)

// stager prepares the job's file staging (nil when it has none), with the
// settings the mom wrote to the job directory.
func (sh *shepherd) stager(workdir string) (*stagecopy.Stager, error) {
	job := sh.job
	if len(job.StageIn) == 0 && len(job.StageOut) == 0 {
		return nil, nil
	}
	var cfg stagecopy.Config
	if err := ReadJSON(filepath.Join(sh.dir, FileStage), &cfg); err != nil {
		return nil, fmt.Errorf("staging settings: %w", err)
	}
	lease := LeasePath(filepath.Dir(sh.dir))
	return &stagecopy.Stager{Cfg: cfg, Job: job, Usr: sh.usr, Dir: workdir, Cancel: func() error {
		if sh.deleteAsked() {
			return errDeleted
		}
		if lapsed, why := leaseLapsed(lease); lapsed {
			return fmt.Errorf("%w: %s", errFenced, why)
		}
		return nil
	}}, nil
}

// deleteGrace is how long a deleted job's stage-in has, once the shepherd
// saw the delete, to stop by itself (every copy asks its cancel at least
// every second) before the shepherd gives up on it.
const deleteGrace = 5 * time.Second

// stageIn copies the stage-in files. A delete wins: a stage-in that
// fails after one was asked for (the source's mom stopped, say) ends the
// job as deleted rather than putting it back to wait, and one stuck in
// the kernel (a file system that stopped answering) is left behind after
// deleteGrace, so that the job ends as deleted all the same.
func (sh *shepherd) stageIn(stg *stagecopy.Stager, files []proto.StageFile) error {
	if sh.deleteAsked() {
		return errDeleted
	}
	done := make(chan error, 1)
	go func() { done <- stg.StageIn(files) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var asked time.Time
	for {
		select {
		case err := <-done:
			if err != nil && sh.deleteAsked() {
				return fmt.Errorf("%w (%v)", errDeleted, err)
			}
			return err
		case <-tick.C:
			if asked.IsZero() && sh.deleteAsked() {
				asked = time.Now()
			}
			if !asked.IsZero() && time.Since(asked) >= deleteGrace {
				return errDeleted
			}
		}
	}
}

// stageOut copies the stage-out files after the script and records any
// failure in the result; the stage-in files go unless a copy failed.
func (sh *shepherd) stageOut(stg *stagecopy.Stager, res *Result) {
	stg.Cancel = nil // a deleted job's files are staged out too
	var failures []string
	if len(sh.job.StageOut) > 0 {
		sh.setPhase(phaseStageOut)
		res.StageOutSpool, failures = stg.StageOut(sh.job.StageOut)
		sh.setPhase("")
	}
	if len(failures) == 0 {
		stg.RemoveStagedIn(sh.job.StageIn)
		return
	}
	msg := strings.Join(failures, "; ")
	if res.Comment != "" {
		msg = res.Comment + "; " + msg
	}
	res.Comment = msg
	sh.appendToStderr("PBS: " + strings.Join(failures, "\nPBS: "))
}

// setPhase tells the mom what the shepherd is doing ("" : the job runs).
func (sh *shepherd) setPhase(phase string) {
	if phase == "" {
		os.Remove(filepath.Join(sh.dir, FilePhase))
		return
	}
	writeFileAtomic(sh.dir, FilePhase, []byte(phase+"\n"), 0o644)
}

func (sh *shepherd) deleteAsked() bool {
	_, err := os.Stat(filepath.Join(sh.dir, FileDelete))
	return err == nil
}

// supervise enforces the walltime and carries out the delete sequence
// until done is closed.
func (sh *shepherd) supervise(sigs chan os.Signal, done chan struct{}, start time.Time) {
	// $wallmult: this host's seconds count f times against the limit.
	mult := sh.set.WallMult
	if mult <= 0 {
		mult = 1
	}
	var wall <-chan time.Time
	if sh.job.Walltime > 0 {
		t := time.NewTimer(time.Duration(float64(sh.job.Walltime) / mult * float64(time.Second)))
		defer t.Stop()
		wall = t.C
	}
	delay := time.Duration(sh.job.KillDelay) * time.Second
	lease := LeasePath(filepath.Dir(sh.dir))
	leaseTick := time.NewTicker(leaseCheck)
	defer leaseTick.Stop()
	var kill <-chan time.Time
	terminate := func(delay time.Duration) {
		// A suspended job must see the TERM.
		sh.thaw()
		sh.signalAll(syscall.SIGCONT)
		if sh.term != nil {
			// A hangup, as when a terminal closes: an interactive shell
			// ignores TERM.
			sh.signalJob(syscall.SIGHUP)
		}
		sh.signalAll(syscall.SIGTERM)
		if kill == nil {
			kill = time.After(delay)
		}
	}
	var lost <-chan struct{}
	if sh.term != nil {
		lost = sh.term.lost
	}
	for {
		select {
		case <-done:
			return
		case <-lost:
			lost = nil
			sh.mu.Lock()
			if sh.killReason == "" {
				sh.killReason = errQsubLost.Error()
			}
			sh.mu.Unlock()
			terminate(delay)
		case <-sigs:
			terminate(deleteDelay(filepath.Join(sh.dir, FileDelete), delay))
		case <-wall:
			// Time suspended does not count: the limit is reached only
			// once the job has run that long.
			now := time.Now()
			ran := now.Sub(start) - time.Duration(ReadSuspension(sh.dir).At(now.Unix()))*time.Second
			if left := time.Duration(float64(sh.job.Walltime)/mult*float64(time.Second)) - ran; left > 0 {
				wall = time.After(left)
				continue
			}
			used := int64(math.Round(ran.Seconds() * mult))
			msg := fmt.Sprintf("PBS: job killed: walltime %d exceeded limit %d", used, sh.job.Walltime)
			sh.mu.Lock()
			sh.killReason = "job killed: walltime " + strconv.FormatInt(used, 10) + " exceeded limit " + strconv.FormatInt(sh.job.Walltime, 10)
			sh.exitCode = proto.JobExecKillWalltime
			sh.mu.Unlock()
			sh.appendToStderr(msg)
			if sh.term != nil {
				sh.term.notice(msg)
			}
			terminate(delay)
		case <-kill:
			sh.killJob()
		case <-leaseTick.C:
			sh.checkOOM()
			sh.mu.Lock()
			done := sh.fenced
			sh.mu.Unlock()
			if done {
				continue
			}
			if lapsed, why := leaseLapsed(lease); lapsed {
				// Recorded before the kill: the shepherd reads it as soon
				// as the job's process is gone.
				sh.mu.Lock()
				sh.fenced, sh.killReason, sh.exitCode = true, why, proto.JobExecRerun
				sh.mu.Unlock()
				// No grace: the server may start the job elsewhere soon.
				sh.killJob()
				sh.appendToStderr("PBS: " + why)
				if sh.term != nil {
					sh.term.notice("PBS: " + why)
				}
			}
		}
	}
}

// appendToStderr adds a line to the job's error file, opened as the
// owner (never as root in a directory the owner controls).
func (sh *shepherd) appendToStderr(msg string) {
	_, path := sh.stdPaths()
	if path == "" {
		return
	}
	fd, err := asuser.Open(sh.usr, path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	syscall.Write(fd, []byte(msg+"\n"))
	syscall.Close(fd)
}

// writeAsOwner writes a note to an already open output descriptor.
func (sh *shepherd) writeAsOwner(fd int, msg string) { syscall.Write(fd, []byte(msg)) }

// openOutput creates the job's output and error files as the owner. The
// files are opened with O_NOFOLLOW: a symlink planted at an output path is
// refused, never followed. -j oe / eo give both streams one file.
func (sh *shepherd) openOutput() (outFD, errFD int, err error) {
	if sh.term != nil {
		// An interactive job writes to its terminal.
		std := sh.term.stdio()
		if outFD, err = dupFD(std[1]); err != nil {
			return -1, -1, err
		}
		if errFD, err = dupFD(std[2]); err != nil {
			syscall.Close(outFD)
			return -1, -1, err
		}
		return outFD, errFD, nil
	}
	out, errp := sh.stdPaths()
	open := func(path string) (int, error) {
		if path == "" {
			return syscall.Open(os.DevNull, syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		}
		fd, err := asuser.Open(sh.usr, path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
		if err != nil {
			return -1, fmt.Errorf("cannot open %s: %w", path, err)
		}
		return fd, nil
	}
	if outFD, err = open(out); err != nil {
		return -1, -1, err
	}
	errFD = outFD
	if errp != out {
		if errFD, err = open(errp); err != nil {
			syscall.Close(outFD)
			return -1, -1, err
		}
	}
	return outFD, errFD, nil
}

// stdPaths are the files of the job's output and error streams on this
// host: its Output_Path and Error_Path or, for a stream Keep_Files keeps
// (qsub -k o, -k e), the file of that name in the owner's home directory;
// with -j oe (eo) both streams share the output (error) file. "" discards
// a stream.
func (sh *shepherd) stdPaths() (out, errp string) {
	job := sh.job
	if job.Interactive != nil {
		return "", "" // its streams went to its terminal
	}
	out, errp = localPath(job.OutputPath), localPath(job.ErrorPath)
	if job.KeepOutput != "" {
		out = filepath.Join(sh.usr.Home, filepath.Base(job.KeepOutput))
	}
	if job.KeepError != "" {
		errp = filepath.Join(sh.usr.Home, filepath.Base(job.KeepError))
	}
	switch job.JoinPath {
	case "oe":
		errp = out
	case "eo":
		out = errp
	}
	return out, errp
}

// command is the job's argv, environment and starting directory: the
// -S shell, else the script's own #! interpreter, else the owner's login
// shell; the owner's home unless -d/-w named another directory.
func (sh *shepherd) command(tmpdir string) (path string, argv, env []string, dir string) {
	job, usr := sh.job, sh.usr
	script := filepath.Join(sh.dir, FileScript)
	shell := pickShell(job.ShellPath)
	switch {
	case shell != "":
		argv = []string{shell, script}
	case scriptHasInterpreter(script):
		argv = []string{script}
	default:
		argv = []string{usr.Shell, script}
	}
	// Torque's job_arguments (qsub -F): the script's $1, $2, ...
	argv = append(argv, job.Args...)
	dir = job.WorkDir
	if dir == "" {
		dir = usr.Home
	}
	return argv[0], argv, jobEnv(job, usr, tmpdir, filepath.Join(sh.dir, FileNodes), sh.gpus), dir
}

// localPath drops the "host:" of an output path. Output is written
// directly where the path says, which assumes the submission directory is
// visible on the execution host (a shared file system, or one host).
func localPath(p string) string {
	if h, rest, ok := strings.Cut(p, ":"); ok && !strings.Contains(h, "/") {
		return rest
	}
	return p
}

// pickShell chooses from Shell_Path_List ("path[@host],...") the entry for
// this host or the one without a host.
func pickShell(list string) string {
	host, _ := os.Hostname()
	short, _, _ := strings.Cut(host, ".")
	fallback := ""
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		p, h, hasHost := strings.Cut(e, "@")
		if !hasHost {
			fallback = p
		} else if h == host || h == short {
			return p
		}
	}
	return fallback
}

func scriptHasInterpreter(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 2 && b[0] == '#' && b[1] == '!'
}

// jobEnv builds the job's environment: its Variable_List, then the PBS
// variables, which win.
func jobEnv(job *proto.MomJob, usr *asuser.Account, tmpdir, nodefile string, gpus []int) []string {
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, v := range proto.DecodeVariableList(job.VariableList) {
		if v.Name != "" {
			set(v.Name, v.Value)
		}
	}
	path := vars["PBS_O_PATH"]
	if _, ok := vars["PATH"]; !ok {
		if path == "" {
			path = "/usr/local/bin:/usr/bin:/bin"
		}
		set("PATH", path)
	}
	host, _ := os.Hostname()
	set("HOME", usr.Home)
	set("USER", usr.Name)
	set("LOGNAME", usr.Name)
	set("SHELL", usr.Shell)
	set("PBS_JOBID", job.JobID)
	set("PBS_JOBNAME", job.Name)
	if job.ArrayID != "" {
		// A subjob: its index under OpenPBS's name and Torque's, and its
		// array's id.
		set("PBS_ARRAY_INDEX", strconv.Itoa(job.ArrayIndex))
		set("PBS_ARRAYID", strconv.Itoa(job.ArrayIndex))
		set("PBS_ARRAY_ID", job.ArrayID)
	}
	set("PBS_QUEUE", job.Queue)
	set("PBS_NODEFILE", nodefile)
	set("PBS_NCPUS", strconv.Itoa(job.Ncpus))
	set("NCPUS", strconv.Itoa(job.Ncpus))
	threads := job.OMPThreads
	if threads <= 0 {
		threads = job.Ncpus
	}
	set("OMP_NUM_THREADS", strconv.Itoa(max(threads, 1)))
	set("PBS_ENVIRONMENT", "PBS_BATCH")
	set("PBS_JOBDIR", usr.Home)
	set("PBS_TASKNUM", "1")
	set("PBS_MOMPORT", "")
	set("TMPDIR", tmpdir)
	set("ENVIRONMENT", "BATCH")
	// Commands the job runs (a workflow engine submitting more jobs) must
	// find this host's pbs.conf even when it is not the default one.
	if conf := os.Getenv("PBS_CONF_FILE"); conf != "" {
		if _, ok := vars["PBS_CONF_FILE"]; !ok {
			set("PBS_CONF_FILE", conf)
		}
	}
	set("HOSTNAME", host)
	if len(gpus) > 0 {
		// The job's GPUs by index, whatever the submitter's environment
		// said: CUDA numbers the visible ones from 0 in this order.
		ids := make([]string, len(gpus))
		for i, g := range gpus {
			ids[i] = strconv.Itoa(g)
		}
		set("CUDA_VISIBLE_DEVICES", strings.Join(ids, ","))
	}
	if wd, ok := vars["PBS_O_WORKDIR"]; ok {
		set("PBS_O_WORKDIR", wd)
	}
	if job.TaskCookie != "" {
		// What pbsdsh and pbs_tmrsh show their mom: they run inside the
		// job (OpenPBS's name).
		set("PBS_JOBCOOKIE", job.TaskCookie)
	}
	if v, ok := job.Resources["walltime"]; ok {
		if secs, err := resc.ParseDuration(v); err == nil {
			set("PBS_WALLTIME", strconv.FormatInt(secs, 10))
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		if k == "PBS_MOMPORT" {
			continue
		}
		out = append(out, k+"="+vars[k])
	}
	return out
}
