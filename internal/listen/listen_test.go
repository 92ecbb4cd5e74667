package listen

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// started runs l on a goroutine and returns its result channel.
func started(l *Loop) <-chan error {
	done := make(chan error, 1)
	go func() { done <- l.Run() }()
	return done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testcluster.WaitFor(t, what, 5*time.Second, func() (bool, string) { return cond(), "false" })
}

// A Unix-socket peer is served with its kernel credentials; closing Stop and the listener ends the loop, and
// CloseOnStop ends the connections being served.
func TestLoopServesUnixPeersUntilStop(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var conns sync.WaitGroup
	got := make(chan Peer, 1)
	l := &Loop{
		Listener: ln, Limit: connlimit.New("local", connlimit.Budget{}, hclog.NewNullLogger()),
		Handshake: time.Minute, Stop: stop, CloseOnStop: true, Conns: &conns,
		Serve: func(nc net.Conn, peer Peer, slot *connlimit.Slot) {
			got <- peer
			nc.Read(make([]byte, 1)) // until the Loop closes nc at Stop
		},
	}
	done := started(l)
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer := <-got
	if !peer.Local || peer.UID != uint32(os.Geteuid()) || peer.GID != uint32(os.Getegid()) {
		t.Errorf("peer %+v, want this process's credentials", peer)
	}
	close(stop)
	ln.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v, want nil after Stop", err)
	}
	conns.Wait() // ends only if CloseOnStop closed the served connection
}

// The budget admits no more connections from one peer than it allows,
// and a handler sees its connection's handshake deadline.
func TestLoopAppliesTheBudgetAndTheDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	limit := connlimit.New("remote", connlimit.Budget{Max: 10, PerPeer: 2, Pending: 10, PerPeerPending: 10}, hclog.NewNullLogger())
	timedOut := make(chan bool, 4)
	hold := make(chan struct{})
	l := &Loop{
		Listener: ln, Limit: limit, Handshake: 50 * time.Millisecond, Stop: stop,
		Serve: func(nc net.Conn, peer Peer, slot *connlimit.Slot) {
			_, err := nc.Read(make([]byte, 1))
			var ne net.Error
			slot.Established()
			timedOut <- errors.As(err, &ne) && ne.Timeout()
			<-hold
		},
	}
	done := started(l)
	var clients []net.Conn
	for i := range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		if i < 2 && !<-timedOut {
			t.Error("a silent peer's read did not time out at the handshake deadline")
		}
	}
	waitFor(t, "two connections held", func() bool { total, _ := limit.Counts(); return total == 2 })
	// The third was refused: the Loop closed it.
	clients[2].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := clients[2].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the peer's third connection: %v, want it closed (EOF)", err)
	}
	close(hold)
	for _, c := range clients {
		c.Close()
	}
	close(stop)
	ln.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// With FailOnError a failed Accept ends the loop with its error.
func TestLoopFailOnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	l := &Loop{Listener: ln, Limit: connlimit.New("remote", connlimit.Budget{}, hclog.NewNullLogger()), Stop: make(chan struct{}), FailOnError: true,
		Serve: func(net.Conn, Peer, *connlimit.Slot) {}}
	if err := l.Run(); err == nil {
		t.Error("Run on a closed listener returned nil")
	}
}

// With StopGrace a stopping Loop still lets its connections be read for
// the grace and then ends their reads only: a request sent before Stop
// and one being handled at Stop both get their answers written, on Unix
// sockets and TCP alike; and an interrupted listener, still open, is
// served by the next Loop, the connection made between them included.
func TestLoopStopGraceAnswersWhatWasAsked(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = filepath.Join(t.TempDir(), "s")
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			stop := make(chan struct{})
			var conns sync.WaitGroup
			reading := make(chan struct{}, 1)
			l := &Loop{
				Listener: ln, Limit: connlimit.New("any", connlimit.Budget{}, hclog.NewNullLogger()),
				Stop: stop, CloseOnStop: true, StopGrace: 300 * time.Millisecond, Conns: &conns,
				// An echo server whose every answer takes 100 ms: at
				// Stop its reads end only after the grace, its
				// writes never.
				Serve: func(nc net.Conn, _ Peer, _ *connlimit.Slot) {
					b := make([]byte, 1)
					for {
						select {
						case reading <- struct{}{}:
						default:
						}
						if _, err := nc.Read(b); err != nil {
							return
						}
						time.Sleep(100 * time.Millisecond)
						if _, err := nc.Write(b); err != nil {
							return
						}
					}
				},
			}
			done := started(l)
			c, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			<-reading
			c.Write([]byte("a")) // being handled at Stop
			time.Sleep(20 * time.Millisecond)
			close(stop)
			Interrupt(ln)
			if err := <-done; err != nil {
				t.Errorf("Run: %v, want nil after Stop", err)
			}
			c.Write([]byte("b")) // sent after Stop, within the grace
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			got := make([]byte, 2)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "ab" {
				t.Errorf("answers %q (%v), want both requests answered: ab", got, err)
			}
			conns.Wait() // ends only once the grace has ended the reads

			// Between two Loops the listener stays open.
			c2, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatalf("dial between two loops: %v", err)
			}
			defer c2.Close()
			Resume(ln)
			stop2 := make(chan struct{})
			l2 := &Loop{Listener: ln, Limit: connlimit.New("any", connlimit.Budget{}, hclog.NewNullLogger()), Stop: stop2,
				Serve: func(nc net.Conn, _ Peer, _ *connlimit.Slot) { nc.Write([]byte("c")) }}
			done2 := started(l2)
			c2.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadFull(c2, got[:1]); err != nil || got[0] != 'c' {
				t.Errorf("the connection made between two loops: %q (%v), want it served by the second", got[:1], err)
			}
			close(stop2)
			Interrupt(ln)
			<-done2
		})
	}
}
