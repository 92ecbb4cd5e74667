// Package interactive is the connection between qsub -I and the shepherd
// of its job: the shepherd connects to the port qsub listens on, the two
// prove to each other that they hold the job's secret (handshake.go), and
// then relay the job's terminal: what the user types one way, what the
// job writes the other, window sizes, notices from PBS, and last the
// job's exit status.
//
// A frame is a 4-byte big-endian length, one byte of Kind, and a body
// whose layout the kind fixes. Decoders check every length before they
// allocate: a peer is not trusted until the handshake is over, and not
// beyond its frame limit after.
//
// Who calls: qsub (the listening side) and internal/shepherd (the
// connecting side).
package interactive

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gopbs/gopbs/proto"
)

// Kind says what a frame carries.
type Kind byte

// Frame kinds (append-only: both ends of a connection may be of
// different versions within one protocol version).
const (
	// KindHello opens the handshake (shepherd -> qsub): Version, JobID
	// and a Nonce qsub must prove itself against.
	KindHello Kind = 1
	// KindProof answers a nonce: MAC, and from qsub its own Nonce.
	KindProof Kind = 2
	// KindSetup (qsub -> shepherd, once, after the handshake): whether
	// the user is at a terminal (Tty), its Size and TERM.
	KindSetup Kind = 3
	// KindData carries bytes: what the user typed (qsub -> shepherd), or
	// what the job wrote to its terminal or standard output.
	KindData Kind = 4
	// KindStderr is what the job wrote to its standard error when it has
	// no terminal (shepherd -> qsub).
	KindStderr Kind = 5
	// KindWinsize is a new window size (qsub -> shepherd).
	KindWinsize Kind = 6
	// KindEOF says the user's standard input ended (qsub -> shepherd);
	// without a terminal the job's standard input is closed.
	KindEOF Kind = 7
	// KindNotice is a message of PBS's own for the user, such as why the
	// job was killed (shepherd -> qsub).
	KindNotice Kind = 8
	// KindExit is the job's exit status, the shepherd's last frame.
	KindExit Kind = 9
	// X11 forwarding (qsub -I -X; the setup's X11 flag asked for it):
	// KindX11Open (shepherd -> qsub) says an X client of the job
	// connected, as Channel; KindX11Data carries a channel's bytes
	// either way, the first from the shepherd being the client's
	// connection setup with its credentials taken out (internal/x11);
	// KindX11Close ends a channel, from either side.
	KindX11Open  Kind = 10
	KindX11Data  Kind = 11
	KindX11Close Kind = 12
)

// Version is the protocol version a shepherd announces in its hello.
const Version = 1

// Sizes of the handshake's values.
const (
	NonceLen = 32
	MACLen   = 32
)

// MaxData bounds the bytes of one data frame; senders split larger
// writes.
const MaxData = 32 << 10

// maxText bounds the text fields of the handshake and the setup (a job
// id, TERM).
const maxText = 256

// maxFrame is the largest frame either side accepts (an X11 data frame:
// kind, channel, data).
const maxFrame = 1 + 4 + MaxData

// Winsize is a terminal's size, as TIOCGWINSZ gives it.
type Winsize struct {
	Rows, Cols, X, Y uint16
}

// Frame is one frame; which fields mean something depends on Kind.
type Frame struct {
	Kind    Kind
	Version int     // KindHello
	JobID   string  // KindHello
	Nonce   []byte  // KindHello; KindProof from qsub
	MAC     []byte  // KindProof
	Tty     bool    // KindSetup
	X11     bool    // KindSetup: forward the job's X clients
	Size    Winsize // KindSetup, KindWinsize
	Term    string  // KindSetup
	Data    []byte  // KindData, KindStderr, KindNotice, KindX11Data
	Status  int     // KindExit
	Channel uint32  // KindX11Open, KindX11Data, KindX11Close
}

// Setup flags.
const (
	setupTty = 1 << iota
	setupX11
)

// ErrMalformed is a frame whose body does not fit its kind.
var ErrMalformed = errors.New("malformed interactive frame")

// Append appends f's encoding (length prefix included) to dst.
func Append(dst []byte, f *Frame) ([]byte, error) {
	body := []byte{byte(f.Kind)}
	switch f.Kind {
	case KindHello:
		if len(f.Nonce) != NonceLen || len(f.JobID) > maxText || f.Version < 0 || f.Version > 255 {
			return dst, fmt.Errorf("%w: hello", ErrMalformed)
		}
		body = append(body, byte(f.Version))
		body = append(body, f.Nonce...)
		body = append(body, f.JobID...)
	case KindProof:
		if len(f.MAC) != MACLen || len(f.Nonce) != 0 && len(f.Nonce) != NonceLen {
			return dst, fmt.Errorf("%w: proof", ErrMalformed)
		}
		body = append(body, f.MAC...)
		body = append(body, f.Nonce...)
	case KindSetup:
		if len(f.Term) > maxText {
			return dst, fmt.Errorf("%w: setup", ErrMalformed)
		}
		flags := byte(0)
		if f.Tty {
			flags |= setupTty
		}
		if f.X11 {
			flags |= setupX11
		}
		body = append(body, flags)
		body = appendSize(body, f.Size)
		body = append(body, f.Term...)
	case KindData, KindStderr, KindNotice:
		if len(f.Data) > MaxData {
			return dst, fmt.Errorf("%w: %d bytes of data", ErrMalformed, len(f.Data))
		}
		body = append(body, f.Data...)
	case KindWinsize:
		body = appendSize(body, f.Size)
	case KindX11Open, KindX11Close:
		body = binary.BigEndian.AppendUint32(body, f.Channel)
	case KindX11Data:
		if len(f.Data) > MaxData {
			return dst, fmt.Errorf("%w: %d bytes of X11 data", ErrMalformed, len(f.Data))
		}
		body = binary.BigEndian.AppendUint32(body, f.Channel)
		body = append(body, f.Data...)
	case KindEOF:
	case KindExit:
		body = binary.BigEndian.AppendUint32(body, uint32(int32(f.Status)))
	default:
		return dst, fmt.Errorf("%w: kind %d", ErrMalformed, f.Kind)
	}
	dst = proto.AppendFrameHeader(dst, len(body))
	return append(dst, body...), nil
}

