package web

import (
	"bufio"
	"context"
	"fmt"
	"github.com/gopbs/gopbs/internal/testcluster"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/events"
	"github.com/gopbs/gopbs/internal/webtoken"
	"github.com/gopbs/gopbs/proto"
)

// fakeSource is a server with two jobs, one of alice's and one of bob's.
type fakeSource struct {
	mu     sync.Mutex
	others bool          // query_other_jobs
	block  chan struct{} // when set, Jobs waits for it to close
}

func (f *fakeSource) Rights(v Viewer) Rights {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v.Anonymous() {
		return Rights{See: f.others, OtherJobs: f.others}
	}
	return Rights{See: true, Manager: v.User == "root", OtherJobs: f.others || v.User == "root"}
}

func (f *fakeSource) Jobs(v Viewer, ids []string, history bool) ([]proto.Status, []proto.ObjectError, error) {
	f.mu.Lock()
	block, others := f.block, f.others
	f.mu.Unlock()
	if block != nil {
		<-block
	}
	var out []proto.Status
	for _, owner := range []string{"alice", "bob"} {
		if !others && v.User != "root" && v.User != owner {
			continue
		}
		id := map[string]string{"alice": "1.srv", "bob": "2.srv"}[owner]
		out = append(out, proto.Status{Name: id, Attrs: []proto.Attr{
			{Name: proto.AttrJobName, Value: owner + "job"}, {Name: proto.AttrJobOwner, Value: owner + "@h"},
			{Name: proto.AttrJobState, Value: "R"}, {Name: proto.AttrQueue, Value: "workq"}, {Name: proto.AttrStime, Value: "1700000000"},
			{Name: proto.AttrResourceList, Resource: "walltime", Value: "01:00:00"},
			{Name: proto.AttrVariableList, Value: "SECRET=" + owner},
		}})
	}
	return out, nil, nil
}

func (f *fakeSource) Nodes(Viewer) ([]proto.Status, error) {
	return []proto.Status{{Name: "n1", Attrs: []proto.Attr{{Name: "state", Value: "free"}}}}, nil
}
func (f *fakeSource) Queues(Viewer) ([]proto.Status, error) { return nil, nil }
func (f *fakeSource) Server(Viewer) (proto.Status, error)   { return proto.Status{Name: "srv"}, nil }

// hostAddr stands for this host's address on its network in the tests.
const hostAddr = "198.51.100.1"

// start runs a web server on a loopback port with src and a tokens file
// holding a token for alice and one for root.
func start(t *testing.T, src Source, change func(*Config)) (*Server, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	tokens := map[string]string{}
	var entries []webtoken.Entry
	for _, u := range []string{"alice", "root"} {
		tok, _ := webtoken.New()
		tokens[u] = tok
		entries = append(entries, webtoken.Entry{User: u, Hash: webtoken.Hash(tok)})
	}
	path := filepath.Join(dir, "web_tokens")
	if err := os.WriteFile(path, webtoken.Format(entries), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Addr: "127.0.0.1:0", ServerLabel: "srv", Source: src, TokenFile: path,
		Now: func() time.Time { return time.Unix(1700000100, 0) }, Loc: time.UTC,
		ReadHostAddrs: func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr(hostAddr)}, nil }}
	if change != nil {
		change(&cfg)
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, tokens
}

