package proto

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"sync"
)

// KeySize is the length of the cluster key in bytes.
const KeySize = 32

// MACSize is the length of the HMAC-SHA256 tag that ends each frame on an
// authenticated connection.
const MACSize = sha256.Size

// NonceSize is the length of the Hello nonces.
const NonceSize = 16

// ErrBadMAC means a frame's tag did not verify: wrong key, a replayed or
// reordered frame, or tampering. The connection must be dropped.
var ErrBadMAC = errors.New("frame authentication failed")

// Direction of a frame on an authenticated connection. Each direction keeps
// its own frame counter, so a frame can neither be replayed nor reflected.
const (
	dirToServer byte = 'S'
	dirToPeer   byte = 'P'
)

// session holds the per-connection secrets for cluster-key authentication.
// The tag of every frame is HMAC-SHA256(key, label | role | direction |
// server nonce | client nonce | frame counter | payload): it binds the
// frame to this connection (both fresh nonces), to the peer's role, to its
// position in the stream and to every byte of the envelope, message type
// included.
type session struct {
	// mu guards mac and scratch: a connection that carries a task's
	// streams sends on one goroutine while it receives on another (the
	// counters are each one direction's).
	mu      sync.Mutex
	mac     hash.Hash // HMAC-SHA256 keyed once, reset for every frame
	key     []byte
	role    Role
	sNonce  []byte
	cNonce  []byte
	sendDir byte
	recvDir byte
	sendCtr uint64
	recvCtr uint64
	scratch []byte
}

const macLabel = "gopbs-frame-v1"

func (s *session) tag(dir byte, ctr uint64, payload []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mac == nil {
		s.mac = hmac.New(sha256.New, s.key)
	}
	m := s.mac
	m.Reset()
	hdr := s.scratch[:0]
	hdr = append(hdr, macLabel...)
	hdr = append(hdr, byte(s.role), dir)
	hdr = append(hdr, s.sNonce...)
	hdr = append(hdr, s.cNonce...)
	hdr = binary.BigEndian.AppendUint64(hdr, ctr)
	s.scratch = hdr
	m.Write(hdr)
	m.Write(payload)
	return m.Sum(nil)
}

// seal returns the tag for the next outgoing payload.
func (s *session) seal(payload []byte) []byte {
	t := s.tag(s.sendDir, s.sendCtr, payload)
	s.sendCtr++
	return t
}

// open verifies the tag of the next incoming payload.
func (s *session) open(payload, tag []byte) error {
	want := s.tag(s.recvDir, s.recvCtr, payload)
	if !hmac.Equal(want, tag) {
		return ErrBadMAC
	}
	s.recvCtr++
	return nil
}

// NewNonce returns NonceSize random bytes.
func NewNonce() []byte {
	b := make([]byte, NonceSize)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return b
}

// LoadOrCreateKey reads the cluster key at path, creating a fresh random key
// with mode 0600 (and its directory, 0700) when the file does not exist. A
// key file of the wrong size or readable by others is an error naming the
// file.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := LoadKey(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create cluster key directory: %w", err)
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate cluster key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadKey(path)
		}
		return nil, fmt.Errorf("create cluster key %s: %w", path, err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		return nil, fmt.Errorf("write cluster key %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("sync cluster key %s: %w", path, err)
	}
	return key, f.Close()
}

// LoadKey reads an existing cluster key.
func LoadKey(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cluster key %s: mode %#o lets others read it; it must be 0600", path, st.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("cluster key %s: %d bytes, want %d", path, len(key), KeySize)
	}
	return key, nil
}
