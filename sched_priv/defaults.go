package schedpriv

import (
	"embed"
	"io/fs"
)

// File names in sched_priv.
const (
	ConfigFile        = "sched_config"
	HolidaysFile      = "holidays"
	ResourceGroupFile = "resource_group"
	DedicatedFile     = "dedicated_time"
)

// defaultFiles holds the shipped sched_priv files. embed.FS is read-only,
// so this package variable is not mutable state.
//
//go:embed defaults/sched_config defaults/holidays defaults/resource_group defaults/dedicated_time
var defaultFiles embed.FS

// DefaultFiles lists the shipped files, in the order privdir.InstallDefaults
// writes them.
func DefaultFiles() []string {
	return []string{ConfigFile, HolidaysFile, ResourceGroupFile, DedicatedFile}
}

// Default returns the shipped contents of one sched_priv file.
func Default(name string) ([]byte, error) {
	return defaultFiles.ReadFile("defaults/" + name)
}

// DefaultFS returns the shipped files as a file system with the four files
// at its top, the shape LoadFS expects.
func DefaultFS() fs.FS {
	sub, err := fs.Sub(defaultFiles, "defaults")
	if err != nil {
		// fs.Sub fails only for an invalid path name, which "defaults" is not.
		panic(err)
	}
	return sub
}
