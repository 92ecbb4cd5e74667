// Package config reads pbs.conf the way every OpenPBS program does: the file
// named by $PBS_CONF_FILE (default /etc/pbs.conf), KEY=VALUE lines, with
// environment variables of the same names overriding the file. It also
// knows the PBS_HOME layout, so that daemons and commands agree on paths.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Keys of pbs.conf.
const (
	KeyConfFile    = "PBS_CONF_FILE"
	KeyHome        = "PBS_HOME"
	KeyExec        = "PBS_EXEC"
	KeyServer      = "PBS_SERVER"
	KeyBatchPort   = "PBS_BATCH_SERVICE_PORT"
	KeyMomPort     = "PBS_MOM_SERVICE_PORT"
	KeySchedPort   = "PBS_SCHEDULER_SERVICE_PORT"
	KeySchedHost   = "PBS_SCHEDULER_HOST"
	KeyMomNodeName = "PBS_MOM_NODE_NAME"
	KeyPersonality = "PBS_PERSONALITY"
	// KeySendmail is the mailer pbs_server runs for job mail (sendmail -f
	// <mail_from> <recipients>, the message on its standard input).
	KeySendmail = "PBS_SENDMAIL"
	// KeyPython is the interpreter site hooks run with (pbs_server and
	// pbs_mom): an absolute path, Debian's /usr/bin/python3 when unset.
	KeyPython = "PBS_PYTHON"
	// KeyServerMetrics, KeySchedMetrics and KeyMomMetrics are the
	// host:port on which pbs_server, pbs_sched and pbs_mom serve
	// Prometheus metrics at /metrics; unset, a daemon serves none.
	KeyServerMetrics = "PBS_SERVER_METRICS"
	KeySchedMetrics  = "PBS_SCHED_METRICS"
	KeyMomMetrics    = "PBS_MOM_METRICS"
	// KeyWeb is host:port of pbs_server's web status page and JSON API;
	// unset, the server opens no web listener.
	KeyWeb = "PBS_WEB"
	// KeyWebProxyHeader names the request header in which a trusted
	// reverse proxy passes the user it authenticated ("X-Remote-User");
	// KeyWebProxyAddr lists the addresses (IPs or CIDRs, commas) a proxy
	// on another host connects from (pbs_server refuses any of its own
	// host's: any local user can connect from those); KeyWebProxyUID is
	// the numeric uid of a proxy on the server's host, which connects to
	// the socket PBS_HOME/pbs_web.sock (the kernel names its uid). The
	// header needs the address list, the uid or both, and they the header.
	KeyWebProxyHeader = "PBS_WEB_PROXY_HEADER"
	KeyWebProxyAddr   = "PBS_WEB_PROXY_ADDR"
	KeyWebProxyUID    = "PBS_WEB_PROXY_UID"
	// KeyWebHosts lists further host names (or IPs, commas) by which
	// browsers reach the web listener: it answers only requests whose
	// Host names it (this host's names and addresses, PBS_SERVER and
	// PBS_WEB's host are always in), so that a page elsewhere cannot read
	// it through DNS rebinding.
	KeyWebHosts = "PBS_WEB_HOSTS"
	// KeyServerPeers lists the batch addresses (host:port, commas) of the
	// members of a replicated server group (internal/ha); unset, there is
	// one server, PBS_SERVER. Each member's raft transport listens on its
	// batch port + RaftPortOffset.
	KeyServerPeers = "PBS_SERVER_PEERS"
	// KeyServerHostName is the host name by which this host is named in
	// PBS_SERVER_PEERS (OpenPBS's key); the short host name by default.
	KeyServerHostName = "PBS_SERVER_HOST_NAME"
	// KeyLoginHostName is the name a login host's agent (pbs_login)
	// gives the server, the one its login key was made for (pbs_setup
	// login-key); the short host name by default.
	KeyLoginHostName = "PBS_LOGIN_HOST_NAME"
)

// WebSocketName is the name in PBS_HOME of the web listener's socket for
// a proxy on the server's host (PBS_WEB_PROXY_UID).
const WebSocketName = "pbs_web.sock"

// RaftPortOffset is added to a member's batch port to give its raft port.
const RaftPortOffset = 100

// Defaults.
const (
	DefaultConfFile  = "/etc/pbs.conf"
	DefaultHome      = "/var/spool/pbs"
	DefaultBatchPort = 15001
	DefaultMomPort   = 15002
	DefaultSchedPort = 15004
	DefaultSendmail  = "/usr/sbin/sendmail"
)

