package x11

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Setup is an X client's connection setup request, the first bytes it
// sends: its byte order ('B' big-endian, 'l' little), the protocol
// version, and its credentials.
type Setup struct {
	ByteOrder    byte
	Major, Minor uint16
	AuthName     string
	AuthData     []byte
}

// setupHeader is the fixed part of a setup request.
const setupHeader = 12

// maxAuthField bounds the credentials a setup may carry (a cookie is 16
// bytes; X's other schemes are small too).
const maxAuthField = 1024

// ErrShort is a setup not yet whole: read more and try again.
var ErrShort = errors.New("x11 setup request cut short")

// ErrMalformedSetup is bytes that are not a setup request.
var ErrMalformedSetup = errors.New("malformed x11 setup request")

func pad4(n int) int { return (4 - n%4) % 4 }

// ParseSetup reads a setup request at the start of b. n is its length
// when whole; ErrShort says more bytes are needed.
func ParseSetup(b []byte) (s Setup, n int, err error) {
	if len(b) < 1 {
		return Setup{}, 0, ErrShort
	}
	var order binary.ByteOrder
	switch b[0] {
	case 'B':
		order = binary.BigEndian
	case 'l':
		order = binary.LittleEndian
	default:
		return Setup{}, 0, fmt.Errorf("%w: byte order %#x", ErrMalformedSetup, b[0])
	}
	if len(b) < setupHeader {
		return Setup{}, 0, ErrShort
	}
	s = Setup{ByteOrder: b[0], Major: order.Uint16(b[2:]), Minor: order.Uint16(b[4:])}
	nameLen, dataLen := int(order.Uint16(b[6:])), int(order.Uint16(b[8:]))
	if nameLen > maxAuthField || dataLen > maxAuthField {
		return Setup{}, 0, fmt.Errorf("%w: credentials of %d and %d bytes", ErrMalformedSetup, nameLen, dataLen)
	}
	n = setupHeader + nameLen + pad4(nameLen) + dataLen + pad4(dataLen)
	if len(b) < n {
		return Setup{}, 0, ErrShort
	}
	off := setupHeader
	s.AuthName = string(b[off : off+nameLen])
	off += nameLen + pad4(nameLen)
	s.AuthData = b[off : off+dataLen]
	return s, n, nil
}

// MaxSetup is the longest setup request ParseSetup accepts.
const MaxSetup = setupHeader + 2*(maxAuthField+3)

// AppendSetup appends s as a client sends it (padding zeroed).
func AppendSetup(dst []byte, s Setup) ([]byte, error) {
	var order binary.AppendByteOrder
	switch s.ByteOrder {
	case 'B':
		order = binary.BigEndian
	case 'l':
		order = binary.LittleEndian
	default:
		return dst, fmt.Errorf("%w: byte order %#x", ErrMalformedSetup, s.ByteOrder)
	}
	if len(s.AuthName) > maxAuthField || len(s.AuthData) > maxAuthField {
		return dst, fmt.Errorf("%w: credentials too long", ErrMalformedSetup)
	}
	dst = append(dst, s.ByteOrder, 0)
	dst = order.AppendUint16(dst, s.Major)
	dst = order.AppendUint16(dst, s.Minor)
	dst = order.AppendUint16(dst, uint16(len(s.AuthName)))
	dst = order.AppendUint16(dst, uint16(len(s.AuthData)))
	dst = append(dst, 0, 0)
	dst = append(dst, s.AuthName...)
	dst = append(dst, make([]byte, pad4(len(s.AuthName)))...)
	dst = append(dst, s.AuthData...)
	dst = append(dst, make([]byte, pad4(len(s.AuthData)))...)
	return dst, nil
}
