package server

import (
	"sync"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// shutdownTimeout bounds each notice qterm sends to the scheduler or a mom
// while the server stops: an unreachable daemon must not hold the server up.
const shutdownTimeout = 5 * time.Second

// shutdownState is what qterm asked for. The request is answered first; the
// server stops when its owner (pbs_server's main) sees ShutdownRequested.
type shutdownState struct {
	mu        sync.Mutex
	requested chan struct{}
	once      sync.Once
	req       *proto.ShutdownRequest
	by        string
}

func (sd *shutdownState) init() { sd.requested = make(chan struct{}) }

// ShutdownRequested is closed once a qterm request has been answered. The
// owner then calls Close, which carries out the rest of the request.
func (s *Server) ShutdownRequested() <-chan struct{} { return s.shutdown.requested }

// shutdownRequest checks a qterm request (operators and managers only, as in
// PBS) and records it; handle signals ShutdownRequested after replying.
func (s *Server) shutdownRequest(who *caller, req *proto.ShutdownRequest) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.Errorf(proto.PBSE_PERM, "(qterm needs operator or manager privilege)")
	}
	switch req.Manner {
	case proto.ShutQuick, proto.ShutDelay:
	case proto.ShutImmediate:
		return proto.Errorf(proto.PBSE_NOSUP, "(qterm -t immediate: stopping running jobs at shutdown is not supported; use qdel, then qterm)")
	default:
		return proto.Errorf(proto.PBSE_IVALREQ, "(unknown shutdown manner %d)", req.Manner)
	}
	sd := &s.shutdown
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.req == nil {
		sd.req, sd.by = req, who.user+"@"+who.host
	} else {
		// A second qterm while stopping widens what is stopped.
		sd.req.Scheduler = sd.req.Scheduler || req.Scheduler
		sd.req.Moms = sd.req.Moms || req.Moms
	}
	return nil
}

// shutdownAnswered is called after a qterm request's reply has been sent.
func (s *Server) shutdownAnswered() {
	sd := &s.shutdown
	sd.mu.Lock()
	by := sd.by
	sd.mu.Unlock()
	sd.once.Do(func() {
		s.log.Info("shutdown requested", "by", by)
		close(sd.requested)
	})
}

// stopDaemons carries out qterm -s and -m: called by Close once cycles and
// connections have ended, before the mom connections are closed.
func (s *Server) stopDaemons() {
	sd := &s.shutdown
	sd.mu.Lock()
	req := sd.req
	sd.mu.Unlock()
	if req == nil {
		return
	}
	var wg sync.WaitGroup
	if req.Scheduler {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.quitScheduler()
		}()
	}
	if req.Moms {
		for _, addr := range s.momAddrs() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.stopMom(addr)
			}()
		}
	}
	wg.Wait()
}

// quitScheduler sends SCH_QUIT on a connection of its own.
func (s *Server) quitScheduler() {
	if s.cfg.SchedAddr == "" {
		return
	}
	c, err := s.dialDaemon(s.cfg.SchedAddr, shutdownTimeout)
	if err != nil {
		s.log.Warn("qterm -s: scheduler not reachable", "addr", s.cfg.SchedAddr, "error", err)
		return
	}
	defer c.Close()
	if err := c.Conn().Send(proto.Header{Type: proto.MsgSchedCommand}, &proto.SchedCommand{Cmd: proto.SchedQuit}); err != nil {
		s.log.Warn("qterm -s: cannot tell the scheduler to quit", "error", err)
		return
	}
	s.log.Info("scheduler told to quit")
}

// stopMom asks one mom to stop; its jobs keep running under their shepherds.
func (s *Server) stopMom(addr string) {
	c, err := s.dialDaemon(addr, shutdownTimeout)
	if err != nil {
		s.log.Warn("qterm -m: mom not reachable", "addr", addr, "error", err)
		return
	}
	defer c.Close()
	if err := c.Call(proto.MsgMomShutdown, struct{}{}, nil); err != nil {
		s.log.Warn("qterm -m: mom did not confirm", "addr", addr, "error", err)
		return
	}
	s.log.Info("mom told to stop", "addr", addr)
}

// momAddrs lists the distinct mom addresses of all nodes.
func (s *Server) momAddrs() []string {
	s.mu.RLock()
	names := make([]string, 0, s.nodes.Len())
	for name := range s.nodes.All() {
		names = append(names, name)
	}
	s.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, name := range names {
		addr, err := s.momAddr(name)
		if err != nil || seen[addr] {
			continue
		}
		seen[addr] = true
		out = append(out, addr)
	}
	return out
}
