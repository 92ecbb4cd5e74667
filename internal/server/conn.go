package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"strconv"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// handshakeTimeout bounds the Hello exchange and, on the TCP port, the
// first authenticated request: honest peers send both at once, and a
// pending connection holds a slot of its class's budget until then.
const handshakeTimeout = 3 * time.Second

// statusChunk is how many objects one status frame carries.
const statusChunk = 1000

// caller is who sent a request, as the server determined it.
type caller struct {
	user   string
	uid    uint32
	gid    uint32
	group  string
	groups []string
	home   string
	host   string
	role   proto.Role // the connection's role: client, mom or sched
	name   string     // daemon name for mom and sched connections
	// started counts the jobs this connection started (a scheduling
	// cycle that started exactly one asks for another: RECYC).
	started int
	// anonymous is a web request without an identity (web.go): no user,
	// no privilege whatever the managers list says.
	anonymous bool
}

// Serve starts the listeners and returns; connections are handled in the
// background until Close.
func (s *Server) Serve() error {
	if l := s.cfg.UnixListener; l != nil {
		s.listeners = append(s.listeners, l)
		s.wg.Add(1)
		go s.acceptLoop(l, true)
	} else if s.cfg.SocketPath != "" {
		l, err := listen.Unix(s.cfg.SocketPath)
		if err != nil {
			return err
		}
		s.listeners = append(s.listeners, l)
		s.wg.Add(1)
		go s.acceptLoop(l, true)
	}
	if l := s.cfg.TCPListener; l != nil {
		s.listeners = append(s.listeners, l)
		s.wg.Add(1)
		go s.acceptLoop(l, false)
	} else if s.cfg.TCPAddr != "" {
		l, err := net.Listen("tcp", s.cfg.TCPAddr)
		if err != nil {
			for _, l := range s.listeners {
				l.Close()
			}
			return fmt.Errorf("listen on %s: %w", s.cfg.TCPAddr, err)
		}
		s.listeners = append(s.listeners, l)
		s.wg.Add(1)
		go s.acceptLoop(l, false)
	}
	if s.cfg.MetricsAddr != "" {
		ml, err := s.metrics.Listen(s.cfg.MetricsAddr, s.log.Named("metrics"))
		if err != nil {
			for _, l := range s.listeners {
				l.Close()
			}
			return err
		}
		s.metricsListener = ml
	}
	s.wg.Add(3)
	go s.timerLoop()
	go s.schedLoop()
	go s.hookLoop()
	s.log.Info("server ready", "name", s.cfg.ServerName, "socket", s.cfg.SocketPath, "tcp", s.cfg.TCPAddr, "pid", os.Getpid())
	return nil
}

// TCPAddr returns the bound TCP address (for tests that listen on :0).
func (s *Server) TCPAddr() string {
	for _, l := range s.listeners {
		if _, ok := l.Addr().(*net.TCPAddr); ok {
			return l.Addr().String()
		}
	}
	return ""
}

func (s *Server) acceptLoop(l net.Listener, local bool) {
	defer s.wg.Done()
	limit := s.remoteLimit
	if local {
		limit = s.localLimit
	}
	loop := &listen.Loop{Listener: l, Limit: limit, Handshake: handshakeTimeout, Stop: s.stop, CloseOnStop: true, StopGrace: stopGrace, Conns: &s.wg, Log: s.log,
		Serve: func(nc net.Conn, peer listen.Peer, slot *connlimit.Slot) {
			s.serveConn(nc, peerCreds{local: peer.Local, uid: peer.UID, gid: peer.GID}, slot)
		}}
	loop.Run()
}

// peerCreds is what the kernel says of a Unix-socket peer; local is false
// for a TCP peer.
type peerCreds struct {
	local    bool
	uid, gid uint32
}

