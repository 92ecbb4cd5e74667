package qwait

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/events"
	"github.com/gopbs/gopbs/proto"
)

// Exit statuses of qwait besides a job's.
const (
	exitTimeout = 124 // as timeout(1)
	exitUsage   = 2
)

// Reconnecting to a server that went away: quick at first (a restart
// takes a second or two), then at most maxRetry apart.
const (
	firstRetry = 200 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// waiter is one qwait: the jobs it still waits for and what it printed.
type waiter struct {
	env     *cmdutil.Env
	opts    options
	connect func() (*proto.Client, error)
	now     func() time.Time

	reader  *proto.Client // status reads (the stream has a connection of its own)
	members map[string]*member
	order   []string        // the ids waited for, in the order found
	done    map[string]bool // the ids whose end was printed
	code    int             // the first non-zero exit status printed, as the shell's
	last    uint64          // the last change seen on the stream
	// deadline is when -t's time is up (w.opts.limited).
	deadline time.Time
}

// member is one job or subjob waited for.
type member struct {
	id     string
	subjob bool
	array  string // a subjob's array ("12[].srv")
	state  string // its state as last seen
}

// streamEnd is what the goroutine reading the stream hands over.
type streamEnd struct {
	events []proto.JobEvent
	err    error
}

func (w *waiter) run() int {
	w.members, w.done = map[string]*member{}, map[string]bool{}
	defer func() {
		if w.reader != nil {
			w.reader.Close()
		}
	}()
	w.deadline = w.now().Add(w.opts.timeout)
	once := w.opts.limited && w.opts.timeout == 0
	var stream *proto.EventStream
	if !once {
		// Subscribed first, then the state read: a change after the read
		// is on the stream, one before it is in the read (a change in
		// both is reported once).
		var err error
		if stream, err = w.subscribe(false); err != nil {
			return w.env.Fail(err)
		}
		defer func() { stream.Close() }()
		w.last = stream.Reply.Last
	}
	for _, id := range w.opts.ids {
		if code := w.read(id, true); code != 0 {
			return code
		}
	}
	if len(w.members) == 0 {
		return w.code
	}
	if once {
		return w.timedOut()
	}
	var timeout <-chan time.Time
	if w.opts.limited {
		t := time.NewTimer(w.deadline.Sub(w.now()))
		defer t.Stop()
		timeout = t.C
	}
	ends := make(chan streamEnd, 16)
	go follow(stream, ends)
	for {
		select {
		case <-timeout:
			return w.timedOut()
		case got := <-ends:
			if got.err != nil {
				stream.Close()
				var code int
				if stream, code = w.reconnect(got.err, timeout); stream == nil {
					return code
				}
				if len(w.members) == 0 {
					return w.code
				}
				ends = make(chan streamEnd, 16)
				go follow(stream, ends)
				continue
			}
			w.apply(got.events)
			if len(w.members) == 0 {
				return w.code
			}
		}
	}
}

// follow reads stream until it ends, handing each batch to ends.
func follow(stream *proto.EventStream, ends chan<- streamEnd) {
	for {
		evs, err := stream.Next()
		if err != nil {
			ends <- streamEnd{err: err}
			return
		}
		ends <- streamEnd{events: append([]proto.JobEvent(nil), evs...)}
	}
}

// subscribe opens the stream of the operands' changes, after the last one
// seen when resume is set.
func (w *waiter) subscribe(resume bool) (*proto.EventStream, error) {
	c, err := w.connect()
	if err != nil {
		return nil, err
	}
	st, err := c.Subscribe(&proto.SubscribeRequest{JobIDs: w.opts.ids, Resume: resume, After: w.last})
	if err != nil {
		c.Close()
		return nil, err
	}
	return st, nil
}

// reconnect follows the server again after the stream ended with why:
// resumed after the last change seen, or, when the server no longer has
// the changes since, from now with the jobs' state read again. It returns
// the new stream, or nil and qwait's exit status.
func (w *waiter) reconnect(why error, timeout <-chan time.Time) (*proto.EventStream, int) {
	if !lostServer(why) && proto.CodeOf(why) != proto.PBSE_TOOSLOW {
		return nil, w.env.Fail(why)
	}
	w.env.Errorf("lost the server's event stream (%v); reconnecting", why)
	if w.reader != nil {
		w.reader.Close()
		w.reader = nil
	}
	delay := firstRetry
	for {
		st, err := w.subscribe(true)
		if proto.CodeOf(err) == proto.PBSE_EVENTGAP {
			// The changes since are lost to the server: from now, and
			// the state read again after subscribing (as at the start).
			if st, err = w.subscribe(false); err == nil {
				w.last = st.Reply.Last
				if code := w.rereadAll(); code != 0 {
					st.Close()
					return nil, code
				}
			}
		}
		if err == nil {
			return st, 0
		}
		if c := proto.CodeOf(err); c == proto.PBSE_PERM || c == proto.PBSE_BADHOST {
			return nil, w.env.Fail(err)
		}
		select {
		case <-timeout:
			return nil, w.timedOut()
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetry)
	}
}

// lostServer reports whether err says the server went away (its
// connection broke, it is shutting down or not there): what qwait waits
// out, reconnecting, rather than fails on.
func lostServer(err error) bool {
	switch proto.CodeOf(err) {
	case proto.PBSE_SVRDOWN, proto.PBSE_PROTOCOL, proto.PBSE_NOSERVER, proto.PBSE_SYSTEM:
		return true
	}
	return false
}

// statusAttrs are what qwait reads of a job.
var statusAttrs = []string{proto.AttrJobState, proto.AttrExitStatus}

// jobs reads what id names (an array: its subjobs after it), with the
// history when history is set, on the reader connection, opened when
// needed. A server that went away (a crash, a restart, even in the middle
// of the read) is waited for and read again, until -t's time is up: the
// stream is followed across the same.
func (w *waiter) jobs(id string, history bool) ([]proto.Status, []proto.ObjectError, error) {
	req := &proto.StatusRequest{IDs: []string{id}, Attrs: statusAttrs, History: history, Subjobs: true}
	delay, told := firstRetry, false
	for {
		objs, errs, err := w.readOnce(req)
		if err == nil || !lostServer(err) || w.opts.limited && !w.now().Before(w.deadline) {
			return objs, errs, err
		}
		if !told {
			w.env.Errorf("lost the server while reading %s (%v); reconnecting", id, err)
			told = true
		}
		wait := delay
		if w.opts.limited {
			wait = min(wait, max(w.deadline.Sub(w.now()), 0))
		}
		time.Sleep(wait)
		delay = min(2*delay, maxRetry)
	}
}

// readOnce is one status read on the reader connection, opened when
// needed and dropped when the read fails.
func (w *waiter) readOnce(req *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	if w.reader == nil {
		c, err := w.connect()
		if err != nil {
			return nil, nil, err
		}
		w.reader = c
	}
	objs, errs, err := w.reader.StatusJobs(req)
	if err != nil {
		w.reader.Close()
		w.reader = nil
	}
	return objs, errs, err
}

// read reads what operand id names and reports the ends already there;
// the rest are waited for. At the start (initial) a finished job is an
// error unless -x; later reads (an array ended, changes lost) take the
// history too. It returns a non-zero exit status to stop with.
func (w *waiter) read(id string, initial bool) int {
	history := w.opts.history || !initial
	objs, errs, err := w.jobs(id, history)
	if err != nil {
		return w.env.Fail(err)
	}
	if len(errs) > 0 {
		server := ""
		if w.reader != nil {
			server = w.reader.ServerName()
		}
		return w.env.FailJob(&proto.Error{Code: errs[0].Code, Text: errs[0].Text}, id, server)
	}
	if len(objs) > 1 && isArray(objs[0].Name) {
		objs = objs[1:] // the array's subjobs are what ends
	}
	for i := range objs {
		w.saw(&objs[i])
	}
	return 0
}

// saw takes in a job or subjob as a status read shows it.
func (w *waiter) saw(o *proto.Status) {
	if w.done[o.Name] {
		return
	}
	state, _ := o.Get(proto.AttrJobState)
	m := w.members[o.Name]
	if m == nil {
		m = &member{id: o.Name, array: events.ArrayOf(o.Name)}
		m.subjob = m.array != ""
		w.members[o.Name] = m
		w.order = append(w.order, o.Name)
	}
	m.state = state
	if state != "F" && state != "X" {
		return
	}
	var exit *int
	if v, ok := o.Get(proto.AttrExitStatus); ok {
		if n, err := strconv.Atoi(v); err == nil {
			exit = &n
		}
	}
	w.ended(m, exit)
}

// apply takes in changes from the stream.
func (w *waiter) apply(evs []proto.JobEvent) {
	for i := range evs {
		e := &evs[i]
		if e.Seq <= w.last {
			continue
		}
		w.last = e.Seq
		if m := w.members[e.JobID]; m != nil {
			m.state = e.State
			if e.State == "F" {
				w.ended(m, e.ExitStatus)
			}
			continue
		}
		if e.State == "F" && isArray(e.JobID) {
			w.arrayEnded(e.JobID)
		}
	}
}

// arrayEnded reports the subjobs of array id still waited for once the
// array has ended: those deleted while they waited in the array have no
// change of their own on the stream, so they are read.
func (w *waiter) arrayEnded(id string) {
	var left []*member
	for _, name := range w.order {
		if m := w.members[name]; m != nil && m.array == id {
			left = append(left, m)
		}
	}
	if len(left) == 0 {
		return
	}
	objs, _, err := w.jobs(id, true)
	if err == nil {
		for i := range objs {
			if !isArray(objs[i].Name) && w.members[objs[i].Name] != nil {
				w.saw(&objs[i])
			}
		}
	}
	// Still there: the array ended without their own end on the stream,
	// which only a subjob deleted before it ran does, and the server
	// kept no history to show it (or could not be read).
	deleted := deletedExit
	for _, m := range left {
		if w.members[m.id] != nil {
			w.ended(m, &deleted)
		}
	}
}

// deletedExit is the Exit_status of a job deleted before it ran (the
// server's model.ExitDeleted: 256 + SIGTERM).
const deletedExit = proto.ExitSignalBase + 15

// rereadAll reads again every job still waited for, after changes were
// lost: those ended meanwhile are reported.
func (w *waiter) rereadAll() int {
	seen := map[string]bool{}
	for _, name := range append([]string(nil), w.order...) {
		m := w.members[name]
		if m == nil {
			continue
		}
		id := m.id
		if m.subjob {
			id = m.array // one read for all of an array's subjobs
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		objs, errs, err := w.jobs(id, true)
		if err != nil {
			return w.env.Fail(err)
		}
		if len(errs) > 0 {
			// Gone: it ended while qwait could not follow it, and the
			// server kept no history of it.
			for _, name := range append([]string(nil), w.order...) {
				if o := w.members[name]; o != nil && (o == m || m.subjob && o.array == m.array) {
					w.env.JobError(&proto.Error{Code: errs[0].Code, Text: errs[0].Text + " (it ended while qwait could not reach the server, which kept no history of it)"}, o.id)
					w.ended(o, nil)
				}
			}
			continue
		}
		for i := range objs {
			if !isArray(objs[i].Name) && w.members[objs[i].Name] != nil {
				w.saw(&objs[i])
			}
		}
	}
	return 0
}

// ended prints m's end and forgets it.
func (w *waiter) ended(m *member, exit *int) {
	delete(w.members, m.id)
	w.done[m.id] = true
	state := "F"
	if m.subjob {
		state = "X"
	}
	shown := "-"
	if exit != nil {
		shown = strconv.Itoa(*exit)
	}
	fmt.Fprintf(w.env.Stdout, "%s %s %s\n", m.id, shown, state)
	if w.code == 0 && (exit == nil || *exit != 0) {
		w.code = shellStatus(exit)
	}
}

// timedOut lists the jobs not ended and returns exitTimeout.
func (w *waiter) timedOut() int {
	for _, name := range w.order {
		if m := w.members[name]; m != nil {
			fmt.Fprintf(w.env.Stdout, "%s - %s\n", m.id, m.state)
		}
	}
	w.env.Errorf("timed out: %d of the jobs have not ended", len(w.members))
	return exitTimeout
}

// shellStatus is the process exit status for a job's non-zero exit
// status: its low 8 bits, as the shell and qsub -W block give it, or 1
// when those are 0 (or the job ended without one).
func shellStatus(exit *int) int {
	if exit == nil {
		return 1
	}
	if s := int(uint8(*exit)); s != 0 {
		return s
	}
	return 1
}

// isArray reports whether id names an array ("12[].srv").
func isArray(id string) bool { return strings.Contains(id, "[]") }
