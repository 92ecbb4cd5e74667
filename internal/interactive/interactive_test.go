package interactive

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func roundTrip(t *testing.T, f Frame) Frame {
	t.Helper()
	b, err := Append(nil, &f)
	if err != nil {
		t.Fatalf("Append(%+v): %v", f, err)
	}
	payload, err := proto.ReadFrame(bytes.NewReader(b), maxFrame)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(payload)
	if err != nil {
		t.Fatalf("Decode(%x): %v", payload, err)
	}
	return got
}

// Every kind decodes to what was encoded.
func TestFrameRoundTrip(t *testing.T) {
	nonce := bytes.Repeat([]byte{7}, NonceLen)
	mac := bytes.Repeat([]byte{9}, MACLen)
	for _, f := range []Frame{
		{Kind: KindHello, Version: Version, JobID: "12.srv", Nonce: nonce},
		{Kind: KindProof, MAC: mac, Nonce: nonce},
		{Kind: KindProof, MAC: mac},
		{Kind: KindSetup, Tty: true, Size: Winsize{24, 80, 640, 480}, Term: "xterm-256color"},
		{Kind: KindSetup},
		{Kind: KindData, Data: []byte("ls -l\r")},
		{Kind: KindStderr, Data: []byte{0, 1, 2}},
		{Kind: KindNotice, Data: []byte("PBS: job killed: walltime 6 exceeded limit 5")},
		{Kind: KindWinsize, Size: Winsize{Rows: 50, Cols: 132}},
		{Kind: KindEOF},
		{Kind: KindExit, Status: -29},
		{Kind: KindExit, Status: 271},
		{Kind: KindSetup, X11: true, Term: "xterm"},
		{Kind: KindSetup, Tty: true, X11: true},
		{Kind: KindX11Open, Channel: 3},
		{Kind: KindX11Data, Channel: 1 << 31, Data: []byte("l\x00\x0b\x00")},
		{Kind: KindX11Data, Channel: 7, Data: make([]byte, MaxData)},
		{Kind: KindX11Close, Channel: 0},
	} {
		got := roundTrip(t, f)
		if len(f.Data) == 0 {
			f.Data = got.Data // nil and empty are the same here
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("round trip of %+v gave %+v", f, got)
		}
	}
}

// Bodies that do not fit their kind are refused, and so are oversized
// data and unknown kinds, on both sides.
func TestFrameRefusals(t *testing.T) {
	for _, payload := range [][]byte{
		{},
		{0},
		{99},
		{byte(KindHello), 1},
		{byte(KindProof), 1, 2, 3},
		{byte(KindSetup), 4, 0, 0, 0, 0, 0, 0, 0, 0},
		{byte(KindX11Open), 0, 1},
		{byte(KindX11Close), 0, 0, 0, 1, 0},
		{byte(KindX11Data), 0, 0, 1},
		append([]byte{byte(KindX11Data), 0, 0, 0, 1}, make([]byte, MaxData+1)...),
		{byte(KindWinsize), 0, 24},
		{byte(KindEOF), 1},
		{byte(KindExit), 0, 0, 0},
		append([]byte{byte(KindData)}, make([]byte, MaxData+1)...),
	} {
		if f, err := Decode(payload); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(% x) = %+v, %v; want ErrMalformed", payload[:min(len(payload), 12)], f, err)
		}
	}
	for _, f := range []Frame{
		{Kind: KindData, Data: make([]byte, MaxData+1)},
		{Kind: KindX11Data, Data: make([]byte, MaxData+1)},
		{Kind: KindHello, Nonce: []byte{1}},
		{Kind: KindProof, MAC: []byte{1}},
		{Kind: 42},
	} {
		if _, err := Append(nil, &f); !errors.Is(err, ErrMalformed) {
			t.Errorf("Append(kind %d) = %v; want ErrMalformed", f.Kind, err)
		}
	}
}

// SendData splits writes larger than a frame.
func TestSendDataSplits(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	data := bytes.Repeat([]byte("x"), 2*MaxData+5)
	go NewConn(a).SendData(KindData, data)
	c := NewConn(b)
	var got []byte
	for len(got) < len(data) {
		f, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Data) > MaxData {
			t.Fatalf("a frame of %d bytes", len(f.Data))
		}
		got = append(got, f.Data...)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("data changed on the way")
	}
}

// handshake runs both sides and returns their errors and the setup the
// shepherd got.
func handshake(t *testing.T, shepherdID, qsubID string, shepherdCookie, qsubCookie []byte) (shepErr, qsubErr error, setup Frame) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	qerr := make(chan error, 1)
	go func() {
		c := NewConn(b)
		err := c.Accept(qsubID, qsubCookie, rand.Reader)
		if err == nil {
			err = c.Send(&Frame{Kind: KindSetup, Tty: true, Size: Winsize{Rows: 30, Cols: 100}, Term: "vt100"})
		}
		b.Close() // a refused peer hears no more
		qerr <- err
	}()
	setup, serr := NewConn(a).Connect(shepherdID, shepherdCookie, rand.Reader)
	a.Close()
	return serr, <-qerr, setup
}

