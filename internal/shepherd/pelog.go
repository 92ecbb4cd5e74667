package shepherd

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// The prologue and the epilogue: site programs mom_priv/prologue and
// mom_priv/epilogue that a job's shepherd runs before its script and
// after it, as OpenPBS's mom does (its run_pelog):
//
//   - They run with the mom's identity (root on a real cluster), never
//     through a shell, in a session of their own, with /dev/null as
//     standard input and the mom's environment plus PBS_JOBDIR. A
//     program that is not a regular file owned by the mom's user, readable
//     and executable by it and not writable by its group or others is
//     refused without running.
//   - The prologue runs in mom_priv once the job's output files exist and
//     writes into them; its arguments are the job id, the user and the
//     group. Exit 0 starts the job, exit 1 aborts it (Exit_status -2) and
//     anything else requeues it: another exit status, a refused program,
//     a signal, or running longer than $prologalarm (30 s by default).
//   - The epilogue runs in the owner's home directory after the job (and
//     after a job the prologue stopped), appending to the job's output
//     and error files, with ten arguments: job id, user, group, job name,
//     session id, Resource_List, resources_used, queue, account ("null"
//     when none) and the job's exit status. Its outcome is logged and
//     changes nothing (OpenPBS gives exit 2 a meaning only for jobs
//     checkpointed by the mom's periodic checkpoint, which this mom does
//     not take: it checkpoints only to preempt). The job's
//     end is recorded, and so reported, only after it.
//   - Torque's qsub -T name makes them prologue.<name> and
//     epilogue.<name>, each falling back to the plain one when it does
//     not exist, as Torque's mom does.
//   - Torque's prologue.user and epilogue.user run as the job's owner:
//     the user prologue after the prologue, with Torque's seven
//     arguments (job id, user, group, job name, Resource_List, queue,
//     account) and the prologue's outcomes; the user epilogue before the
//     epilogue, with the epilogue's arguments. They must be the mom
//     user's as the others and also readable and executable by others
//     (-r-x---r-x); they run in the owner's home directory (mom_priv is
//     closed to them) with an environment of HOME, USER, LOGNAME, PATH and
//     PBS_JOBDIR only, as Torque gives them none of the mom's.
//
// Failures of either are written to the job's result (Notes) for the
// mom's log. Both run inside the shepherd, so they survive a restart of
// the mom as the job does.

// The programs' file names in mom_priv.
const (
	filePrologue     = "prologue"
	fileEpilogue     = "epilogue"
	filePrologueUser = "prologue.user" // Torque's, run as the job's owner
	fileEpilogueUser = "epilogue.user"
)

// torqueOnlyPelogs are Torque's other programs in mom_priv, which this
// mom does not run (a mom finding one says so at start): those of sister
// nodes, and the one run on qdel.
var torqueOnlyPelogs = []string{
	"prologue.parallel", "epilogue.parallel",
	"prologue.user.parallel", "epilogue.user.parallel", "epilogue.precancel",
}

// UnrunPelogs lists the programs of torqueOnlyPelogs present in dir.
func UnrunPelogs(dir string) []string {
	var found []string
	for _, name := range torqueOnlyPelogs {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			found = append(found, name)
		}
	}
	return found
}

// defaultPrologAlarm bounds a prologue or epilogue without $prologalarm.
const defaultPrologAlarm = 30 * time.Second

// pelogUnkillable bounds the wait for a program killed at its time limit
// that does not die (stuck in the kernel): the job goes on without it.
const pelogUnkillable = 5 * time.Second

// Codes of a prologue or epilogue run besides its exit status (0 also
// when there is no program), OpenPBS's numbers.
const (
	pelogRefused = -1 // the file's owner or mode
	pelogNoInput = -2 // /dev/null could not be opened for its input
	pelogFailed  = -3 // killed by a signal, or could not be started or waited for
	pelogTimeout = -4 // killed at the time limit
)