func fetch(t *testing.T, s *Server, method, path string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+s.Addr()+path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Who a request is for, by where it comes from and what it carries.
func TestIdentify(t *testing.T) {
	s, tokens := start(t, &fakeSource{}, func(c *Config) {
		c.ProxyHeader = "X-Remote-User"
		c.ProxyAddrs = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
	})
	for _, tt := range []struct {
		name, remote string
		headers      []string
		user         string
		status       int
	}{
		{"loopback, nothing", "127.0.0.1:5000", nil, "", 0},
		{"loopback v6", "[::1]:5000", nil, "", 0},
		{"remote, nothing", "192.0.2.7:5000", nil, "", 403},
		{"remote with a token", "192.0.2.7:5000", []string{"Authorization", "Bearer " + tokens["alice"]}, "alice", 0},
		{"a bad token", "127.0.0.1:5000", []string{"Authorization", "Bearer pbsw_nope"}, "", 401},
		{"not bearer", "127.0.0.1:5000", []string{"Authorization", "Basic YTpi"}, "", 401},
		{"the proxy, a user", "10.1.2.3:5000", []string{"X-Remote-User", "bob"}, "bob", 0},
		{"the proxy, no user", "10.1.2.3:5000", nil, "", 0},
		{"the header from elsewhere", "127.0.0.1:5000", []string{"X-Remote-User", "root"}, "", 403},
		{"the header from another loopback address", "127.0.0.2:5000", []string{"X-Remote-User", "root"}, "", 403},
		{"the header from this host's address", hostAddr + ":5000", []string{"X-Remote-User", "root"}, "", 403},
		{"the header, not a user", "10.1.2.3:5000", []string{"X-Remote-User", "bob smith"}, "", 400},
	} {
		r := httptest.NewRequest("GET", "/api/v1/jobs", nil)
		r.RemoteAddr = tt.remote
		for i := 0; i+1 < len(tt.headers); i += 2 {
			r.Header.Set(tt.headers[i], tt.headers[i+1])
		}
		v, ref := s.identify(r)
		status := 0
		if ref != nil {
			status = ref.status
		}
		if status != tt.status || v.User != tt.user {
			t.Errorf("%s: user %q refusal %d, want %q %d", tt.name, v.User, status, tt.user, tt.status)
		}
	}
	// Two values of the header are refused (which would the proxy mean?).
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:1"
	r.Header.Add("X-Remote-User", "bob")
	r.Header.Add("X-Remote-User", "root")
	if _, ref := s.identify(r); ref == nil || ref.status != 400 {
		t.Errorf("two user headers: %+v", ref)
	}
}

// Anonymous viewers see the jobs' public fields while query_other_jobs
// is true and nothing when it is false; a token's user sees what the
// server shows them; revoking a token takes effect without a restart.
func TestViewers(t *testing.T) {
	src := &fakeSource{others: true}
	s, tokens := start(t, src, nil)
	code, _, body := fetch(t, s, "GET", "/api/v1/jobs")
	if code != 200 || !strings.Contains(body, `"alicejob"`) || !strings.Contains(body, `"bobjob"`) || strings.Contains(body, "SECRET") {
		t.Fatalf("anonymous: %d %s", code, body)
	}
	code, _, body = fetch(t, s, "GET", "/api/v1/jobs", "Authorization", "Bearer "+tokens["alice"])
	if code != 200 || !strings.Contains(body, `"SECRET":"alice"`) {
		t.Fatalf("alice: %d %s", code, body)
	}
	src.mu.Lock()
	src.others = false
	src.mu.Unlock()
	for _, path := range []string{"/api/v1/jobs", "/api/v1/nodes", "/api/v1/queues", "/api/v1/server", "/ui/plan", "/ui/fairshare"} {
		if code, _, body := fetch(t, s, "GET", path); code != 403 || strings.Contains(body, "job") && strings.Contains(body, "Jobs") {
			t.Errorf("anonymous %s with query_other_jobs false: %d %s", path, code, body)
		}
	}
	code, _, body = fetch(t, s, "GET", "/api/v1/jobs", "Authorization", "Bearer "+tokens["alice"])
	if code != 200 || !strings.Contains(body, "alicejob") || strings.Contains(body, "bobjob") {
		t.Fatalf("alice with query_other_jobs false: %d %s", code, body)
	}
	// Revoke: rewrite the file without alice.
	entries, _ := webtoken.Load(s.cfg.TokenFile)
	time.Sleep(10 * time.Millisecond) // a new modification time, whatever the file system's resolution
	if err := os.WriteFile(s.cfg.TokenFile, webtoken.Format(entries[1:]), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := fetch(t, s, "GET", "/api/v1/jobs", "Authorization", "Bearer "+tokens["alice"]); code != 401 {
		t.Fatalf("a revoked token: %d", code)
	}
	// A tokens file others may read is not trusted at all.
	os.Chmod(s.cfg.TokenFile, 0o644)
	if code, _, _ := fetch(t, s, "GET", "/api/v1/jobs", "Authorization", "Bearer "+tokens["root"]); code != 401 {
		t.Fatalf("a token from a world-readable file: %d", code)
	}
}

// The listener is read-only and says what it serves: the page with a
// policy that lets it load nothing from elsewhere.
func TestReadOnlyAndPolicy(t *testing.T) {
	s, _ := start(t, &fakeSource{others: true}, nil)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		if code, h, _ := fetch(t, s, m, "/api/v1/jobs"); code != 405 || h.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d %v", m, code, h)
		}
	}
	code, h, body := fetch(t, s, "GET", "/")
	csp := h.Get("Content-Security-Policy")
	if code != 200 || !strings.Contains(body, "/static/app.js") || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Fatalf("/: %d %q %.80s", code, csp, body)
	}
	for _, p := range []string{"/static/app.js", "/static/app.css"} {
		body := ""
		code := 0
		if code, _, body = fetch(t, s, "GET", p); code != 200 || len(body) < 1000 {
			t.Errorf("%s: %d, %d bytes", p, code, len(body))
		}
		// No address elsewhere (the SVG namespace is a name, not a fetch).
		if strings.Contains(strings.ReplaceAll(body, `"http://www.w3.org/2000/svg"`, ""), "://") {
			t.Errorf("%s names an address elsewhere", p)
		}
	}
	if code, _, _ := fetch(t, s, "GET", "/etc/passwd"); code != 404 {
		t.Errorf("an unknown path: %d", code)
	}
	if code, _, body := fetch(t, s, "GET", "/api/v1/schema"); code != 200 || !strings.Contains(body, `"jobs_document"`) {
		t.Errorf("schema: %d", code)
	}
}

