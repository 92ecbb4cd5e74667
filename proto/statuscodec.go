package proto

import (
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/msgp"
)

// The status reply's codec, written by hand over bytes: a listing of
// every job is the largest answer the server gives (qstat of a long
// queue, a scheduler's fetch), and msgpack's encoder and decoder, called
// value by value, cost several times what the bytes do. The bytes are
// those of msgpack's own encoding of StatusReply with compact integers (a
// map of its five fields by name, each Status and Attr as their codecs
// write them), and the decoder reads what msgpack would: any integer form,
// nil for empty, fields in any order, fields it does not know skipped.

// EncodeMsgpack writes the reply as msgpack's reflection would.
func (r *StatusReply) EncodeMsgpack(enc *msgpack.Encoder) error {
	return writeAppended(enc, func(b []byte) []byte { return AppendStatusReply(b, r) })
}

// writeAppended writes to enc what add appends to a scratch buffer.
func writeAppended(enc *msgpack.Encoder, add func([]byte) []byte) error {
	bp := scratch.Get().(*[]byte)
	b := add((*bp)[:0])
	_, err := enc.Writer().Write(b)
	if cap(b) <= 1<<20 {
		*bp = b
		scratch.Put(bp)
	}
	return err
}

// DecodeMsgpack reads a reply as msgpack's reflection would.
func (r *StatusReply) DecodeMsgpack(dec *msgpack.Decoder) error {
	return decodeRaw(dec, func(d *byteReader) error { *r = StatusReply{}; return d.statusReply(r) })
}

// decodeRaw reads the next value of dec with read, over its bytes.
func decodeRaw(dec *msgpack.Decoder, read func(*byteReader) error) error {
	raw, err := dec.DecodeRaw()
	if err != nil {
		return err
	}
	return read(&byteReader{b: raw})
}

// scratch holds encoding buffers between frames. They start small (a
// command encodes a few attributes once) and grow with what they hold.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// AppendStatusReply appends the encoding of r to b.
func AppendStatusReply(b []byte, r *StatusReply) []byte {
	b = append(b, 0x85)
	b = msgp.AppendString(b, "Objects")
	if r.Objects == nil {
		b = append(b, 0xc0)
	} else {
		b = msgp.AppendArrayLen(b, len(r.Objects))
		for i := range r.Objects {
			b = AppendStatus(b, &r.Objects[i])
		}
	}
	return appendReplyRest(b, r)
}

// appendStatusReplyEncoded appends a reply whose count objects are
// already encoded in objs, with the other fields of rest.
func appendStatusReplyEncoded(b []byte, count int, objs []byte, rest *StatusReply) []byte {
	b = append(b, 0x85)
	b = msgp.AppendString(b, "Objects")
	if count == 0 {
		b = append(b, 0xc0)
	} else {
		b = append(msgp.AppendArrayLen(b, count), objs...)
	}
	return appendReplyRest(b, rest)
}

// appendReplyRest appends the fields after Objects.
func appendReplyRest(b []byte, r *StatusReply) []byte {
	b = msgp.AppendString(b, "Errors")
	if r.Errors == nil {
		b = append(b, 0xc0)
	} else {
		b = msgp.AppendArrayLen(b, len(r.Errors))
		for _, e := range r.Errors {
			b = append(b, 0x93)
			b = msgp.AppendString(b, e.Name)
			b = msgp.AppendInt(b, int64(e.Code))
			b = msgp.AppendString(b, e.Text)
		}
	}
	b = msgp.AppendString(b, "Version")
	b = msgp.AppendUint(b, r.Version)
	b = msgp.AppendString(b, "Epoch")
	b = msgp.AppendString(b, r.Epoch)
	b = msgp.AppendString(b, "Live")
	if r.Live == nil {
		b = append(b, 0xc0)
	} else {
		b = msgp.AppendArrayLen(b, len(r.Live))
		for _, s := range r.Live {
			b = msgp.AppendString(b, s)
		}
	}
	return b
}

// AppendStatus appends what Status.EncodeMsgpack writes: [Name, Attrs],
// and Alloc after them when there is one.
func AppendStatus(b []byte, s *Status) []byte {
	if len(s.Alloc) == 0 {
		b = append(b, 0x92)
	} else {
		b = append(b, 0x93)
	}
	b = msgp.AppendString(b, s.Name)
	b = msgp.AppendArrayLen(b, len(s.Attrs))
	for i := range s.Attrs {
		b = AppendAttr(b, &s.Attrs[i])
	}
	if len(s.Alloc) == 0 {
		return b
	}
	b = msgp.AppendArrayLen(b, len(s.Alloc))
	for _, h := range s.Alloc {
		b = append(b, 0x94)
		b = msgp.AppendString(b, h.Vnode)
		b = msgp.AppendString(b, h.Host)
		b = msgp.AppendInt(b, h.Ncpus)
		b = msgp.AppendArrayLen(b, len(h.Resources))
		for _, r := range h.Resources {
			b = append(b, 0x92)
			b = msgp.AppendString(b, r.Name)
			b = msgp.AppendString(b, r.Value)
		}
	}
	return b
}

