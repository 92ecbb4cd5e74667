// Freezing a job's cgroup: suspend stops every process of the job at
// once, those that left its session too, without a signal the job could
// see or catch (SIGSTOP stops only its process group); resume thaws it.
// v1 freezes with the freezer hierarchy (freezer.state), v2 with the
// cgroup.freeze file every cgroup has (Linux 5.2).

package cgroup

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Freezer is v1's freezer controller. No configuration names it: a tree
// uses it wherever the host mounts it, so that suspend freezes the jobs.
const Freezer = "freezer"

// v1's freezer.state values.
const (
	v1Frozen   = "FROZEN"
	v1Freezing = "FREEZING"
	v1Thawed   = "THAWED"
)

// ErrNoFreezer says the job's cgroup cannot be frozen here: v1 without
// the freezer hierarchy, a v2 kernel before 5.2, or a cgroup made by a
// mom that did not use the freezer.
var ErrNoFreezer = errors.New("the job's cgroup has no freezer")

// freezeFile is the control file that freezes the job's cgroup, "" when
// there is none.
func (j *Job) freezeFile() string {
	for _, d := range j.Dirs {
		var f string
		switch {
		case j.V2:
			f = filepath.Join(d.Path, "cgroup.freeze")
		case d.has(Freezer):
			f = filepath.Join(d.Path, "freezer.state")
		default:
			continue
		}
		if exists(f) {
			return f
		}
		return ""
	}
	return ""
}

// CanFreeze reports whether the job's cgroup can be frozen.
func (j *Job) CanFreeze() bool { return j.freezeFile() != "" }

// Frozen reports whether the job's cgroup is frozen, or being frozen.
func (j *Job) Frozen() bool {
	f := j.freezeFile()
	if f == "" {
		return false
	}
	s, _ := readTrim(f)
	if j.V2 {
		return s == "1"
	}
	return s == v1Frozen || s == v1Freezing
}

// Freeze stops every process in the job's cgroup and waits up to wait
// until the kernel says all are frozen. When they are not by then (a
// process stuck in the kernel), the cgroup is thawed again and the
// error says so: a job half frozen is not suspended.
func (j *Job) Freeze(wait time.Duration) error {
	err := j.setFrozen(true, wait)
	if err != nil && !errors.Is(err, ErrNoFreezer) {
		if terr := j.setFrozen(false, wait); terr != nil {
			err = fmt.Errorf("%w; thawing it back: %w", err, terr)
		}
	}
	return err
}

// Thaw lets the processes of the job's cgroup run again, waiting up to
// wait until the kernel says they do.
func (j *Job) Thaw(wait time.Duration) error { return j.setFrozen(false, wait) }

// setFrozen asks for the state and polls until the kernel reports it:
// v1's freezer.state reads FREEZING until every task is frozen, v2's
// cgroup.events says "frozen 1".
func (j *Job) setFrozen(frozen bool, wait time.Duration) error {
	f := j.freezeFile()
	if f == "" {
		return ErrNoFreezer
	}
	value, name := v1Thawed, "thawed"
	if frozen {
		value, name = v1Frozen, "frozen"
	}
	if j.V2 {
		value = "0"
		if frozen {
			value = "1"
		}
	}
	if err := writeFile(f, value); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		var got string
		if j.V2 {
			got = fmt.Sprint(keyedValue(filepath.Join(filepath.Dir(f), "cgroup.events"), "frozen"))
		} else {
			got, _ = readTrim(f)
		}
		if got == value {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup of %s: not %s after %v (%s)", j.ID, name, wait, got)
		}
		if !j.V2 && frozen && got == v1Freezing {
			// Asking again retries the tasks not frozen yet.
			writeFile(f, v1Frozen)
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// thawForKill lets the v1 processes just sent SIGKILL die: a frozen v1
// task does not act on it until thawed (v2's freezer lets fatal signals
// through, and cgroup.kill works on a frozen cgroup). Thawed after the
// SIGKILL, no process of the job runs its own code again.
func (j *Job) thawForKill() {
	if j.V2 {
		return
	}
	if f := j.freezeFile(); f != "" {
		writeFile(f, v1Thawed)
	}
}

// Freezes reports whether the tree's jobs can be frozen (suspend
// freezes them rather than stop them with SIGSTOP).
func (t *Tree) Freezes() bool { return (&Job{V2: t.v2, Dirs: t.roots}).CanFreeze() }
