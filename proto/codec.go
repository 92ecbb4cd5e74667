package proto

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Hand-written codecs for the two types that make up status answers: a
// status of 100,000 jobs holds millions of Attrs, and reflection would
// dominate the time to encode and decode them. The encoded form is the
// same as the struct tags describe (arrays of fields), so either side may
// use either codec.

var (
	_ msgpack.CustomEncoder = (*Attr)(nil)
	_ msgpack.CustomDecoder = (*Attr)(nil)
	_ msgpack.CustomEncoder = (*Status)(nil)
	_ msgpack.CustomDecoder = (*Status)(nil)
)

// EncodeMsgpack writes [Name, Resource, Value, Op].
func (a *Attr) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(4); err != nil {
		return err
	}
	enc.EncodeString(a.Name)
	enc.EncodeString(a.Resource)
	enc.EncodeString(a.Value)
	return enc.EncodeUint8(uint8(a.Op))
}

// DecodeMsgpack reads what EncodeMsgpack wrote; extra trailing fields
// (from a newer peer) are skipped.
func (a *Attr) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 4 {
		return fmt.Errorf("attribute: %d fields, want 4", n)
	}
	if a.Name, err = dec.DecodeString(); err != nil {
		return err
	}
	if a.Resource, err = dec.DecodeString(); err != nil {
		return err
	}
	if a.Value, err = dec.DecodeString(); err != nil {
		return err
	}
	op, err := dec.DecodeUint8()
	if err != nil {
		return err
	}
	a.Op = Op(op)
	return skipFields(dec, n-4)
}

// EncodeMsgpack writes [Name, [attrs...]].
func (s *Status) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	enc.EncodeString(s.Name)
	if err := enc.EncodeArrayLen(len(s.Attrs)); err != nil {
		return err
	}
	for i := range s.Attrs {
		if err := s.Attrs[i].EncodeMsgpack(enc); err != nil {
			return err
		}
	}
	return nil
}

// maxStatusAttrs bounds the attributes of one object a decoder accepts
// before reading them, so a hostile length cannot allocate much.
const maxStatusAttrs = 1 << 16

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (s *Status) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 2 {
		return fmt.Errorf("status: %d fields, want 2", n)
	}
	if s.Name, err = dec.DecodeString(); err != nil {
		return err
	}
	count, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if count > maxStatusAttrs {
		return fmt.Errorf("status of %s: %d attributes", s.Name, count)
	}
	if count > 0 {
		s.Attrs = make([]Attr, count)
		for i := range s.Attrs {
			if err := s.Attrs[i].DecodeMsgpack(dec); err != nil {
				return err
			}
		}
	} else {
		s.Attrs = nil
	}
	return skipFields(dec, n-2)
}

func skipFields(dec *msgpack.Decoder, n int) error {
	for ; n > 0; n-- {
		if err := dec.Skip(); err != nil {
			return err
		}
	}
	return nil
}