// AppendAttr appends what Attr.EncodeMsgpack writes.
func AppendAttr(b []byte, a *Attr) []byte {
	b = append(b, 0x94)
	b = msgp.AppendString(b, a.Name)
	b = msgp.AppendString(b, a.Resource)
	b = msgp.AppendString(b, a.Value)
	return msgp.AppendUint(b, uint64(a.Op))
}

// DecodeStatusReply reads a reply that fills raw exactly. Attribute and
// resource names, the same few in every object, are allocated once per
// frame; every other string is its own (none keeps the frame alive: a
// scheduler keeps some jobs' values for days).
func DecodeStatusReply(raw []byte, r *StatusReply) error {
	d := &byteReader{b: raw}
	if err := d.statusReply(r); err != nil {
		return fmt.Errorf("%w: status reply: %v", ErrMalformed, err)
	}
	if d.pos != len(raw) {
		return fmt.Errorf("%w: %d bytes after the body", ErrMalformed, len(raw)-d.pos)
	}
	return nil
}

// byteReader reads msgpack values from b.
type byteReader struct {
	b     []byte
	pos   int
	names map[string]string // the names read so far, to share them
}

func (d *byteReader) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *byteReader) code() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, d.errorf("truncated")
	}
	c := d.b[d.pos]
	d.pos++
	return c, nil
}

// size reads an n-byte big-endian length or number.
func (d *byteReader) size(n int) (uint64, error) {
	if n > len(d.b)-d.pos {
		return 0, d.errorf("truncated")
	}
	var v uint64
	for _, c := range d.b[d.pos : d.pos+n] {
		v = v<<8 | uint64(c)
	}
	d.pos += n
	return v, nil
}

// length reads a container or string length of n bytes, bounded by what
// is left of the input.
func (d *byteReader) length(n int) (int, error) {
	v, err := d.size(n)
	if err != nil {
		return 0, err
	}
	if v > uint64(len(d.b)-d.pos) {
		return 0, d.errorf("length %d runs past the end", v)
	}
	return int(v), nil
}

// arrayLen reads an array header (nil: 0).
func (d *byteReader) arrayLen() (int, error) { return d.header(0x90, 0xdc, "an array") }

// mapLen reads a map header (nil: 0).
func (d *byteReader) mapLen() (int, error) { return d.header(0x80, 0xde, "a map") }

// header reads a container header: nil, fix (with up to 15 items in its
// low bits), or long and long+1 (16- and 32-bit counts).
func (d *byteReader) header(fix, long byte, what string) (int, error) {
	c, err := d.code()
	switch {
	case err != nil:
		return 0, err
	case c == 0xc0:
		return 0, nil
	case c&0xf0 == fix:
		return int(c & 0x0f), nil
	case c == long:
		return d.length(2)
	case c == long+1:
		return d.length(4)
	}
	return 0, d.errorf("code %#x is not %s", c, what)
}

// str reads a string (or bytes; nil: "").
func (d *byteReader) str() (string, error) {
	b, err := d.strBytes()
	return string(b), err
}

// name reads a string that recurs (an attribute or resource name) and
// returns the copy of it read first.
func (d *byteReader) name() (string, error) {
	b, err := d.strBytes()
	if err != nil || len(b) == 0 {
		return "", err
	}
	if s, ok := d.names[string(b)]; ok {
		return s, nil
	}
	if d.names == nil {
		d.names = map[string]string{}
	}
	s := string(b)
	d.names[s] = s
	return s, nil
}

