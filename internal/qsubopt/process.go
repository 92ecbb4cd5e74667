package qsubopt

import (
	"os"
	"time"

	"github.com/gopbs/gopbs/internal/config"
)

// ProcessContext is the Context of the running command (qsub, qalter): its
// environment, directory, host, clock, files and standard input. A failing
// Getwd leaves Cwd empty, which ParseSubmit reports.
func ProcessContext() Context {
	cwd, _ := os.Getwd()
	return Context{
		Environ:  os.Environ(),
		Cwd:      cwd,
		Host:     config.ShortHostname(),
		Now:      time.Now(),
		ReadFile: os.ReadFile,
		Stdin:    os.Stdin,
	}
}
