package shepherd

import (
	"path/filepath"
)

// Time a job spends suspended is not walltime (OpenPBS stops a suspended
// job's walltime): the mom notes each suspend and resume of the job in
// its directory (FileSuspended), and the shepherd, when the walltime
// limit seems reached, takes the suspended time off before it kills the
// job; the walltime reported, while the job runs and at its end, leaves
// it out too.

// FileSuspended holds the job's Suspension, written by the mom.
const FileSuspended = "suspended"

// Suspension is how long a job has been suspended: Secs over its past
// suspensions, and since Since (Unix seconds; 0 when it runs) in the
// current one.
type Suspension struct {
	Secs  int64 `json:"secs"`
	Since int64 `json:"since,omitempty"`
}

// At is the time suspended up to now.
func (s Suspension) At(now int64) int64 {
	if s.Since > 0 && now > s.Since {
		return s.Secs + now - s.Since
	}
	return s.Secs
}

// ReadSuspension reads the job's suspension in dir (none when the job was
// never suspended, or the file cannot be read).
func ReadSuspension(dir string) Suspension {
	var s Suspension
	if ReadJSON(filepath.Join(dir, FileSuspended), &s) != nil {
		return Suspension{}
	}
	return s
}

// NoteSuspension records in dir that the job was suspended (suspended)
// or resumed at now, and returns the suspension as it now stands.
func NoteSuspension(dir string, suspended bool, now int64) (Suspension, error) {
	s := ReadSuspension(dir)
	switch {
	case suspended && s.Since == 0:
		s.Since = now
	case !suspended && s.Since > 0:
		s.Secs, s.Since = s.At(now), 0
	}
	return s, WriteJSON(dir, FileSuspended, s, 0o644)
}