func (s *Server) serveConn(nc net.Conn, peer peerCreds, slot *connlimit.Slot) {
	local := peer.local
	defer nc.Close()
	// The accept loop closes the connection when the server stops (so a
	// blocked read ends) and has set the handshake's deadline.
	c := proto.NewConn(nc, 0)
	hello, err := proto.ServerHandshake(c, s.cfg.ServerName, func(hi proto.Hello) ([]byte, error) {
		if local {
			if hi.Role != proto.RoleClient {
				return nil, fmt.Errorf("daemons must connect over TCP with the cluster key")
			}
			return nil, nil
		}
		return proto.BatchPortKey(s.key, hi)
	})
	if err != nil {
		s.log.Debug("handshake failed", "remote", remoteName(nc), "error", err)
		return
	}
	nc.SetDeadline(time.Time{})
	c.SetWriteTimeout(proto.WriteTimeout)
	var who caller
	if local {
		// The kernel vouches for a local caller: proven already.
		slot.Established()
		who = s.users.identify(peer.uid, peer.gid)
		who.host = s.cfg.Host
	} else {
		who = caller{role: hello.Role, name: hello.Name, user: "root", host: hostOf(nc)}
	}
	who.role = hello.Role
	// A daemon proves itself with its first tagged frame, which must
	// follow the Hello at once.
	idle := handshakeTimeout
	for {
		if local || slot.IsEstablished() {
			idle = s.cfg.IdleTimeout
		}
		nc.SetReadDeadline(time.Now().Add(idle))
		h, body, err := c.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) && !isClosed(err) {
				s.log.Debug("connection dropped", "remote", remoteName(nc), "error", err)
			}
			return
		}
		slot.Established()
		nc.SetReadDeadline(time.Time{})
		if err := s.stopped(); err != nil {
			// Read after the server began to stop (within stopGrace):
			// refused whole, with the reason, never half done.
			if c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: err.Code, Text: err.Error()}, nil) != nil {
				return
			}
			continue
		}
		if err := s.handle(c, &who, h, body); err != nil {
			if errors.Is(err, errStreamEnded) {
				return
			}
			var slow *proto.SlowReaderError
			if errors.As(err, &slow) {
				s.log.Warn("connection cut off", "remote", remoteName(nc), "user", who.user, "role", who.role.String(), "reason", err)
				return
			}
			s.log.Debug("reply failed", "remote", remoteName(nc), "error", err)
			return
		}
	}
}

// stopGrace is how long a stopping server still reads its connections:
// a request already sent when it stops (a deposed leader, qterm) is
// answered with the reason rather than met with a dropped connection.
const stopGrace = 200 * time.Millisecond

// stopped is why the server takes no more requests, nil while it does: a
// deposed leader's "No quorum", or the server's shutdown.
func (s *Server) stopped() *proto.Error {
	select {
	case <-s.stop:
	default:
		return nil
	}
	if s.cfg.Fence != nil {
		var pe *proto.Error
		if err := s.cfg.Fence(); errors.As(err, &pe) {
			return pe
		}
	}
	return proto.NewError(proto.PBSE_SVRDOWN)
}

func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded)
}

func remoteName(nc net.Conn) string {
	a := nc.RemoteAddr()
	if _, unix := a.(*net.UnixAddr); unix || a == nil || a.String() == "" {
		return "local" // a Unix socket's peer is unnamed ("@"): its user says who
	}
	return a.String()
}