// strBytes reads a string's bytes (valid while d.b is).
func (d *byteReader) strBytes() ([]byte, error) {
	c, err := d.code()
	if err != nil {
		return nil, err
	}
	var n int
	switch {
	case c == 0xc0:
		return nil, nil
	case c >= 0xa0 && c <= 0xbf:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = d.length(1)
	case c == 0xda || c == 0xc5:
		n, err = d.length(2)
	case c == 0xdb || c == 0xc6:
		n, err = d.length(4)
	default:
		return nil, d.errorf("code %#x is not a string", c)
	}
	if err != nil {
		return nil, err
	}
	if n > len(d.b)-d.pos {
		return nil, d.errorf("string of %d bytes runs past the end", n)
	}
	b := d.b[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

// uint reads any integer form (nil: 0) as msgpack's DecodeUint64 does.
func (d *byteReader) uint() (uint64, error) {
	c, err := d.code()
	switch {
	case err != nil:
		return 0, err
	case c == 0xc0:
		return 0, nil
	case c <= 0x7f || c >= 0xe0:
		return uint64(int8(c)), nil
	case c == 0xcc:
		return d.size(1)
	case c == 0xcd:
		return d.size(2)
	case c == 0xce:
		return d.size(4)
	case c == 0xcf, c == 0xd3:
		return d.size(8)
	case c == 0xd0:
		v, err := d.size(1)
		return uint64(int8(v)), err
	case c == 0xd1:
		v, err := d.size(2)
		return uint64(int16(v)), err
	case c == 0xd2:
		v, err := d.size(4)
		return uint64(int32(v)), err
	}
	return 0, d.errorf("code %#x is not an integer", c)
}

// skip passes one value of any type.
func (d *byteReader) skip() error {
	n, err := skipValue(d.b[d.pos:], MaxDepth)
	if err != nil {
		return err
	}
	d.pos += n
	return nil
}

// fields reads an array of at least min fields; the caller reads min of
// them and skips the rest.
func (d *byteReader) fields(what string, min int) (int, error) {
	n, err := d.arrayLen()
	if err != nil {
		return 0, err
	}
	if n < min {
		return 0, d.errorf("%s: %d fields, want %d", what, n, min)
	}
	return n, nil
}

func (d *byteReader) skipN(n int) error {
	for ; n > 0; n-- {
		if err := d.skip(); err != nil {
			return err
		}
	}
	return nil
}

func (d *byteReader) statusReply(r *StatusReply) error {
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		key, err := d.str()
		if err != nil {
			return err
		}
		switch key {
		case "Objects":
			err = readArray(d, &r.Objects, d.status)
		case "Errors":
			err = readArray(d, &r.Errors, d.objectError)
		case "Version":
			r.Version, err = d.uint()
		case "Epoch":
			r.Epoch, err = d.str()
		case "Live":
			err = readArray(d, &r.Live, d.string)
		default:
			err = d.skip()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// readArray reads an array into *out, each element with read (nil for
// none).
func readArray[T any](d *byteReader, out *[]T, read func(*T) error) error {
	n, err := d.arrayLen()
	if err != nil || n == 0 {
		*out = nil
		return err
	}
	elems := make([]T, n)
	for i := range elems {
		if err := read(&elems[i]); err != nil {
			return err
		}
	}
	*out = elems
	return nil
}

func (d *byteReader) status(s *Status) error {
	n, err := d.fields("status", 2)
	if err != nil {
		return err
	}
	if s.Name, err = d.str(); err != nil {
		return err
	}
	count, err := d.arrayLen()
	if err != nil {
		return err
	}
	if count > maxStatusAttrs {
		return d.errorf("status of %s: %d attributes", s.Name, count)
	}
	s.Attrs = nil
	if count > 0 {
		s.Attrs = make([]Attr, count)
		for i := range s.Attrs {
			if err := d.attr(&s.Attrs[i]); err != nil {
				return err
			}
		}
	}
	s.Alloc = nil
	if n < 3 {
		return nil
	}
	if err := readArray(d, &s.Alloc, d.held); err != nil {
		return fmt.Errorf("allocation of %s: %w", s.Name, err)
	}
	return d.skipN(n - 3)
}

func (d *byteReader) held(h *Held) error {
	n, err := d.fields("allocated chunk", 4)
	if err != nil {
		return err
	}
	if h.Vnode, err = d.str(); err != nil {
		return err
	}
	if h.Host, err = d.str(); err != nil {
		return err
	}
	ncpus, err := d.uint()
	if err != nil {
		return err
	}
	h.Ncpus = int64(ncpus)
	if err := readArray(d, &h.Resources, d.resourceValue); err != nil {
		return err
	}
	return d.skipN(n - 4)
}

func (d *byteReader) resourceValue(r *ResourceValue) error {
	n, err := d.fields("resource value", 2)
	if err != nil {
		return err
	}
	if r.Name, err = d.name(); err != nil {
		return err
	}
	if r.Value, err = d.str(); err != nil {
		return err
	}
	return d.skipN(n - 2)
}

func (d *byteReader) attr(a *Attr) error {
	n, err := d.fields("attribute", 4)
	if err != nil {
		return err
	}
	if a.Name, err = d.name(); err != nil {
		return err
	}
	if a.Resource, err = d.name(); err != nil {
		return err
	}
	if a.Value, err = d.str(); err != nil {
		return err
	}
	op, err := d.uint()
	if err != nil {
		return err
	}
	a.Op = Op(uint8(op))
	return d.skipN(n - 4)
}

func (d *byteReader) objectError(e *ObjectError) error {
	fields, err := d.fields("object error", 3)
	if err != nil {
		return err
	}
	if e.Name, err = d.str(); err != nil {
		return err
	}
	code, err := d.uint()
	if err != nil {
		return err
	}
	e.Code = Code(code)
	if e.Text, err = d.str(); err != nil {
		return err
	}
	return d.skipN(fields - 3)
}

func (d *byteReader) string(s *string) (err error) {
	*s, err = d.str()
	return err
}
