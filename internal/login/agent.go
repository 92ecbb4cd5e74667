package login

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/relay"
	"github.com/gopbs/gopbs/proto"
)

// localBudget bounds the commands' connections: in all, below the
// server's budget for one peer (connlimit.DefaultBudget's 1024), since
// each is one server connection from this host; per uid, a share.
var localBudget = connlimit.Budget{Max: 512, PerPeer: 32, Pending: 128, PerPeerPending: 16}

// handshake bounds a command's Hello.
const handshake = 3 * time.Second

// dialTimeout bounds reaching the server for one command.
const dialTimeout = 30 * time.Second

// Config is what the agent needs.
type Config struct {
	// Name is this host's name, the one its key was made for.
	Name string
	// ServerAddr is the server's batch address (host:port); ServerAddrs,
	// when set, a replicated group's members.
	ServerAddr  string
	ServerAddrs []string
	// Key is this host's login key (proto.LoginKey).
	Key []byte
	// SocketPath is where commands connect (PBS_HOME/pbs_login.sock).
	SocketPath string
	Logger     hclog.Logger
	// Ready, when set, is called once the socket takes connections.
	Ready func()
}

// Agent is a running login agent.
type Agent struct {
	cfg   Config
	log   hclog.Logger
	limit *connlimit.Limiter
	relay *relay.Relay

	mu         sync.Mutex
	serverName string // learnt from the first server connection
}

// New checks cfg and makes the agent.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Name == "":
		return nil, errors.New("no host name for the login key")
	case len(cfg.Key) != proto.KeySize:
		return nil, fmt.Errorf("login key: %d bytes, want %d", len(cfg.Key), proto.KeySize)
	case cfg.ServerAddr == "" && len(cfg.ServerAddrs) == 0:
		return nil, errors.New("no server address")
	case cfg.SocketPath == "":
		return nil, errors.New("no socket path")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	a := &Agent{cfg: cfg, log: cfg.Logger}
	a.limit = connlimit.New("local", localBudget, a.log.Named("conn"))
	a.relay = &relay.Relay{
		Dial:        a.dial,
		ServerName:  a.knownServer,
		Host:        cfg.Name,
		Handshake:   handshake,
		Unreachable: "pbs_login cannot reach the server at " + a.target(),
		Log:         a.log,
	}
	return a, nil
}

// target names the server for messages.
func (a *Agent) target() string {
	if len(a.cfg.ServerAddrs) > 0 {
		return fmt.Sprint(a.cfg.ServerAddrs)
	}
	return a.cfg.ServerAddr
}

func (a *Agent) knownServer() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.serverName
}

// dial opens one command's server connection as this login host.
func (a *Agent) dial() (relay.Upstream, error) {
	up, err := relay.DialServer(proto.DialOptions{Network: "tcp", Address: a.cfg.ServerAddr, Role: proto.RoleLogin, Name: a.cfg.Name, Key: a.cfg.Key, Timeout: dialTimeout}, a.cfg.ServerAddrs)
	if err != nil {
		if pe := (*proto.Error)(nil); errors.As(err, &pe) && pe.Code == proto.PBSE_BADCRED {
			err = proto.Errorf(proto.PBSE_BADCRED, "the server does not take this host's login key: was it made for %q (pbs_setup login-key %s) from this cluster's key? (%s)", a.cfg.Name, a.cfg.Name, pe.Text)
		}
		a.log.Warn("the server cannot be reached", "server", a.target(), "error", err)
		return up, err
	}
	a.mu.Lock()
	a.serverName = up.ServerName
	a.mu.Unlock()
	return up, nil
}

// Run serves the socket until ctx ends; it returns once every
// connection has ended.
func (a *Agent) Run(ctx context.Context) error {
	l, err := listen.Unix(a.cfg.SocketPath)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.cfg.SocketPath, err)
	}
	stop := make(chan struct{})
	var conns sync.WaitGroup
	loop := &listen.Loop{
		Listener: l, Limit: a.limit, Handshake: handshake, Stop: stop, CloseOnStop: true,
		Conns: &conns, Log: a.log, Serve: a.relay.Serve,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop.Run()
	}()
	a.log.Info("pbs_login ready", "socket", a.cfg.SocketPath, "name", a.cfg.Name, "server", a.target(), "pid", os.Getpid())
	if a.cfg.Ready != nil {
		a.cfg.Ready()
	}
	<-ctx.Done()
	close(stop)
	l.Close()
	<-done
	conns.Wait()
	os.Remove(a.cfg.SocketPath)
	return nil
}
