package metrics

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

type fakeServer struct{ snap ServerSnapshot }

func (f *fakeServer) MetricsSnapshot() ServerSnapshot { return f.snap }

type fakeMom struct{ snap MomSnapshot }

func (f *fakeMom) MetricsSnapshot() MomSnapshot { return f.snap }

// serve runs reg's Listen on a free local port and returns the scrape URL.
func serve(t *testing.T, b *base) string {
	t.Helper()
	l, err := b.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr() + Path
}

func want(t *testing.T, s testcluster.Samples, v float64, name string, labels ...string) {
	t.Helper()
	got, ok := s.Get(name, labels...)
	if !ok || got != v {
		t.Errorf("%s = %v (present %v), want %v", testcluster.SeriesKey(name, labels...), got, ok, v)
	}
}

func TestServerFamilies(t *testing.T) {
	src := &fakeServer{snap: ServerSnapshot{
		Jobs:  []JobCount{{"workq", "queued", 3}, {"workq", "running", 1}, {"long", "held", 2}},
		Nodes: map[string]int{"free": 4, "offline,down": 1},
	}}
	local := connlimit.New("local", connlimit.Budget{}, nil)
	m := NewServer(src, nil, local, connlimit.New("remote", connlimit.Budget{}, nil))
	m.Submitted("workq")
	m.Submitted("workq")
	m.Ended("workq", EndOK)
	m.Ended("workq", EndDeleted)
	m.Requeued("long")
	m.Request(proto.MsgSubmit, 2*time.Millisecond)
	m.Request(proto.MsgSubmit, 3*time.Millisecond)
	m.Request(proto.MsgType(9999), time.Millisecond)
	m.Commit(3, time.Millisecond, nil)
	m.Commit(1, time.Millisecond, fmt.Errorf("disk full"))
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	local.Admit("uid:0", a)
	s := testcluster.MustScrape(t, serve(t, &m.base))
	want(t, s, 3, ServerJobs, "queue", "workq", "state", "queued")
	want(t, s, 1, ServerJobs, "queue", "workq", "state", "running")
	want(t, s, 2, ServerJobs, "queue", "long", "state", "held")
	want(t, s, 4, ServerNodes, "state", "free")
	want(t, s, 1, ServerNodes, "state", "offline,down")
	want(t, s, 2, ServerSubmissions, "queue", "workq")
	want(t, s, 1, ServerEnds, "queue", "workq", "result", EndOK)
	want(t, s, 1, ServerEnds, "queue", "workq", "result", EndDeleted)
	want(t, s, 1, ServerRequeues, "queue", "long")
	want(t, s, 2, ServerRequestSeconds+"_count", "type", "Submit")
	want(t, s, 1, ServerRequestSeconds+"_count", "type", RequestOther)
	want(t, s, 1, ServerCommitSeconds+"_count")
	want(t, s, 3, ServerCommitBatch+"_sum")
	want(t, s, 1, ServerCommitFailures)
	want(t, s, 1, ServerConnections, "class", "local")
	want(t, s, 1, ServerConnections+PendingSuffix, "class", "local")
	want(t, s, 0, ServerConnections, "class", "remote")
	// The scrape's own connection, established by its request.
	want(t, s, 1, ServerConnections, "class", ListenerClass)
	want(t, s, 0, ServerConnections+PendingSuffix, "class", ListenerClass)
	for _, name := range []string{ServerConnections + RefusedSuffix, ServerConnections + EvictedSuffix, "go_goroutines", "process_cpu_seconds_total"} {
		if !s.Has(name) {
			t.Errorf("no %s", name)
		}
	}
	for k := range s {
		if strings.Contains(k, "9999") {
			t.Errorf("an unknown request type became a label: %s", k)
		}
	}
}

func TestSchedFamilies(t *testing.T) {
	m := NewSched(nil)
	m.Phase(PhaseFetch, 10*time.Millisecond)
	m.Phase(PhaseDecide, time.Millisecond)
	m.Phase(PhaseApply, time.Millisecond)
	m.Cycle(3, 1, map[string]int{"Request invalid for state of job": 2})
	m.Cycle(1, 0, nil)
	m.SetUsage(map[string]float64{"alice": 120, "bob": 7.5})
	url := serve(t, &m.base)
	s := testcluster.MustScrape(t, url)
	want(t, s, 2, SchedCycles)
	want(t, s, 1, SchedPhaseSeconds+"_count", "phase", PhaseFetch)
	want(t, s, 0.01, SchedPhaseSeconds+"_sum", "phase", PhaseFetch)
	want(t, s, 1, SchedPhaseSeconds+"_count", "phase", PhaseApply)
	want(t, s, 4, SchedStarted)
	want(t, s, 1, SchedBackfilled)
	want(t, s, 2, SchedRefused, "reason", "Request invalid for state of job")
	want(t, s, 120, SchedFairshareUsage, "entity", "alice")
	want(t, s, 7.5, SchedFairshareUsage, "entity", "bob")
	want(t, s, 1, SchedConnections, "class", ListenerClass)
	// Fair share turned off: the usage goes.
	m.SetUsage(nil)
	if s := testcluster.MustScrape(t, url); s.Has(SchedFairshareUsage) {
		t.Error("fair-share usage shown with fair share off")
	}
}