func appendSize(b []byte, s Winsize) []byte {
	for _, v := range []uint16{s.Rows, s.Cols, s.X, s.Y} {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	return b
}

// Decode parses one frame's payload (what follows the length prefix).
// Data fields alias payload.
func Decode(payload []byte) (Frame, error) {
	if len(payload) == 0 {
		return Frame{}, fmt.Errorf("%w: empty", ErrMalformed)
	}
	f := Frame{Kind: Kind(payload[0])}
	b := payload[1:]
	bad := func() (Frame, error) {
		return Frame{}, fmt.Errorf("%w: kind %d, %d bytes", ErrMalformed, f.Kind, len(b))
	}
	switch f.Kind {
	case KindHello:
		if len(b) < 1+NonceLen || len(b) > 1+NonceLen+maxText {
			return bad()
		}
		f.Version = int(b[0])
		f.Nonce = b[1 : 1+NonceLen]
		f.JobID = string(b[1+NonceLen:])
	case KindProof:
		if len(b) != MACLen && len(b) != MACLen+NonceLen {
			return bad()
		}
		f.MAC = b[:MACLen]
		if len(b) > MACLen {
			f.Nonce = b[MACLen:]
		}
	case KindSetup:
		if len(b) < 9 || len(b) > 9+maxText || b[0]&^(setupTty|setupX11) != 0 {
			return bad()
		}
		f.Tty = b[0]&setupTty != 0
		f.X11 = b[0]&setupX11 != 0
		f.Size = readSize(b[1:9])
		f.Term = string(b[9:])
	case KindData, KindStderr, KindNotice:
		if len(b) > MaxData {
			return bad()
		}
		f.Data = b
	case KindWinsize:
		if len(b) != 8 {
			return bad()
		}
		f.Size = readSize(b)
	case KindX11Open, KindX11Close:
		if len(b) != 4 {
			return bad()
		}
		f.Channel = binary.BigEndian.Uint32(b)
	case KindX11Data:
		if len(b) < 4 || len(b) > 4+MaxData {
			return bad()
		}
		f.Channel = binary.BigEndian.Uint32(b)
		f.Data = b[4:]
	case KindEOF:
		if len(b) != 0 {
			return bad()
		}
	case KindExit:
		if len(b) != 4 {
			return bad()
		}
		f.Status = int(int32(binary.BigEndian.Uint32(b)))
	default:
		return bad()
	}
	return f, nil
}

func readSize(b []byte) Winsize {
	return Winsize{
		Rows: binary.BigEndian.Uint16(b[0:]), Cols: binary.BigEndian.Uint16(b[2:]),
		X: binary.BigEndian.Uint16(b[4:]), Y: binary.BigEndian.Uint16(b[6:]),
	}
}

// Conn sends and receives frames over a connection. Send is safe for
// concurrent use (the job's output, notices and the exit status go out
// from different goroutines); Recv is for one goroutine.
type Conn struct {
	r   *bufio.Reader
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewConn wraps rw.
func NewConn(rw io.ReadWriter) *Conn {
	return &Conn{r: bufio.NewReaderSize(rw, 8<<10), w: rw}
}

// Send writes one frame.
func (c *Conn) Send(f *Frame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := Append(c.buf[:0], f)
	if err != nil {
		return err
	}
	c.buf = b[:0]
	if cap(c.buf) > 2*maxFrame {
		c.buf = nil
	}
	_, err = c.w.Write(b)
	return err
}

// SendData sends p as frames of kind (KindData, KindStderr), split at
// MaxData.
func (c *Conn) SendData(kind Kind, p []byte) error {
	return c.sendSplit(Frame{Kind: kind}, p)
}

// SendX11 sends p as X11 data frames of channel ch, split at MaxData.
func (c *Conn) SendX11(ch uint32, p []byte) error {
	return c.sendSplit(Frame{Kind: KindX11Data, Channel: ch}, p)
}

func (c *Conn) sendSplit(f Frame, p []byte) error {
	for len(p) > 0 {
		n := min(len(p), MaxData)
		f.Data = p[:n]
		if err := c.Send(&f); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// Recv reads the next frame. Its Data is valid until the next Recv.
func (c *Conn) Recv() (Frame, error) {
	payload, err := proto.ReadFrame(c.r, maxFrame)
	if err != nil {
		return Frame{}, err
	}
	return Decode(payload)
}
