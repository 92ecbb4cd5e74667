package pbssetup

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

const usage = `usage: pbs_setup server|execution|client|login [--server HOST] [--peers HOST:PORT,...]
                 [--home DIR] [--exec DIR] [--key FILE] [--node NAME] [--conf FILE]
       pbs_setup login-key HOST [--home DIR] [--out FILE]
`

// Roles.
const (
	roleServer    = "server"
	roleExecution = "execution"
	roleClient    = "client"
	roleLogin     = "login"
	// loginKey is not a role: on a server host it makes a login host's
	// key (proto.LoginKey) from the cluster key.
	loginKey = "login-key"
)

// options are pbs_setup's arguments.
type options struct {
	role   string
	server string
	peers  []string
	home   string
	exec   string
	key    string
	node   string
	conf   string
}

// host is what pbs_setup learns of the machine it runs on (tests give
// their own).
type host struct {
	name   string // the short host name
	exe    string // pbs_setup's own executable
	getenv func(string) string
}

// Main is pbs_setup's whole main (cmd/pbs_setup calls only it).
func Main() {
	name, _ := os.Hostname()
	exe, _ := os.Executable()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, host{name: config.ShortName(name), exe: exe, getenv: os.Getenv}))
}

func run(args []string, stdout, stderr io.Writer, h host) int {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if len(args) > 0 && args[0] == loginKey {
		if err := makeLoginKey(args[1:], stdout); err != nil {
			fmt.Fprintf(stderr, "pbs_setup: %v\n%s", err, usage)
			return 2
		}
		return 0
	}
	o, err := parse(args, h)
	if err != nil {
		fmt.Fprintf(stderr, "pbs_setup: %v\n%s", err, usage)
		return 2
	}
	if err := setup(o, h, stdout); err != nil {
		fmt.Fprintf(stderr, "pbs_setup: %v\n", err)
		return 1
	}
	return 0
}

