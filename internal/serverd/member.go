package serverd

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/ha"
	"github.com/gopbs/gopbs/internal/server"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/web"
	"github.com/gopbs/gopbs/proto"
)

// member holds the replicated group's flags of pbs_server.
type member struct {
	rebuild, join bool
	snapshotEvery uint64
}

// runMember runs this host's member of the replicated group listed in
// PBS_SERVER_PEERS (internal/ha) until a signal or qterm.
func runMember(cfg *config.Config, log hclog.Logger, base server.Config, flags member, sigs <-chan os.Signal) int {
	self := cfg.Member()
	if self == "" {
		log.Error("cannot start: PBS_SERVER_PEERS has no entry for this member", "want", fmt.Sprintf("%s:%d", cfg.HostName, cfg.BatchPort), "peers", cfg.Peers, "hint", "set PBS_SERVER_HOST_NAME to this host's name in the list")
		return 1
	}
	raftDir := filepath.Join(cfg.ServerPriv(), "raft")
	if flags.rebuild {
		if err := setAside(cfg.ServerPriv(), raftDir); err != nil {
			log.Error("cannot rebuild", "error", err)
			return 1
		}
		log.Warn("rebuilding this member: its raft log and store were set aside; the leader sends it the group's state")
	}
	if err := os.MkdirAll(cfg.ServerPriv(), 0o750); err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	st, _, err := store.Open(cfg.ServerPriv(), base.Store)
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	defer st.Close()
	key, err := proto.LoadOrCreateKey(cfg.KeyFile())
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	var node *ha.Node
	base.Shared = st
	node, err = ha.Start(ha.Config{
		Self: self, Peers: cfg.Peers, Dir: raftDir, Store: st, Rebuild: flags.rebuild || flags.join, SnapshotEvery: flags.snapshotEvery,
		ServerName: base.ServerName, SocketPath: base.SocketPath, TCPAddr: base.TCPAddr, Key: key, Logger: log,
		Start: func(fence func() error, unix, tcp net.Listener) (ha.Serving, error) {
			c := base
			c.Fence, c.Group, c.ChangeGroup = fence, node.Status, node.ChangeMember
			c.UnixListener, c.TCPListener = unix, tcp
			srv, err := server.New(c)
			if err != nil {
				return nil, err
			}
			if err := srv.Serve(); err != nil {
				srv.Close()
				return nil, err
			}
			// The leader serves the web page too (PBS_WEB); it moves
			// with the leadership.
			webSrv, err := startWeb(cfg, srv, log)
			if err != nil {
				srv.Close()
				return nil, fmt.Errorf("web listener: %w", err)
			}
			return leading{srv, webSrv}, nil
		},
		Fatal: func(err error) {
			log.Error("this member cannot go on; exiting", "error", err)
			os.Exit(1)
		},
	})
	if err != nil {
		log.Error("cannot start", "error", err)
		return 1
	}
	waitStop(log, sigs, node.ShutdownRequested(), node.Reconfigure)
	if err := node.Close(); err != nil {
		log.Error("close", "error", err)
		return 1
	}
	log.Info("server shutdown completed")
	return 0
}

// leading is what the leader serves: the server and its web listener,
// closed together when it stops leading (the web listener first: its
// readers use the server's state).
type leading struct {
	*server.Server
	web *web.Server
}

func (l leading) Close() error {
	if l.web != nil {
		l.web.Close()
	}
	return l.Server.Close()
}

func (l leading) CloseKeepingListeners() (unix, tcp net.Listener, err error) {
	if l.web != nil {
		l.web.Close()
	}
	return l.Server.CloseKeepingListeners()
}

// setAside renames the member's raft state and store out of the way
// (suffixed with the time), so that it starts empty and is sent the
// group's state by the leader. Nothing is deleted.
func setAside(priv, raftDir string) error {
	suffix := ".set-aside-" + strconv.FormatInt(time.Now().Unix(), 10)
	for _, p := range []string{raftDir, filepath.Join(priv, store.FileName)} {
		if err := os.Rename(p, p+suffix); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("set %s aside: %w", p, err)
		}
	}
	return nil
}
