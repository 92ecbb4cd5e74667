// Command pbs_server is the batch server: it owns jobs, queues and nodes,
// answers the commands on a Unix socket in PBS_HOME and the daemons on
// PBS_BATCH_SERVICE_PORT, and keeps its state in server_priv. It stays in
// the foreground and logs to stderr and PBS_HOME/server_logs.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"gopbs/internal/config"
	"gopbs/internal/logging"
	"gopbs/internal/server"
	"gopbs/internal/store"
)

func main() {
	os.Exit(run())
}

func run() int {
	home := flag.String("d", "", "PBS_HOME (overrides pbs.conf)")
	level := flag.String("log-level", "info", "log level: trace, debug, info, warn, error")
	version := flag.Bool("version", false, "print the version and exit")
	syncDelay := flag.Duration("store-sync-delay", 0, "benchmarks only: time added to every store commit to model a slower disk")
	flag.Parse()
	if *version {
		fmt.Println("pbs_version =", server.Version)
		return 0
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbs_server:", err)
		return 2
	}
	if *home != "" {
		cfg.Home = *home
	}
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "pbs_server:", err)
		return 1
	}
	log, closer, err := logging.New("pbs_server", cfg.ServerLogs(), *level, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pbs_server:", err)
		return 1
	}
	defer closer.Close()
	srv, err := server.New(server.Config{
		Home:          cfg.Home,
		ServerName:    cfg.ServerName(),
		Host:          config.ShortHostname(),
		SocketPath:    cfg.ServerSocket(),
		TCPAddr:       ":" + strconv.Itoa(cfg.BatchPort),
		MomPort:       cfg.MomPort,
		KeyFile:       cfg.KeyFile(),
		StorePath:     cfg.ServerPriv(),
		AccountingDir: cfg.Accounting(),
		Store:         store.Options{SyncDelay: *syncDelay},
		Logger:        log,
	})
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	if err := srv.Serve(); err != nil {
		log.Error("cannot listen", "error", err)
		srv.Close()
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	sig := <-sigs
	log.Info("shutting down", "signal", sig.String())
	if err := srv.Close(); err != nil {
		log.Error("close", "error", err)
		return 1
	}
	log.Info("server shutdown completed")
	return 0
}
