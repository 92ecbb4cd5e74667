// Package momd is pbs_mom's process: its flags, start-up and signals around
// the daemon's package; cmd/pbs_mom documents the command.
package momd

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/daemon"
	"github.com/gopbs/gopbs/internal/mom"
	"github.com/gopbs/gopbs/internal/shepherd"
)

// configAction is pbs_mom -s: the version-2 configuration files (vnode
// definitions) of this host, as OpenPBS's pbs_mom manages them. A running
// mom applies a change at its next SIGHUP or start.
func configAction(common *daemon.Flags, action string, args []string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "pbs_mom:", err)
		return 1
	}
	usage := func() int {
		fmt.Fprintln(os.Stderr, "usage: pbs_mom -s insert NAME FILE | -s remove NAME | -s show NAME | -s list")
		return 2
	}
	cfg, err := common.Config()
	if err != nil {
		return fail(err)
	}
	switch {
	case action == "insert" && len(args) == 2:
		data, err := os.ReadFile(args[1])
		if err != nil {
			return fail(err)
		}
		if err := mom.InsertConfig(cfg.Home, args[0], data); err != nil {
			return fail(err)
		}
	case action == "remove" && len(args) == 1:
		if err := mom.RemoveConfig(cfg.Home, args[0]); err != nil {
			return fail(err)
		}
	case action == "show" && len(args) == 1:
		data, err := mom.ShowConfig(cfg.Home, args[0])
		if err != nil {
			return fail(err)
		}
		os.Stdout.Write(data)
	case action == "list" && len(args) == 0:
		names, err := mom.ListConfigs(cfg.Home)
		if err != nil {
			return fail(err)
		}
		for _, n := range names {
			fmt.Println(n)
		}
	default:
		return usage()
	}
	return 0
}

// Main is pbs_mom's whole main (cmd/pbs_mom calls only it): it runs the daemon
// with the process's flags and environment and exits the process.
func Main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case shepherd.Arg:
			if len(os.Args) != 3 {
				fmt.Fprintln(os.Stderr, "usage: pbs_mom --shepherd <jobdir>")
				os.Exit(2)
			}
			os.Exit(shepherd.Run(os.Args[2]))
		case shepherd.TaskArg:
			if len(os.Args) != 3 {
				fmt.Fprintln(os.Stderr, "usage: pbs_mom --task <jobdir>")
				os.Exit(2)
			}
			os.Exit(shepherd.RunTask(os.Args[2]))
		}
	}
	os.Exit(run())
}

func run() int {
	common := daemon.Register(flag.CommandLine)
	action := flag.String("s", "", "manage mom_priv/config.d and exit: insert NAME FILE, remove NAME, show NAME, list")
	flag.Parse()
	if *action != "" {
		return configAction(common, *action, flag.Args())
	}
	d, status := common.Start("pbs_mom", mom.Version, (*config.Config).MomLogs)
	if d == nil {
		return status
	}
	defer d.Close()
	cfg, log := d.Config, d.Log
	if err := d.Lock(filepath.Join(cfg.MomPriv(), "mom.lock"), "pbs_mom"); err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	m, err := mom.New(mom.Config{
		Home:        cfg.Home,
		NodeName:    cfg.MomNodeName,
		ServerAddr:  net.JoinHostPort(cfg.Server, strconv.Itoa(cfg.BatchPort)),
		ServerAddrs: cfg.Peers,
		Port:        cfg.MomPort,
		KeyFile:     cfg.KeyFile(),
		SocketPath:  cfg.MomSocket(),
		Logger:      log,
		MetricsAddr: cfg.MomMetrics,
		Python:      cfg.Python,
		Ready:       d.Ready,
	})
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	// SIGHUP re-reads mom_priv/config (as OpenPBS's and Torque's moms
	// do); it never stops the mom.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			log.Info("SIGHUP: reading mom_priv/config again")
			m.Reload()
		}
	}()
	if err := m.Run(ctx); err != nil {
		log.Error("stopped", "error", err)
		return 1
	}
	log.Info("mom stopped; running jobs continue under their shepherds")
	return 0
}