// rawRequest sends raw bytes on a new connection and returns the status
// line of the answer ("" when the connection closed without one).
func rawRequest(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// Bad input gets a 4xx, never a crash: malformed requests, huge headers,
// a silent client (timed out), and the listener still answers after.
func TestBadHTTP(t *testing.T) {
	s, _ := start(t, &fakeSource{others: true}, func(c *Config) { c.HeaderTimeout = 300 * time.Millisecond })
	for _, tt := range []struct{ name, raw, want string }{
		{"garbage", "\x00\x01\x02 nonsense\r\n\r\n", "HTTP/1.1 400"},
		{"no version", "GET /\r\n\r\n", "HTTP/1.1 400"},
		{"bad header", "GET / HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n", "HTTP/1.1 400"},
		{"huge header", "GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", "HTTP/1.1 431"},
		{"many headers", "GET / HTTP/1.1\r\nHost: localhost\r\n" + strings.Repeat("X-A: b\r\n", 5000) + "\r\n", "HTTP/1.1 431"},
		{"a body on GET", "GET /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello", "HTTP/1.1 200"},
		{"path escape", "GET /static/../../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n", "HTTP/1.1 307"}, // to the cleaned path, /etc/passwd: 404
	} {
		if got := rawRequest(t, s.Addr(), tt.raw); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: %q, want %s", tt.name, got, tt.want)
		}
	}
	// A client that sends half a request and waits is cut off.
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost:")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	io.ReadAll(c)
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("a silent client kept its connection %v", d)
	}
	if code, _, _ := fetch(t, s, "GET", "/api/v1/jobs"); code != 200 {
		t.Fatalf("after the bad input: %d", code)
	}
}

// The web budget: connections beyond it are told 503; silent ones make
// room for newcomers; the server goes on answering.
func TestConnectionBudget(t *testing.T) {
	s, _ := start(t, &fakeSource{others: true}, func(c *Config) {
		c.Budget = connlimit.Budget{Max: 4, PerPeer: 4, Pending: 2, PerPeerPending: 2}
	})
	// Four kept-alive connections that each finished a request hold the
	// whole budget.
	var held []net.Conn
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /ui/whoami HTTP/1.1\r\nHost: localhost\r\n\r\n")
		r := bufio.NewReader(c)
		if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("connection %d: %q", i, line)
		}
		held = append(held, c)
	}
	if got := rawRequest(t, s.Addr(), "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Fatalf("beyond the budget: %q", got)
	}
	for _, c := range held {
		c.Close()
	}
	testWait(t, "the budget freed", func() bool { total, _ := s.limit.Counts(); return total == 0 })
	// Silent connections: the oldest makes room for the next one.
	var silent []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
		testWait(t, fmt.Sprintf("silent connection %d admitted", i), func() bool { total, _ := s.limit.Counts(); return total == min(i+1, 2) })
	}
	silent[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := silent[0].Read(make([]byte, 1)); err == nil {
		t.Fatal("the oldest silent connection was not closed to make room")
	}
	if code, _, _ := fetch(t, s, "GET", "/ui/whoami"); code != 200 {
		t.Fatalf("an honest client after the silent ones: %d", code)
	}
}