// pelogRun is the outcome of one prologue or epilogue.
type pelogRun struct {
	Path string
	Ran  bool // a program was found (it may still have been refused)
	Code int  // its exit status, or one of the pelog codes
	Why  string
}

// failed reports whether the run needs a note: a program that did not
// exit 0.
func (r pelogRun) failed() bool { return r.Ran && r.Code != 0 }

// String describes a run for the log, the job's comment and its error
// file.
func (r pelogRun) String() string {
	if r.Why != "" {
		return r.Path + ": " + r.Why
	}
	return r.Path + " exited " + strconv.Itoa(r.Code)
}

// prologueAction is what a prologue's outcome does to its job.
type prologueAction int

const (
	prologueRun     prologueAction = iota // exit 0, or no prologue
	prologueAbort                         // exit 1
	prologueRequeue                       // anything else
)

// actionOf is OpenPBS's table of prologue outcomes.
func actionOf(code int) prologueAction {
	switch code {
	case 0:
		return prologueRun
	case 1:
		return prologueAbort
	}
	return prologueRequeue
}

// pelogPath is the program to run: <dir>/<base>.<jobType> when the job
// has a type and that file exists, else <dir>/<base>.
func pelogPath(dir, base, jobType string) string {
	plain := filepath.Join(dir, base)
	if jobType == "" {
		return plain
	}
	typed := plain + "." + jobType
	if _, err := os.Stat(typed); errors.Is(err, fs.ErrNotExist) {
		return plain
	}
	return typed
}

// checkPelog looks at a prologue or epilogue before it is run: found is
// false when there is none (nothing to run). A found program that must
// not run comes with its code and why. A program run as the job's owner
// (forUser) must also be readable and executable by others.
func checkPelog(path string, owner uint32, forUser bool) (found bool, code int, why string) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, 0, ""
	case err != nil:
		var errno syscall.Errno
		code = pelogFailed
		if errors.As(err, &errno) {
			code = int(errno)
		}
		return true, code, fmt.Sprintf("cannot stat: %v", errors.Unwrap(err))
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	mode := fi.Mode()
	switch {
	case !mode.IsRegular():
		return true, pelogRefused, "refused: not a regular file"
	case st != nil && st.Uid != owner:
		return true, pelogRefused, fmt.Sprintf("refused: owned by uid %d, not by uid %d (the mom's)", st.Uid, owner)
	case mode.Perm()&0o500 != 0o500:
		return true, pelogRefused, fmt.Sprintf("refused: mode %04o is not readable and executable by its owner", mode.Perm())
	case mode.Perm()&0o022 != 0:
		return true, pelogRefused, fmt.Sprintf("refused: mode %04o is writable by its group or others", mode.Perm())
	case forUser && mode.Perm()&0o005 != 0o005:
		return true, pelogRefused, fmt.Sprintf("refused: mode %04o is not readable and executable by others (it runs as the job's owner)", mode.Perm())
	}
	return true, 0, ""
}

// pelogCmd is one prologue or epilogue to run.
type pelogCmd struct {
	Path  string
	Args  []string // after the program's name
	Env   []string
	Dir   string
	Files [3]int // standard input, output and error
	Limit time.Duration
	// LimitName names the setting Limit comes from, for the message of a
	// run killed at it ("" for $prologalarm).
	LimitName string
	Umask     int // the process's umask while it starts
	// KeepUmask leaves the process's umask alone (Umask is ignored): a
	// caller with other goroutines creating files (the mom) must not
	// change it under them.
	KeepUmask bool
	// As is the account it runs as (a Torque user prologue or epilogue);
	// nil for the mom's own.
	As *asuser.Account
}

