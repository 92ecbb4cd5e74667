package mom

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"gopbs/internal/asuser"
	"gopbs/internal/atomicfile"
	"gopbs/proto"
)

// Files of a job directory mom_priv/jobs/<id>/. The directory is owned by
// root (or the mom's user) with mode 0711, so the owner can reach its
// script and node file by path but cannot list or change anything.
const (
	fileJob      = "job.json"      // proto.MomJob without the script (0600)
	fileScript   = "script"        // the script, owned by the job's owner (0700)
	fileNodes    = "nodefile"      // PBS_NODEFILE (0644)
	fileShepherd = "shepherd.pid"  // the shepherd's pid, written by the shepherd
	fileSession  = "session"       // sessionInfo, written by the shepherd
	fileResult   = "result"        // jobResult, written by the shepherd at the end
	fileLog      = "shepherd.log"  // the shepherd's own stderr
	fileDelete   = "delete"        // present once a delete was asked for; holds its kill delay (seconds)
	fileLock     = "shepherd.lock" // flock held by the live shepherd
	fileStage    = "stage.json"    // stagecopy.Config, when the job stages files
	filePhase    = "phase"         // "stagein" or "stageout" while the shepherd copies files
)

// shepherdSettings are what of mom_priv/config a job's shepherd needs.
// A job file without them (made by an earlier mom) runs with the
// defaults.
type shepherdSettings struct {
	TmpDir   string  `json:"tmpdir,omitempty"`   // $tmpdir; "" for the system's
	WallMult float64 `json:"wallmult,omitempty"` // $wallmult; 0 counts as 1
	CputMult float64 `json:"cputmult,omitempty"` // $cputmult; 0 counts as 1
	// PelogDir is mom_priv, where the prologue and epilogue are looked
	// for ("" runs none), and PrologAlarm ($prologalarm, seconds; 0 for
	// the default) bounds each run.
	PelogDir    string `json:"pelog_dir,omitempty"`
	PrologAlarm int    `json:"prologalarm,omitempty"`
}

// jobFile is job.json: the start request and the owner's account as the
// mom resolved it (through the system's user database, NSS included), so
// that the shepherd, a static binary without the C library, looks no
// user up. A mom reading it back only needs the request.
type jobFile struct {
	proto.MomJob
	OwnerAccount *asuser.Account `json:"owner_account,omitempty"`
	// Settings are in the job file rather than a file of their own: one
	// file fewer to make per job, and no fsync of its own.
	Settings shepherdSettings `json:"settings"`
}

// sessionInfo is written once the job's process exists.
type sessionInfo struct {
	Pgid  int   `json:"pgid"`
	Start int64 `json:"start"`
}

// jobResult is the shepherd's final word on a job.
type jobResult struct {
	ExitStatus int         `json:"exit_status"`
	Used       proto.Usage `json:"used"`
	Start      int64       `json:"start"`
	End        int64       `json:"end"`
	Comment    string      `json:"comment,omitempty"`
	Fenced     bool        `json:"fenced,omitempty"` // killed when the lease lapsed
	// StageInFailed: a stage-in copy failed and the script never ran.
	StageInFailed bool `json:"stagein_failed,omitempty"`
	// StageOutSpool is where files whose stage-out failed were kept.
	StageOutSpool string `json:"stageout_spool,omitempty"`
	// Notes are the failures of the job's prologue and epilogue, for the
	// mom's log (the shepherd has none that outlives the job).
	Notes []string `json:"notes,omitempty"`
}

// writeJSONAtomic writes v to dir/name with writeFileAtomic.
func writeJSONAtomic(dir, name string, v any, mode os.FileMode) error {
	return writeJSON(dir, name, v, mode, true)
}

// writeJSONVolatile writes v to dir/name with writeFileVolatile.
func writeJSONVolatile(dir, name string, v any, mode os.FileMode) error {
	return writeJSON(dir, name, v, mode, false)
}

func writeJSON(dir, name string, v any, mode os.FileMode, durable bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFile(dir, name, b, mode, durable)
}

// syncFiles flushes the named files of dir and then dir (their names),
// saying on stderr what failed.
func syncFiles(dir string, names ...string) {
	for _, p := range append(names, "") {
		if err := atomicfile.SyncFile(filepath.Join(dir, p)); err != nil {
			fmt.Fprintln(os.Stderr, "sync:", err)
		}
	}
}

// writeFileAtomic writes b to dir/name through a temporary file, fsync and
// rename, so a reader sees the old file or the whole new one, also after
// the host crashed.
func writeFileAtomic(dir, name string, b []byte, mode os.FileMode) error {
	return writeFile(dir, name, b, mode, true)
}

// writeFileVolatile is writeFileAtomic for what means nothing after the
// host restarts (a process id): readers still see the old file or the
// whole new one, but nothing waits for the disk.
func writeFileVolatile(dir, name string, b []byte, mode os.FileMode) error {
	return writeFile(dir, name, b, mode, false)
}

// writeFile writes through <name>.tmp (atomicfile's FixedTemp): a
// recycled job directory keeps its files under those names (jobdirs.go),
// so a job start makes no new inode for them.
func writeFile(dir, name string, b []byte, mode os.FileMode, durable bool) error {
	return atomicfile.WriteWith(filepath.Join(dir, name), b, mode, atomicfile.Options{FixedTemp: true, NoSync: !durable})
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
