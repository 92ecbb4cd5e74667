package proto

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// DialOptions says how to reach a server (or a mom that forwards for its
// host's users).
type DialOptions struct {
	Network string // "unix" or "tcp"
	Address string
	Role    Role   // RoleClient for commands
	Name    string // node or scheduler name for daemons
	Key     []byte // cluster key; required for daemon roles over TCP
	Timeout time.Duration
}

// DefaultTimeout bounds dialing and each request when DialOptions.Timeout
// is zero.
const DefaultTimeout = 60 * time.Second

// Client is a typed connection to pbs_server. Calls are serialised; open
// one Client per concurrent caller.
type Client struct {
	mu         sync.Mutex
	conn       *Conn
	seq        uint64
	timeout    time.Duration
	serverName string
	broken     error
	// helloNonce is set while the server's answer to the Hello is unread:
	// a connection without a key sends its first request right behind the
	// Hello and reads both answers in turn (one round trip fewer for
	// every command; the server reads frames in order either way).
	helloNonce []byte
	role       Role
	address    string
}

// Dial connects and performs the Hello exchange.
func Dial(o DialOptions) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	nc, err := net.DialTimeout(o.Network, o.Address, o.Timeout)
	if err != nil {
		return nil, &Error{Code: PBSE_NOSERVER, Text: fmt.Sprintf("cannot connect to server at %s: %v", o.Address, err)}
	}
	c := NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(o.Timeout))
	if o.Key == nil {
		// Without a key nothing later depends on the server's nonce: the
		// answer is read with the first request's (finishHello).
		nonce, err := sendHello(c, o.Role, o.Name)
		if err != nil {
			nc.Close()
			return nil, handshakeError(o.Address, err)
		}
		nc.SetDeadline(time.Time{})
		return &Client{conn: c, timeout: o.Timeout, helloNonce: nonce, role: o.Role, address: o.Address}, nil
	}
	reply, err := ClientHandshake(c, o.Role, o.Name, o.Key)
	if err != nil {
		nc.Close()
		return nil, handshakeError(o.Address, err)
	}
	nc.SetDeadline(time.Time{})
	return &Client{conn: c, timeout: o.Timeout, serverName: reply.ServerName, address: o.Address}, nil
}

// handshakeError is a failed handshake as an *Error: the server's own
// refusal as it gave it, anything else a protocol error.
func handshakeError(address string, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	code := PBSE_PROTOCOL
	if errors.Is(err, ErrBadMAC) {
		// The keys differ: a credential refused, not a protocol fault.
		code = PBSE_BADCRED
	}
	return &Error{Code: code, Text: fmt.Sprintf("handshake with %s: %v", address, err)}
}

// finishHello reads the server's answer to the Hello sent by Dial, when it
// is still unread (mu held). A refusal breaks the client.
func (c *Client) finishHello() error {
	if c.helloNonce == nil {
		return nil
	}
	reply, err := readHelloReply(c.conn, c.role, nil, c.helloNonce)
	c.helloNonce = nil
	if err != nil {
		c.broken = handshakeError(c.address, err)
		c.conn.Close()
		return c.broken
	}
	c.serverName = reply.ServerName
	return nil
}

// NewClient wraps an already handshaken connection (the scheduler uses the
// connection the server opened to it).
func NewClient(c *Conn, serverName string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{conn: c, timeout: timeout, serverName: serverName}
}

// Conn is the client's connection, for a server that turns the
// connection around (it dialed the scheduler, then serves its requests).
// A client dialed without a key may not have read the Hello's answer yet:
// call Hello first.
func (c *Client) Conn() *Conn { return c.conn }

// Hello completes the handshake now when its answer is still unread:
// for a caller that needs the server's name, or its refusal, before
// sending any request.
func (c *Client) Hello() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	if c.helloNonce == nil {
		return nil
	}
	nc := c.conn.NetConn()
	nc.SetDeadline(time.Now().Add(c.timeout))
	defer nc.SetDeadline(time.Time{})
	return c.finishHello()
}

// ServerName is the short server name the server uses in job ids ("" when
// the server's answer to the Hello cannot be read: Hello says why).
func (c *Client) ServerName() string {
	c.Hello()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverName
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// call sends one request and hands each reply frame's body to each (which
// may be nil to ignore bodies). It returns the first non-zero PBSE code of
// a reply as an *Error.
func (c *Client) call(t MsgType, as *Identity, body any, each func(raw []byte) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return c.broken
	}
	c.seq++
	seq := c.seq
	nc := c.conn.NetConn()
	nc.SetDeadline(time.Now().Add(c.timeout))
	defer nc.SetDeadline(time.Time{})
	if err := c.conn.Send(Header{Type: t, Seq: seq, As: as}, body); err != nil {
		if herr := c.finishHello(); herr != nil {
			// The server refused the Hello and closed: its reason, not
			// the broken pipe, is the error.
			return herr
		}
		return c.fail(fmt.Errorf("send %s: %w", t, err))
	}
	if err := c.finishHello(); err != nil {
		return err
	}
	for {
		h, raw, err := c.conn.Recv()
		if err != nil {
			return c.fail(fmt.Errorf("read reply to %s: %w", t, err))
		}
		if h.Type != MsgReply || h.Seq != seq {
			return c.fail(fmt.Errorf("%w: reply %s seq %d to request seq %d", ErrMalformed, h.Type, h.Seq, seq))
		}
		if h.Code != PBSE_NONE {
			// An error reply ends the exchange even if More was set.
			return &Error{Code: h.Code, Text: h.Text}
		}
		if each != nil {
			if err := each(raw); err != nil {
				return c.fail(err)
			}
		}
		if !h.More {
			return nil
		}
		nc.SetDeadline(time.Now().Add(c.timeout))
	}
}