// Personality selects the client dialect (DESIGN §9).
type Personality string

// Personalities.
const (
	PBSPro Personality = "pbspro"
	Torque Personality = "torque"
)

// Config is the resolved configuration of one program invocation.
type Config struct {
	ConfFile    string // the file read, "" when none existed
	Home        string
	Exec        string
	Server      string // host of pbs_server
	SchedHost   string // host of the scheduler the server calls; PBS_SERVER by default
	BatchPort   int
	MomPort     int
	SchedPort   int
	MomNodeName string
	// LoginHostName is what pbs_login calls this host (PBS_LOGIN_HOST_NAME).
	LoginHostName string
	Personality   Personality
	// Sendmail is the mailer for job mail (PBS_SENDMAIL).
	Sendmail string
	// Python is the hooks' interpreter (PBS_PYTHON); "" for the default.
	Python string
	// ServerMetrics, SchedMetrics and MomMetrics are the metrics
	// listeners' host:port ("" for none; an empty host is every address).
	ServerMetrics, SchedMetrics, MomMetrics string
	// Web is the web listener's host:port (PBS_WEB), "" for none;
	// WebProxyHeader and WebProxyAddrs the trusted reverse proxy's
	// identity header and addresses (PBS_WEB_PROXY_HEADER,
	// PBS_WEB_PROXY_ADDR); WebProxySocket the socket of a proxy on this
	// host ("" for none) and WebProxyUID its uid (PBS_WEB_PROXY_UID).
	Web            string
	WebProxyHeader string
	WebProxyAddrs  []netip.Prefix
	WebProxySocket string
	WebProxyUID    uint32
	// WebHosts are PBS_WEB_HOSTS's names, lower case.
	WebHosts []string
	// Peers are the batch addresses of a replicated server group's
	// members (PBS_SERVER_PEERS), nil for a single server; HostName is
	// this host's name in that list (PBS_SERVER_HOST_NAME).
	Peers    []string
	HostName string
}

// Load reads the configuration using the process environment.
func Load() (*Config, error) { return LoadEnv(os.Getenv) }

// LoadEnv reads the configuration with getenv as the environment (tests
// pass their own). A missing default /etc/pbs.conf is not an error; a
// missing file named by PBS_CONF_FILE is.
func LoadEnv(getenv func(string) string) (*Config, error) {
	path := getenv(KeyConfFile)
	explicit := path != ""
	if !explicit {
		path = DefaultConfFile
	}
	vals := map[string]string{}
	f, err := os.Open(path)
	switch {
	case err == nil:
		defer f.Close()
		if vals, err = Parse(f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist) && !explicit:
		path = ""
	default:
		return nil, fmt.Errorf("pbs.conf: %w", err)
	}
	for _, k := range []string{KeyHome, KeyExec, KeyServer, KeyBatchPort, KeyMomPort, KeySchedPort, KeySchedHost, KeyMomNodeName, KeyPersonality, KeySendmail, KeyPython, KeyServerMetrics, KeySchedMetrics, KeyMomMetrics, KeyWeb, KeyWebProxyHeader, KeyWebProxyAddr, KeyWebProxyUID, KeyWebHosts, KeyServerPeers, KeyServerHostName, KeyLoginHostName} {
		if v := getenv(k); v != "" {
			vals[k] = v
		}
	}
	return resolve(path, vals)
}

// Parse reads KEY=VALUE lines. Blank lines and lines starting with # are
// ignored; whitespace around key and value is trimmed; a value may be
// quoted. A line without '=' is an error naming the line.
func Parse(r io.Reader) (map[string]string, error) {
	vals := map[string]string{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: %q is not KEY=VALUE", line, text)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vals[k] = v
	}
	return vals, sc.Err()
}

// FromValues is the configuration pbs.conf's KEY=VALUE pairs vals make
// (Parse's result), checked as Load checks a file.
func FromValues(vals map[string]string) (*Config, error) { return resolve("", vals) }

