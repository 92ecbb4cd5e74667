package proto

import (
	"fmt"
	"time"
)

// The event stream: a client sends one Subscribe; the server answers with
// a Reply (More set) carrying a SubscribeReply, then sends MsgEvent frames
// (More set, each an EventFrame, the request's Seq) for as long as the
// subscription lasts, an empty one every heartbeat while nothing happens.
// The stream ends with a Reply whose Code says why (PBSE_TOOSLOW,
// PBSE_SVRDOWN) and More clear; a refused Subscribe (PBSE_EVENTGAP,
// PBSE_PERM) is that Reply alone. A relaying mom passes every frame on,
// as for any multi-frame answer.

// SubscribeRequest asks for the changes of the jobs it selects: an empty
// field selects every value; a job id of an array selects its subjobs
// too. The server narrows it to what the caller may see.
type SubscribeRequest struct {
	JobIDs []string
	Owner  string
	Queue  string
	// Resume asks for every change after After first (After 0: from the
	// first change the server kept); without it, changes from now on.
	Resume bool
	After  uint64
	// Buffer is how many selected changes the subscriber may fall
	// behind before it is cut off; 0 (or more than the server allows)
	// means the server's bound.
	Buffer int
}

// SubscribeReply opens the stream. Last is the sequence number of the
// last change when the subscription began: a subscriber from now has seen
// up to it, and resumes after it if nothing came since. Heartbeat is the
// seconds between frames when nothing happens.
type SubscribeReply struct {
	Last      uint64
	Heartbeat int
}

// JobEvent is one committed change of a job's state, substate or queue,
// numbered by the server. ExitStatus is set once the job ended with one.
type JobEvent struct {
	_msgpack   struct{} `msgpack:",as_array"`
	Seq        uint64
	Time       int64 // Unix milliseconds
	JobID      string
	Owner      string
	Queue      string
	State      string
	Substate   string
	ExitStatus *int
	Comment    string
}

// EventFrame carries changes in sequence order; an empty one is a
// heartbeat.
type EventFrame struct {
	Events []JobEvent
}

// EventStream is the subscriber's end of the event stream. It owns its
// Client's connection: no other call may be made on that Client.
type EventStream struct {
	c     *Client
	seq   uint64
	idle  time.Duration
	Reply SubscribeReply
}

// Subscribe opens the event stream on c. A refusal is an *Error (its
// Code PBSE_EVENTGAP for a resume from changes no longer kept).
func (c *Client) Subscribe(req *SubscribeRequest) (*EventStream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	c.seq++
	s := &EventStream{c: c, seq: c.seq}
	nc := c.conn.NetConn()
	nc.SetDeadline(time.Now().Add(c.timeout))
	defer nc.SetDeadline(time.Time{})
	if err := c.conn.Send(Header{Type: MsgSubscribe, Seq: s.seq}, req); err != nil {
		if herr := c.finishHello(); herr != nil {
			return nil, herr
		}
		return nil, c.fail(fmt.Errorf("send %s: %w", MsgSubscribe, err))
	}
	if err := c.finishHello(); err != nil {
		return nil, err
	}
	h, raw, err := c.conn.Recv()
	if err != nil {
		return nil, c.fail(fmt.Errorf("read reply to %s: %w", MsgSubscribe, err))
	}
	if h.Type != MsgReply || h.Seq != s.seq {
		return nil, c.fail(fmt.Errorf("%w: reply %s seq %d to request seq %d", ErrMalformed, h.Type, h.Seq, s.seq))
	}
	if h.Code != PBSE_NONE {
		return nil, &Error{Code: h.Code, Text: h.Text}
	}
	if err := DecodeBody(raw, &s.Reply); err != nil {
		return nil, c.fail(err)
	}
	if !h.More {
		return nil, c.fail(fmt.Errorf("%w: the subscription ended at once", ErrMalformed))
	}
	// Three heartbeats missed: the server or the path to it is gone.
	s.idle = 3 * time.Duration(max(s.Reply.Heartbeat, 1)) * time.Second
	return s, nil
}

// Next waits for the next changes and returns them in sequence order
// (never an empty slice). The end of the stream is an error: an *Error
// with the server's reason (PBSE_TOOSLOW, PBSE_SVRDOWN), or the broken
// connection's (no frame for three heartbeats among them). The slice
// stays valid until the next call.
func (s *EventStream) Next() ([]JobEvent, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	nc := c.conn.NetConn()
	for {
		nc.SetReadDeadline(time.Now().Add(s.idle))
		h, raw, err := c.conn.Recv()
		if err != nil {
			return nil, c.fail(fmt.Errorf("event stream: %w", err))
		}
		if h.Seq != s.seq || h.Type != MsgEvent && h.Type != MsgReply {
			return nil, c.fail(fmt.Errorf("%w: %s seq %d on the event stream of request %d", ErrMalformed, h.Type, h.Seq, s.seq))
		}
		if h.Type == MsgReply {
			end := &Error{Code: h.Code, Text: h.Text}
			if h.Code == PBSE_NONE {
				end = &Error{Code: PBSE_PROTOCOL, Text: "the event stream ended without a reason"}
			}
			c.broken = end
			c.conn.Close()
			return nil, end
		}
		var f EventFrame
		if err := DecodeBody(raw, &f); err != nil {
			return nil, c.fail(err)
		}
		if len(f.Events) > 0 {
			return f.Events, nil
		}
	}
}

// Close ends the subscription and its connection.
func (s *EventStream) Close() error { return s.c.Close() }
