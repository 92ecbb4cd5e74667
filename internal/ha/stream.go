package ha

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
)

// The raft port speaks TLS 1.3 keyed from the cluster key, both ways:
// every member derives the same Ed25519 key from the cluster key and
// presents a certificate for it naming its own batch address; each side
// requires the other's certificate to carry that key, so only a holder of
// the cluster key completes a handshake (TLS proves possession of the
// private key), and what the members send each other (jobs, scripts,
// environments) is encrypted. A member then accepts only a peer that
// names a member of the group and connects from an address that member's
// host resolves to; it dials from its own member address, so that check
// holds for it too.

// raftKeyLabel separates the raft port's key from every other use of the
// cluster key (the batch ports' frame tags).
const raftKeyLabel = "gopbs-raft-tls-v1"

// raftHandshakeTimeout bounds a peer's TLS handshake and identity check:
// members finish in milliseconds.
const raftHandshakeTimeout = 5 * time.Second

// raftBudget bounds the raft port's connections: raft pools at most a few
// per peer, so a handful of members needs little; a stranger's silent
// connections are the oldest pending ones and are closed for newcomers.
var raftBudget = connlimit.Budget{Max: 256, PerPeer: 64, Pending: 32, PerPeerPending: 16}

// raftIdentity is the key every member derives from the cluster key.
func raftIdentity(clusterKey []byte) ed25519.PrivateKey {
	m := hmac.New(sha256.New, clusterKey)
	m.Write([]byte(raftKeyLabel))
	return ed25519.NewKeyFromSeed(m.Sum(nil))
}

