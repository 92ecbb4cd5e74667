package proto

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestCheckShape(t *testing.T) {
	t.Parallel()
	enc := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	nested := func(depth int) []byte {
		return append(bytes.Repeat([]byte{0x91}, depth), 0xc0)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"fixint", []byte{0x05}, true},
		{"status reply", enc(&StatusReply{Objects: []Status{{Name: "1.s", Attrs: []Attr{{Name: "a", Value: "b"}}}}}), true},
		{"mom status", enc(&MomStatus{Node: "n", Resources: map[string]string{"a": "b"}, Vnodes: []VnodeStatus{{Name: "v", Resources: map[string]string{"x": "y"}}}}), true},
		{"every scalar", enc([]any{nil, true, false, -1, -200, 1 << 40, -(1 << 40), 1.5, float32(2.5), "s", []byte{1, 2}, map[string]int{"a": 1}, uint8(200), uint16(60000), int16(-30000), int32(-1 << 20)}), true},
		{"depth at the limit", nested(MaxDepth), true},
		{"depth over the limit", nested(MaxDepth + 1), false},
		{"two values", []byte{0x01, 0x02}, false},
		{"empty", nil, false},
		{"truncated string", []byte{0xa5, 'a', 'b'}, false},
		{"array32 claiming 4G values", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}, false},
		{"map16 short", []byte{0xde, 0x00, 0x02, 0x01, 0x02, 0x03}, false},
		{"str32 claiming 4G bytes", []byte{0xdb, 0xff, 0xff, 0xff, 0xff}, false},
		{"reserved byte", []byte{0xc1}, false},
		{"ext8", []byte{0xc7, 0x02, 0x05, 0xaa, 0xbb}, true},
		{"fixext4", []byte{0xd6, 0x05, 1, 2, 3, 4}, true},
		{"fixext4 short", []byte{0xd6, 0x05, 1, 2, 3}, false},
		{"empty array and map", []byte{0x92, 0x90, 0x80}, true},
	} {
		err := CheckShape(tc.in, MaxDepth)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckShape = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrShape) {
			t.Errorf("%s: error %v does not wrap ErrShape", tc.name, err)
		}
	}
}

// TestDeepFrameRefused is the attack of issue 7: millions of nested
// one-byte arrays in one frame used to overflow the reader's stack in the
// msgpack decoder. The envelope decoder must refuse it with an error.
func TestDeepFrameRefused(t *testing.T) {
	t.Parallel()
	payload := append([]byte{0x97, 0x01, 0x00, 0x00, 0xa0, 0xc2, 0xc0}, bytes.Repeat([]byte{0x91}, 10<<20)...)
	payload = append(payload, 0xc0)
	c := NewConn(nopConn{&bytes.Buffer{}}, 0)
	if _, _, err := c.decodeEnvelope(payload); !errors.Is(err, ErrMalformed) {
		t.Fatalf("deep frame: %v, want ErrMalformed", err)
	}
	// Also in the position of a map key the decoder skips.
	payload = append([]byte{0x81}, bytes.Repeat([]byte{0x91}, 1<<20)...)
	if err := CheckShape(append(payload, 0xc0, 0xc0), MaxDepth); !errors.Is(err, ErrShape) {
		t.Fatalf("deep key: %v", err)
	}
}

// FuzzCheckShape checks CheckShape against the msgpack library: what it
// accepts, the library skips in exactly that many bytes; what the library
// skips in full and cannot nest past the limit, it accepts.
func FuzzCheckShape(f *testing.F) {
	f.Add([]byte{0x92, 0x01, 0xa1, 'x'})
	f.Add([]byte{0xdc, 0x00, 0x01, 0xc0})
	f.Add([]byte{0x81, 0xa1, 'k', 0x91, 0x90})
	f.Add([]byte{0xc7, 0x01, 0x05, 0xaa})
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckShape(b, MaxDepth)
		r := bytes.NewReader(b)
		dec := msgpack.NewDecoder(r)
		serr := dec.Skip()
		whole := serr == nil && r.Len() == 0
		if err == nil && !whole {
			t.Fatalf("CheckShape accepted % x; msgpack skip: %v, %d bytes left", b, serr, r.Len())
		}
		if err != nil && whole && len(b) <= MaxDepth {
			t.Fatalf("CheckShape refused % x that msgpack skips in full: %v", b, err)
		}
	})
}

// BenchmarkCheckShape measures the bound on a full status frame (1,000
// jobs of 30 attributes, as the server sends them) beside decoding it.
func BenchmarkCheckShape(b *testing.B) {
	reply := &StatusReply{}
	for i := 0; i < 1000; i++ {
		st := Status{Name: "123456.server"}
		for k := 0; k < 30; k++ {
			st.Attrs = append(st.Attrs, Attr{Name: "Resource_List", Resource: "ncpus", Value: "some value of a job"})
		}
		reply.Objects = append(reply.Objects, st)
	}
	raw, err := msgpack.Marshal(reply)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			if err := CheckShape(raw, MaxDepth); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			var r StatusReply
			if err := DecodeBody(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