// fail marks the connection unusable: after a transport or framing error
// the stream position is unknown.
func (c *Client) fail(err error) error {
	c.broken = &Error{Code: PBSE_PROTOCOL, Text: err.Error()}
	c.conn.Close()
	return c.broken
}

// Call sends a request of type t and decodes a single-frame reply into
// reply (nil to ignore it).
func (c *Client) Call(t MsgType, body, reply any) error {
	return c.CallAs(t, nil, body, reply)
}

// CallAs is Call with a vouched identity (used by a mom forwarding a
// command for a local user).
func (c *Client) CallAs(t MsgType, as *Identity, body, reply any) error {
	return c.call(t, as, body, func(raw []byte) error {
		if reply == nil {
			return nil
		}
		return DecodeBody(raw, reply)
	})
}

// Submit queues a job and returns its id.
func (c *Client) Submit(req *SubmitRequest) (string, error) {
	var reply SubmitReply
	if err := c.Call(MsgSubmit, req, &reply); err != nil {
		return "", err
	}
	return reply.JobID, nil
}

// status collects a possibly multi-frame status answer. Frames are
// decoded on another goroutine while the next ones arrive, so decoding a
// large answer overlaps with the server producing it.
func (c *Client) status(t MsgType, req *StatusRequest) ([]Status, []ObjectError, error) {
	r, err := c.statusReply(t, req)
	return r.Objects, r.Errors, err
}

func (c *Client) statusReply(t MsgType, req *StatusRequest) (*StatusReply, error) {
	var objs []Status
	reply, err := c.StatusEach(t, req, func(part []Status) error {
		objs = append(objs, part...)
		return nil
	})
	reply.Objects = objs
	return reply, err
}

// StatusEach sends a status request of type t and hands the objects of
// the answer to each, frame by frame and in order, on a goroutine that
// decodes while later frames arrive: a caller converting what it receives
// does so while the server still sends. each must not keep the slice. The
// reply returned carries everything but the objects (errors, and for jobs
// the version, epoch and live list). An error from each ends the
// decoding (the answer is still read to its end) and is returned.
func (c *Client) StatusEach(t MsgType, req *StatusRequest, each func([]Status) error) (*StatusReply, error) {
	type part struct {
		reply StatusReply
		err   error
	}
	raws := make(chan []byte, 8)
	parts := make(chan part, 1)
	go func() {
		var all part
		for raw := range raws {
			if all.err != nil {
				continue
			}
			var p StatusReply
			if err := DecodeStatusReply(raw, &p); err != nil {
				all.err = err
				continue
			}
			if len(p.Objects) > 0 {
				if err := each(p.Objects); err != nil {
					all.err = err
					continue
				}
			}
			all.reply.Errors = append(all.reply.Errors, p.Errors...)
			all.reply.Live = append(all.reply.Live, p.Live...)
			if p.Epoch != "" {
				all.reply.Version, all.reply.Epoch = p.Version, p.Epoch
			}
		}
		parts <- all
	}()
	err := c.call(t, nil, req, func(raw []byte) error {
		raws <- raw
		return nil
	})
	close(raws)
	all := <-parts
	if err == nil {
		err = all.err
	}
	return &all.reply, err
}

// StatusJobs returns the jobs named by req (all jobs the caller may see
// when req.IDs is empty) and the operands that failed.
func (c *Client) StatusJobs(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusJob, req)
}

// StatusQueues returns the named queues, or all.
func (c *Client) StatusQueues(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusQueue, req)
}

// StatusNodes returns the named nodes, or all.
func (c *Client) StatusNodes(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusNode, req)
}

// StatusSched returns the scheduler object (qmgr list sched): the one
// named, or all (there is one).
func (c *Client) StatusSched(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusSched, req)
}

// StatusServer returns the server object.
func (c *Client) StatusServer(attrs []string) (Status, error) {
	objs, _, err := c.status(MsgStatusServer, &StatusRequest{Attrs: attrs})
	if err != nil {
		return Status{}, err
	}
	if len(objs) != 1 {
		return Status{}, &Error{Code: PBSE_PROTOCOL, Text: fmt.Sprintf("server status returned %d objects", len(objs))}
	}
	return objs[0], nil
}

// jobOp sends a JobRequest of type t.
func (c *Client) jobOp(t MsgType, id, extra string) error {
	return c.Call(t, &JobRequest{JobID: id, Extra: extra}, nil)
}

