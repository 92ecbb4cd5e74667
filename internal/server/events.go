package server

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/events"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// The event stream: every committed change of a job's state, substate or
// queue is numbered, written to the store in the commit of the change
// itself (so that a subscriber resumes across a crash without a loss or a
// repeat), and published to the hub once durable. Changes are noticed in
// one place, the job table's update path, which every change of a job
// goes through (internal/server/state, which calls jobWatch); the committer's seal (store.Committer.SetSeal)
// numbers and writes those of each commit group. Subjobs deleted while
// they waited in their array's queued indices have no job of their own
// and make no event (a qdel of 100,000 is one change of the array): the
// array's end follows at once, and a reader that wants each subjob reads
// the array's subjobs then (qwait does).

const (
	// eventRetain is how many changes the server keeps, in memory and in
	// its store, for subscribers resuming after a reconnect.
	eventRetain = 100000
	// subscriberBuffer bounds each subscriber: how many selected changes
	// it may fall behind before it is cut off. Falling behind costs no
	// memory of its own (the changes are kept once, for every
	// subscriber), so the bound is what is kept: a scheduling cycle that
	// starts 50,000 jobs in one commit cuts no one off. A subscriber may
	// ask for less.
	subscriberBuffer = eventRetain
	// eventHeartbeat is how often an idle stream carries an empty frame,
	// so that relays keep it open and a vanished subscriber is noticed.
	eventHeartbeat = 30 * time.Second
	// eventFrameMax is how many changes one frame carries at most.
	eventFrameMax = 256
)

// jobEvents is the server's side of the event stream (fields under the
// server's mu but for the hub, which has its own lock).
type jobEvents struct {
	hub *events.Hub
	// seq is the last sequence number given to a change.
	seq uint64
	// before is the job while it is out of the table's indices for a
	// change, and what it was.
	before   *model.Job
	wasState eventState
	// pending are the changes of the commit group under way, at most one
	// per job (the last), in the order the jobs first changed.
	pending   []events.Event
	pendingAt map[model.JobKey]int
	// quiet is set while changes are not commits of their own: loading
	// the store, and the phases moms report (notePhase).
	quiet bool
}

// eventState is what a change of which makes an event.
type eventState struct {
	letter   byte
	substate int
	queue    string
}

func stateOf(j *model.Job) eventState {
	return eventState{letter: j.StateLetter(), substate: j.Substate, queue: j.Queue}
}

// initEvents makes the hub with the changes the store kept (at start).
func (s *Server) initEvents() error {
	s.ev.hub = events.NewHub(eventRetain)
	s.ev.pendingAt = map[model.JobKey]int{}
	kept, err := s.st.Events(eventRetain)
	if err != nil {
		return err
	}
	evs := make([]events.Event, len(kept))
	for i := range kept {
		evs[i] = fromWire(&kept[i])
	}
	if err := s.ev.hub.Restore(evs); err != nil {
		return fmt.Errorf("store %s: %w", s.st.Path(), err)
	}
	s.ev.seq = s.ev.hub.Last()
	s.commit.SetSeal(s.sealEvents)
	return nil
}

// Events is the hub of committed job changes, for in-process readers
// (the web listener). Subscribers there apply the caller's rights
// themselves, as subscribeEvents does.
func (s *Server) Events() *events.Hub { return s.ev.hub }

// noteBefore records j as it is before a change (jobWatch.Leaving; mu held).
func (s *Server) noteBefore(j *model.Job) {
	s.ev.before, s.ev.wasState = j, stateOf(j)
}

// noteAfter makes an event of j's change, if its state, substate or
// queue changed or it is new (jobWatch.Entered; mu held).
func (s *Server) noteAfter(j *model.Job) {
	was, had := s.ev.wasState, s.ev.before == j
	s.ev.before = nil
	if s.ev.quiet || had && was == stateOf(j) {
		return
	}
	s.pendEvent(j.Key(), jobEvent(j))
}

// pendEvent adds e, the change of job k, to the group's (mu held).
func (s *Server) pendEvent(k model.JobKey, e events.Event) {
	if i, ok := s.ev.pendingAt[k]; ok {
		s.ev.pending[i] = e
		return
	}
	s.ev.pendingAt[k] = len(s.ev.pending)
	s.ev.pending = append(s.ev.pending, e)
}

