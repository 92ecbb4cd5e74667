package server

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Scheduling defaults.
const (
	defaultSchedIteration = 600              // seconds between TIME events
	defaultCycleLimit     = 20 * time.Minute // a cycle longer than this is dropped
	schedRetryMin         = 500 * time.Millisecond
	schedRetryMax         = 10 * time.Second
)

// schedState coordinates cycles: at most one scheduler connection is open,
// and events that arrive meanwhile are coalesced (one pending entry per
// kind, in arrival order) and delivered when it ends, never dropped.
type schedState struct {
	mu       sync.Mutex
	pending  []proto.SchedCmd
	first    bool // the next cycle is the first since the server started
	busy     bool
	cycleNo  int64
	wake     chan struct{}
	nextTime time.Time
	retry    time.Duration
	// down is whether the last attempt to reach the scheduler failed
	// (the sched object's state shows it).
	down bool
}

func (ss *schedState) init(now time.Time) {
	ss.first = true
	ss.wake = make(chan struct{}, 1)
	ss.retry = schedRetryMin
	ss.nextTime = now
}

// schedEvent records that something happened that may let a job run.
func (s *Server) schedEvent(cmd proto.SchedCmd) {
	ss := &s.sched
	ss.mu.Lock()
	found := false
	for _, p := range ss.pending {
		if p == cmd {
			found = true
		}
	}
	if !found {
		ss.pending = append(ss.pending, cmd)
	}
	ss.mu.Unlock()
	select {
	case ss.wake <- struct{}{}:
	default:
	}
}

// scheduling reports whether the server's scheduling attribute is True.
func (s *Server) scheduling() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.server.Bool(proto.AttrScheduling)
}

// schedulerBusy reports whether a cycle is open (server_state Scheduling).
func (s *Server) schedulerBusy() bool {
	s.sched.mu.Lock()
	defer s.sched.mu.Unlock()
	return s.sched.busy
}

// schedLoop starts cycles: FIRST after start-up, TIME every
// scheduler_iteration seconds, and one for every pending event, one
// connection at a time, only while scheduling is True.
func (s *Server) schedLoop() {
	defer s.wg.Done()
	ss := &s.sched
	for {
		now := s.now()
		s.mu.RLock()
		iteration := time.Duration(s.serverLong(proto.AttrSchedulerIteration, defaultSchedIteration)) * time.Second
		s.mu.RUnlock()
		ss.mu.Lock()
		if limit := now.Add(iteration); ss.nextTime.After(limit) {
			// scheduler_iteration was shortened.
			ss.nextTime = limit
		}
		if !now.Before(ss.nextTime) {
			ss.nextTime = now.Add(iteration)
			if !ss.first {
				ss.mu.Unlock()
				s.schedEvent(proto.SchedTime)
				ss.mu.Lock()
			}
		}
		wait := ss.nextTime.Sub(now)
		ready := !ss.busy && (ss.first || len(ss.pending) > 0)
		var kept []string
		if ready {
			for _, p := range ss.pending {
				kept = append(kept, p.String())
			}
		}
		ss.mu.Unlock()
		if ready && !s.scheduling() {
			// At debug level, where an admin looks for why nothing starts;
			// it also proves to tests that the server had the events and
			// started no cycle.
			s.log.Debug("scheduling is False: events kept for later", "events", strings.Join(kept, ","))
		} else if ready {
			if err := s.startCycle(); err != nil {
				ss.mu.Lock()
				wait = min(wait, ss.retry)
				ss.retry = min(2*ss.retry, schedRetryMax)
				ss.mu.Unlock()
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-ss.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// startCycle connects to the scheduler and hands it the next event; the
// cycle then runs on its own goroutine.
func (s *Server) startCycle() error {
	if s.cfg.SchedAddr == "" {
		return errors.New("no scheduler address")
	}
	c, err := s.dialDaemon(s.cfg.SchedAddr, 5*time.Second)
	ss := &s.sched
	ss.mu.Lock()
	ss.down = err != nil
	ss.mu.Unlock()
	if err != nil {
		s.log.Debug("scheduler not reachable", "addr", s.cfg.SchedAddr, "error", err)
		return err
	}
	ss.mu.Lock()
	cmd := proto.SchedFirst
	if ss.first {
		ss.first = false
		// FIRST stands for whatever was pending.
		ss.pending = ss.pending[:0]
	} else {
		cmd = ss.pending[0]
		ss.pending = ss.pending[1:]
	}
	ss.busy = true
	ss.cycleNo++
	no := ss.cycleNo
	ss.retry = schedRetryMin
	ss.mu.Unlock()
	s.wg.Add(1)
	go s.runCycle(c, cmd, no)
	return nil
}

// runCycle sends the command, then serves the scheduler's requests on the
// same connection until it closes it or the cycle exceeds its limit.
func (s *Server) runCycle(c *proto.Client, cmd proto.SchedCmd, no int64) {
	defer s.wg.Done()
	start := s.now()
	who := &caller{role: proto.RoleSched, user: "root", host: s.cfg.Host, name: "scheduler"}
	conn := c.Conn()
	nc := conn.NetConn()
	done := make(chan struct{})
	go func() {
		select {
		case <-s.stop:
			nc.Close()
		case <-done:
		}
	}()
	defer close(done)
	defer c.Close()
	s.mu.RLock()
	limit := s.cycleLimit()
	s.mu.RUnlock()
	deadline := start.Add(limit)
	nc.SetDeadline(deadline)
	s.log.Debug("scheduling cycle starts", "cycle", no, "command", cmd.String())
	var err error
	if err = conn.Send(proto.Header{Type: proto.MsgSchedCommand}, &proto.SchedCommand{Cmd: cmd}); err == nil {
		for {
			h, body, rerr := conn.Recv()
			if rerr != nil {
				if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed) {
					err = rerr
				}
				break
			}
			if herr := s.handle(conn, who, h, body); herr != nil {
				err = herr
				break
			}
		}
	}
	if err != nil && s.now().After(deadline) {
		s.log.Warn("scheduling cycle exceeded its time limit; dropped", "cycle", no, "limit", limit.String())
	} else if err != nil && !strings.Contains(err.Error(), "use of closed") {
		s.log.Warn("scheduling cycle ended with an error", "cycle", no, "error", err)
	}
	// At info level and numbered, so that the cycles can be counted from
	// the server's side, whatever the scheduler's log_filter hides (tests
	// wait on it: testcluster.WaitCycles).
	s.log.Info("scheduling cycle ends", "cycle", no, "command", cmd.String(), "started", who.started, "took", s.now().Sub(start).String())
	ss := &s.sched
	ss.mu.Lock()
	ss.busy = false
	ss.mu.Unlock()
	if who.started == 1 {
		s.schedEvent(proto.SchedRecyc)
	} else {
		select {
		case ss.wake <- struct{}{}:
		default:
		}
	}
}

// cycleLimit is how long a cycle may last: sched_cycle_length, else
// OpenPBS's default (mu held, read or write).
func (s *Server) cycleLimit() time.Duration {
	if v, ok := s.server.Get(proto.AttrSchedCycleLength); ok {
		if secs, err := resc.ParseDuration(v); err == nil && secs > 0 {
			return time.Duration(secs) * time.Second
		}
	}
	return defaultCycleLimit
}

// Reconfigure asks the scheduler to re-read its configuration at its next
// connection (SCH_CONFIGURE).
func (s *Server) Reconfigure() { s.schedEvent(proto.SchedConfigure) }

// schedWake makes the scheduling loop look at its timers again.
func (s *Server) schedWake() {
	select {
	case s.sched.wake <- struct{}{}:
	default:
	}
}
