package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxFrame caps one frame. Larger answers are split into several
// frames (Header.More); a peer that announces a bigger frame is dropped.
const DefaultMaxFrame = 16 << 20

// frameHeaderLen is the 4-byte big-endian length that starts every frame.
const frameHeaderLen = 4

// readChunk bounds how much is allocated before the bytes actually arrive,
// so a peer announcing a large frame and sending nothing costs little.
const readChunk = 64 << 10

// ErrFrameTooLarge is returned when a peer announces a frame over the cap.
var ErrFrameTooLarge = errors.New("frame exceeds size limit")

// ReadFrame reads one length-prefixed frame of at most limit bytes.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	var hdr [frameHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > limit {
		return nil, fmt.Errorf("%w: %d > %d bytes", ErrFrameTooLarge, n, limit)
	}
	if n == 0 {
		return nil, errors.New("empty frame")
	}
	buf := make([]byte, 0, min(n, readChunk))
	for len(buf) < n {
		step := min(n-len(buf), readChunk)
		if cap(buf)-len(buf) < step {
			grown := make([]byte, len(buf), min(n, max(2*cap(buf), len(buf)+step)))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("truncated frame (%d of %d bytes): %w", len(buf), n, err)
		}
	}
	return buf, nil
}

// AppendFrameHeader appends the length prefix for a payload of n bytes.
func AppendFrameHeader(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}