// jobEvent is j's state as an event.
func jobEvent(j *model.Job) events.Event {
	e := events.Event{JobID: j.ID, Owner: j.User(), Queue: j.Queue, State: string(j.StateLetter()), Substate: strconv.Itoa(j.Substate), Comment: j.Comment}
	if j.HasExit {
		x := j.ExitStatus
		e.ExitStatus = &x
	}
	return e
}

// sealEvents numbers the group's changes and returns the batch that keeps
// them, whose After publishes them (the committer's seal: mu held).
func (s *Server) sealEvents() *store.Batch {
	if len(s.ev.pending) == 0 {
		return nil
	}
	now := s.now().UnixMilli()
	b := &store.Batch{}
	evs := s.ev.pending
	for i := range evs {
		s.ev.seq++
		evs[i].Seq, evs[i].Time = s.ev.seq, now
		w := toWire(&evs[i])
		b.PutEvent(&w)
		if s.ev.seq > eventRetain {
			b.DeleteEvent(s.ev.seq - eventRetain)
		}
	}
	s.ev.pending = nil
	clear(s.ev.pendingAt)
	b.After(func() {
		want := evs[len(evs)-1].Seq
		if got := s.ev.hub.PublishAll(evs); got != want {
			// Never: the hub is only published to here, in order.
			s.log.Error("event stream out of step with the store", "stored", want, "published", got)
		}
	})
	return b
}

// resetEvents drops the changes of a group whose commit failed (rollback,
// mu held): they never happened. (A commit that fails after its writes
// landed, which only the store-after-commit fault point makes, leaves
// its changes without events: the next group's take their numbers and
// records.)
func (s *Server) resetEvents() {
	s.ev.pending = nil
	clear(s.ev.pendingAt)
	s.ev.before = nil
	if s.ev.hub != nil {
		s.ev.seq = s.ev.hub.Last()
	}
}

func toWire(e *events.Event) proto.JobEvent {
	return proto.JobEvent{Seq: e.Seq, Time: e.Time, JobID: e.JobID, Owner: e.Owner, Queue: e.Queue, State: e.State, Substate: e.Substate, ExitStatus: e.ExitStatus, Comment: e.Comment}
}

func fromWire(e *proto.JobEvent) events.Event {
	return events.Event{Seq: e.Seq, Time: e.Time, JobID: e.JobID, Owner: e.Owner, Queue: e.Queue, State: e.State, Substate: e.Substate, ExitStatus: e.ExitStatus, Comment: e.Comment}
}

// errStreamEnded closes a connection whose event stream ended.
var errStreamEnded = errors.New("event stream ended")

// eventRights is what a subscriber may see of the stream: priv for
// managers and operators (every change); own when it was narrowed to its
// own jobs' changes; else others' changes while query_other_jobs is true
// (checked for each change, so that setting it false takes effect at
// once).
type eventRights struct {
	user      string
	priv, own bool
}

// eventFilter is the filter of req as who may have it: managers and
// operators, and everyone when query_other_jobs is true, get what they
// ask; anyone else only their own jobs' changes.
func (s *Server) eventFilter(who *caller, req *proto.SubscribeRequest) (events.Filter, eventRights, error) {
	f := events.Filter{Owner: req.Owner, Queue: req.Queue}
	for _, id := range req.JobIDs {
		f.JobIDs = append(f.JobIDs, s.canonicalJobID(id))
	}
	r := eventRights{user: who.user}
	mgr, op := s.privileges(who)
	if r.priv = mgr || op; r.priv || s.queryOthers() {
		return f, r, nil
	}
	if f.Owner != "" && f.Owner != who.user {
		return f, r, proto.Errorf(proto.PBSE_PERM, "(query_other_jobs is false: only your own jobs' changes, not %s's)", f.Owner)
	}
	f.Owner, r.own = who.user, true
	return f, r, nil
}

// queryOthers is the server's query_other_jobs.
func (s *Server) queryOthers() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.server.Bool(proto.AttrQueryOtherJobs)
}

// maySee reports whether the subscriber with rights r may see e.
func (s *Server) maySee(r eventRights, e *events.Event) bool {
	return r.priv || r.own || e.Owner == r.user || s.queryOthers()
}

