// A task of a job (pbsdsh, pbs_tmrsh): the mom starts one task shepherd
// per task (pbs_shepherd --task <jobdir>), as it starts a shepherd per
// job, so that the task is confined and fenced without the mom: it runs
// as the job's owner in the job's cgroup and in the task shepherd's
// session, with the job's environment on this node, and it dies when the
// job ends here (the job directory holds a result or is gone), when the
// mom's lease lapses, or when the mom says so (SIGTERM, then SIGKILL
// after the job's kill_delay). The task's streams are the task
// shepherd's own standard input, output and error; the request comes on
// descriptor 3 and the result goes to descriptor 4 (JSON): one result
// when the task's process exits (its status), and, once nothing it
// started is left, a second with the cpu time of everything it started.
// What the task left running (a daemon it started) runs on under the
// task shepherd, its subreaper, until it ends or the job ends.

package shepherd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/proto"
)

// TaskArg makes pbs_shepherd (or pbs_mom) run one task of a job.
const TaskArg = "--task"

// TaskFilePrefix names the file a mom keeps in the job directory for each
// live task ("task.<pid of its task shepherd>"), so that a mom that
// restarted still ends the tasks at the job's end.
const TaskFilePrefix = "task."

// TaskSpec is what the mom asks a task shepherd to run.
type TaskSpec struct {
	Argv  []string          `json:"argv"`
	Shell bool              `json:"shell,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
}

// TaskResult is how a task ended.
type TaskResult struct {
	Status  int         `json:"status"` // as a shell reports it: code, or 128+signal
	Comment string      `json:"comment,omitempty"`
	Used    proto.Usage `json:"used"`
	Fenced  bool        `json:"fenced,omitempty"`
}

// taskCheck is how often a task shepherd looks at the lease and the job's
// end.
const taskCheck = time.Second

// RunTask runs one task of the job in dir and returns the task
// shepherd's exit code (the task's status; the result on descriptor 4
// says more).
func RunTask(dir string) int {
	specFile, resFile := os.NewFile(3, "spec"), os.NewFile(4, "result")
	enc := json.NewEncoder(io.Discard)
	if resFile != nil {
		enc = json.NewEncoder(resFile)
		defer resFile.Close()
	}
	reported := false
	exited := func(r TaskResult) {
		reported = true
		if r.Comment != "" && r.Status != 0 {
			fmt.Fprintln(os.Stderr, "pbs_shepherd:", r.Comment)
		}
		enc.Encode(r)
	}
	res := runTask(dir, specFile, exited)
	if !reported {
		exited(res) // it never started
	}
	enc.Encode(res)
	return res.Status & 0xff
}

func taskFail(status int, format string, args ...any) TaskResult {
	return TaskResult{Status: status, Comment: fmt.Sprintf(format, args...)}
}

// runTask runs the task; exited is told how the task's process ended,
// and the result returned adds the cpu time of all it started.
func runTask(dir string, specFile *os.File, exited func(TaskResult)) (res TaskResult) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var spec TaskSpec
	if specFile == nil {
		return taskFail(126, "task: no request")
	}
	err := json.NewDecoder(specFile).Decode(&spec)
	specFile.Close()
	if err != nil || len(spec.Argv) == 0 {
		return taskFail(126, "task: bad request: %v", err)
	}
	var jf JobFile
	if err := ReadJSON(filepath.Join(dir, FileJob), &jf); err != nil {
		return taskFail(126, "task: %v", err)
	}
	usr := jf.OwnerAccount
	if usr == nil {
		return taskFail(126, "task: the job file names no owner account")
	}
	job := &jf.MomJob
	if _, err := os.Stat(filepath.Join(dir, FileResult)); err == nil {
		return taskFail(126, "task not started: job %s has ended on %s", job.JobID, jf.Settings.Node)
	}
	if lapsed, why := leaseLapsed(LeasePath(filepath.Dir(dir))); lapsed {
		return TaskResult{Status: 126, Comment: "task not started: " + why, Fenced: true}
	}
	asOther := os.Geteuid() == 0 && usr.UID != 0
	if os.Geteuid() != 0 && usr.UID != uint32(os.Geteuid()) {
		return taskFail(126, "task: pbs_mom runs as uid %d and cannot run tasks of %s", os.Geteuid(), job.EUser)
	}
	env := jobEnv(job, usr, jf.TmpDirPath(), filepath.Join(dir, FileNodes), jf.GPUs)
	env = setEnv(env, spec.Env)
	argv := spec.Argv
	path := argv[0]
	if spec.Shell {
		argv = []string{usr.Shell, "-c", strings.Join(spec.Argv, " ")}
		path = usr.Shell
	} else if path, err = lookPath(argv[0], env); err != nil {
		return taskFail(127, "task: %s: %v", argv[0], err)
	}
	wd := job.WorkDir
	if wd == "" {
		wd = usr.Home
	}
	if hasUmask := job.HasUmask; hasUmask {
		syscall.Umask(int(job.Umask))
	}
	attr := &syscall.ProcAttr{
		Dir:   wd,
		Env:   env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	if asOther {
		attr.Sys.Credential = &syscall.Credential{Uid: usr.UID, Gid: usr.GID, Groups: usr.Groups}
	}
	adopting := setChildSubreaper() == nil
	fork := func() (int, error) {
		if jf.Cgroup != nil {
			return jf.Cgroup.ForkExec(path, argv, attr)
		}
		return syscall.ForkExec(path, argv, attr)
	}
	cpu0 := childrenCPU()
	pid, err := fork()
	var joinErr *cgroup.JoinError
	if err != nil && !errors.As(err, &joinErr) {
		for _, fallback := range []string{usr.Home, "/"} {
			if attr.Dir == fallback {
				continue
			}
			attr.Dir = fallback
			if pid, err = fork(); err == nil {
				break
			}
		}
	}
	if err != nil {
		return taskFail(126, "task: cannot start %s on %s: %v", argv[0], jf.Settings.Node, err)
	}
	// The streams are the task's alone from here: the caller sees their
	// end when the task (and what it left holding them) is done with
	// them, not when the task shepherd is.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			syscall.Dup2(int(null.Fd()), fd)
		}
		null.Close()
	}
	done := make(chan struct{})
	outcome := make(chan TaskResult, 1)
	var whyMu sync.Mutex
	var why TaskResult
	killedWhy := func() (string, bool) {
		whyMu.Lock()
		defer whyMu.Unlock()
		return why.Comment, why.Fenced
	}
	go superviseTask(dir, job, pid, sigs, done, outcome, func(r TaskResult) {
		whyMu.Lock()
		why = r
		whyMu.Unlock()
	})
	ws, ru := waitJob(pid, adopting)
	switch {
	case ws.Exited():
		res.Status = ws.ExitStatus()
	case ws.Signaled():
		res.Status = 128 + int(ws.Signal())
	default:
		res.Status = 126
	}
	cpu := max(time.Duration(ru.Utime.Nano()+ru.Stime.Nano()), childrenCPU()-cpu0)
	res.Used.CPUSecs = int64(cpu / time.Second)
	res.Used.MemBytes = ru.Maxrss * 1024
	first := res
	first.Comment, first.Fenced = killedWhy()
	exited(first)
	// What it left running stays until it ends, or until the job ends
	// here (superviseTask kills it then).
	if adopting {
		for {
			if _, err := syscall.Wait4(-1, nil, 0, nil); err == syscall.ECHILD {
				break
			}
		}
	}
	close(done)
	killed := <-outcome
	res.Comment, res.Fenced = killed.Comment, killed.Fenced
	res.Used.CPUSecs = int64(max(cpu, childrenCPU()-cpu0) / time.Second)
	return res
}

// superviseTask kills the task (its whole process group, and what it
// left in the session) when the mom asks, when the job has ended here or
// when the lease lapsed; it sends the reason on outcome once done is
// closed.
func superviseTask(dir string, job *proto.MomJob, pgid int, sigs chan os.Signal, done chan struct{}, outcome chan<- TaskResult, note func(TaskResult)) {
	var res TaskResult
	defer func() { outcome <- res }()
	tick := time.NewTicker(taskCheck)
	defer tick.Stop()
	lease := LeasePath(filepath.Dir(dir))
	var kill <-chan time.Time
	signalAll := func(sig syscall.Signal) {
		syscall.Kill(-pgid, sig)
		for _, pid := range Descendants(os.Getpid()) {
			syscall.Kill(pid, sig)
		}
	}
	terminate := func(why string) {
		if res.Comment == "" {
			res.Comment = why
			note(res)
		}
		signalAll(syscall.SIGCONT)
		signalAll(syscall.SIGTERM)
		if kill == nil {
			kill = time.After(time.Duration(max(job.KillDelay, 1)) * time.Second)
		}
	}
	for {
		select {
		case <-done:
			return
		case <-sigs:
			terminate("task killed: its job ended")
		case <-kill:
			signalAll(syscall.SIGKILL)
		case <-tick.C:
			if lapsed, why := leaseLapsed(lease); lapsed && !res.Fenced {
				res.Fenced, res.Comment = true, "task "+strings.TrimPrefix(why, "job ")
				note(res)
				signalAll(syscall.SIGKILL)
				continue
			}
			if kill != nil {
				// Killed already; whatever it started since dies too.
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, FileResult)); err == nil || errors.Is(err, os.ErrNotExist) && !exists(filepath.Join(dir, FileJob)) {
				terminate("task killed: its job ended")
			}
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// setEnv sets the variables of add in env (NAME=value entries).
func setEnv(env []string, add map[string]string) []string {
	if len(add) == 0 {
		return env
	}
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := add[name]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range add {
		out = append(out, k+"="+v)
	}
	return out
}

// lookPath finds a program as the task's shell would: a name with a slash
// as it is, else the first executable of that name in the job's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("command not found in the job's PATH")
}

// TaskFile is the path of the record of the task whose task shepherd is
// pid.
func TaskFile(dir string, pid int) string {
	return filepath.Join(dir, TaskFilePrefix+strconv.Itoa(pid))
}

// OpenTmpDir readies a job's TMPDIR for its owner (a sister's, made by its
// mom when it joins the job).
func OpenTmpDir(path string, usr *asuser.Account) error {
	return openTmpDir(path, usr, os.Geteuid() == 0 && usr.UID != 0)
}

// CloseTmpDir empties a job's TMPDIR for the next job, or removes it.
func CloseTmpDir(path string) { closeTmpDir(path) }
