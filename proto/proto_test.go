package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// pipe returns two connected Conns over a real socket pair.
func pipe(t *testing.T) (*Conn, *Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		ch <- c
	}()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	t.Cleanup(func() { a.Close(); b.Close() })
	return NewConn(a, 0), NewConn(b, 0)
}

func TestSendRecvRoundTrip(t *testing.T) {
	t.Parallel()
	a, b := pipe(t)
	req := &SubmitRequest{Queue: "workq", Attrs: []Attr{{Name: AttrResourceList, Resource: "ncpus", Value: "2"}}, Script: []byte("#!/bin/sh\n")}
	h := Header{Type: MsgSubmit, Seq: 42, As: &Identity{User: "alice", UID: 1000, Host: "n1"}}
	go a.Send(h, req)
	got, body, err := b.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != MsgSubmit || got.Seq != 42 || got.As == nil || got.As.User != "alice" {
		t.Fatalf("header = %+v", got)
	}
	var out SubmitRequest
	if err := DecodeBody(body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Queue != "workq" || len(out.Attrs) != 1 || out.Attrs[0].Value != "2" || string(out.Script) != "#!/bin/sh\n" {
		t.Fatalf("body = %+v", out)
	}
}

func TestReadFrameLimits(t *testing.T) {
	t.Parallel()
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], 100)
	tests := []struct {
		name  string
		input []byte
		limit int
		want  string
	}{
		{"oversized", hdr[:], 50, "exceeds size limit"},
		{"truncated", append(hdr[:], make([]byte, 10)...), 1000, "truncated frame"},
		{"empty", []byte{0, 0, 0, 0}, 1000, "empty frame"},
		{"short header", []byte{0, 0}, 1000, "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tt.input), tt.limit)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// A huge announced length must not allocate before the bytes arrive.
func TestReadFrameDoesNotPreallocate(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], DefaultMaxFrame)
	r := io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader([]byte("x")))
	var ms1, ms2 runtimeMem
	ms1.read()
	ReadFrame(r, DefaultMaxFrame)
	ms2.read()
	if d := ms2.total - ms1.total; d > 1<<20 {
		t.Fatalf("allocated %d bytes for a 1-byte truncated frame", d)
	}
}

func TestAuthenticatedHandshake(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, KeySize)
	tests := []struct {
		name      string
		clientKey []byte
		wantErr   bool
	}{
		{"same key", key, false},
		{"wrong key", bytes.Repeat([]byte{8}, KeySize), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := pipe(t)
			srvErr := make(chan error, 1)
			go func() {
				_, err := ServerHandshake(b, "srv", func(Hello) ([]byte, error) { return key, nil })
				srvErr <- err
			}()
			_, err := ClientHandshake(a, RoleMom, "n1", tt.clientKey)
			if (err != nil) != tt.wantErr {
				t.Fatalf("client handshake err = %v", err)
			}
			if <-srvErr != nil {
				t.Fatal("server handshake failed")
			}
			if tt.wantErr {
				return
			}
			go a.Send(Header{Type: MsgStatusServer, Seq: 1}, &StatusRequest{})
			if _, _, err := b.Recv(); err != nil {
				t.Fatalf("authenticated frame rejected: %v", err)
			}
		})
	}
}

// The first frame a daemon reads, before its peer proved anything, is
// bounded well below the frame limit: a stranger's large frame is
// refused at its length, never read into memory; after the handshake
// frames up to the limit pass.
func TestHelloFrameBounded(t *testing.T) {
	t.Parallel()
	a, b := pipe(t)
	go func() {
		var hdr [frameHeaderLen]byte
		a.NetConn().Write(AppendFrameHeader(hdr[:0], maxHelloFrame+1))
	}()
	_, err := ServerHandshake(b, "srv", func(Hello) ([]byte, error) { return nil, nil })
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("a first frame of %d bytes: %v, want ErrFrameTooLarge", maxHelloFrame+1, err)
	}
	if b.maxFrame != DefaultMaxFrame {
		t.Errorf("the frame limit after the handshake is %d, want %d", b.maxFrame, DefaultMaxFrame)
	}
}