// canonicalJobID completes a job id as the hub's events name it: a bare
// sequence number ("12", "12[]", "12[3]") or another server suffix gets
// this server's name; a range of subjobs ("12[1-5]") selects its whole
// array (the subscriber picks its subjobs out).
func (s *Server) canonicalJobID(id string) string {
	ref, ok := model.ParseJobRef(id)
	if !ok {
		return id
	}
	switch ref.Kind {
	case model.IDArray, model.IDRange:
		return model.FormatArrayID(ref.Seq, s.cfg.ServerName)
	case model.IDSubjob:
		return model.FormatSubjobID(ref.Seq, ref.Indices[0].Lo, s.cfg.ServerName)
	case model.IDJob:
		return s.jobID(ref.Seq)
	}
	return id
}

// subscribeEvents serves a Subscribe: the connection carries the stream
// until the subscriber goes, falls too far behind, or the server stops.
// The commit path never waits for it (the hub only counts and signals);
// this goroutine waits for the peer, within the connection's write
// timeout.
func (s *Server) subscribeEvents(c *proto.Conn, who *caller, seq uint64, body msgpack.RawMessage) error {
	refuse := func(err error) error {
		var pe *proto.Error
		if !errors.As(err, &pe) {
			pe = &proto.Error{Code: proto.PBSE_SYSTEM, Text: err.Error()}
		}
		return c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, Code: pe.Code, Text: pe.Error()}, nil)
	}
	req, err := proto.DecodeRequest[proto.SubscribeRequest](body)
	if err != nil {
		return refuse(err)
	}
	f, rights, err := s.eventFilter(who, req)
	if err != nil {
		return refuse(err)
	}
	buffer := req.Buffer
	if buffer <= 0 || buffer > subscriberBuffer {
		buffer = subscriberBuffer
	}
	var sub *events.Sub
	if req.Resume {
		sub, err = s.ev.hub.Resume(f, req.After, buffer)
	} else {
		sub, err = s.ev.hub.Subscribe(f, 0, buffer)
	}
	switch {
	case errors.Is(err, events.ErrGap):
		return refuse(proto.Errorf(proto.PBSE_EVENTGAP, "(%v)", err))
	case errors.Is(err, events.ErrClosed):
		return refuse(proto.NewError(proto.PBSE_SVRDOWN))
	case err != nil:
		return refuse(err)
	}
	defer sub.Close()
	if err := c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, More: true}, &proto.SubscribeReply{Last: sub.After(), Heartbeat: int(eventHeartbeat / time.Second)}); err != nil {
		return err
	}
	s.log.Debug("event stream opened", "user", who.user, "resume", req.Resume, "after", sub.After(), "own", rights.own)
	// The subscriber sends nothing more: a frame or the end of its
	// connection ends the stream.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		c.NetConn().SetReadDeadline(time.Time{})
		c.Recv()
	}()
	heartbeat := time.NewTicker(eventHeartbeat)
	defer heartbeat.Stop()
	frame := &proto.EventFrame{Events: make([]proto.JobEvent, 0, eventFrameMax)}
	add := func(e *events.Event) {
		if s.maySee(rights, e) {
			frame.Events = append(frame.Events, toWire(e))
		}
	}
	send := func() error {
		err := c.Send(proto.Header{Type: proto.MsgEvent, Seq: seq, More: true}, frame)
		frame.Events = frame.Events[:0]
		return err
	}
	end := func(code proto.Code, text string) error {
		c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, Code: code, Text: text}, nil)
		return errStreamEnded
	}
	for {
		select {
		case e, ok := <-sub.C:
			if !ok {
				why := sub.Err()
				if errors.Is(why, events.ErrSlow) {
					s.log.Warn("event subscriber cut off", "user", who.user, "reason", why)
					return end(proto.PBSE_TOOSLOW, proto.Errorf(proto.PBSE_TOOSLOW, "(%v)", why).Error())
				}
				return end(proto.PBSE_SVRDOWN, proto.PBSE_SVRDOWN.Message())
			}
			add(&e)
		more:
			for len(frame.Events) < eventFrameMax {
				select {
				case e, ok := <-sub.C:
					if !ok {
						break more // the next round says why
					}
					add(&e)
				default:
					break more
				}
			}
			if len(frame.Events) == 0 {
				continue
			}
			if err := send(); err != nil {
				return err
			}
			heartbeat.Reset(eventHeartbeat)
		case <-heartbeat.C:
			if err := send(); err != nil {
				return err
			}
		case <-gone:
			return errStreamEnded
		case <-s.stop:
			return end(proto.PBSE_SVRDOWN, proto.PBSE_SVRDOWN.Message())
		}
	}
}
