package proto

import (
	"bytes"
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