func hostOf(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// dialDaemon opens an authenticated connection, as the server, to a mom or
// the scheduler at addr; timeout bounds the dial and each request.
func (s *Server) dialDaemon(addr string, timeout time.Duration) (*proto.Client, error) {
	return proto.Dial(proto.DialOptions{Network: "tcp", Address: addr, Role: proto.RoleServer, Name: s.cfg.ServerName, Key: s.key, Timeout: timeout})
}

// handle dispatches one request and writes its reply.
func (s *Server) handle(c *proto.Conn, conn *caller, h proto.Header, body msgpack.RawMessage) error {
	start := time.Now()
	defer func() { s.metrics.Request(h.Type, time.Since(start)) }()
	who := conn
	if conn.role == proto.RoleLogin && h.As == nil {
		// A login agent speaks for its host's users, never as itself.
		return c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: proto.PBSE_PERM, Text: "a login agent (pbs_login) only relays its users' commands"}, nil)
	}
	if h.As != nil {
		// A mom relays its host's commands, a login agent its host's
		// (pbs_login); so does a member of a replicated group that does
		// not lead (internal/ha).
		if conn.role != proto.RoleMom && conn.role != proto.RoleServer && conn.role != proto.RoleLogin {
			return c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: proto.PBSE_PERM, Text: "only a mom or a login agent may vouch for another user"}, nil)
		}
		v := s.users.identifyName(h.As.User, h.As.UID, h.As.GID)
		v.host = h.As.Host
		if conn.role == proto.RoleLogin {
			// Its key is its host's alone (proto.LoginKey): the host it
			// proved is the host its users are at, whatever it says.
			v.host = conn.name
		}
		v.role = proto.RoleClient
		who = &v
	}
	var reply any
	err := s.serverACL(who)
	if err == nil && h.Type == proto.MsgSubscribe {
		// The connection carries the stream from here.
		return s.subscribeEvents(c, who, h.Seq, body)
	}
	if err == nil {
		reply, err = s.dispatch(who, h.Type, body, answerTo{c, h.Seq})
	}
	st, streamed := reply.(*statusAnswer)
	if ferr := fault.Hit(fault.ServerBeforeReply); ferr != nil {
		if streamed {
			st.frames.Abort()
		}
		return ferr // the connection drops: the reply is lost
	}
	if err != nil {
		if streamed {
			st.frames.Abort()
		}
		var pe *proto.Error
		if !errors.As(err, &pe) {
			s.log.Error("request failed", "type", h.Type, "error", err)
			pe = &proto.Error{Code: proto.PBSE_SYSTEM, Text: proto.PBSE_SYSTEM.Message() + err.Error()}
		}
		return c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
	}
	if streamed {
		return st.frames.Send(c, h.Seq, &st.tail)
	}
	if st, ok := reply.(*proto.StatusReply); ok {
		return sendStatus(c, h.Seq, st)
	}
	err = c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq}, reply)
	if h.Type == proto.MsgShutdown {
		// Stop only once the reply is on its way.
		s.shutdownAnswered()
	}
	return err
}

// statusAnswer is a status answer whose objects are encoded as they are
// rendered, and sent frame by frame meanwhile; tail holds the rest
// (errors, version, epoch, live list), sent with the last frame.
type statusAnswer struct {
	frames *proto.StatusFrames
	tail   proto.StatusReply
}

// answerTo is where a request's answer goes.
type answerTo struct {
	c   *proto.Conn
	seq uint64
}

// newStatusAnswer starts an answer streamed to to: nothing else may write
// to its connection until the answer is sent or aborted (handle does).
// held is the lock the renderer holds: it is let go while the renderer
// waits for a slow peer (proto.MaxUnsent), so the renderer must expect
// the state it goes through to change whenever the answer's Pauses does.
func newStatusAnswer(to answerTo, held sync.Locker) *statusAnswer {
	a := &statusAnswer{frames: proto.NewStatusFrames(statusChunk)}
	if to.c != nil { // else collected in process (web.go)
		a.frames.Stream(to.c, to.seq, held)
	}
	return a
}

// collected is a status answer made in process (answerTo{}: the web
// page, hooks' lookups) as one reply, or the error that made it.
func collected(a *statusAnswer, err error) (*proto.StatusReply, error) {
	if err != nil {
		return nil, err
	}
	return a.frames.Collect(&a.tail)
}

// sendStatus splits a status answer into frames of statusChunk objects.
func sendStatus(c *proto.Conn, seq uint64, st *proto.StatusReply) error {
	objs := st.Objects
	for {
		n := min(len(objs), statusChunk)
		part := &proto.StatusReply{Objects: objs[:n]}
		more := n < len(objs)
		if !more {
			part.Errors, part.Version, part.Epoch, part.Live = st.Errors, st.Version, st.Epoch, st.Live
		}
		if err := c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, More: more}, part); err != nil {
			return err
		}
		objs = objs[n:]
		if !more {
			return nil
		}
	}
}

