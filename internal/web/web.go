package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/hostaddr"
)

//go:embed assets
var assets embed.FS

// Budget is the web listener's default connection budget: the page holds
// one event stream per open tab, tools a few connections each. A peer is
// an address of another host, this host (every local user, whatever
// address they connect from: connlimit.HostPeer), or the proxy, which
// carries its users' connections and is bounded by the class alone
// (proxyPeer); event streams are bounded per viewer besides
// (streamsPerViewer).
var Budget = connlimit.Budget{Max: 256, PerPeer: 64, Pending: 64, PerPeerPending: 16}

// proxyPeer is the budget's name for the trusted proxy, at any of its
// addresses or on its socket.
const proxyPeer = "proxy"

// streamsPerViewer bounds the event streams one viewer holds at once: a
// user named by a token or the proxy, or, for anonymous streams, the
// peer they come from (this host, the proxy, another host). A page holds
// one per open tab.
const streamsPerViewer = 16

// Timeouts and bounds of the listener.
const (
	// headerTimeout bounds the wait for a request's headers (a slow or
	// silent client holds a pending slot this long at most).
	headerTimeout = 5 * time.Second
	// writeTimeout bounds writing one answer to a client that reads
	// slowly, or not at all; an event stream's writes each get it anew.
	writeTimeout = 30 * time.Second
	// idleTimeout closes a kept-alive connection that sends nothing.
	idleTimeout = 60 * time.Second
	// maxHeaderBytes bounds a request's headers: beyond, 431.
	maxHeaderBytes = 16 << 10
	// renderSlots is how many listings are built at once: each holds the
	// server's read lock and a cpu while it renders, so a flood queues
	// here rather than in front of qsub, and the batch ports keep the
	// rest of the machine.
	renderSlots = 1
	// renderWait is how long a request waits for a slot before 503.
	renderWait = 2 * time.Second
	// maxUnsent bounds the bytes of rendered answers waiting for their
	// clients to read them.
	maxUnsent = 128 << 20
)

// Config is what a Server needs.
type Config struct {
	// Addr is host:port to listen on (PBS_WEB).
	Addr string
	// ServerLabel is the documents' pbs_server (PBS_SERVER as configured,
	// as qstat -F json prints it).
	ServerLabel string
	Source      Source
	// Feed is the stream of job changes the page follows (nil: the page
	// refreshes itself now and then instead).
	Feed Feed
	// ProxyHeader is the trusted reverse proxy's identity header; the
	// proxy is at ProxyAddrs (on another host: Start refuses this host's
	// addresses) or, on this host, connects to the Unix socket
	// ProxySocket ("" for none) as ProxyUID. A header needs one of them.
	ProxyHeader string
	ProxyAddrs  []netip.Prefix
	ProxySocket string
	ProxyUID    uint32
	// Hosts are further names (or addresses) by which clients reach the
	// listener (PBS_WEB_HOSTS): a request whose Host names none of them,
	// the listener's address, this host's names and addresses or
	// ServerLabel is answered 421.
	Hosts []string
	// ReadHostAddrs reads this host's addresses (nil: hostaddr.Read);
	// tests give their own.
	ReadHostAddrs func() ([]netip.Addr, error)
	// TokenFile is PBS_HOME/server_priv/web_tokens ("" for no tokens).
	TokenFile string
	// SchedPriv is PBS_HOME/sched_priv, where the page reads the dedicated
	// time and the fair-share tree and usage when the scheduler runs on
	// this host.
	SchedPriv string
	// Budget is the connection budget (zero fields: the package's Budget).
	Budget connlimit.Budget
	// HeaderTimeout and WriteTimeout override headerTimeout and
	// writeTimeout (tests).
	HeaderTimeout, WriteTimeout time.Duration
	Logger                      hclog.Logger
	// Now and Loc are the clock and the zone of the documents' times
	// (time.Now and time.Local when nil).
	Now func() time.Time
	Loc *time.Location
}

// Server is a running web listener.
type Server struct {
	cfg    Config
	log    hclog.Logger
	ln     net.Listener
	hs     *http.Server
	limit  *connlimit.Limiter
	tokens tokenCache
	// host tells this host's addresses: a peer at one is any local user,
	// never the proxy.
	host   *hostaddr.Cache
	hosts  hostNames
	render chan struct{}
	unsent byteBudget
	// streams counts the event streams open per viewer (streamKey).
	streams counter
	// done is closed by Close: long answers (event streams) end.
	done      chan struct{}
	closeOnce sync.Once
	served    sync.WaitGroup // the listeners' Serve loops
}

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Loc == nil {
		cfg.Loc = time.Local
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = headerTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = writeTimeout
	}
	b := cfg.Budget
	if b == (connlimit.Budget{}) {
		b = Budget
	}
	if len(cfg.ProxyAddrs) > 0 {
		read := cfg.ReadHostAddrs
		if read == nil {
			read = hostaddr.Read
		}
		own, err := read()
		if err != nil {
			return nil, fmt.Errorf("web: checking %s: %w", config.KeyWebProxyAddr, err)
		}
		if err := CheckProxyAddrs(cfg.ProxyAddrs, own); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", cfg.Addr, err)
	}
	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		limit:  connlimit.New("web", b, cfg.Logger),
		tokens: tokenCache{path: cfg.TokenFile, log: cfg.Logger},
		host:   &hostaddr.Cache{ReadAddrs: cfg.ReadHostAddrs},
		hosts:  newHostNames(cfg.Addr, cfg.ServerLabel, cfg.Hosts),
		render: make(chan struct{}, renderSlots),
		unsent: byteBudget{max: maxUnsent},
		done:   make(chan struct{}),
	}
	s.limit.TrustPeer(proxyPeer)
	s.ln = &connlimit.Listener{Listener: ln, Limit: s.limit, Refusal: refusal503, Key: s.peerKey}
	var proxyLn net.Listener
	if cfg.ProxySocket != "" {
		ul, err := listenProxySocket(cfg.ProxySocket, cfg.ProxyUID, cfg.Logger)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("web: %w", err)
		}
		proxyLn = &connlimit.Listener{Listener: ul, Limit: s.limit, Refusal: refusal503, Key: s.peerKey}
	}
	s.hs = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.HeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          cfg.Logger.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		ConnContext:       connContext,
		BaseContext:       func(net.Listener) context.Context { return context.Background() },
	}
	serve := func(l net.Listener) {
		s.served.Add(1)
		go func() {
			defer s.served.Done()
			if err := s.hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("web listener stopped", "addr", l.Addr().String(), "error", err)
			}
		}()
	}
	serve(s.ln)
	s.log.Info("web status page and API listening", "addr", s.ln.Addr().String())
	if proxyLn != nil {
		serve(proxyLn)
		s.log.Info("web listener for the proxy on this host", "socket", cfg.ProxySocket, "proxy_uid", cfg.ProxyUID)
	}
	return s, nil
}

