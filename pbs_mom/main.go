// Command pbs_mom is the node agent of one execution host: it reports the
// host to the server, runs jobs as their owners, and forwards the
// commands typed on its host to the server. It stays in the foreground
// and logs to stderr and PBS_HOME/mom_logs.
//
// The same binary is each job's shepherd (pbs_mom --shepherd <jobdir>),
// an internal form.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"gopbs/internal/config"
	"gopbs/internal/logging"
	"gopbs/internal/mom"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case mom.ArgShepherd:
			if len(os.Args) != 3 {
				fmt.Fprintln(os.Stderr, "usage: pbs_mom --shepherd <jobdir>")
				os.Exit(2)
			}
			os.Exit(mom.RunShepherd(os.Args[2]))
		}
	}
	os.Exit(run())
}

func run() int {
	home := flag.String("d", "", "PBS_HOME (overrides pbs.conf)")
	level := flag.String("log-level", "info", "log level: trace, debug, info, warn, error")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("pbs_version =", mom.Version)
		return 0
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbs_mom:", err)
		return 2
	}
	if *home != "" {
		cfg.Home = *home
	}
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "pbs_mom:", err)
		return 1
	}
	log, closer, err := logging.New("pbs_mom", cfg.MomLogs(), *level, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbs_mom:", err)
		return 1
	}
	defer closer.Close()
	m, err := mom.New(mom.Config{
		Home:       cfg.Home,
		NodeName:   cfg.MomNodeName,
		ServerAddr: net.JoinHostPort(cfg.Server, strconv.Itoa(cfg.BatchPort)),
		Port:       cfg.MomPort,
		KeyFile:    cfg.KeyFile(),
		SocketPath: cfg.MomSocket(),
		Logger:     log,
	})
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		log.Error("stopped", "error", err)
		return 1
	}
	log.Info("mom stopped; running jobs continue under their shepherds")
	return 0
}
