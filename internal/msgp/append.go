// Package msgp appends msgpack values to byte slices: the few encoders
// written by hand (status answers, job records) build their bytes with it
// instead of calling msgpack's encoder value by value, which costs
// several times what the bytes do. Integers take their smallest form, as
// msgpack's compact integers do; msgpack's decoder reads every form.
package msgp

import (
	"encoding/binary"
	"math"
)

// AppendString appends a string.
func AppendString(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// AppendBytes appends a byte string (bin), nil as msgpack's nil.
func AppendBytes(b []byte, v []byte) []byte {
	if v == nil {
		return AppendNil(b)
	}
	switch n := len(v); {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xc5, byte(n>>8), byte(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, v...)
}

// AppendArrayLen appends the header of an array of n values.
func AppendArrayLen(b []byte, n int) []byte { return appendHeader(b, n, 0x90, 0xdc) }

// AppendMapLen appends the header of a map of n pairs.
func AppendMapLen(b []byte, n int) []byte { return appendHeader(b, n, 0x80, 0xde) }

// appendHeader appends a container header: fix with n in its low bits up
// to 15, else long (16-bit count) or long+1 (32-bit).
func appendHeader(b []byte, n int, fix, long byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n <= math.MaxUint16:
		return append(b, long, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint32(append(b, long+1), uint32(n))
}

// AppendUint appends n in its smallest form.
func AppendUint(b []byte, n uint64) []byte {
	switch {
	case n <= 0x7f:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), n)
}

// AppendInt appends n in its smallest form (unsigned ones for n >= 0).
func AppendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return AppendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(b, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// AppendBool appends a boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, 0xc0) }