// parse reads the role and the flags, and checks them (every value is
// read here, once).
func parse(args []string, h host) (options, error) {
	var o options
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return o, errors.New("no role: give server, execution, client or login first")
	}
	o.role = args[0]
	switch o.role {
	case roleServer, roleExecution, roleClient, roleLogin:
	default:
		return o, fmt.Errorf("unknown role %q (want server, execution, client or login)", o.role)
	}
	fs := flag.NewFlagSet("pbs_setup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var peers string
	fs.StringVar(&o.server, "server", "", "")
	fs.StringVar(&peers, "peers", "", "")
	fs.StringVar(&o.home, "home", config.DefaultHome, "")
	fs.StringVar(&o.exec, "exec", execOf(h.exe), "")
	fs.StringVar(&o.key, "key", "", "")
	fs.StringVar(&o.node, "node", "", "")
	fs.StringVar(&o.conf, "conf", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		return o, flagError(err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.conf == "" {
		if o.conf = h.getenv(config.KeyConfFile); o.conf == "" {
			o.conf = config.DefaultConfFile
		}
	}
	for name, dir := range map[string]string{"--home": o.home, "--exec": o.exec, "--conf": o.conf} {
		if !filepath.IsAbs(dir) {
			return o, fmt.Errorf("%s %q: want an absolute path", name, dir)
		}
	}
	if peers != "" {
		for _, p := range strings.Split(peers, ",") {
			host, port, err := net.SplitHostPort(strings.TrimSpace(p))
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
				return o, fmt.Errorf("--peers %q: want host:port,host:port,... (a server group's batch addresses)", peers)
			}
			o.peers = append(o.peers, strings.TrimSpace(p))
		}
	}
	switch {
	case o.server == "" && len(o.peers) == 0 && o.role == roleServer:
		o.server = h.name
	case o.server == "" && len(o.peers) == 0:
		return o, fmt.Errorf("role %s needs --server HOST (or --peers for a server group)", o.role)
	}
	if strings.ContainsAny(o.server, " \t/:") {
		return o, fmt.Errorf("--server %q: want a host name", o.server)
	}
	if o.node != "" && o.role == roleClient {
		return o, errors.New("--node is for roles server (with --peers), execution and login")
	}
	if o.node != "" && o.role == roleServer && len(o.peers) == 0 {
		return o, errors.New("--node on a server names it in --peers: give --peers too")
	}
	if o.key != "" && o.role == roleClient {
		return o, errors.New("--key is not for role client: its commands need no key (a login host's do: role login)")
	}
	if o.node == "" {
		o.node = h.name
	}
	if o.role == roleServer && len(o.peers) > 0 {
		member := false
		for _, p := range o.peers {
			host, _, _ := net.SplitHostPort(p)
			member = member || host == o.node
		}
		if !member {
			return o, fmt.Errorf("this server is %q, which --peers does not list: give its name there with --node NAME", o.node)
		}
	}
	return o, nil
}

// execOf is PBS_EXEC for pbs_setup's own executable exe: the directory
// holding its bin and sbin (/opt/gopbs for /opt/gopbs/sbin/pbs_setup, as
// the packages install it), else exe's directory.
func execOf(exe string) string {
	dir := filepath.Dir(exe)
	if b := filepath.Base(dir); b == "bin" || b == "sbin" {
		return filepath.Dir(dir)
	}
	return dir
}

// dir is one directory of PBS_HOME a role needs, with its mode.
type dir struct {
	path string
	mode os.FileMode
}

// dirs are PBS_HOME's directories for o's role (root owns them: the
// daemons run as root).
func dirs(o options) []dir {
	ds := []dir{{o.home, 0o755}, {filepath.Join(o.home, "auth"), 0o700}}
	switch o.role {
	case roleServer:
		ds = append(ds, dir{filepath.Join(o.home, "server_priv"), 0o750}, dir{filepath.Join(o.home, "server_logs"), 0o755},
			dir{filepath.Join(o.home, "sched_priv"), 0o750}, dir{filepath.Join(o.home, "sched_logs"), 0o755})
	case roleExecution:
		ds = append(ds, dir{filepath.Join(o.home, "mom_priv"), 0o751}, dir{filepath.Join(o.home, "mom_logs"), 0o755})
	case roleLogin:
		ds = append(ds, dir{filepath.Join(o.home, "login_logs"), 0o755})
	case roleClient:
		ds = ds[:1] // the commands keep nothing secret
	}
	return ds
}

// setup makes the host what o says, and prints what the admin does next.
// Run twice with the same options, it ends with the same files.
func setup(o options, h host, out io.Writer) error {
	for _, d := range dirs(o) {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return err
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return err
		}
	}
	keyPath := filepath.Join(o.home, "auth", "cluster.key")
	if o.role == roleLogin {
		keyPath = filepath.Join(o.home, "auth", "login.key")
	}
	created := false
	if o.role != roleClient {
		var err error
		if created, err = installKey(o, keyPath); err != nil {
			return err
		}
	}
	if err := writeConf(o); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %s host set up: %s written, PBS_HOME %s\n", h.name, o.role, o.conf, o.home)
	switch o.role {
	case roleServer:
		if created {
			fmt.Fprintf(out, "A new cluster key is in %s.\n", keyPath)
		}
		fmt.Fprintf(out, "Copy %s to every other host of the cluster (root's only, mode 0600), then set each up with it:\n", keyPath)
		fmt.Fprintf(out, "  scp %s HOST:/root/cluster.key\n", keyPath)
		fmt.Fprintf(out, "  ssh HOST pbs_setup execution --server %s --key /root/cluster.key\n", serverOf(o))
		fmt.Fprintf(out, "A login host (no server, no mom) gets a key of its own, never the cluster key:\n")
		fmt.Fprintf(out, "  pbs_setup login-key LOGINHOST --out /root/LOGINHOST.login.key\n")
		fmt.Fprintf(out, "  scp /root/LOGINHOST.login.key LOGINHOST:/root/login.key\n")
		fmt.Fprintf(out, "  ssh LOGINHOST pbs_setup login --server %s --key /root/login.key\n", serverOf(o))
		fmt.Fprintf(out, "Then start pbs_server and pbs_sched here.\n")
	case roleExecution:
		fmt.Fprintf(out, "Create the node on the server, then start pbs_mom here:\n")
		fmt.Fprintf(out, "  qmgr -c \"create node %s\"\n", o.node)
	case roleLogin:
		fmt.Fprintf(out, "Start pbs_login here (systemctl enable --now pbs_login): the commands then reach the server through it, as %s.\n", o.node)
	case roleClient:
		fmt.Fprintf(out, "The commands here reach the server through this host's pbs_server, pbs_mom or pbs_login; a host that runs none of them is set up as login.\n")
	}
	return nil
}

// serverOf names the server for the instructions.
func serverOf(o options) string {
	if o.server != "" {
		return o.server
	}
	return strings.Join(o.peers, ",")
}