func resolve(path string, vals map[string]string) (*Config, error) {
	c := &Config{
		ConfFile:      path,
		Home:          vals[KeyHome],
		Exec:          vals[KeyExec],
		Server:        vals[KeyServer],
		SchedHost:     vals[KeySchedHost],
		MomNodeName:   vals[KeyMomNodeName],
		LoginHostName: vals[KeyLoginHostName],
		Personality:   Personality(strings.ToLower(vals[KeyPersonality])),
		Sendmail:      vals[KeySendmail],
		Python:        vals[KeyPython],
	}
	if c.Python != "" && !filepath.IsAbs(c.Python) {
		return nil, fmt.Errorf("%s=%q: want an absolute path", KeyPython, c.Python)
	}
	if c.Sendmail == "" {
		c.Sendmail = DefaultSendmail
	}
	if !filepath.IsAbs(c.Sendmail) {
		// Run without a shell or a search path: name the program itself.
		return nil, fmt.Errorf("%s=%q: want an absolute path", KeySendmail, c.Sendmail)
	}
	if c.Home == "" {
		c.Home = DefaultHome
	}
	if !filepath.IsAbs(c.Home) {
		abs, err := filepath.Abs(c.Home)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyHome, err)
		}
		c.Home = abs
	}
	host := ShortHostname()
	if c.Server == "" {
		c.Server = host
	}
	if c.SchedHost == "" {
		c.SchedHost = c.Server
	}
	if c.MomNodeName == "" {
		c.MomNodeName = host
	}
	if c.LoginHostName == "" {
		c.LoginHostName = host
	}
	switch c.Personality {
	case "":
		c.Personality = PBSPro
	case PBSPro, Torque:
	default:
		return nil, fmt.Errorf("%s=%q: want pbspro or torque", KeyPersonality, vals[KeyPersonality])
	}
	var err error
	if c.BatchPort, err = port(vals, KeyBatchPort, DefaultBatchPort); err != nil {
		return nil, err
	}
	if c.MomPort, err = port(vals, KeyMomPort, DefaultMomPort); err != nil {
		return nil, err
	}
	if c.SchedPort, err = port(vals, KeySchedPort, DefaultSchedPort); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		key string
		to  *string
	}{{KeyServerMetrics, &c.ServerMetrics}, {KeySchedMetrics, &c.SchedMetrics}, {KeyMomMetrics, &c.MomMetrics}} {
		if *a.to, err = listenAddr(vals, a.key); err != nil {
			return nil, err
		}
	}
	if err := c.resolveWeb(vals); err != nil {
		return nil, err
	}
	c.HostName = vals[KeyServerHostName]
	if c.HostName == "" {
		c.HostName = host
	}
	if c.Peers, err = ParsePeers(vals[KeyServerPeers]); err != nil {
		return nil, err
	}
	if len(c.Peers) > 0 && vals[KeySchedHost] == "" {
		// Each member of a group calls the scheduler beside it.
		c.SchedHost = c.HostName
	}
	return c, nil
}

// ParsePeers reads PBS_SERVER_PEERS: host:port entries separated by
// commas, each port leaving room for its raft port, no entry twice. ""
// is no group.
func ParsePeers(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var peers []string
	seen := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		host, ps, err := net.SplitHostPort(p)
		n, perr := strconv.Atoi(ps)
		if err != nil || host == "" || perr != nil || n <= 0 || n+RaftPortOffset > 65535 {
			return nil, fmt.Errorf("%s: %q is not host:port (a port up to %d)", KeyServerPeers, p, 65535-RaftPortOffset)
		}
		if seen[p] {
			return nil, fmt.Errorf("%s: %q is listed twice", KeyServerPeers, p)
		}
		seen[p] = true
		peers = append(peers, p)
	}
	return peers, nil
}

// Member is this host's entry in PBS_SERVER_PEERS: the one naming
// PBS_SERVER_HOST_NAME and PBS_BATCH_SERVICE_PORT ("" when none does).
func (c *Config) Member() string {
	self := net.JoinHostPort(c.HostName, strconv.Itoa(c.BatchPort))
	for _, p := range c.Peers {
		if p == self {
			return p
		}
	}
	return ""
}

// RaftAddr is the raft transport address of the member at batch address
// peer (host:port+RaftPortOffset).
func RaftAddr(peer string) string {
	host, ps, _ := net.SplitHostPort(peer)
	n, _ := strconv.Atoi(ps)
	return net.JoinHostPort(host, strconv.Itoa(n+RaftPortOffset))
}

// ServerAddrs is where daemons reach the server: the group's members, or
// the one server's address.
func (c *Config) ServerAddrs() []string {
	if len(c.Peers) > 0 {
		return c.Peers
	}
	return []string{c.ServerAddr()}
}