// DeleteJob deletes (or, when running, kills) a job.
func (c *Client) DeleteJob(id string, opts DeleteOptions) error {
	return c.jobOp(MsgDeleteJob, id, opts.String())
}

// HoldJob adds holds ("u", "o", "s" or a combination).
func (c *Client) HoldJob(id, types string) error { return c.jobOp(MsgHoldJob, id, types) }

// ReleaseJob removes holds.
func (c *Client) ReleaseJob(id, types string) error { return c.jobOp(MsgReleaseJob, id, types) }

// RunJob starts a job, optionally on the given node list.
func (c *Client) RunJob(id, nodes string) error { return c.jobOp(MsgRunJob, id, nodes) }

// SignalJob sends a signal name or number, or "suspend"/"resume".
func (c *Client) SignalJob(id, sig string) error { return c.jobOp(MsgSignalJob, id, sig) }

// StageInJob asks the server to copy a queued job's stage-in files to
// node without running it.
func (c *Client) StageInJob(id, node string) error { return c.jobOp(MsgStageInJob, id, node) }

// MoveJob moves a job that is not running to another queue (qmove);
// dest is "queue" or "queue@server".
func (c *Client) MoveJob(id, dest string) error { return c.jobOp(MsgMoveJob, id, dest) }

// RerunJob kills a running job and puts it back in its queue (qrerun);
// force reruns a job that is not rerunnable.
func (c *Client) RerunJob(id string, force bool) error {
	extra := ""
	if force {
		extra = "force"
	}
	return c.jobOp(MsgRerunJob, id, extra)
}

// AlterJob changes job attributes.
func (c *Client) AlterJob(id string, attrs []Attr) error {
	return c.Call(MsgAlterJob, &AlterRequest{JobID: id, Attrs: attrs}, nil)
}

// SelectJobs returns the ids of jobs matching every criterion.
func (c *Client) SelectJobs(req *SelectRequest) ([]string, error) {
	var reply SelectReply
	err := c.Call(MsgSelectJobs, req, &reply)
	return reply.IDs, err
}

// Manager performs a qmgr create, delete, set or unset.
func (c *Client) Manager(req *ManagerRequest) error {
	return c.Call(MsgManager, req, nil)
}

// Shutdown asks the server to stop (qterm). The reply comes before the
// server closes its connections.
func (c *Client) Shutdown(req *ShutdownRequest) error {
	return c.Call(MsgShutdown, req, nil)
}

// WhoAmI returns how the server sees this client.
func (c *Client) WhoAmI() (WhoAmIReply, error) {
	var reply WhoAmIReply
	err := c.Call(MsgWhoAmI, struct{}{}, &reply)
	return reply, err
}

// ResizeJob grows or shrinks a running job (MsgResizeJob).
func (c *Client) ResizeJob(req *ResizeRequest) error { return c.Call(MsgResizeJob, req, nil) }

// RunJobs starts several jobs; the reply has one result per spec.
func (c *Client) RunJobs(runs []RunSpec) ([]ObjectError, error) {
	var reply RunJobsReply
	err := c.Call(MsgRunJobs, &RunJobsRequest{Runs: runs}, &reply)
	return reply.Results, err
}

// AlterJobs applies several changes in one request.
func (c *Client) AlterJobs(alters []AlterRequest) ([]ObjectError, error) {
	var reply AlterJobsReply
	err := c.Call(MsgAlterJobs, &AlterJobsRequest{Alters: alters}, &reply)
	return reply.Results, err
}

// groupRetry is the first pause of DialGroup between rounds over the
// members (doubling up to a second): an election takes about a second.
const groupRetry = 100 * time.Millisecond

// DialGroup connects to the leader of a replicated server group whose
// members' batch addresses are addrs (o.Address is ignored). It tries the
// members in turn and follows a member's answer naming the leader
// (PBSE_NOTLEADER); while the group has no leader (an election, or no
// quorum) it keeps trying until o.Timeout has passed, so that a failover
// shorter than the timeout shows the caller no error. With one address and
// no group it is Dial.
func DialGroup(o DialOptions, addrs []string) (*Client, error) {
	if len(addrs) == 0 {
		return Dial(o)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	deadline := time.Now().Add(o.Timeout)
	pause := groupRetry
	var last error
	for {
		for _, addr := range addrs {
			// Follow redirects from this member, at most once per
			// member (two members naming each other do not loop).
			for hops := 0; hops <= len(addrs) && addr != ""; hops++ {
				left := time.Until(deadline)
				if left <= 0 {
					return nil, last
				}
				d := o
				d.Address, d.Timeout = addr, left
				c, err := Dial(d)
				if err == nil && o.Key == nil {
					err = c.Hello()
				}
				if err == nil {
					c.timeout = o.Timeout
					return c, nil
				}
				if c != nil {
					c.Close()
				}
				last = err
				leader, ok := LeaderOf(err)
				if !ok {
					break
				}
				// While no member knows a leader, the caller's error is
				// the group's: it has no quorum.
				last = NewError(PBSE_NOQUORUM)
				if leader == addr {
					break
				}
				addr = leader
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, last
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, time.Second)
	}
}
