package proto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// envelopeFields is the number of msgpack array elements of an envelope:
// type, seq, code, text, more, as, body. Decoders accept longer arrays and
// skip what they do not know, so fields can be appended later.
const envelopeFields = 7

// Conn is one protocol connection: a buffered reader and writer, one reused
// encoder and one reused decoder, an optional authentication session, and
// the frame size cap. A Conn is not safe for concurrent use; callers
// serialise Send and Recv (Client does so with a mutex, the server reads on
// one goroutine and writes replies on the same one).
type Conn struct {
	nc       net.Conn
	r        *bufio.Reader
	w        *bufio.Writer
	out      bytes.Buffer
	enc      *msgpack.Encoder
	in       bytes.Reader
	dec      *msgpack.Decoder
	maxFrame int
	sess     *session
	// writeTimeout bounds each Send (0: no bound of its own).
	writeTimeout time.Duration
}

// connBuffer sizes each connection's read and write buffers. Small,
// because a daemon holds thousands of mostly idle connections; large
// frames bypass the buffers (bufio reads and writes them directly).
const connBuffer = 4 << 10

// keptOut is the largest encoding buffer a connection keeps between
// frames: one large answer would otherwise stay with a connection that may
// then idle for minutes.
const keptOut = 64 << 10

// WriteTimeout bounds each frame a daemon writes to a peer it answers: a
// peer that has not taken a frame in this time reads too slowly, or not at
// all, and is cut off (SlowReaderError) instead of keeping its answer in
// the daemon's memory. Honest commands read their answers at once.
const WriteTimeout = 30 * time.Second

// SlowReaderError is a Send that did not finish within the connection's
// write timeout: the peer is cut off.
type SlowReaderError struct {
	Unsent int // bytes of the answer not written (the frame, and what waited behind it)
	After  time.Duration
	Err    error
}

func (e *SlowReaderError) Error() string {
	return fmt.Sprintf("slow reader: %d bytes unsent after %s", e.Unsent, e.After)
}

func (e *SlowReaderError) Unwrap() error { return e.Err }

// NewConn wraps nc. maxFrame <= 0 selects DefaultMaxFrame.
func NewConn(nc net.Conn, maxFrame int) *Conn {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	c := &Conn{
		nc:       nc,
		r:        bufio.NewReaderSize(nc, connBuffer),
		w:        bufio.NewWriterSize(nc, connBuffer),
		maxFrame: maxFrame,
	}
	c.enc = msgpack.NewEncoder(&c.out)
	c.enc.UseCompactInts(true)
	c.dec = msgpack.NewDecoder(&c.in)
	return c
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the underlying connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Authenticated reports whether frames on c carry cluster-key tags.
func (c *Conn) Authenticated() bool { return c.sess != nil }

// SetReadDeadline sets the deadline for the next Recv.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteTimeout makes every later Send fail with a SlowReaderError when
// the peer has not taken its frame within d (see WriteTimeout).
func (c *Conn) SetWriteTimeout(d time.Duration) { c.writeTimeout = d }

// Send writes one frame holding h and body (nil for no body) and flushes it.
func (c *Conn) Send(h Header, body any) error {
	defer c.releaseOut()
	c.out.Reset()
	enc := c.enc
	if err := enc.EncodeArrayLen(envelopeFields); err != nil {
		return err
	}
	enc.EncodeUint(uint64(h.Type))
	enc.EncodeUint(h.Seq)
	enc.EncodeInt(int64(h.Code))
	enc.EncodeString(h.Text)
	enc.EncodeBool(h.More)
	if h.As == nil {
		enc.EncodeNil()
	} else if err := enc.Encode(h.As); err != nil {
		return fmt.Errorf("encode identity: %w", err)
	}
	if err := enc.Encode(body); err != nil {
		return fmt.Errorf("encode %s body: %w", h.Type, err)
	}
	payload := c.out.Bytes()
	n := len(payload)
	var tag []byte
	if c.sess != nil {
		tag = c.sess.seal(payload)
		n += len(tag)
	}
	if n > c.maxFrame {
		return fmt.Errorf("send %s: %w: %d > %d bytes", h.Type, ErrFrameTooLarge, n, c.maxFrame)
	}
	if c.writeTimeout > 0 {
		if err := c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout)); err != nil {
			return fmt.Errorf("send %s: %w", h.Type, err)
		}
	}
	var hdr [frameHeaderLen]byte
	AppendFrameHeader(hdr[:0], n)
	c.w.Write(hdr[:])
	c.w.Write(payload)
	if tag != nil {
		c.w.Write(tag)
	}
	err := c.w.Flush()
	if err != nil && c.writeTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		return &SlowReaderError{Unsent: frameHeaderLen + n, After: c.writeTimeout, Err: err}
	}
	return err
}

