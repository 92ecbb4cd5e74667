package proto

import "github.com/vmihailenco/msgpack/v5"

// Hand-written codecs for the types that make up status answers: a
// status of 100,000 jobs holds millions of Attrs, and reflection would
// dominate the time to encode and decode them. The encoded form is the
// same as the struct tags describe (arrays of fields), so either side may
// use either codec. The work is done over bytes (statuscodec.go).

var (
	_ msgpack.CustomEncoder = (*Attr)(nil)
	_ msgpack.CustomDecoder = (*Attr)(nil)
	_ msgpack.CustomEncoder = (*Status)(nil)
	_ msgpack.CustomDecoder = (*Status)(nil)
	_ msgpack.CustomEncoder = (*StatusReply)(nil)
	_ msgpack.CustomDecoder = (*StatusReply)(nil)
)

// EncodeMsgpack writes [Name, Resource, Value, Op] (AppendAttr).
func (a *Attr) EncodeMsgpack(enc *msgpack.Encoder) error {
	return writeAppended(enc, func(b []byte) []byte { return AppendAttr(b, a) })
}

// DecodeMsgpack reads what EncodeMsgpack wrote; extra trailing fields
// (from a newer peer) are skipped.
func (a *Attr) DecodeMsgpack(dec *msgpack.Decoder) error {
	return decodeRaw(dec, func(d *byteReader) error { return d.attr(a) })
}

// EncodeMsgpack writes [Name, [attrs...]] (AppendStatus).
func (s *Status) EncodeMsgpack(enc *msgpack.Encoder) error {
	return writeAppended(enc, func(b []byte) []byte { return AppendStatus(b, s) })
}

// maxStatusAttrs bounds the attributes of one object a decoder accepts
// before reading them, so a hostile length cannot allocate much.
const maxStatusAttrs = 1 << 16

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (s *Status) DecodeMsgpack(dec *msgpack.Decoder) error {
	return decodeRaw(dec, func(d *byteReader) error { return d.status(s) })
}