// Addr is the address listened on (for tests that listen on port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, ends event streams and waits up to five seconds
// for answers in progress, then closes what is left.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.hs.Shutdown(ctx)
	if err != nil {
		err = s.hs.Close()
	}
	s.served.Wait()
	return err
}

// refusal503 is what a connection the web budget refuses is told.
const refusal503 = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 32\r\n\r\nweb connection budget is full.\r\n"

// established marks r's connection as proven (out of the pending budget):
// it sent a whole request that was let in.
func established(r *http.Request) { connlimit.Established(r.Context()) }

// routes is the whole URL space.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /api/v1/schema", s.schema)
	mux.HandleFunc("GET /api/v1/jobs", s.data(s.jobs))
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.data(s.job))
	mux.HandleFunc("GET /api/v1/nodes", s.data(s.nodes))
	mux.HandleFunc("GET /api/v1/queues", s.data(s.queues))
	mux.HandleFunc("GET /api/v1/server", s.data(s.server))
	mux.HandleFunc("GET /ui/whoami", s.data(s.whoami))
	mux.HandleFunc("GET /ui/plan", s.data(s.plan))
	mux.HandleFunc("GET /ui/fairshare", s.data(s.fairshare))
	mux.HandleFunc("GET /ui/events", s.events)
	return s.common(mux)
}

// common sets what every answer carries and turns away what this
// read-only listener never answers.
func (s *Server) common(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Nothing from elsewhere: the page's own scripts, styles and
		// requests only, and no framing by other sites.
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r) {
			h.Set("Connection", "close")
			writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q does not name this server: list the names it is reached by in PBS_WEB_HOSTS", r.Host), 0)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		next.ServeHTTP(w, r)
	})
}

// admitted identifies r's viewer and marks its connection established,
// or answers the refusal and closes the connection (a refused client
// keeps no slot of the budget).
func (s *Server) admitted(w http.ResponseWriter, r *http.Request) (Viewer, bool) {
	v, ref := s.identify(r)
	if ref != nil {
		if ref.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pbs_server"`)
		}
		w.Header().Set("Connection", "close")
		writeError(w, ref.status, ref.text, 0)
		return Viewer{}, false
	}
	established(r)
	return v, true
}

// dataHandler renders the answer to a request for data for viewer v
// with rights.
type dataHandler func(r *http.Request, v Viewer, rights Rights) ([]byte, error)

// data identifies the viewer, refuses those who may see nothing, renders
// the answer in a render slot, then writes it out within the budget of
// bytes being written (a client that reads slowly holds its answer's
// bytes, not a render slot).
func (s *Server) data(h dataHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := s.admitted(w, r)
		if !ok {
			return
		}
		rights := s.cfg.Source.Rights(v)
		if !rights.See && r.URL.Path != "/ui/whoami" {
			text := "this server shows nothing to anonymous requests (query_other_jobs is false): present a token or come through the site's proxy"
			if !v.Anonymous() {
				text = "user " + v.User + " may not use this server (acl_users)"
			}
			writeError(w, http.StatusForbidden, text, 0)
			return
		}
		if !s.acquire(r.Context()) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "busy: too many listings at once, try again", 0)
			return
		}
		body, err := h(r, v, rights)
		s.release()
		if err != nil {
			writeAnyError(w, err)
			return
		}
		if !s.unsent.take(len(body)) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "busy: too many answers being sent, try again", 0)
			return
		}
		defer s.unsent.give(len(body))
		writeJSON(w, body)
	}
}

// byteBudget bounds the bytes of answers rendered and not yet written.
type byteBudget struct {
	mu   sync.Mutex
	max  int
	used int
}

// take reserves n bytes; false when they would exceed the budget (an
// answer larger than the whole budget is let through alone).
func (b *byteBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used > 0 && b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *byteBudget) give(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// counter counts what each key holds (event streams per viewer).
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one more for key; false, counting nothing, when key holds
// max already.
func (c *counter) take(key string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[key] >= max {
		return false
	}
	c.n[key]++
	return true
}

func (c *counter) give(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
	}
}

func (s *Server) acquire(ctx context.Context) bool {
	t := time.NewTimer(renderWait)
	defer t.Stop()
	select {
	case s.render <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
	return false
}

func (s *Server) release() { <-s.render }