// runPelog runs c.Path as checked by checkPelog and waits for it, at
// most c.Limit; on return no process of its session is left.
func runPelog(c pelogCmd) pelogRun {
	r := pelogRun{Path: c.Path}
	found, code, why := checkPelog(c.Path, uint32(os.Geteuid()), c.As != nil)
	if !found {
		return r
	}
	r.Ran = true
	if code != 0 {
		r.Code, r.Why = code, why
		return r
	}
	if c.Files[0] < 0 {
		r.Code, r.Why = pelogNoInput, "no input file (/dev/null)"
		return r
	}
	attr := &syscall.ProcAttr{
		Dir:   c.Dir,
		Env:   c.Env,
		Files: []uintptr{uintptr(c.Files[0]), uintptr(c.Files[1]), uintptr(c.Files[2])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	if c.As != nil && os.Geteuid() == 0 && c.As.UID != 0 {
		attr.Sys.Credential = &syscall.Credential{Uid: c.As.UID, Gid: c.As.GID, Groups: c.As.Groups}
	}
	// The shepherd runs with the job's umask (-W umask); the site's
	// program gets the mom's.
	var pid int
	var err error
	if c.KeepUmask {
		pid, err = syscall.ForkExec(c.Path, append([]string{c.Path}, c.Args...), attr)
	} else {
		old := syscall.Umask(c.Umask)
		pid, err = syscall.ForkExec(c.Path, append([]string{c.Path}, c.Args...), attr)
		syscall.Umask(old)
	}
	if err != nil {
		r.Code, r.Why = pelogFailed, fmt.Sprintf("cannot execute: %v", err)
		return r
	}
	type waited struct {
		ws  syscall.WaitStatus
		err error
	}
	done := make(chan waited, 1)
	go func() {
		var ws syscall.WaitStatus
		var err error
		for {
			if _, err = syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		done <- waited{ws, err}
	}()
	limit := c.Limit
	if limit <= 0 {
		limit = defaultPrologAlarm
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var w waited
	select {
	case w = <-done:
	case <-timer.C:
		syscall.Kill(-pid, syscall.SIGKILL)
		r.Code, r.Why = pelogTimeout, fmt.Sprintf("killed after running %v (%s)", limit, cmp.Or(c.LimitName, "$prologalarm"))
		select {
		case <-done:
		case <-time.After(pelogUnkillable):
			r.Why += "; it did not die"
		}
		return r
	}
	// What it left behind in its session goes with it.
	syscall.Kill(-pid, syscall.SIGKILL)
	switch {
	case w.err != nil:
		r.Code, r.Why = pelogFailed, fmt.Sprintf("cannot wait for it: %v", w.err)
	case w.ws.Exited():
		r.Code = w.ws.ExitStatus()
	case w.ws.Signaled():
		r.Code, r.Why = pelogFailed, "killed by signal "+strconv.Itoa(int(w.ws.Signal()))
	default:
		r.Code, r.Why = pelogFailed, "ended without an exit status"
	}
	return r
}

// pelogEnv is the programs' environment: the mom's, with PBS_JOBDIR
// the owner's home (OpenPBS's, without sandbox=PRIVATE).
func pelogEnv(home string) []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PBS_JOBDIR=") {
			env = append(env, kv)
		}
	}
	return append(env, "PBS_JOBDIR="+home)
}

// userPelogEnv is a user prologue's or epilogue's environment: Torque
// gives them none of the mom's, only what a program needs to find its
// owner's files.
func userPelogEnv(usr *asuser.Account) []string {
	return []string{"HOME=" + usr.Home, "USER=" + usr.Name, "LOGNAME=" + usr.Name,
		"PATH=/usr/local/bin:/usr/bin:/bin", "PBS_JOBDIR=" + usr.Home}
}

// groupName is the job's execution group: its egroup, else the name of
// the owner's group here (its number when it has none).
func groupName(job *proto.MomJob, usr *asuser.Account) string {
	if job.EGroup != "" {
		return job.EGroup
	}
	id := strconv.FormatUint(uint64(usr.GID), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

// prologueArgs are the prologue's arguments after its name.
func prologueArgs(job *proto.MomJob, usr *asuser.Account) []string {
	return []string{job.JobID, usr.Name, groupName(job, usr)}
}

// userPrologueArgs are a user prologue's arguments after its name,
// Torque's seven.
func userPrologueArgs(job *proto.MomJob, usr *asuser.Account) []string {
	return []string{job.JobID, usr.Name, groupName(job, usr), job.Name, resourceListArg(job.Resources), job.Queue, accountArg(job)}
}

// accountArg is the job's account as the programs get it, "null" when it
// has none.
func accountArg(job *proto.MomJob) string {
	if job.Account == "" {
		return "null"
	}
	return job.Account
}

// epilogueArgs are the epilogue's arguments after its name, for a job
// with session sid that ended as res says.
func epilogueArgs(job *proto.MomJob, usr *asuser.Account, sid int, res *Result, set Settings) []string {
	return []string{job.JobID, usr.Name, groupName(job, usr), job.Name, strconv.Itoa(sid),
		resourceListArg(job.Resources), usedArg(res.Used, job.Resources, set), job.Queue, accountArg(job), strconv.Itoa(res.ExitStatus)}
}

// resourceListArg renders a Resource_List as name=value,... in name
// order.
func resourceListArg(res map[string]string) string {
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + res[n]
	}
	return strings.Join(parts, ",")
}

// usedArg renders the usage the shepherd measured as resources_used,
// scaled by $cputmult and $wallmult as the mom reports it: cput, mem,
// ncpus (when requested) and walltime.
func usedArg(u proto.Usage, res map[string]string, set Settings) string {
	parts := []string{
		"cput=" + resc.FormatDuration(ScaleSecs(u.CPUSecs, set.CputMult)),
		"mem=" + resc.FormatKB(u.MemBytes),
	}
	if n, ok := res[proto.ResNcpus]; ok {
		parts = append(parts, "ncpus="+n)
	}
	parts = append(parts, "walltime="+resc.FormatDuration(ScaleSecs(u.WallSecs, set.WallMult)))
	return strings.Join(parts, ",")
}

// SiteProgram is a site's program that the mom runs itself, outside any
// job: the node health check ($node_check_script), as the mom's user, and
// the checkpoint action ($action checkpoint_abort), as the job's owner
// (As). It is held to the prologue's rules (checkPelog: a regular file of
// the mom's user, not writable by its group or others, and when run as
// the owner readable and executable by others), run the same way (argv,
// never a shell, in a session of its own with /dev/null as input) and
// killed with its session at Limit.
type SiteProgram struct {
	Path   string
	Args   []string        // after the program's name
	As     *asuser.Account // nil: the mom's user
	Env    []string        // nil: the mom's environment
	Dir    string
	Stdout *os.File
	Stderr *os.File
	Limit  time.Duration
	// LimitName names the bound in the message of a run killed at it.
	LimitName string
}

// ProgramRun is how a site program's run went.
type ProgramRun struct {
	Found bool // the program exists (it may still have been refused)
	// Code is its exit status, or negative when it was refused, could not
	// be started, was killed by a signal or at its time limit (Why says).
	Code int
	Why  string
}

// RunSiteProgram runs p and waits for it, at most p.Limit; on return no
// process of its session is left. It may be called from a process with
// other goroutines: the umask is left alone.
func RunSiteProgram(p SiteProgram) ProgramRun {
	null, err := os.Open(os.DevNull)
	in := -1
	if err == nil {
		defer null.Close()
		in = int(null.Fd())
	}
	env := p.Env
	if env == nil {
		env = os.Environ()
	}
	r := runPelog(pelogCmd{Path: p.Path, Args: p.Args, Env: env, Dir: p.Dir, Files: [3]int{in, int(p.Stdout.Fd()), int(p.Stderr.Fd())},
		Limit: p.Limit, LimitName: p.LimitName, KeepUmask: true, As: p.As})
	return ProgramRun{Found: r.Ran, Code: r.Code, Why: r.Why}
}