// Both sides prove the same cookie: the setup gets through. A different
// cookie, or another job's id, fails on both sides before any terminal
// data could flow.
func TestHandshake(t *testing.T) {
	cookie := bytes.Repeat([]byte{1}, proto.InteractiveCookieLen)
	other := bytes.Repeat([]byte{2}, proto.InteractiveCookieLen)
	s, q, setup := handshake(t, "3.srv", "3.srv", cookie, cookie)
	if s != nil || q != nil || !setup.Tty || setup.Size.Rows != 30 || setup.Term != "vt100" {
		t.Fatalf("same cookie: shepherd %v, qsub %v, setup %+v", s, q, setup)
	}
	s, q, _ = handshake(t, "3.srv", "3.srv", other, cookie)
	if !errors.Is(s, ErrNotProven) || q == nil {
		t.Errorf("shepherd with another cookie: shepherd %v, qsub %v; want both refused", s, q)
	}
	s, q, _ = handshake(t, "3.srv", "3.srv", cookie, other)
	if !errors.Is(s, ErrNotProven) || q == nil {
		t.Errorf("qsub with another cookie: shepherd %v, qsub %v; want both refused", s, q)
	}
	s, q, _ = handshake(t, "4.srv", "3.srv", cookie, cookie)
	if s == nil || !errors.Is(q, ErrNotProven) {
		t.Errorf("another job's shepherd: shepherd %v, qsub %v; want both refused", s, q)
	}
	if err := NewConn(nil).Accept("3.srv", []byte("short"), rand.Reader); err == nil {
		t.Error("a short cookie was accepted")
	}
}

// FuzzDecode: no payload panics the decoder, and whatever it accepts
// encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, fr := range []Frame{
		{Kind: KindHello, Version: 1, JobID: "1.s", Nonce: make([]byte, NonceLen)},
		{Kind: KindProof, MAC: make([]byte, MACLen)},
		{Kind: KindSetup, Tty: true, Term: "xterm"},
		{Kind: KindData, Data: []byte("hi")},
		{Kind: KindWinsize, Size: Winsize{1, 2, 3, 4}},
		{Kind: KindExit, Status: -1},
		{Kind: KindSetup, X11: true},
		{Kind: KindX11Open, Channel: 1},
		{Kind: KindX11Data, Channel: 1, Data: []byte("B\x00")},
		{Kind: KindX11Close, Channel: 1},
	} {
		b, _ := Append(nil, &fr)
		f.Add(b[4:])
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		fr, err := Decode(payload)
		if err != nil {
			return
		}
		b, err := Append(nil, &fr)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", fr, err)
		}
		if !bytes.Equal(b[4:], payload) {
			t.Fatalf("payload % x decodes to %+v, which encodes to % x", payload, fr, b[4:])
		}
	})
}

// Relay sends what a reader gives, split at MaxData; a Queue hands its
// frames to the writer in order, copies them, refuses what would go over
// its bound until the writer has written, and drops what is sent after
// Close.
func TestRelayAndQueue(t *testing.T) {
	data := bytes.Repeat([]byte("y"), MaxData+10)
	var sizes []int
	Relay(bytes.NewReader(data), func(p []byte) error { sizes = append(sizes, len(p)); return nil })
	if len(sizes) != 2 || sizes[0] != MaxData || sizes[1] != 10 {
		t.Errorf("Relay sent %v", sizes)
	}
	calls := 0
	Relay(bytes.NewReader(data), func(p []byte) error { calls++; return errors.New("gone") })
	if calls != 1 {
		t.Errorf("Relay went on after a failed send: %d sends", calls)
	}
	q := NewQueue(2)
	p := []byte("a")
	if !q.Send(p) {
		t.Fatal("an empty queue refused a byte")
	}
	p[0] = 'z'
	if !q.Send([]byte("b")) || q.Send([]byte("c")) {
		t.Error("a 2-byte queue should take a and b, then refuse c")
	}
	var got []string
	f := <-q.C()
	got = append(got, string(f))
	q.Written(len(f))
	if !q.Send([]byte("d")) {
		t.Error("a byte written makes room for another")
	}
	q.Close()
	if !q.Send([]byte("e")) {
		t.Error("a closed queue drops quietly")
	}
	for f := range q.C() {
		got = append(got, string(f))
	}
	if !reflect.DeepEqual(got, []string{"a", "b", "d"}) {
		t.Errorf("queue gave %q, want [a b d]", got)
	}
}

// Channels: Open numbers channels; what the other end sends reaches the
// channel's writer; a channel whose queue would overflow ends and the
// other end hears so; after Close nothing opens and peers are closed.
func TestChannels(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	cs := NewChannels(NewConn(a), 4)
	heard := make(chan Frame, 4)
	go func() {
		c := NewConn(b)
		for {
			f, err := c.Recv()
			if err != nil {
				return
			}
			heard <- f
		}
	}()
	peer, other := net.Pipe()
	defer other.Close()
	ch, q, ok := cs.Open(peer)
	if !ok || ch != 1 {
		t.Fatalf("Open = %d, %v", ch, ok)
	}
	cs.Write(ch, []byte("abcd"))
	if got := string(<-q.C()); got != "abcd" {
		t.Errorf("the writer got %q", got)
	}
	cs.Write(ch, []byte("12345")) // more than the bound
	if f := <-heard; f.Kind != KindX11Close || f.Channel != ch {
		t.Errorf("an overflowing channel: %+v, want X11Close of %d", f, ch)
	}
	cs.Write(ch, []byte("x")) // ended: dropped
	if _, open := <-q.C(); open {
		t.Error("an ended channel's queue still gives frames")
	}
	q2 := cs.Add(9)
	cs.Close()
	if _, open := <-q2.C(); open {
		t.Error("Close left a queue open")
	}
	if _, _, ok := cs.Open(peer); ok {
		t.Error("a channel opened after Close")
	}
}