// listenAddr reads an optional host:port to listen on: "" when unset; the
// port must be a number in 1-65535 (a listener whose port is picked by the
// kernel could not be found by its scrapers).
func listenAddr(vals map[string]string, key string) (string, error) {
	v := vals[key]
	if v == "" {
		return "", nil
	}
	_, p, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("%s=%q: want host:port: %w", key, v, err)
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("%s=%q: %q is not a port number", key, v, p)
	}
	return v, nil
}

// resolveWeb checks the web listener's keys: PBS_WEB a host:port with a
// port number, the proxy's header a header name, its addresses IPs or
// CIDRs, its uid a number; a header without addresses or uid (or the
// reverse) would trust no one or everyone, so it is refused. Whether an
// address is this host's is pbs_server's to check (web.CheckProxyAddrs):
// commands on other hosts read the same file.
func (c *Config) resolveWeb(vals map[string]string) error {
	if v := vals[KeyWeb]; v != "" {
		_, p, err := net.SplitHostPort(v)
		if err != nil {
			return fmt.Errorf("%s=%q: want host:port: %w", KeyWeb, v, err)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("%s=%q: not a port number", KeyWeb, v)
		}
		c.Web = v
	}
	hosts, err := ParseHostList(vals[KeyWebHosts])
	if err != nil {
		return fmt.Errorf("%s: %w", KeyWebHosts, err)
	}
	c.WebHosts = hosts
	header, addrs, uid := vals[KeyWebProxyHeader], vals[KeyWebProxyAddr], vals[KeyWebProxyUID]
	if header == "" && (addrs != "" || uid != "") || header != "" && addrs == "" && uid == "" {
		return fmt.Errorf("%s goes with %s or %s (or both): the header is trusted only from the proxy's addresses or its uid", KeyWebProxyHeader, KeyWebProxyAddr, KeyWebProxyUID)
	}
	if header == "" {
		return nil
	}
	if !validHeaderName(header) {
		return fmt.Errorf("%s=%q: not a header name", KeyWebProxyHeader, header)
	}
	c.WebProxyHeader = header
	if uid != "" {
		// A number only: a name would be looked up by every program
		// that reads pbs.conf, and could name another uid on another host.
		n, err := strconv.ParseUint(uid, 10, 32)
		if err != nil || n == 1<<32-1 {
			return fmt.Errorf("%s=%q: want the proxy's numeric uid (id -u of its user)", KeyWebProxyUID, uid)
		}
		c.WebProxyUID = uint32(n)
		c.WebProxySocket = filepath.Join(c.Home, WebSocketName)
	}
	if addrs == "" {
		return nil
	}
	for _, a := range strings.Split(addrs, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(a)
		if err != nil {
			ip, ierr := netip.ParseAddr(a)
			if ierr != nil {
				return fmt.Errorf("%s: %q is neither an IP address nor a CIDR: %w", KeyWebProxyAddr, a, err)
			}
			pfx = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		}
		c.WebProxyAddrs = append(c.WebProxyAddrs, pfx.Masked())
	}
	if len(c.WebProxyAddrs) == 0 {
		return fmt.Errorf("%s=%q: no address", KeyWebProxyAddr, addrs)
	}
	return nil
}

// ParseHostList parses a comma-separated list of host names and IP
// addresses, without ports: names are lower-cased and lose a trailing
// dot, so that they compare as DNS does.
func ParseHostList(s string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if a, err := netip.ParseAddr(h); err == nil {
			out = append(out, a.Unmap().String())
			continue
		}
		name, ok := HostName(h)
		if !ok {
			return nil, fmt.Errorf("%q is neither a host name nor an IP address (no port, no wildcard)", h)
		}
		out = append(out, name)
	}
	return out, nil
}

// HostName returns h as a DNS host name compares (lower case, no
// trailing dot), or false when h is not one: dot-separated labels of
// letters, digits, hyphens and underscores, each 1 to 63 bytes, at most
// 253 in all.
func HostName(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
				return "", false
			}
		}
	}
	return h, true
}

// validHeaderName reports whether h is an HTTP header name (RFC 9110
// token characters).
func validHeaderName(h string) bool {
	for i := 0; i < len(h); i++ {
		b := h[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0) {
			return false
		}
	}
	return h != ""
}

func port(vals map[string]string, key string, def int) (int, error) {
	v := vals[key]
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 65535 {
		return 0, fmt.Errorf("%s=%q: not a port number", key, v)
	}
	return n, nil
}

// ShortHostname is the host name up to the first dot ("localhost" if the
// kernel does not say).
func ShortHostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return ShortName(h)
}

