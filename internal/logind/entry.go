// Package logind is pbs_login's process: its flags, start-up and signals
// around the agent's package (internal/login); cmd/pbs_login documents the
// command.
package logind

import (
	"context"
	"flag"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/daemon"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/internal/login"
	"github.com/gopbs/gopbs/proto"
)

// Main is pbs_login's whole main (cmd/pbs_login calls only it).
func Main() { os.Exit(run()) }

func run() int {
	common := daemon.Register(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		return 2
	}
	d, status := common.Start("pbs_login", display.PBSProVersion, (*config.Config).LoginLogs)
	if d == nil {
		return status
	}
	defer d.Close()
	cfg, log := d.Config, d.Log
	if err := d.Lock(filepath.Join(cfg.Home, "auth", "login.lock"), "pbs_login"); err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	key, err := proto.LoadKey(cfg.LoginKeyFile())
	if err != nil {
		log.Error("cannot start: this host has no login key (make one on a server host with pbs_setup login-key, install it with pbs_setup login)", "error", err)
		return 1
	}
	a, err := login.New(login.Config{
		Name:        cfg.LoginHostName,
		ServerAddr:  net.JoinHostPort(cfg.Server, strconv.Itoa(cfg.BatchPort)),
		ServerAddrs: cfg.Peers,
		Key:         key,
		SocketPath:  cfg.LoginSocket(),
		Logger:      log,
		Ready:       d.Ready,
	})
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if err := a.Run(ctx); err != nil {
		log.Error("stopped", "error", err)
		return 1
	}
	daemon.Notify("STOPPING=1")
	log.Info("pbs_login stopped")
	return 0
}
