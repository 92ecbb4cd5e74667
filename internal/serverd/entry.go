// Package serverd is pbs_server's process: its flags, start-up and signals around
// the daemon's package; cmd/pbs_server documents the command.
package serverd

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/daemon"
	"github.com/gopbs/gopbs/internal/hostaddr"
	"github.com/gopbs/gopbs/internal/server"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/web"
)

// Main is pbs_server's whole main (cmd/pbs_server calls only it): it runs the daemon
// with the process's flags and environment and exits the process.
func Main() {
	os.Exit(run())
}

func run() int {
	common := daemon.Register(flag.CommandLine)
	syncDelay := flag.Duration("store-sync-delay", 0, "benchmarks only: time added to every store commit to model a slower disk")
	rebuild := flag.Bool("ha-rebuild", false, "replicated group only: set this member's raft log and store aside and rebuild them from the other members")
	snapEvery := flag.Uint64("ha-snapshot-every", 0, "tests only: entries between the raft snapshots of a replicated group's member (0: raft's default)")
	join := flag.Bool("ha-join", false, "replicated group only: start a new member that waits to be added (qmgr: set server server_members += host:port) instead of founding the group")
	flag.Parse()
	d, status := common.Start("pbs_server", server.Version, (*config.Config).ServerLogs)
	if d == nil {
		return status
	}
	defer d.Close()
	cfg, log := d.Config, d.Log
	if err := d.Lock(filepath.Join(cfg.ServerPriv(), "server.lock"), "pbs_server"); err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	if err := checkWeb(cfg); err != nil {
		// Before anything listens, and in a replicated group before this
		// member leads (its web listener starts only then).
		log.Error("cannot start", "error", err)
		return 1
	}
	base := server.Config{
		Home:          cfg.Home,
		ServerName:    cfg.ServerName(),
		Host:          config.ShortHostname(),
		SocketPath:    cfg.ServerSocket(),
		TCPAddr:       ":" + strconv.Itoa(cfg.BatchPort),
		MomPort:       cfg.MomPort,
		SchedAddr:     net.JoinHostPort(cfg.SchedHost, strconv.Itoa(cfg.SchedPort)),
		SchedPriv:     cfg.SchedPriv(),
		SchedLogs:     cfg.SchedLogs(),
		KeyFile:       cfg.KeyFile(),
		StorePath:     cfg.ServerPriv(),
		AccountingDir: cfg.Accounting(),
		Sendmail:      cfg.Sendmail,
		Python:        cfg.Python,
		MetricsAddr:   cfg.ServerMetrics,
		Store:         store.Options{SyncDelay: *syncDelay},
		Logger:        log,
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if len(cfg.Peers) > 0 {
		return runMember(cfg, log, base, member{rebuild: *rebuild, join: *join, snapshotEvery: *snapEvery}, sigs)
	}
	srv, err := server.New(base)
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	if err := srv.Serve(); err != nil {
		log.Error("cannot listen", "error", err)
		srv.Close()
		return 1
	}
	webSrv, err := startWeb(cfg, srv, log)
	if err != nil {
		log.Error("cannot start the web listener", "error", err)
		srv.Close()
		return 1
	}
	waitStop(log, sigs, srv.ShutdownRequested(), srv.Reconfigure)
	if webSrv != nil {
		webSrv.Close() // first: its readers use the server's state
	}
	if err := srv.Close(); err != nil {
		log.Error("close", "error", err)
		return 1
	}
	log.Info("server shutdown completed")
	return 0
}

// startWeb starts the web status page and API on PBS_WEB for srv (nil
// when PBS_WEB is not set).
func startWeb(cfg *config.Config, srv *server.Server, log hclog.Logger) (*web.Server, error) {
	if cfg.Web == "" {
		return nil, nil
	}
	return web.Start(web.Config{
		Addr:        cfg.Web,
		ServerLabel: cfg.Server,
		Source:      srv.WebSource(),
		Feed:        srv.WebFeed(),
		ProxyHeader: cfg.WebProxyHeader,
		ProxyAddrs:  cfg.WebProxyAddrs,
		ProxySocket: cfg.WebProxySocket,
		ProxyUID:    cfg.WebProxyUID,
		// This host's name in a replicated group answers too (a proxy
		// in front of the members sends it).
		Hosts:     append([]string{cfg.HostName}, cfg.WebHosts...),
		TokenFile: cfg.WebTokens(),
		SchedPriv: cfg.SchedPriv(),
		Logger:    log.Named("web"),
	})
}

// checkWeb refuses a web configuration that would trust what any local
// user can send: proxy addresses of this host (web.CheckProxyAddrs).
func checkWeb(cfg *config.Config) error {
	if cfg.Web == "" || len(cfg.WebProxyAddrs) == 0 {
		return nil
	}
	own, err := hostaddr.Read()
	if err != nil {
		return fmt.Errorf("checking %s: %w", config.KeyWebProxyAddr, err)
	}
	return web.CheckProxyAddrs(cfg.WebProxyAddrs, own)
}

// waitStop returns on SIGTERM or SIGINT, or once shutdown is closed
// (qterm); SIGHUP asks the scheduler to re-read its configuration.
func waitStop(log hclog.Logger, sigs <-chan os.Signal, shutdown <-chan struct{}, reconfigure func()) {
	// Serving now: a systemd unit of Type=notify starts what is ordered
	// after it (pbs_sched) from here.
	if err := daemon.Notify("READY=1"); err != nil {
		log.Warn("cannot tell systemd the server is ready", "error", err)
	}
	defer daemon.Notify("STOPPING=1")
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				log.Info("SIGHUP: asking the scheduler to reconfigure")
				reconfigure()
				continue
			}
			log.Info("shutting down", "signal", sig.String())
			return
		case <-shutdown:
			log.Info("shutting down at qterm's request")
			return
		}
	}
}