// Listings wait for one of renderSlots; beyond, 503 with Retry-After.
func TestRenderSlots(t *testing.T) {
	src := &fakeSource{others: true, block: make(chan struct{})}
	s, _ := start(t, src, nil)
	var wg sync.WaitGroup
	codes := make(chan int, renderSlots)
	for i := 0; i < renderSlots; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := fetch(t, s, "GET", "/api/v1/jobs")
			codes <- code
		}()
	}
	testWait(t, "the slots taken", func() bool { return len(s.render) == renderSlots })
	code, h, _ := fetch(t, s, "GET", "/api/v1/jobs")
	if code != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("a listing beyond the slots: %d %v", code, h)
	}
	close(src.block)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("a listing in a slot: %d", c)
		}
	}
}

// testWait polls cond for up to 10 s (testcluster's one polling loop).
func testWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testcluster.WaitFor(t, what, 10*time.Second, func() (bool, string) { return cond(), "not yet" })
}

// hubFeed is a Feed over a real hub that lets every viewer see every
// change.
type hubFeed struct{ hub *events.Hub }

func (f hubFeed) Subscribe(v Viewer, resume bool, after uint64, buffer int) (*events.Sub, func(*events.Event) bool, error) {
	all := func(*events.Event) bool { return true }
	if resume {
		sub, err := f.hub.Resume(events.Filter{}, after, buffer)
		return sub, all, err
	}
	sub, err := f.hub.Subscribe(events.Filter{}, 0, buffer)
	return sub, all, err
}

func (f hubFeed) Last() uint64 { return f.hub.Last() }

// readFrames reads SSE frames from r until n "job" or "reset" events
// came, and returns them as "event id data" lines.
func readFrames(t *testing.T, r *bufio.Reader, n int) []string {
	t.Helper()
	var out []string
	var ev, id, data string
	for len(out) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev != "" {
				out = append(out, strings.TrimSpace(ev+" "+id+" "+data))
			}
			ev, id, data = "", "", ""
		case strings.HasPrefix(line, "event: "):
			ev = line[7:]
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		}
	}
	return out
}

func openStream(t *testing.T, s *Server, headers ...string) *bufio.Reader {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/ui/events", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
	return bufio.NewReader(resp.Body)
}

// The event stream: changes as they come, comments hidden from anonymous
// viewers, a resume from Last-Event-ID, and a reset when the changes
// since are no longer kept.
func TestLiveStream(t *testing.T) {
	hub := events.NewHub(4)
	s, tokens := start(t, &fakeSource{others: true}, func(c *Config) { c.Feed = hubFeed{hub} })
	anon := openStream(t, s)
	alice := openStream(t, s, "Authorization", "Bearer "+tokens["alice"])
	testWait(t, "two subscribers", func() bool { return hub.Subscribers() == 2 })
	hub.Publish(events.Event{JobID: "1.srv", Owner: "alice", State: "R", Comment: "on /secret/path"})
	hub.Publish(events.Event{JobID: "1.srv", Owner: "alice", State: "F"})
	got := readFrames(t, anon, 2)
	if !strings.HasPrefix(got[0], `job 1 {"seq":1,`) || strings.Contains(got[0], "secret") || !strings.Contains(got[1], `"state":"F"`) {
		t.Errorf("anonymous: %q", got)
	}
	if got := readFrames(t, alice, 1); !strings.Contains(got[0], `"comment":"on /secret/path"`) {
		t.Errorf("alice: %q", got)
	}
	resumed := openStream(t, s, "Last-Event-ID", "1")
	if got := readFrames(t, resumed, 1); !strings.HasPrefix(got[0], "job 2 ") {
		t.Errorf("resumed after 1: %q", got)
	}
	for i := 0; i < 6; i++ {
		hub.Publish(events.Event{JobID: "2.srv", Owner: "bob", State: "Q"})
	}
	gap := openStream(t, s, "Last-Event-ID", "1")
	if got := readFrames(t, gap, 1); !strings.HasPrefix(got[0], "reset ") {
		t.Errorf("resumed after a gap: %q", got)
	}
	if code, _, _ := fetch(t, s, "GET", "/ui/events", "Last-Event-ID", "x"); code != 400 {
		t.Errorf("a bad Last-Event-ID: %d", code)
	}
}

