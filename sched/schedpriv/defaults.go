package schedpriv

import (
	"embed"
)

// File names in sched_priv.
const (
	ConfigFile        = "sched_config"
	HolidaysFile      = "holidays"
	ResourceGroupFile = "resource_group"
	DedicatedFile     = "dedicated_time"
)

// defaultFiles holds the shipped sched_priv files but holidays, which is
// made for the year it is installed in (DefaultHolidays). embed.FS is
// read-only, so this package variable is not mutable state.
//
//go:embed defaults/sched_config defaults/resource_group defaults/dedicated_time
var defaultFiles embed.FS

// DefaultFiles lists the shipped files, in the order privdir.InstallDefaults
// writes them.
func DefaultFiles() []string {
	return []string{ConfigFile, HolidaysFile, ResourceGroupFile, DedicatedFile}
}

// Default returns the shipped contents of one sched_priv file; year is the
// year a holidays file is for (the current year, for an installation).
func Default(name string, year int) ([]byte, error) {
	if name == HolidaysFile {
		return DefaultHolidays(year)
	}
	return defaultFiles.ReadFile("defaults/" + name)
}