// releaseOut lets go of an encoding buffer grown past keptOut.
func (c *Conn) releaseOut() {
	if c.out.Cap() > keptOut {
		c.out = bytes.Buffer{}
	}
}

// Recv reads one frame and returns its header and raw body. The body stays
// valid until the next Recv. A frame that fails authentication or does not
// decode is an error after which the connection must be closed.
func (c *Conn) Recv() (Header, msgpack.RawMessage, error) {
	frame, err := ReadFrame(c.r, c.maxFrame)
	if err != nil {
		return Header{}, nil, err
	}
	payload := frame
	if c.sess != nil {
		if len(frame) < MACSize {
			return Header{}, nil, fmt.Errorf("%w: frame shorter than its tag", ErrBadMAC)
		}
		payload, tag := frame[:len(frame)-MACSize], frame[len(frame)-MACSize:]
		if err := c.sess.open(payload, tag); err != nil {
			return Header{}, nil, err
		}
		return c.decodeEnvelope(payload)
	}
	return c.decodeEnvelope(payload)
}

// ErrMalformed wraps every envelope decoding failure.
var ErrMalformed = errors.New("malformed envelope")

func (c *Conn) decodeEnvelope(payload []byte) (h Header, body msgpack.RawMessage, err error) {
	// Bounded before any recursive decoder sees the bytes (see CheckShape).
	if err := CheckShape(payload, MaxDepth); err != nil {
		return h, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	c.in.Reset(payload)
	dec := c.dec
	dec.Reset(&c.in)
	n, err := dec.DecodeArrayLen()
	if err != nil || n < envelopeFields {
		return h, nil, fmt.Errorf("%w: want an array of %d fields (got %d, %v)", ErrMalformed, envelopeFields, n, err)
	}
	t, err := dec.DecodeUint16()
	if err != nil {
		return h, nil, fmt.Errorf("%w: type: %v", ErrMalformed, err)
	}
	h.Type = MsgType(t)
	if h.Seq, err = dec.DecodeUint64(); err != nil {
		return h, nil, fmt.Errorf("%w: seq: %v", ErrMalformed, err)
	}
	code, err := dec.DecodeInt32()
	if err != nil {
		return h, nil, fmt.Errorf("%w: code: %v", ErrMalformed, err)
	}
	h.Code = Code(code)
	if h.Text, err = dec.DecodeString(); err != nil {
		return h, nil, fmt.Errorf("%w: text: %v", ErrMalformed, err)
	}
	if h.More, err = dec.DecodeBool(); err != nil {
		return h, nil, fmt.Errorf("%w: more: %v", ErrMalformed, err)
	}
	var as *Identity
	if err = dec.Decode(&as); err != nil {
		return h, nil, fmt.Errorf("%w: identity: %v", ErrMalformed, err)
	}
	h.As = as
	if n == envelopeFields {
		// The body is the rest of the payload: hand it over without
		// parsing it twice (the body's own decoder checks it).
		rest := payload[len(payload)-c.in.Len():]
		if len(rest) == 0 {
			return h, nil, fmt.Errorf("%w: no body", ErrMalformed)
		}
		return h, rest, nil
	}
	if body, err = dec.DecodeRaw(); err != nil {
		return h, nil, fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	for i := envelopeFields; i < n; i++ {
		if err := dec.Skip(); err != nil {
			return h, nil, fmt.Errorf("%w: trailing field: %v", ErrMalformed, err)
		}
	}
	if c.in.Len() != 0 {
		return h, nil, fmt.Errorf("%w: %d bytes after the envelope", ErrMalformed, c.in.Len())
	}
	return h, body, nil
}

// DecodeBody decodes a raw body into v. An empty or nil body leaves v as
// is; bytes after the body are an error. raw must come from Recv, which
// bounded its shape (CheckShape); bytes from anywhere else go through
// CheckShape first, or a hostile length or nesting reaches the decoder.
func DecodeBody(raw msgpack.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	r := bytes.NewReader(raw)
	dec := msgpack.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w: %d bytes after the body", ErrMalformed, r.Len())
	}
	return nil
}

// ClientHandshake sends the Hello for role and waits for the HelloReply. With
// a key the connection becomes authenticated: the reply must carry a valid
// tag and every later frame is tagged.
func ClientHandshake(c *Conn, role Role, name string, key []byte) (HelloReply, error) {
	cNonce, err := sendHello(c, role, name)
	if err != nil {
		return HelloReply{}, err
	}
	return readHelloReply(c, role, key, cNonce)
}

// sendHello sends the Hello for role and returns its nonce.
func sendHello(c *Conn, role Role, name string) ([]byte, error) {
	cNonce := NewNonce()
	if err := c.Send(Header{Type: MsgHello}, &Hello{Version: ProtocolVersion, Role: role, Name: name, Nonce: cNonce}); err != nil {
		return nil, fmt.Errorf("send hello: %w", err)
	}
	return cNonce, nil
}

// readHelloReply reads the answer to the Hello sendHello sent with cNonce.
func readHelloReply(c *Conn, role Role, key, cNonce []byte) (HelloReply, error) {
	var reply HelloReply
	frame, err := ReadFrame(c.r, c.maxFrame)
	if err != nil {
		return reply, fmt.Errorf("read hello reply: %w", err)
	}
	payload := frame
	var tag []byte
	if key != nil {
		if len(frame) < MACSize {
			return reply, fmt.Errorf("hello reply: %w", ErrBadMAC)
		}
		payload, tag = frame[:len(frame)-MACSize], frame[len(frame)-MACSize:]
	}
	h, body, err := c.decodeEnvelope(payload)
	if err != nil {
		return reply, fmt.Errorf("hello reply: %w", err)
	}
	if h.Type != MsgHelloReply {
		return reply, fmt.Errorf("hello reply: unexpected %s", h.Type)
	}
	if err := DecodeBody(body, &reply); err != nil {
		return reply, fmt.Errorf("hello reply: %w", err)
	}
	if key != nil {
		c.sess = &session{key: key, role: role, sNonce: reply.Nonce, cNonce: cNonce, sendDir: dirToServer, recvDir: dirToPeer}
		if len(reply.Nonce) != NonceSize {
			return reply, fmt.Errorf("hello reply: %w: bad nonce", ErrBadMAC)
		}
		if err := c.sess.open(payload, tag); err != nil {
			return reply, fmt.Errorf("hello reply: %w (is the cluster key the server's?)", err)
		}
	}
	if h.Code != PBSE_NONE {
		return reply, &Error{Code: h.Code, Text: h.Text}
	}
	return reply, nil
}

// ServerHandshake reads a peer's Hello and answers it. keyFor returns the
// cluster key required for the peer's role, or nil when the role needs none
// on this listener; it returns an error to refuse the role outright. On
// success frames are authenticated from here on when a key applied.
func ServerHandshake(c *Conn, serverName string, keyFor func(Hello) ([]byte, error)) (Hello, error) {
	return serverHandshake(c, serverName, keyFor, nil)
}

// ServerRedirect answers a peer's Hello as a member of a replicated server
// group that is not its leader: the handshake completes as ServerHandshake
// would (so that a daemon's key checks the answer), then the reply carries
// PBSE_NOTLEADER and leader, the leader's batch address ("" while there is
// none). The connection is of no further use.
func ServerRedirect(c *Conn, serverName string, keyFor func(Hello) ([]byte, error), leader string) (Hello, error) {
	return serverHandshake(c, serverName, keyFor, &Error{Code: PBSE_NOTLEADER, Text: leader})
}

// LeaderOf returns the leader's address named by a PBSE_NOTLEADER answer,
// and whether err is one.
func LeaderOf(err error) (string, bool) {
	var pe *Error
	if errors.As(err, &pe) && pe.Code == PBSE_NOTLEADER {
		return pe.Text, true
	}
	return "", false
}

// maxHelloFrame bounds the first frame a daemon reads, before its peer
// has proved anything: a Hello is a few hundred bytes, and a stranger's
// 16 MB frame must not be read into memory (TestHostileFramesEveryPort).
const maxHelloFrame = 64 << 10

func serverHandshake(c *Conn, serverName string, keyFor func(Hello) ([]byte, error), answer *Error) (Hello, error) {
	var hello Hello
	limit := c.maxFrame
	c.maxFrame = min(limit, maxHelloFrame)
	h, body, err := c.Recv()
	c.maxFrame = limit
	if err != nil {
		return hello, fmt.Errorf("read hello: %w", err)
	}
	if h.Type != MsgHello {
		return hello, fmt.Errorf("%w: first frame is %s, not Hello", ErrMalformed, h.Type)
	}
	if err := DecodeBody(body, &hello); err != nil {
		return hello, err
	}
	refuse := func(code Code, text string) (Hello, error) {
		c.Send(Header{Type: MsgHelloReply, Code: code, Text: text}, &HelloReply{Version: ProtocolVersion, ServerName: serverName})
		return hello, &Error{Code: code, Text: text}
	}
	if hello.Version != ProtocolVersion {
		return refuse(PBSE_PROTOCOL, fmt.Sprintf("protocol version %d not supported (this side speaks %d)", hello.Version, ProtocolVersion))
	}
	key, err := keyFor(hello)
	if err != nil {
		return refuse(PBSE_PERM, err.Error())
	}
	reply := HelloReply{Version: ProtocolVersion, ServerName: serverName}
	if key != nil {
		if len(hello.Nonce) != NonceSize {
			return refuse(PBSE_BADCRED, "hello nonce missing or of the wrong size")
		}
		reply.Nonce = NewNonce()
		c.sess = &session{key: key, role: hello.Role, sNonce: reply.Nonce, cNonce: hello.Nonce, sendDir: dirToPeer, recvDir: dirToServer}
	}
	rh := Header{Type: MsgHelloReply}
	if answer != nil {
		rh.Code, rh.Text = answer.Code, answer.Text
	}
	if err := c.Send(rh, &reply); err != nil {
		return hello, fmt.Errorf("send hello reply: %w", err)
	}
	if answer != nil {
		return hello, answer
	}
	return hello, nil
}

// Forward relays one request for a relay (a mom's for its host's
// commands, a group member's for its own): it sends h with its encoded
// body on up, then copies the answers back to down until the last (More
// clear, or a refusal), each read from up bounded by wait. A failed send
// to down is returned as it is (a *SlowReaderError for a caller that
// stopped reading).
func Forward(up, down *Conn, h Header, body msgpack.RawMessage, wait time.Duration) error {
	if err := up.Send(h, rawOrNil(body)); err != nil {
		return err
	}
	for {
		up.nc.SetReadDeadline(time.Now().Add(wait))
		rh, rbody, err := up.Recv()
		if err != nil {
			return err
		}
		if err := down.Send(rh, rawOrNil(rbody)); err != nil {
			return err
		}
		if !rh.More || rh.Code != PBSE_NONE {
			return nil
		}
	}
}

// rawOrNil passes an encoded body through unchanged (empty: no body).
func rawOrNil(b msgpack.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