// serverACL enforces the server's acl_hosts and acl_users on every request
// of a command, as OpenPBS does: requests from the server's own host pass
// the host list, and managers and operators pass the user list.
func (s *Server) serverACL(who *caller) error {
	if who.role != proto.RoleClient {
		return nil
	}
	s.mu.RLock()
	hostsOn := s.server.Bool(proto.AttrAclHostEnableSvr)
	hosts, _ := s.server.Get(proto.AttrAclHosts)
	usersOn := s.server.Bool(proto.AttrAclUserEnable)
	users, _ := s.server.Get(proto.AttrAclUsers)
	s.mu.RUnlock()
	if hostsOn && who.host != s.cfg.Host && !model.MatchesHostList(hosts, who.host) {
		return proto.Errorf(proto.PBSE_BADHOST, "%s (not in the server's acl_hosts)", who.host)
	}
	if usersOn && !model.MatchesUserList(users, who.user, who.host) {
		if mgr, op := s.privileges(who); !mgr && !op {
			return proto.Errorf(proto.PBSE_PERM, "user %s is not in the server's acl_users", who.user)
		}
	}
	return nil
}

// privileges tells whether who is a manager and/or an operator. Root on
// the server host and authenticated daemons are managers; otherwise the
// server's managers and operators lists decide ("user@host", with '*'
// wildcards in either part).
func (s *Server) privileges(who *caller) (manager, operator bool) {
	if who.anonymous {
		return false, false
	}
	if who.role == proto.RoleSched || who.role == proto.RoleMom {
		return true, true
	}
	if who.uid == 0 && who.host == s.cfg.Host && who.user == "root" {
		return true, true
	}
	s.mu.RLock()
	managers, _ := s.server.Get(proto.AttrManagers)
	operators, _ := s.server.Get(proto.AttrOperators)
	s.mu.RUnlock()
	manager = model.MatchesUserList(managers, who.user, who.host)
	operator = manager || model.MatchesUserList(operators, who.user, who.host)
	return manager, operator
}

// userCache resolves uids to names, groups and homes, caching for a
// minute so a flood of requests does not re-read /etc/passwd each time.
type userCache struct {
	mu      sync.Mutex
	entries map[uint32]cachedUser
}

type cachedUser struct {
	c       caller
	expires time.Time
}

func (u *userCache) init() { u.entries = map[uint32]cachedUser{} }

func (u *userCache) identify(uid, gid uint32) caller {
	u.mu.Lock()
	e, ok := u.entries[uid]
	u.mu.Unlock()
	if ok && time.Now().Before(e.expires) && e.c.gid == gid {
		return e.c
	}
	c := caller{uid: uid, gid: gid, user: strconv.FormatUint(uint64(uid), 10)}
	if usr, err := user.LookupId(c.user); err == nil {
		c.user = usr.Username
		c.home = usr.HomeDir
		if ids, err := usr.GroupIds(); err == nil {
			for _, id := range ids {
				if g, err := user.LookupGroupId(id); err == nil {
					c.groups = append(c.groups, g.Name)
				}
			}
		}
	}
	c.group = strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(c.group); err == nil {
		c.group = g.Name
	}
	u.mu.Lock()
	u.entries[uid] = cachedUser{c: c, expires: time.Now().Add(time.Minute)}
	u.mu.Unlock()
	return c
}

// identifyName resolves a user a mom vouched for. User names are what
// hosts of a cluster agree on, so the name is looked up here; uids may
// differ between hosts. An unknown name keeps the mom's numbers.
func (u *userCache) identifyName(name string, uid, gid uint32) caller {
	if name != "" {
		if usr, err := user.Lookup(name); err == nil {
			if n, err := strconv.ParseUint(usr.Uid, 10, 32); err == nil {
				luid := uint32(n)
				lgid := gid
				if g, err := strconv.ParseUint(usr.Gid, 10, 32); err == nil {
					lgid = uint32(g)
				}
				return u.identify(luid, lgid)
			}
		}
	}
	c := u.identify(uid, gid)
	if name != "" {
		c.user = name
	}
	return c
}