// ShortName cuts a host name at its first dot.
func ShortName(host string) string {
	if i := strings.IndexByte(host, '.'); i > 0 {
		return host[:i]
	}
	return host
}

// ServerName is the name the server uses in job ids: the short name of
// PBS_SERVER.
func (c *Config) ServerName() string { return ShortName(c.Server) }

// Paths under PBS_HOME.

// ServerPriv is PBS_HOME/server_priv.
func (c *Config) ServerPriv() string { return filepath.Join(c.Home, "server_priv") }

// ServerLogs is PBS_HOME/server_logs.
func (c *Config) ServerLogs() string { return filepath.Join(c.Home, "server_logs") }

// WebTokens is PBS_HOME/server_priv/web_tokens, the web page's per-user
// tokens (internal/webtoken): pbs_webtoken writes it, pbs_server reads it.
func (c *Config) WebTokens() string { return filepath.Join(c.ServerPriv(), "web_tokens") }

// Accounting is PBS_HOME/server_priv/accounting.
func (c *Config) Accounting() string { return filepath.Join(c.ServerPriv(), "accounting") }

// SchedPriv is PBS_HOME/sched_priv.
func (c *Config) SchedPriv() string { return filepath.Join(c.Home, "sched_priv") }

// SchedLogs is PBS_HOME/sched_logs.
func (c *Config) SchedLogs() string { return filepath.Join(c.Home, "sched_logs") }

// MomPriv is PBS_HOME/mom_priv.
func (c *Config) MomPriv() string { return filepath.Join(c.Home, "mom_priv") }

// MomLogs is PBS_HOME/mom_logs.
func (c *Config) MomLogs() string { return filepath.Join(c.Home, "mom_logs") }

// KeyFile is the cluster key, PBS_HOME/auth/cluster.key. The server creates
// it on first start; moms and schedulers on other hosts read the copy the
// admin placed at the same path in their own PBS_HOME.
func (c *Config) KeyFile() string { return filepath.Join(c.Home, "auth", "cluster.key") }

// ServerSocket is the Unix socket local commands use to reach the server.
func (c *Config) ServerSocket() string { return filepath.Join(c.Home, "pbs_server.sock") }

// MomSocket is the Unix socket local commands use to reach the mom of this
// host, which forwards to the server.
func (c *Config) MomSocket() string { return filepath.Join(c.Home, "pbs_mom.sock") }

// LoginSocket is the Unix socket of this host's login agent (pbs_login),
// through which the commands of a host that runs neither a server nor a
// mom reach the server.
func (c *Config) LoginSocket() string { return filepath.Join(c.Home, "pbs_login.sock") }

// LoginKeyFile is this login host's key, PBS_HOME/auth/login.key
// (proto.LoginKey; pbs_setup login-key makes it on a server host).
func (c *Config) LoginKeyFile() string { return filepath.Join(c.Home, "auth", "login.key") }

// LoginLogs is PBS_HOME/login_logs, pbs_login's log.
func (c *Config) LoginLogs() string { return filepath.Join(c.Home, "login_logs") }

// ServerAddr is host:port of the server's TCP listener for daemons.
func (c *Config) ServerAddr() string { return fmt.Sprintf("%s:%d", c.Server, c.BatchPort) }

// Update is a pbs.conf (old, possibly empty) with the keys of set given
// their values: a key's line is rewritten in place (its first; later
// ones of the same key are dropped, as Parse keeps only the last), new
// keys are appended in the order of keys, and every other line (comments,
// other keys) is kept as it is. Keys missing from set are left alone.
func Update(old []byte, set map[string]string, keys []string) []byte {
	var out []string
	done := map[string]bool{}
	lines := strings.Split(strings.TrimRight(string(old), "\n"), "\n")
	if len(old) == 0 {
		lines = nil
	}
	for _, line := range lines {
		text := strings.TrimSpace(line)
		if k, _, ok := strings.Cut(text, "="); ok && text != "" && text[0] != '#' {
			k = strings.TrimSpace(k)
			if v, mine := set[k]; mine {
				if !done[k] {
					out = append(out, k+"="+v)
					done[k] = true
				}
				continue
			}
		}
		out = append(out, line)
	}
	for _, k := range keys {
		if v, ok := set[k]; ok && !done[k] {
			out = append(out, k+"="+v)
			done[k] = true
		}
	}
	return []byte(strings.Join(out, "\n") + "\n")
}
