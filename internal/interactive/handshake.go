package interactive

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/gopbs/gopbs/proto"
)

// The handshake. qsub made a secret (the cookie, proto.InteractiveCookieLen
// random bytes) and gave it to the server with the job; the server gives
// it only to the job's mom. Each side proves it holds the cookie by an
// HMAC over a nonce the other side chose, so the cookie itself never
// crosses this connection, and neither side relays a terminal before the
// other proved itself: qsub would not hand the user's keystrokes to a
// stranger, and the shepherd would not hand the owner's shell to whoever
// listens on a port that qsub may have left.
//
//	shepherd -> qsub   Hello{Version, JobID, Nonce_s}
//	qsub -> shepherd   Proof{MAC(cookie, "qsub", JobID, Nonce_s), Nonce_q}
//	shepherd -> qsub   Proof{MAC(cookie, "shepherd", JobID, Nonce_q)}
//	qsub -> shepherd   Setup{Tty, Size, Term}
//
// The labels keep one side's proof from being replayed as the other's.

// ErrNotProven is a peer that did not prove it holds the job's cookie.
var ErrNotProven = errors.New("the peer did not prove it holds the job's secret")

func mac(cookie []byte, label, jobID string, nonce []byte) []byte {
	m := hmac.New(sha256.New, cookie)
	for _, s := range [][]byte{[]byte("gopbs interactive v1"), []byte(label), []byte(jobID)} {
		m.Write(s)
		m.Write([]byte{0})
	}
	m.Write(nonce)
	return m.Sum(nil)
}

func newNonce(rand io.Reader) ([]byte, error) {
	n := make([]byte, NonceLen)
	if _, err := io.ReadFull(rand, n); err != nil {
		return nil, fmt.Errorf("nonce: %w", err)
	}
	return n, nil
}

func checkCookie(cookie []byte) error {
	if len(cookie) != proto.InteractiveCookieLen {
		return fmt.Errorf("the job's secret is %d bytes, want %d", len(cookie), proto.InteractiveCookieLen)
	}
	return nil
}

// Connect is the shepherd's side of the handshake, on a connection it
// opened to qsub: it returns qsub's Setup once both sides are proven.
func (c *Conn) Connect(jobID string, cookie []byte, rand io.Reader) (Frame, error) {
	if err := checkCookie(cookie); err != nil {
		return Frame{}, err
	}
	nonce, err := newNonce(rand)
	if err != nil {
		return Frame{}, err
	}
	if err := c.Send(&Frame{Kind: KindHello, Version: Version, JobID: jobID, Nonce: nonce}); err != nil {
		return Frame{}, err
	}
	p, err := c.expect(KindProof)
	if err != nil {
		return Frame{}, err
	}
	if len(p.Nonce) != NonceLen || !hmac.Equal(p.MAC, mac(cookie, "qsub", jobID, nonce)) {
		return Frame{}, ErrNotProven
	}
	if err := c.Send(&Frame{Kind: KindProof, MAC: mac(cookie, "shepherd", jobID, p.Nonce)}); err != nil {
		return Frame{}, err
	}
	return c.expect(KindSetup)
}

// Accept is qsub's side of the handshake, on a connection it accepted:
// it returns once the peer proved itself to be the shepherd of jobID;
// the caller then sends its Setup.
func (c *Conn) Accept(jobID string, cookie []byte, rand io.Reader) error {
	if err := checkCookie(cookie); err != nil {
		return err
	}
	h, err := c.expect(KindHello)
	if err != nil {
		return err
	}
	if h.Version != Version {
		return fmt.Errorf("protocol version %d, want %d", h.Version, Version)
	}
	if h.JobID != jobID {
		return fmt.Errorf("%w (it speaks for job %q)", ErrNotProven, h.JobID)
	}
	nonce, err := newNonce(rand)
	if err != nil {
		return err
	}
	if err := c.Send(&Frame{Kind: KindProof, MAC: mac(cookie, "qsub", jobID, h.Nonce), Nonce: nonce}); err != nil {
		return err
	}
	p, err := c.expect(KindProof)
	if err != nil {
		return err
	}
	if len(p.Nonce) != 0 || !hmac.Equal(p.MAC, mac(cookie, "shepherd", jobID, nonce)) {
		return ErrNotProven
	}
	return nil
}

func (c *Conn) expect(k Kind) (Frame, error) {
	f, err := c.Recv()
	if err != nil {
		return Frame{}, err
	}
	if f.Kind != k {
		return Frame{}, fmt.Errorf("%w: got a frame of kind %d, want %d", ErrMalformed, f.Kind, k)
	}
	return f, nil
}