func TestMomFamilies(t *testing.T) {
	src := &fakeMom{snap: MomSnapshot{Running: 2}}
	m := NewMom(src, nil)
	m.Started()
	m.Started()
	m.Started()
	m.OOMKilled()
	url := serve(t, &m.base)
	s := testcluster.MustScrape(t, url)
	want(t, s, 2, MomJobsRunning)
	want(t, s, 3, MomStarts)
	want(t, s, 1, MomOOMKills)
	if s.Has(MomLeaseAge) {
		t.Error("a lease age before any lease")
	}
	src.snap.LeaseRenewed, src.snap.Lease = time.Now().Add(-30*time.Second), 90*time.Second
	s = testcluster.MustScrape(t, url)
	if age, _ := s.Get(MomLeaseAge); age < 30 || age > 60 {
		t.Errorf("lease age %v, want about 30 s", age)
	}
	want(t, s, 90, MomLease)
}

// rawRequest writes req on a new connection to addr and returns the
// status line of the answer ("" when the connection was closed without
// one).
func rawRequest(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return ""
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// Bad input on the metrics port gets a 4xx, never a crash or a hang: other
// paths, other methods, oversized headers, garbage; a peer that never
// finishes its headers is cut off.
func TestListenerBadInput(t *testing.T) {
	m := NewMom(&fakeMom{}, nil)
	b := defaultBounds
	b.header = 300 * time.Millisecond
	l, err := listen("127.0.0.1:0", m.reg, m.limit, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr()
	for _, tt := range []struct{ name, req, want string }{
		{"other path", "GET /debug/pprof HTTP/1.1\r\nHost: x\r\n\r\n", "404"},
		{"post", "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "405"},
		{"huge header", "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", "431"},
		{"garbage", "\x00\x01\x02 nonsense\r\n\r\n", "400"},
		{"no host", "GET /metrics HTTP/1.1\r\n\r\n", "400"},
		{"scrape", "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "200"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rawRequest(t, addr, tt.req); !strings.Contains(got, " "+tt.want+" ") {
				t.Fatalf("status line %q, want %s", got, tt.want)
			}
		})
	}
	// A slow peer: half a request line, then nothing.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /metr")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	io.ReadAll(c)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a peer that never finished its headers kept its connection %v", took)
	}
}

// A flood of silent connections on the metrics port takes only the
// metrics listener's budget: a scrape still gets through (the oldest
// pending connections make room), and the refusals and evictions show.
func TestListenerFlood(t *testing.T) {
	m := NewMom(&fakeMom{}, nil)
	url := serve(t, &m.base)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 3*Budget.Max; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Keep-alive off: each scrape a new connection, which has to win a
	// slot from the silent ones.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var s testcluster.Samples
	ok, last := testcluster.Poll(10*time.Second, func() (bool, string) {
		resp, err := client.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		if s, err = testcluster.ParseMetrics(resp.Body); err != nil {
			return false, err.Error()
		}
		ev, _ := s.Get(MomConnections+EvictedSuffix, "class", ListenerClass)
		return ev > 0, fmt.Sprintf("evicted %v", ev)
	})
	if !ok {
		t.Fatalf("no scrape through a flood of %d silent connections: %s", len(conns), last)
	}
	if held, _ := s.Get(MomConnections, "class", ListenerClass); held > float64(Budget.Max) {
		t.Fatalf("%v connections held, over the budget of %d", held, Budget.Max)
	}
}

// A local user scraping from many loopback addresses holds one peer's
// share of the metrics budget (16 of 64), not one per address: five
// addresses no longer take the whole budget, and a scraper elsewhere
// still has room.
func TestListenerLoopbackIsOnePeer(t *testing.T) {
	m := NewMom(&fakeMom{}, nil)
	url := serve(t, &m.base)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	answered := 0
	for i := 2; i < 7; i++ {
		for j := 0; j < Budget.PerPeer; j++ {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i))}, Timeout: 5 * time.Second}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
			// Kept alive after its answer: it holds its slot.
			if line, _ := bufio.NewReader(c).ReadString('\n'); strings.HasPrefix(line, "HTTP/1.1 200") {
				answered++
			}
		}
	}
	if held, _ := m.limit.Counts(); answered != Budget.PerPeer || held != Budget.PerPeer {
		t.Fatalf("%d scrapes from 5 loopback addresses answered, %d connections held; want %d", answered, held, Budget.PerPeer)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if s := m.limit.Admit("192.0.2.50", a); s == nil {
		t.Fatal("a scraper on another host found no room")
	}
}
