// The job directory: the files pbs_mom and a job's shepherd share, and
// their formats. The mom writes the job file, the script, the node file,
// the staging settings and the delete marker; the shepherd writes its
// pid, the session, the phase and the result. Each side reads the
// other's with the functions here, and nowhere else.

package shepherd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/proto"
)

// Files of a job directory mom_priv/jobs/<id>/. The directory is owned by
// root (or the mom's user) with mode 0711, so the owner can reach its
// script and node file by path but cannot list or change anything.
const (
	FileJob      = "job.json"      // proto.MomJob without the script (0600)
	FileScript   = "script"        // the script, owned by the job's owner (0700)
	FileNodes    = "nodefile"      // PBS_NODEFILE (0644)
	FileShepherd = "shepherd.pid"  // the shepherd's pid, written by the shepherd
	FileSession  = "session"       // Session, written by the shepherd
	FileResult   = "result"        // Result, written by the shepherd at the end
	FileLog      = "shepherd.log"  // the shepherd's own stderr
	FileDelete   = "delete"        // present once a delete was asked for; holds its kill delay (seconds)
	FileLock     = "shepherd.lock" // flock held by the live shepherd
	FileStage    = "stage.json"    // stagecopy.Config, when the job stages files
	FilePhase    = "phase"         // phaseStageIn or phaseStageOut while the shepherd copies files
)

// What the phase file says.
const (
	phaseStageIn  = "stagein"
	phaseStageOut = "stageout"
)

// Settings are what of mom_priv/config a job's shepherd needs.
// A job file without them (made by an earlier mom) runs with the
// defaults.
type Settings struct {
	TmpDir   string  `json:"tmpdir,omitempty"`   // $tmpdir; "" for the system's
	WallMult float64 `json:"wallmult,omitempty"` // $wallmult; 0 counts as 1
	CputMult float64 `json:"cputmult,omitempty"` // $cputmult; 0 counts as 1
	// PelogDir is mom_priv, where the prologue and epilogue are looked
	// for ("" runs none), and PrologAlarm ($prologalarm, seconds; 0 for
	// the default) bounds each run.
	PelogDir    string `json:"pelog_dir,omitempty"`
	PrologAlarm int    `json:"prologalarm,omitempty"`
	// Node is the mom's node name, for what the shepherd tells the owner.
	Node string `json:"node,omitempty"`
}

// JobFile is job.json: the start request and the owner's account as the
// mom resolved it (through the system's user database, NSS included), so
// that the shepherd, a static binary without the C library, looks no
// user up. A mom reading it back only needs the request.
type JobFile struct {
	proto.MomJob
	OwnerAccount *asuser.Account `json:"owner_account,omitempty"`
	// Settings are in the job file rather than a file of their own: one
	// file fewer to make per job, and no fsync of its own.
	Settings Settings `json:"settings"`
	// Cgroup is the job's cgroup, made by the mom (nil: not confined):
	// the shepherd starts the job in it and kills, reads and removes it
	// at the end.
	Cgroup *cgroup.Job `json:"cgroup,omitempty"`
	// GPUs are the indices of the node's GPUs the job has (its
	// CUDA_VISIBLE_DEVICES).
	GPUs []int `json:"gpus,omitempty"`
	// Sister is set on a sister's copy: the job runs on another node's
	// mom, and only its tasks run here.
	Sister bool `json:"sister,omitempty"`
	// TmpDir is the job's TMPDIR on this node, named by the mom
	// (NewTmpDir) before anything of the job starts: the shepherd (or a
	// sister's mom) makes it, the task shepherds give it to the tasks,
	// the mom, a restarted one too, recycles or removes it at the end.
	// Read it with TmpDirPath.
	TmpDir string `json:"job_tmpdir,omitempty"`
}

// Session is written once the job's process exists.
type Session struct {
	Pgid  int   `json:"pgid"`
	Start int64 `json:"start"`
}

// Result is the shepherd's final word on a job.
type Result struct {
	ExitStatus int         `json:"exit_status"`
	Used       proto.Usage `json:"used"`
	Start      int64       `json:"start"`
	End        int64       `json:"end"`
	Comment    string      `json:"comment,omitempty"`
	Fenced     bool        `json:"fenced,omitempty"` // killed when the lease lapsed
	// OOMKilled: the kernel killed a process of the job for the job's
	// memory limit (its cgroup), which ended the job (the mom counts it).
	OOMKilled bool `json:"oom_killed,omitempty"`
	// StageInFailed: a stage-in copy failed and the script never ran.
	StageInFailed bool `json:"stagein_failed,omitempty"`
	// StageOutSpool is where files whose stage-out failed were kept.
	StageOutSpool string `json:"stageout_spool,omitempty"`
	// Notes are the failures of the job's prologue and epilogue, for the
	// mom's log (the shepherd has none that outlives the job).
	Notes []string `json:"notes,omitempty"`
	// CgroupLeft says the job's cgroup could not be removed (something
	// in it would not die): the mom tries again.
	CgroupLeft bool `json:"cgroup_left,omitempty"`
}

// WriteJSON writes v to dir/name with writeFileAtomic.
func WriteJSON(dir, name string, v any, mode os.FileMode) error {
	return writeJSON(dir, name, v, mode, true)
}

// WriteJSONVolatile writes v to dir/name with writeFileVolatile.
func WriteJSONVolatile(dir, name string, v any, mode os.FileMode) error {
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

// ReadJSON reads the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ScaleSecs scales seconds of this host by a factor of mom_priv/config
// ($cputmult, $wallmult; 0 or 1: unscaled), rounding to the nearest: the
// mom's reports and the epilogue's resources_used count alike.
func ScaleSecs(s int64, f float64) int64 {
	if f <= 0 || f == 1 {
		return s
	}
	return int64(float64(s)*f + 0.5)
}

// ReadPhase is what a job's shepherd is doing, from its phase file.
func ReadPhase(dir string) proto.JobPhase {
	b, err := os.ReadFile(filepath.Join(dir, FilePhase))
	if err != nil {
		return proto.PhaseRunning
	}
	switch strings.TrimSpace(string(b)) {
	case phaseStageIn:
		return proto.PhaseStageIn
	case phaseStageOut:
		return proto.PhaseStageOut
	}
	return proto.PhaseRunning
}

// MarkDeleted asks the shepherd of the job in dir to delete it: the
// marker it looks for (FileDelete), holding the delete's kill delay in
// seconds (qdel -W, else the job's kill_delay; negative: none, the job
// file's KillDelay holds).
func MarkDeleted(dir string, killDelay int64) error {
	var delay []byte
	if killDelay >= 0 {
		delay = []byte(strconv.FormatInt(killDelay, 10) + "\n")
	}
	return os.WriteFile(filepath.Join(dir, FileDelete), delay, 0o600)
}

// deleteDelay is the kill delay of a delete: the seconds the server put
// in the delete marker (the job's kill_delay, or qdel -W's), else def.
func deleteDelay(marker string, def time.Duration) time.Duration {
	b, err := os.ReadFile(marker)
	if err != nil {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return def
	}
	return time.Duration(n) * time.Second
}
