package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth bounds how deeply msgpack containers may nest in one frame. The
// deepest message this protocol defines nests 8 levels (envelope, status
// reply, objects, object, allocation, chunk, resources, resource); the
// margin leaves room for fields appended later.
const MaxDepth = 32

// ErrShape is wrapped by every error of CheckShape.
var ErrShape = errors.New("malformed msgpack")

// CheckShape verifies that b is exactly one msgpack value nesting at most
// maxDepth containers, whose every declared length fits in the bytes that
// remain. It walks the bytes without recursion and allocates only its
// stack of at most maxDepth counters, so a hostile frame costs one linear
// pass. Every frame a peer sends passes through it before any decoder sees
// the bytes: the msgpack library skips and decodes recursively, and an
// input that nests millions of arrays would otherwise overflow the stack
// of whichever daemon read it (a fatal error, not a recoverable panic).
func CheckShape(b []byte, maxDepth int) error {
	n, err := skipValue(b, maxDepth)
	if err != nil {
		return err
	}
	if n != len(b) {
		return fmt.Errorf("%w: %d bytes after the value", ErrShape, len(b)-n)
	}
	return nil
}

// skipValue returns the length of the msgpack value at the start of b.
func skipValue(b []byte, maxDepth int) (int, error) {
	var stackBuf [MaxDepth + 1]int
	pending := append(stackBuf[:0], 1) // values still to read, per level
	pos := 0
	for len(pending) > 0 {
		top := len(pending) - 1
		if pending[top] == 0 {
			pending = pending[:top]
			continue
		}
		pending[top]--
		if pos >= len(b) {
			return 0, fmt.Errorf("%w: truncated at byte %d", ErrShape, pos)
		}
		c := b[pos]
		pos++
		var skip, items int // bytes of payload to skip; values contained
		switch {
		case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
			// fixint, nil, bool
		case c <= 0x8f:
			items = 2 * int(c&0x0f)
		case c <= 0x9f:
			items = int(c & 0x0f)
		case c <= 0xbf:
			skip = int(c & 0x1f)
		default:
			var err error
			if skip, items, pos, err = varHeader(b, pos, c); err != nil {
				return 0, err
			}
		}
		if skip > len(b)-pos {
			return 0, fmt.Errorf("%w: %d-byte item at byte %d runs past the end", ErrShape, skip, pos)
		}
		pos += skip
		if items > 0 {
			// Every contained value takes at least one byte.
			if items > len(b)-pos {
				return 0, fmt.Errorf("%w: container of %d values at byte %d runs past the end", ErrShape, items, pos)
			}
			if len(pending) > maxDepth {
				return 0, fmt.Errorf("%w: nesting deeper than %d", ErrShape, maxDepth)
			}
			pending = append(pending, items)
		}
	}
	return pos, nil
}

// varHeader decodes the headers of the type codes 0xc1-0xdf that carry a
// length or a fixed-size payload after the type byte. It returns the bytes
// to skip, the values contained and the position after the header.
func varHeader(b []byte, pos int, c byte) (skip, items, next int, err error) {
	need := func(n int) error {
		if n > len(b)-pos {
			return fmt.Errorf("%w: truncated header at byte %d", ErrShape, pos)
		}
		return nil
	}
	length := func(size int) (int, error) {
		if err := need(size); err != nil {
			return 0, err
		}
		var n uint64
		switch size {
		case 1:
			n = uint64(b[pos])
		case 2:
			n = uint64(binary.BigEndian.Uint16(b[pos:]))
		case 4:
			n = uint64(binary.BigEndian.Uint32(b[pos:]))
		}
		pos += size
		if n > uint64(len(b)) {
			return 0, fmt.Errorf("%w: length %d at byte %d exceeds the frame", ErrShape, n, pos)
		}
		return int(n), nil
	}
	switch c {
	case 0xc1:
		return 0, 0, pos, fmt.Errorf("%w: reserved type byte 0xc1 at byte %d", ErrShape, pos-1)
	case 0xc4, 0xd9: // bin8, str8
		skip, err = length(1)
	case 0xc5, 0xda: // bin16, str16
		skip, err = length(2)
	case 0xc6, 0xdb: // bin32, str32
		skip, err = length(4)
	case 0xc7, 0xc8, 0xc9: // ext8/16/32: length, then a type byte
		skip, err = length(1 << (c - 0xc7))
		skip++
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		skip = 4
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		skip = 8
	case 0xcc, 0xd0: // uint8, int8
		skip = 1
	case 0xcd, 0xd1: // uint16, int16
		skip = 2
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 and a type byte
		skip = 1 + 1<<(c-0xd4)
	case 0xdc:
		items, err = length(2)
	case 0xdd:
		items, err = length(4)
	case 0xde:
		items, err = length(2)
		items *= 2
	case 0xdf:
		items, err = length(4)
		items *= 2
	}
	return skip, items, pos, err
}