// A frame replayed, reordered, altered or sent without a tag is refused.
func TestAuthenticationRejectsTampering(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, KeySize)
	mk := func() (*Conn, *Conn) {
		a, b := pipe(t)
		done := make(chan struct{})
		go func() {
			ServerHandshake(b, "srv", func(Hello) ([]byte, error) { return key, nil })
			close(done)
		}()
		if _, err := ClientHandshake(a, RoleSched, "s", key); err != nil {
			t.Fatal(err)
		}
		<-done
		return a, b
	}
	// Capture a valid frame by encoding it through a sealed session copy.
	t.Run("replay", func(t *testing.T) {
		a, b := mk()
		var buf bytes.Buffer
		a.w.Reset(&buf)
		a.Send(Header{Type: MsgDeleteJob, Seq: 1}, &JobRequest{JobID: "1"})
		frame := buf.Bytes()
		a.w.Reset(a.nc)
		go func() { a.nc.Write(frame); a.nc.Write(frame) }()
		if _, _, err := b.Recv(); err != nil {
			t.Fatalf("first copy rejected: %v", err)
		}
		if _, _, err := b.Recv(); !errors.Is(err, ErrBadMAC) {
			t.Fatalf("replayed frame: err = %v, want ErrBadMAC", err)
		}
	})
	t.Run("altered", func(t *testing.T) {
		a, b := mk()
		var buf bytes.Buffer
		a.w.Reset(&buf)
		a.Send(Header{Type: MsgDeleteJob, Seq: 1}, &JobRequest{JobID: "1"})
		frame := append([]byte(nil), buf.Bytes()...)
		frame[10] ^= 1
		go a.nc.Write(frame)
		if _, _, err := b.Recv(); !errors.Is(err, ErrBadMAC) {
			t.Fatalf("altered frame: err = %v, want ErrBadMAC", err)
		}
	})
	t.Run("untagged", func(t *testing.T) {
		a, b := mk()
		plain := NewConn(a.nc, 0)
		go plain.Send(Header{Type: MsgDeleteJob, Seq: 1}, &JobRequest{JobID: "1"})
		b.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, _, err := b.Recv(); err == nil {
			t.Fatal("untagged frame accepted on an authenticated connection")
		}
	})
}

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	a, b := pipe(t)
	go ServerHandshake(b, "srv", func(Hello) ([]byte, error) { return nil, nil })
	a.Send(Header{Type: MsgHello}, &Hello{Version: 99})
	h, _, err := a.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if h.Code != PBSE_PROTOCOL || !strings.Contains(h.Text, "99") {
		t.Fatalf("reply = %+v", h)
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[Code]int{PBSE_UNKJOBID: 153, PBSE_HISTJOBID: 35, PBSE_PERM: 159, PBSE_BADSTATE: 168, PBSE_NOSERVER: 186} {
		if got := code.ExitStatus(); got != want {
			t.Errorf("%d.ExitStatus() = %d, want %d", code, got, want)
		}
	}
	if Errorf(PBSE_UNKQUE, "%s", "foo").Error() != "Unknown queue foo" {
		t.Errorf("Errorf text = %q", Errorf(PBSE_UNKQUE, "%s", "foo").Error())
	}
}

// FuzzDecodeEnvelope feeds arbitrary payloads to the envelope and body
// decoders: they must return errors, never panic or hang.
func FuzzDecodeEnvelope(f *testing.F) {
	var buf bytes.Buffer
	c := NewConn(nopConn{&buf}, 0)
	c.Send(Header{Type: MsgSubmit, Seq: 3, As: &Identity{User: "u"}}, &SubmitRequest{Queue: "q", Attrs: []Attr{{Name: "a", Value: "b"}}})
	f.Add(buf.Bytes()[4:])
	f.Add([]byte{0x97, 1, 2, 3, 0xa0, 0xc2, 0xc0, 0xc0})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, payload []byte) {
		c := NewConn(nopConn{&bytes.Buffer{}}, 0)
		h, body, err := c.decodeEnvelope(payload)
		if err != nil {
			return
		}
		_ = h
		var sr SubmitRequest
		DecodeBody(body, &sr)
		var st StatusReply
		DecodeBody(body, &st)
		var mr ManagerRequest
		DecodeBody(body, &mr)
	})
}

// FuzzReadFrame feeds arbitrary byte streams to the frame reader.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := bytes.NewReader(stream)
		for i := 0; i < 8; i++ {
			frame, err := ReadFrame(r, 1<<16)
			if err != nil {
				return
			}
			if len(frame) == 0 || len(frame) > 1<<16 {
				t.Fatalf("frame of %d bytes", len(frame))
			}
		}
	})
}