// Whatever a request carries, identify answers without panicking, and a
// viewer it names is a valid user name.
func FuzzIdentify(f *testing.F) {
	s := &Server{cfg: Config{ProxyHeader: "X-Remote-User", ProxyAddrs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	s.tokens = tokenCache{path: filepath.Join(f.TempDir(), "none")}
	f.Add("Bearer pbsw_x", "alice", "10.1.1.1:5")
	f.Add("", "root\x00", "[::1]:80")
	f.Add("bearer  ", "", "garbage")
	f.Fuzz(func(t *testing.T, auth, user, remote string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if auth != "" {
			r.Header["Authorization"] = []string{auth}
		}
		if user != "" {
			r.Header["X-Remote-User"] = []string{user}
		}
		v, ref := s.identify(r)
		if ref == nil && v.User != "" && !webtoken.ValidUser(v.User) {
			t.Fatalf("viewer %q", v.User)
		}
		if ref != nil && v.User != "" {
			t.Fatalf("refused, yet viewer %q", v.User)
		}
	})
}

// A proxy address any local user can connect from is refused at start:
// loopback (all of 127.0.0.0/8 and ::1) and this host's own addresses,
// alone or inside a CIDR.
func TestProxyOnThisHostRefused(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr(hostAddr), netip.MustParseAddr("2001:db8::7")}
	for _, tt := range []struct {
		addrs string
		want  string // in the error; "" for accepted
	}{
		{"10.1.0.0/16", ""},
		{"192.0.2.7/32,2001:db8::8/128", ""},
		{"198.51.100.0/31", "an address of this host"},
		{"127.0.0.1/32", "loopback"},
		{"127.0.0.2/32", "loopback"},
		{"127.200.0.0/16", "loopback"},
		{"::1/128", "loopback"},
		{"::ffff:127.0.0.2/128", "loopback"},
		{"0.0.0.0/0", "loopback"},
		{"::/0", "loopback"},
		{"10.1.0.0/16,198.51.100.1/32", "an address of this host"},
		{"2001:db8::/64", "an address of this host"},
		{"::ffff:198.51.100.1/128", "an address of this host"},
	} {
		var pfx []netip.Prefix
		for _, a := range strings.Split(tt.addrs, ",") {
			pfx = append(pfx, netip.MustParsePrefix(a))
		}
		err := CheckProxyAddrs(pfx, own)
		want := tt.want
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", tt.addrs, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "PBS_WEB_PROXY_ADDR")):
			t.Errorf("%s: %v, want an error naming PBS_WEB_PROXY_ADDR and %q", tt.addrs, err, want)
		}
	}
	// Start refuses too, so no listener trusts the header from there.
	cfg := Config{Addr: "127.0.0.1:0", Source: &fakeSource{}, ProxyHeader: "X-Remote-User",
		ProxyAddrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	if s, err := Start(cfg); err == nil || !strings.Contains(err.Error(), "PBS_WEB_PROXY_ADDR") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Start with the proxy on 127.0.0.2: %v", err)
	}
}

// unixClient is an HTTP client whose connections go to the Unix socket
// path.
func unixClient(path string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", path) },
	}}
}

