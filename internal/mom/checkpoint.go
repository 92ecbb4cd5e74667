// Checkpoint for preemption: OpenPBS's $action checkpoint_abort. A site
// that can checkpoint jobs (DMTCP, CRIU, an application that saves its
// state on a signal) names its program in mom_priv/config:
//
//	$action checkpoint_abort <timeout> <absolute path> [arguments]
//
// (OpenPBS's "!" before the path is allowed). When the scheduler preempts
// a job by checkpoint, the server asks the job's first mom, which runs
// the program as the job's owner, held to the prologue's rules (a file of
// the mom's user, not writable by its group or others, readable and
// executable by others; argv, never a shell; in the owner's home with
// /dev/null as input and a minimal environment: HOME, USER, LOGNAME, a
// standard PATH, PBS_JOBID and PBS_SID; killed with its session after
// timeout seconds, 1 to 300). Arguments may hold %jobid and %sid, replaced
// by the job's id and session id. Exit 0 means the job is saved: the mom
// then ends the job as a delete does (TERM, KILL after its kill delay,
// on every node), and its end puts it back in its queue; its next run is
// the job's own business (the script restarts from what was saved). Any
// other outcome is a failed checkpoint: the job runs on, and the server
// tries the next preemption method. A mom without the action refuses
// every checkpoint (PBSE_NOSUP), and the server goes on the same way.
// Other $action lines (checkpoint, restart, terminate, multinodebusy)
// are read with a warning and not run.

package mom

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/proto"
)

// CheckpointAction is $action checkpoint_abort: the program, its
// arguments (%jobid and %sid replaced at each run) and its time limit.
type CheckpointAction struct {
	Path    string
	Args    []string
	Timeout time.Duration
}

// maxCheckpointTimeout bounds $action checkpoint_abort's timeout: the
// server waits that long (and a margin) for the answer, during the
// scheduler's cycle.
const maxCheckpointTimeout = 300 * time.Second

// parseAction reads the value of a $action line: "checkpoint_abort
// <timeout> [!]<absolute path> [arguments]". ok is false for the other
// actions of OpenPBS's moms, which are not run.
func parseAction(value string) (a CheckpointAction, ok bool, err error) {
	f := strings.Fields(value)
	switch {
	case len(f) == 0:
		return a, false, fmt.Errorf("$action needs an action")
	case f[0] != "checkpoint_abort":
		switch f[0] {
		case "checkpoint", "restart", "terminate", "multinodebusy":
			return a, false, nil
		}
		return a, false, fmt.Errorf("$action %q is not an action (checkpoint_abort)", f[0])
	case len(f) < 3:
		return a, false, fmt.Errorf("$action checkpoint_abort needs a timeout and a program: $action checkpoint_abort <seconds> <absolute path> [arguments]")
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n <= 0 || time.Duration(n)*time.Second > maxCheckpointTimeout {
		return a, false, fmt.Errorf("$action checkpoint_abort timeout %q is not a number of seconds from 1 to %d", f[1], int(maxCheckpointTimeout/time.Second))
	}
	path := strings.TrimPrefix(f[2], "!")
	if !filepath.IsAbs(path) {
		return a, false, fmt.Errorf("$action checkpoint_abort program %q is not an absolute path", path)
	}
	return CheckpointAction{Path: filepath.Clean(path), Args: f[3:], Timeout: time.Duration(n) * time.Second}, true, nil
}

// checkpointJob is the server's checkpoint of a job here to preempt it:
// the action saves it, then the job ends as a delete ends it.
func (m *Mom) checkpointJob(req *proto.MomSignal) error {
	act := m.mc().Checkpoint
	if act.Path == "" {
		return proto.Errorf(proto.PBSE_NOSUP, "no checkpoint action on %s ($action checkpoint_abort in mom_priv/config)", m.cfg.NodeName)
	}
	m.mu.Lock()
	j := m.jobs[req.JobID]
	m.mu.Unlock()
	if j == nil || j.sister {
		return proto.Errorf(proto.PBSE_UNKJOBID, "%s is not running on %s", req.JobID, m.cfg.NodeName)
	}
	v := m.view(j)
	if v.result != nil {
		return proto.Errorf(proto.PBSE_BADSTATE, "%s has ended", req.JobID)
	}
	if err := m.learnSession(j, &v); err != nil {
		return err
	}
	usr, err := m.jobOwner(&j.spec)
	if err != nil {
		return err
	}
	sid := strconv.Itoa(v.session.Pgid)
	args := make([]string, len(act.Args))
	for i, a := range act.Args {
		args[i] = strings.NewReplacer("%jobid", req.JobID, "%sid", sid).Replace(a)
	}
	out, err := os.CreateTemp(filepath.Join(m.cfg.Home, "mom_priv"), ".checkpoint-*")
	if err != nil {
		return fmt.Errorf("checkpoint %s: its output file: %w", req.JobID, err)
	}
	os.Remove(out.Name())
	defer out.Close()
	env := []string{"HOME=" + usr.Home, "USER=" + usr.Name, "LOGNAME=" + usr.Name, "PATH=/usr/local/bin:/usr/bin:/bin",
		"PBS_JOBID=" + req.JobID, "PBS_SID=" + sid}
	run := shepherd.RunSiteProgram(shepherd.SiteProgram{Path: act.Path, Args: args, As: usr, Env: env, Dir: usr.Home,
		Stdout: out, Stderr: out, Limit: act.Timeout, LimitName: "$action checkpoint_abort's timeout"})
	switch {
	case !run.Found:
		return proto.Errorf(proto.PBSE_NOSUP, "checkpoint action %s not found on %s", act.Path, m.cfg.NodeName)
	case run.Code != 0:
		why := run.Why
		if why == "" {
			why = "exit status " + strconv.Itoa(run.Code)
		}
		m.log.Warn("checkpoint failed", "job", req.JobID, "program", act.Path, "outcome", why, "output", firstLine(out))
		return proto.Errorf(proto.PBSE_SYSTEM, "checkpoint of %s on %s failed: %s", req.JobID, m.cfg.NodeName, why)
	}
	m.log.Info("job checkpointed; ending it", "job", req.JobID, "program", act.Path)
	return m.signalJob(&proto.MomSignal{JobID: req.JobID, Signal: signals.Delete, KillDelay: req.KillDelay})
}

// firstLine is the start of what a program wrote to f, for the log.
func firstLine(f *os.File) string {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return strings.ToValidUTF8(string(line), "?")
}
