// Package daemon is the start-up every daemon shares: the common flags
// (-d PBS_HOME, -log-level, -version), pbs.conf, PBS_HOME creation and the
// daily log file, so pbs_server, pbs_mom and pbs_sched behave alike.
package daemon

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/logging"
)

// Flags are the flags every daemon accepts. Register them on a FlagSet
// (with the daemon's own flags) before parsing.
type Flags struct {
	home       *string
	level      *string
	version    *bool
	cpuprofile *string
}

// Register adds the common flags to fs.
func Register(fs *flag.FlagSet) *Flags {
	return &Flags{
		home:       fs.String("d", "", "PBS_HOME (overrides pbs.conf)"),
		level:      fs.String("log-level", "info", "log level: trace, debug, info, warn, error"),
		version:    fs.Bool("version", false, "print the version and exit"),
		cpuprofile: fs.String("cpuprofile", "", "write a CPU profile to this file until the daemon stops (performance work)"),
	}
}

// Started is a daemon after the common start-up.
type Started struct {
	Config  *config.Config
	Log     hclog.Logger
	closer  io.Closer
	profile *os.File
	unlock  func() // Lock's release, at Close
}

// Close stops the CPU profile, if any, and closes the log file.
func (s *Started) Close() error {
	if s.profile != nil {
		pprof.StopCPUProfile()
		s.profile.Close()
	}
	if s.unlock != nil {
		s.unlock()
	}
	return s.closer.Close()
}

// Config loads pbs.conf with -d applied, touching nothing: for a daemon's
// modes that only read (pbs_sched -t).
func (f *Flags) Config() (*config.Config, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	if *f.home != "" {
		cfg.Home = *f.home
	}
	return cfg, nil
}

// Start handles -version, loads pbs.conf, creates PBS_HOME and opens the
// log in logDir(cfg). When the process should exit instead (a version
// request or an error, already printed), it returns nil and the status.
func (f *Flags) Start(name, version string, logDir func(*config.Config) string) (*Started, int) {
	if *f.version {
		fmt.Println("pbs_version =", version)
		return nil, 0
	}
	cfg, err := f.Config()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return nil, 2
	}
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return nil, 1
	}
	log, closer, err := logging.New(name, logDir(cfg), *f.level, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return nil, 1
	}
	st := &Started{Config: cfg, Log: log, closer: closer}
	if *f.cpuprofile != "" {
		pf, err := os.Create(*f.cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: cpu profile: %v\n", name, err)
			closer.Close()
			return nil, 1
		}
		st.profile = pf
	}
	return st, 0
}