func fetchWith(t *testing.T, c *http.Client, url string, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A proxy on this host connects to its socket: the header is trusted
// there from the proxy's uid alone (the kernel's word, SO_PEERCRED), and
// nowhere else; the socket is the proxy's (0600).
func TestProxySocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "pbs_web.sock")
	me := uint32(os.Getuid())
	s, _ := start(t, &fakeSource{}, func(c *Config) {
		c.ProxyHeader, c.ProxySocket, c.ProxyUID = "X-Remote-User", sock, me
	})
	proxy := unixClient(sock)
	code, body := fetchWith(t, proxy, "http://localhost/api/v1/jobs", "X-Remote-User", "bob")
	if code != 200 || !strings.Contains(body, `"SECRET":"bob"`) || strings.Contains(body, "alice") {
		t.Fatalf("bob through the proxy's socket: %d %s", code, body)
	}
	if code, body := fetchWith(t, proxy, "http://localhost/ui/whoami"); code != 200 || !strings.Contains(body, `"anonymous":true`) {
		t.Fatalf("anonymous through the proxy's socket: %d %s", code, body)
	}
	if code, _, body := fetch(t, s, "GET", "/ui/whoami", "X-Remote-User", "root"); code != 403 {
		t.Fatalf("the header over loopback TCP: %d %s", code, body)
	}
	info, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); info.Mode().Perm() != 0o600 || st.Uid != me {
		t.Fatalf("the socket is %v, uid %d", info.Mode(), st.Uid)
	}
	if me != 0 {
		return // the rest needs to give the socket to another uid
	}
	// The proxy is another uid: root's connection is refused, even with
	// the socket's mode opened to all.
	other := filepath.Join(t.TempDir(), "pbs_web.sock")
	start(t, &fakeSource{}, func(c *Config) {
		c.ProxyHeader, c.ProxySocket, c.ProxyUID = "X-Remote-User", other, 65534
	})
	if info, err := os.Stat(other); err != nil || info.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Fatalf("the socket is not the proxy's: %v %v", info, err)
	}
	os.Chmod(other, 0o666)
	c, err := net.Dial("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /ui/whoami HTTP/1.1\r\nHost: localhost\r\nX-Remote-User: root\r\nConnection: close\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	answer, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 403") || !strings.Contains(string(answer), "for the proxy (PBS_WEB_PROXY_UID) only") {
		t.Fatalf("uid 0 on the socket of proxy uid 65534: %q", answer)
	}
}

// Only a Host naming this listener is answered (DNS rebinding): its
// address, this host's names and addresses, the server's name and the
// configured ones; 421 for any other, whatever the path.
func TestHostHeader(t *testing.T) {
	s, _ := start(t, &fakeSource{others: true}, func(c *Config) { c.Hosts = []string{"pbs.example.org", "10.9.8.7"} })
	_, port, _ := net.SplitHostPort(s.Addr())
	hn, _ := os.Hostname()
	for _, tt := range []struct {
		host     string
		answered bool
	}{
		{"127.0.0.1:" + port, true},
		{"127.0.0.1", true},
		{"localhost:" + port, true},
		{"LocalHost.", true},
		{"[::1]:" + port, true},
		{"127.0.0.5:" + port, true}, // loopback: cannot be rebound
		{hostAddr + ":8080", true},  // this host's address
		{"srv", true},               // ServerLabel
		{"pbs.example.org", true},   // configured
		{"PBS.Example.ORG:443", true},
		{"10.9.8.7", true},
		{hn, true},
		{"evil.example:" + port, false},
		{"pbs.example.org.evil.example", false},
		{"localhost.evil.example", false},
		{"192.0.2.99:" + port, false},
		{"", false},
		{"::1", false},
		{"[::1", false},
		{"localhost:80:80", false},
		{"localhost:http", false},
	} {
		for _, path := range []string{"/api/v1/jobs", "/ui/events", "/"} {
			got := rawRequest(t, s.Addr(), "GET "+path+" HTTP/1.1\r\nHost: "+tt.host+"\r\nConnection: close\r\n\r\n")
			refused := strings.HasPrefix(got, "HTTP/1.1 421")
			if tt.answered && (refused || !strings.HasPrefix(got, "HTTP/1.1 ")) {
				t.Errorf("Host %q %s: %q, want an answer", tt.host, path, got)
			}
			if !tt.answered && !refused && !strings.HasPrefix(got, "HTTP/1.1 400") {
				// (net/http refuses a missing or malformed Host itself, 400)
				t.Errorf("Host %q %s: %q, want 421", tt.host, path, got)
			}
		}
	}
	// HTTP/1.0 may omit Host: it names nothing, so nothing is answered.
	if got := rawRequest(t, s.Addr(), "GET /api/v1/jobs HTTP/1.0\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.0 421") {
		t.Errorf("HTTP/1.0 without Host: %q", got)
	}
}

