package proto

import (
	"bytes"
	"fmt"
	"net"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// statusReplyPlain is StatusReply as msgpack's reflection encodes it
// (without the hand-written codec).
type statusReplyPlain struct {
	Objects []statusPlain
	Errors  []ObjectError
	Version uint64
	Epoch   string
	Live    []string
}

// statusReplyNext is what a newer peer might send: one more field.
type statusReplyNext struct {
	Epoch   string
	Extra   map[string][]int
	Objects []statusNext
	Live    []string
	Version uint64
	Errors  []ObjectError
}

func plainOf(r *StatusReply) statusReplyPlain {
	p := statusReplyPlain{Errors: r.Errors, Version: r.Version, Epoch: r.Epoch, Live: r.Live}
	if r.Objects != nil {
		p.Objects = []statusPlain{}
	}
	for _, o := range r.Objects {
		s := statusPlain{Name: o.Name, Attrs: []attrPlain{}}
		for _, a := range o.Attrs {
			s.Attrs = append(s.Attrs, attrPlain{Name: a.Name, Resource: a.Resource, Value: a.Value, Op: uint8(a.Op)})
		}
		p.Objects = append(p.Objects, s)
	}
	return p
}

// replyFrom builds a reply from fuzz input, so that every field varies.
// norm makes every empty slice nil: decoders differ on whether an empty
// array reads as nil or empty, which means the same.
func norm(p statusReplyPlain) statusReplyPlain {
	if len(p.Objects) == 0 {
		p.Objects = nil
	}
	if len(p.Errors) == 0 {
		p.Errors = nil
	}
	if len(p.Live) == 0 {
		p.Live = nil
	}
	for i := range p.Objects {
		if len(p.Objects[i].Attrs) == 0 {
			p.Objects[i].Attrs = nil
		}
	}
	return p
}

func replyFrom(name, value string, version uint64, n uint8) *StatusReply {
	r := &StatusReply{Version: version, Epoch: value}
	long := string(bytes.Repeat([]byte(value+"x"), int(n)))
	for i := range int(n % 20) {
		st := Status{Name: name}
		for k := range i % 5 {
			st.Attrs = append(st.Attrs, Attr{Name: name, Resource: value[:min(k, len(value))], Value: long[:min(len(long), k*70)], Op: Op(k * 60)})
		}
		r.Objects = append(r.Objects, st)
	}
	if n%3 == 1 {
		r.Errors = []ObjectError{{Name: name, Code: Code(int32(version)), Text: value}, {Name: long, Code: -1}}
	}
	if n%4 == 2 {
		r.Live = []string{name, long, ""}
	}
	if n%5 == 0 {
		r.Objects = []Status{}
	}
	return r
}

func encodeCompact(t *testing.T, v any) []byte {
	t.Helper()
	return marshal(t, v, true)
}

// FuzzStatusReplyCodec checks the status reply's hand-written codec: its
// bytes are msgpack reflection's with compact integers, it reads what
// reflection writes (compact integers or not, fields in another order, a
// field it does not know), and on any bytes it errs or agrees with
// reflection.
func FuzzStatusReplyCodec(f *testing.F) {
	f.Add("7.srv", "Resource_List", uint64(42), uint8(7), []byte{0x80})
	f.Add("", "", uint64(0), uint8(0), []byte{0xc0})
	f.Add("n1", "é\xff", uint64(1)<<40, uint8(19), []byte{0x85, 0xa7, 'O', 'b', 'j', 'e', 'c', 't', 's', 0x91, 0x92, 0xa0, 0x91, 0x94, 0xa0, 0xa0, 0xa0, 0xd0, 0x80})
	f.Fuzz(func(t *testing.T, name, value string, version uint64, n uint8, junk []byte) {
		r := replyFrom(name, value, version, n)
		got := AppendStatusReply(nil, r)
		if want := encodeCompact(t, plainOf(r)); !bytes.Equal(got, want) {
			t.Fatalf("bytes differ from reflection's:\n got % x\nwant % x", got, want)
		}
		want := norm(plainOf(r))
		var back StatusReply
		if err := DecodeStatusReply(got, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(norm(plainOf(&back)), want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", back, r)
		}
		// Through the msgpack encoder and decoder (as Conn sends it).
		var viaLib StatusReply
		unmarshal(t, encodeCompact(t, r), &viaLib, "through msgpack")
		if !reflect.DeepEqual(norm(plainOf(&viaLib)), want) {
			t.Fatalf("through msgpack:\n got %+v\nwant %+v", viaLib, r)
		}
		next := statusReplyNext{Epoch: r.Epoch, Extra: map[string][]int{name: {1, -300}}, Live: r.Live, Version: r.Version, Errors: r.Errors}
		for _, o := range plainOf(r).Objects {
			s := statusNext{Name: o.Name, Version: version}
			for _, a := range o.Attrs {
				s.Attrs = append(s.Attrs, attrNext{Name: a.Name, Resource: a.Resource, Value: a.Value, Op: a.Op, Flags: []string{value}})
			}
			next.Objects = append(next.Objects, s)
		}
		for _, compact := range []bool{false, true} {
			var fromNext StatusReply
			if err := DecodeStatusReply(marshal(t, &next, compact), &fromNext); err != nil {
				t.Fatalf("from a newer peer: %v", err)
			}
			if got := norm(plainOf(&fromNext)); !reflect.DeepEqual(got, want) {
				t.Fatalf("from a newer peer (compact %v):\n got %+v\nwant %+v", compact, got, want)
			}
		}
		// Any bytes: an error, or what reflection reads.
		var fast StatusReply
		if DecodeStatusReply(junk, &fast) == nil {
			var slow statusReplyPlain
			if err := msgpack.Unmarshal(junk, &slow); err == nil {
				if fp := norm(plainOf(&fast)); !reflect.DeepEqual(fp, norm(slow)) {
					t.Fatalf("% x: fast %+v, reflection %+v", junk, fp, norm(slow))
				}
			}
		}
	})
}

// StatusFrames sends what a StatusReply split into frames of chunk
// objects is: every frame but the last with Objects only and More set,
// the last with the tail's fields, one empty frame for no objects.
func TestStatusFrames(t *testing.T) {
	t.Parallel()
	tail := StatusReply{Errors: []ObjectError{{Name: "9", Code: PBSE_UNKJOBID, Text: "Unknown Job Id"}}, Version: 77, Epoch: "e1", Live: []string{"1.s", "2.s"}}
	for _, n := range []int{0, 1, 3, 4, 7, 10} {
		for _, stream := range []bool{false, true} {
			var objs []Status
			for i := range n {
				objs = append(objs, Status{Name: fmt.Sprint(i, ".s"), Attrs: []Attr{{Name: "job_state", Value: "Q"}, {Name: "Resource_List", Resource: "ncpus", Value: fmt.Sprint(i)}}})
			}
			a, b := net.Pipe()
			go func() {
				// A streamed answer is sent while it is built: frames go
				// out before the last object is added.
				f := NewStatusFrames(3)
				ca := NewConn(a, 0)
				if stream {
					f.Stream(ca, 5, nil)
				}
				for _, st := range objs {
					f.Add(st.Name, st.Attrs)
				}
				f.Send(ca, 5, &tail)
				a.Close()
			}()
			c := NewConn(b, 0)
			for k := 0; ; k++ {
				h, body, err := c.Recv()
				if err != nil {
					t.Fatalf("%d objects, frame %d: %v", n, k, err)
				}
				want := StatusReply{Objects: objs[min(3*k, n):min(3*k+3, n)]}
				if len(want.Objects) == 0 {
					want.Objects = nil
				}
				last := 3*k+3 >= n
				if last {
					want.Errors, want.Version, want.Epoch, want.Live = tail.Errors, tail.Version, tail.Epoch, tail.Live
				}
				if h.Seq != 5 || h.Type != MsgReply || h.More == last {
					t.Fatalf("%d objects, frame %d: header %+v", n, k, h)
				}
				if w := AppendStatusReply(nil, &want); !bytes.Equal(body, w) {
					t.Fatalf("%d objects, frame %d:\n got % x\nwant % x", n, k, []byte(body), w)
				}
				if last {
					break
				}
			}
			b.Close()
		}
	}
}

// An aborted stream stops after the frames already full; the connection
// is then free for another answer (an error).
func TestStatusFramesAbort(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	go func() {
		ca := NewConn(a, 0)
		f := NewStatusFrames(2)
		f.Stream(ca, 9, nil)
		for i := range 5 {
			f.Add(fmt.Sprint(i), nil)
		}
		f.Abort()
		ca.Send(Header{Type: MsgReply, Seq: 9, Code: PBSE_SYSTEM, Text: "stopped"}, nil)
		a.Close()
	}()
	c := NewConn(b, 0)
	var frames int
	for {
		h, _, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if h.Code != PBSE_NONE {
			if h.Text != "stopped" || frames > 2 {
				t.Fatalf("after %d frames: %+v", frames, h)
			}
			break
		}
		if !h.More {
			t.Fatalf("frame %d of an aborted stream ends the answer: %+v", frames, h)
		}
		frames++
	}
}

// Collect gives back, in order, every object added to an answer that
// was not streamed, with the tail's other fields.
func TestStatusFramesCollect(t *testing.T) {
	t.Parallel()
	tail := StatusReply{Errors: []ObjectError{{Name: "9", Code: PBSE_UNKJOBID, Text: "Unknown Job Id"}}, Version: 3, Epoch: "e"}
	for _, n := range []int{0, 1, 3, 7} {
		f := NewStatusFrames(3)
		var objs []Status
		for i := range n {
			st := Status{Name: fmt.Sprint(i, ".s"), Attrs: []Attr{{Name: "job_state", Value: "R"}, {Name: "Resource_List", Resource: "mem", Value: fmt.Sprint(i, "kb")}}}
			objs = append(objs, st)
			f.Add(st.Name, st.Attrs)
		}
		got, err := f.Collect(&tail)
		if err != nil {
			t.Fatal(err)
		}
		want := StatusReply{Objects: objs, Errors: tail.Errors, Version: 3, Epoch: "e"}
		if !bytes.Equal(AppendStatusReply(nil, got), AppendStatusReply(nil, &want)) {
			t.Fatalf("%d objects: got %+v", n, got)
		}
	}
}