// memberCert is self's certificate: the derived key, self's batch address
// as its name.
func memberCert(priv ed25519.PrivateKey, self string) (tls.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("raft certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: self},
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, priv.Public(), priv)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("raft certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// errNotMember is a peer that is not (or not where it says it is) a
// member of the group.
var errNotMember = errors.New("not a member of the group")

// peerMember checks a peer's certificate: it must carry the group's key,
// and its name is the member it claims to be.
func peerMember(rawCerts [][]byte, pub ed25519.PublicKey) (string, error) {
	if len(rawCerts) == 0 {
		return "", errors.New("no certificate")
	}
	cert, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return "", fmt.Errorf("certificate: %w", err)
	}
	key, ok := cert.PublicKey.(ed25519.PublicKey)
	if !ok || !bytes.Equal(key, pub) {
		return "", errors.New("certificate not made from the cluster key")
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return "", fmt.Errorf("certificate: %w", err)
	}
	return cert.Subject.CommonName, nil
}

// streamLayer is the raft transport's stream (raft.StreamLayer): a
// listener on self's raft address that hands raft only authenticated
// members' connections, and a dialer that connects only to members that
// prove the key.
//
// Who calls: raft's NetworkTransport calls Accept from its listen loop
// and Dial from its replication goroutines; handshakes run on goroutines
// of their own, so a slow stranger never holds up Accept.
type streamLayer struct {
	ln      net.Listener
	adv     net.Addr
	self    string
	local   *net.TCPAddr // dial from self's address
	cert    tls.Certificate
	pub     ed25519.PublicKey
	members func() []string // the group's batch addresses now
	resolve func(host string) ([]net.IP, error)
	limit   *connlimit.Limiter
	log     hclog.Logger

	accepted chan net.Conn
	closed   chan struct{}
	once     sync.Once
}

// streamConfig is what newStreamLayer needs.
type streamConfig struct {
	Self    string       // this member's batch address
	Bind    *net.TCPAddr // self's raft address, resolved
	Key     []byte       // the cluster key
	Members func() []string
	Logger  hclog.Logger
	// Resolve looks a member's host up (nil: the system resolver).
	Resolve func(host string) ([]net.IP, error)
}

func newStreamLayer(cfg streamConfig) (*streamLayer, error) {
	priv := raftIdentity(cfg.Key)
	cert, err := memberCert(priv, cfg.Self)
	if err != nil {
		return nil, err
	}
	ln, err := net.ListenTCP("tcp", cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("raft port %s: %w", cfg.Bind, err)
	}
	resolve := cfg.Resolve
	if resolve == nil {
		resolve = lookupIPs
	}
	s := &streamLayer{
		ln: ln, adv: cfg.Bind, self: cfg.Self, local: &net.TCPAddr{IP: cfg.Bind.IP},
		cert: cert, pub: priv.Public().(ed25519.PublicKey), members: cfg.Members, resolve: resolve,
		limit: connlimit.New("raft", raftBudget, cfg.Logger), log: cfg.Logger,
		accepted: make(chan net.Conn), closed: make(chan struct{}),
	}
	go s.acceptLoop()
	return s, nil
}

func lookupIPs(host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	return net.LookupIP(host)
}

// Accept returns the next connection of a member that proved the key.
func (s *streamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.accepted:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

// Close stops listening; connections already handed to raft are raft's.
func (s *streamLayer) Close() error {
	var err error
	s.once.Do(func() {
		close(s.closed)
		err = s.ln.Close()
	})
	return err
}

// Addr is self's raft address, as advertised to the group.
func (s *streamLayer) Addr() net.Addr { return s.adv }

func (s *streamLayer) acceptLoop() {
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			// Out of descriptors and the like: back off, then go on
			// accepting (as net/http does).
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("raft port: accept", "error", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		slot := s.limit.Admit(connlimit.PeerKey(nc), nc)
		if slot == nil {
			continue
		}
		go s.admit(nc, slot)
	}
}

// admit runs the TLS handshake of an accepted connection and hands it to
// raft once the peer proved the key and named a member whose host it
// connects from.
func (s *streamLayer) admit(nc net.Conn, slot *connlimit.Slot) {
	remote, _ := nc.RemoteAddr().(*net.TCPAddr)
	var member string
	cfg := s.tlsConfig(func(rawCerts [][]byte) error {
		m, err := peerMember(rawCerts, s.pub)
		if err != nil {
			return err
		}
		if err := s.checkMember(m, remote); err != nil {
			return err
		}
		member = m
		return nil
	})
	cfg.ClientAuth = tls.RequireAnyClientCert
	tc := tls.Server(nc, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), raftHandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		slot.Release()
		nc.Close()
		s.log.Warn("raft port: peer refused", "peer", nc.RemoteAddr().String(), "error", err)
		return
	}
	slot.Established()
	c := &slotConn{Conn: tc, slot: slot}
	select {
	case s.accepted <- c:
		s.log.Debug("raft port: member connected", "member", member, "peer", nc.RemoteAddr().String())
	case <-s.closed:
		c.Close()
	}
}

// checkMember: m must be in the group now, and remote one of the
// addresses its host resolves to.
func (s *streamLayer) checkMember(m string, remote *net.TCPAddr) error {
	found := false
	for _, p := range s.members() {
		if p == m {
			found = true
			break
		}
	}
	if !found || m == s.self {
		return fmt.Errorf("%w: %q", errNotMember, m)
	}
	if remote == nil {
		return fmt.Errorf("%w: %q from an address that is not TCP", errNotMember, m)
	}
	host, _, err := net.SplitHostPort(m)
	if err != nil {
		return fmt.Errorf("%w: %q", errNotMember, m)
	}
	ips, err := s.resolve(host)
	if err != nil {
		return fmt.Errorf("member %s: look up %s: %w", m, host, err)
	}
	for _, ip := range ips {
		if ip.Equal(remote.IP) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q connects from %s, not from an address of %s", errNotMember, m, remote.IP, host)
}

// tlsConfig is the configuration both ends share; verify checks the
// peer's certificate.
func (s *streamLayer) tlsConfig(verify func(rawCerts [][]byte) error) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{s.cert},
		// The chain is not a CA's: the peer's certificate is checked
		// against the cluster key by verify, on both ends.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			return verify(rawCerts)
		},
		ServerName: "gopbs-raft",
	}
}

// Dial connects to the member at raft address addr, from self's address,
// and returns once that member proved the key.
func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	want := ""
	for _, p := range s.members() {
		if config.RaftAddr(p) == string(addr) {
			want = p
			break
		}
	}
	if want == "" {
		return nil, fmt.Errorf("raft: %s is no member's raft address", addr)
	}
	d := net.Dialer{Timeout: timeout, LocalAddr: s.local}
	nc, err := d.Dial("tcp", string(addr))
	if err != nil {
		return nil, err
	}
	tc := tls.Client(nc, s.tlsConfig(func(rawCerts [][]byte) error {
		m, err := peerMember(rawCerts, s.pub)
		if err != nil {
			return err
		}
		if m != want {
			return fmt.Errorf("%w: %s answered as %q, want %q", errNotMember, addr, m, want)
		}
		return nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), min(timeout, raftHandshakeTimeout))
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("raft: member %s: %w", want, err)
	}
	return tc, nil
}

// slotConn gives its budget slot back when raft closes it.
type slotConn struct {
	net.Conn
	slot *connlimit.Slot
}

func (c *slotConn) Close() error {
	c.slot.Release()
	return c.Conn.Close()
}