// hostOf never panics, and what it accepts is a name or an address that
// parses again to itself, with or without a port.
func FuzzHostOf(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:80", "127.0.0.1", "Pbs.Example.ORG.", "[fe80::1%eth0]:1", "a:b:c", "", "[::ffff:127.0.0.1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h, ok := hostOf(v)
		if !ok {
			return
		}
		if h != strings.ToLower(h) || strings.HasSuffix(h, ".") || h == "" {
			t.Fatalf("hostOf(%q) = %q", v, h)
		}
		again := h + ":80"
		if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
			again = "[" + h + "]:80"
		}
		if h2, ok := hostOf(again); !ok || h2 != h {
			t.Fatalf("hostOf(%q) = %q; hostOf(%q) = %q %v", v, h, again, h2, ok)
		}
	})
}

// streamStatus opens an event stream and returns its status and body
// (closed at the test's end).
func streamStatus(t *testing.T, s *Server, headers ...string) (int, io.ReadCloser) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/ui/events", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp.StatusCode, resp.Body
}

// One viewer holds at most streamsPerViewer event streams: a user by
// name, anonymous viewers by the peer they come from (every local user
// together); others keep theirs, and a stream closed gives its place
// back.
func TestStreamsPerViewer(t *testing.T) {
	hub := events.NewHub(4)
	s, tokens := start(t, &fakeSource{others: true}, func(c *Config) { c.Feed = hubFeed{hub} })
	alice := []string{"Authorization", "Bearer " + tokens["alice"]}
	var first io.ReadCloser
	for i := 0; i < streamsPerViewer; i++ {
		code, body := streamStatus(t, s, alice...)
		if code != 200 {
			t.Fatalf("alice's stream %d: %d", i, code)
		}
		if first == nil {
			first = body
		}
	}
	if code, _ := streamStatus(t, s, alice...); code != 429 {
		t.Fatalf("alice's stream %d: %d, want 429", streamsPerViewer+1, code)
	}
	if code, _ := streamStatus(t, s, "Authorization", "Bearer "+tokens["root"]); code != 200 {
		t.Fatalf("root's stream while alice holds hers: %d", code)
	}
	// Anonymous streams from loopback: 127.0.0.1 and 127.0.0.2 are one
	// viewer (this host).
	for i := 0; i < streamsPerViewer; i++ {
		client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%2))}}).DialContext}}
		resp, err := client.Get("http://" + s.Addr() + "/ui/events")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("anonymous stream %d: %v %v", i, err, resp)
		}
		t.Cleanup(func() { resp.Body.Close() })
	}
	if code, _ := streamStatus(t, s); code != 429 {
		t.Fatalf("anonymous stream %d from this host: %d, want 429", streamsPerViewer+1, code)
	}
	first.Close()
	testWait(t, "alice's closed stream given back", func() bool {
		code, body := streamStatus(t, s, alice...)
		body.Close()
		return code == 200
	})
}

// holdConn sends a request on a new connection from dial and keeps the
// connection open after the answer; it returns the status line.
func holdConn(t *testing.T, dial func() (net.Conn, error), req string) string {
	t.Helper()
	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// The budget's peers: every local user is one, whatever loopback address
// it connects from (five addresses no longer take five shares), and the
// proxy, which carries its users' connections, is bounded by the class
// alone.
func TestBudgetPeers(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "pbs_web.sock")
	s, _ := start(t, &fakeSource{others: true}, func(c *Config) {
		c.Budget = connlimit.Budget{Max: 8, PerPeer: 2, Pending: 8, PerPeerPending: 2}
		c.ProxyHeader, c.ProxySocket, c.ProxyUID = "X-Remote-User", sock, uint32(os.Getuid())
	})
	req := "GET /ui/whoami HTTP/1.1\r\nHost: localhost\r\n\r\n"
	answered := 0
	for i := 2; i < 7; i++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i))}}
		if line := holdConn(t, func() (net.Conn, error) { return d.Dial("tcp", s.Addr()) }, req); strings.HasPrefix(line, "HTTP/1.1 200") {
			answered++
		} else if !strings.HasPrefix(line, "HTTP/1.1 503") {
			t.Fatalf("from 127.0.0.%d: %q", i, line)
		}
	}
	if answered != 2 {
		t.Fatalf("%d connections from five loopback addresses kept, want this host's 2", answered)
	}
	for i := 0; i < 5; i++ {
		if line := holdConn(t, func() (net.Conn, error) { return net.Dial("unix", sock) }, req); !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("the proxy's connection %d: %q", i, line)
		}
	}
}