// installKey puts the cluster key in place: the one --key names (the
// same one again is fine; a different one where one is installed is
// refused, never overwritten), or, on a server without --key, the one
// there or a new one. It reports whether it made a new key.
func installKey(o options, path string) (bool, error) {
	if o.key == "" {
		if o.role != roleServer {
			if _, err := proto.LoadKey(path); err != nil {
				if o.role == roleLogin {
					return false, fmt.Errorf("role login needs --key FILE, this host's login key, made on a server host with pbs_setup login-key %s (%v)", o.node, err)
				}
				return false, fmt.Errorf("role %s needs the cluster key: --key FILE, a copy of the server's PBS_HOME/auth/cluster.key (%v)", o.role, err)
			}
			return false, nil
		}
		_, statErr := os.Stat(path)
		if _, err := proto.LoadOrCreateKey(path); err != nil {
			return false, err
		}
		return os.IsNotExist(statErr), nil
	}
	given, err := os.ReadFile(o.key)
	if err != nil {
		return false, fmt.Errorf("--key: %w", err)
	}
	if len(given) != proto.KeySize {
		return false, fmt.Errorf("--key %s: %d bytes, a cluster key has %d", o.key, len(given), proto.KeySize)
	}
	if cur, err := os.ReadFile(path); err == nil {
		if !bytes.Equal(cur, given) {
			return false, fmt.Errorf("%s holds another key than %s: remove it first if it is to be replaced", path, o.key)
		}
		return false, os.Chmod(path, 0o600)
	}
	return false, atomicfile.Write(path, given, 0o600)
}

// confKeys are the pbs.conf keys pbs_setup writes, in the order a new
// file lists them.
var confKeys = []string{config.KeyHome, config.KeyExec, config.KeyServer, config.KeyServerPeers, config.KeyMomNodeName, config.KeyLoginHostName, config.KeyServerHostName}

// writeConf writes o into pbs.conf, keeping its other lines, and checks
// that the result loads.
func writeConf(o options) error {
	old, err := os.ReadFile(o.conf)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	set := map[string]string{config.KeyHome: o.home, config.KeyExec: o.exec}
	if o.server != "" {
		set[config.KeyServer] = o.server
	}
	if len(o.peers) > 0 {
		set[config.KeyServerPeers] = strings.Join(o.peers, ",")
	}
	if o.role == roleExecution && o.node != "" {
		set[config.KeyMomNodeName] = o.node
	}
	if o.role == roleLogin && o.node != "" {
		set[config.KeyLoginHostName] = o.node
	}
	if o.role == roleServer && len(o.peers) > 0 && o.node != "" {
		set[config.KeyServerHostName] = o.node
	}
	next := config.Update(old, set, confKeys)
	vals, err := config.Parse(bytes.NewReader(next))
	if err != nil {
		return fmt.Errorf("%s: %w", o.conf, err)
	}
	if _, err := config.FromValues(vals); err != nil {
		return fmt.Errorf("%s would not load: %w", o.conf, err)
	}
	if err := os.MkdirAll(filepath.Dir(o.conf), 0o755); err != nil {
		return err
	}
	if bytes.Equal(old, next) {
		return nil
	}
	return atomicfile.Write(o.conf, next, 0o644)
}

// makeLoginKey is pbs_setup login-key HOST: on a server host, it writes
// HOST's login key (proto.LoginKey of the cluster key) to --out, mode
// 0600, for the admin to copy to HOST and install with pbs_setup login.
func makeLoginKey(args []string, out io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("login-key needs the login host's name first")
	}
	name := args[0]
	if strings.ContainsAny(name, " \t/:") {
		return fmt.Errorf("login-key %q: want a host name", name)
	}
	fs := flag.NewFlagSet("pbs_setup login-key", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	home := fs.String("home", config.DefaultHome, "")
	dest := fs.String("out", name+".login.key", "")
	if err := fs.Parse(args[1:]); err != nil {
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cluster, err := proto.LoadKey(filepath.Join(*home, "auth", "cluster.key"))
	if err != nil {
		return fmt.Errorf("login-key is run on a server host, which has the cluster key: %w", err)
	}
	if err := atomicfile.Write(*dest, proto.LoginKey(cluster, name), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s's login key is in %s. Copy it there (root's only, mode 0600) and set the host up with it:\n", name, *dest)
	fmt.Fprintf(out, "  scp %s %s:/root/login.key\n", *dest, name)
	fmt.Fprintf(out, "  ssh %s pbs_setup login --server SERVER --key /root/login.key --node %s\n", name, name)
	return nil
}

// flagError names the option a flag package error is about.
func flagError(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown option --%s", strings.TrimLeft(name, "-"))
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag needs an argument: "); ok {
		return fmt.Errorf("option --%s needs a value", strings.TrimLeft(name, "-"))
	}
	return err
}
