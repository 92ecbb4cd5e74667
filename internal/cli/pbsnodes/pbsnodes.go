package pbsnodes

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// client is the part of proto.Client pbsnodes uses.
type client interface {
	StatusNodes(*proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error)
	Manager(*proto.ManagerRequest) error
	ServerName() string
	Hello() error
	Close() error
}

// deps are what run takes from the outside world.
type deps struct {
	connect func() (client, error)
	now     func() time.Time
	loc     *time.Location
}

// action is what one call does; exactly one per call.
type action int

const (
	actList    action = iota // -a, or no action option: show nodes
	actMarked                // -l: list down, offline and unknown nodes
	actOffline               // -o
	actClear                 // -c, -r
	actNote                  // -N / -C alone
)

// request is a parsed command line.
type request struct {
	act      action
	explicit bool // the action came from an option (-a, -l, -o, -c, -r)
	version  bool

	note      *string // -N / -C value; nil when not given
	showNotes bool    // -n
	filter    string  // -l state keyword ("" = down, offline or unknown)

	summary  bool   // -S (also implied by -j and -L)
	jobView  bool   // -j
	long     bool   // -L: summary cells are not truncated
	format   string // "", "json" or "dsv"
	delim    string // -D
	xml      bool   // -x
	quiet    bool   // -q
	server   string // -s
	hostMode bool   // -H

	nodes []string
}

// usageError is a command line pbsnodes refuses; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usageText = `usage: pbsnodes [-a] [-v] [-S [-j] [-L]] [-F json|dsv [-D delim]] [-x] [-s server] [node ...]
       pbsnodes -l [-n] [state] [node ...]
       pbsnodes {-o|-c|-r} [-N note | -C note] [-q] node ...
       pbsnodes {-N note | -C note} node ...
       pbsnodes -H node ...
       pbsnodes --version
`

// spec is the union of the OpenPBS and Torque option letters, accepted in
// both personalities: only the presentation differs between them. Options
// may follow operands, as glibc's getopt allows for the real commands.
func spec() getopt.Spec {
	return getopt.Spec{Short: "acC:D:F:HjlLnN:oqrSs:vx", Long: []string{"version"}, Permute: true}
}

// parse reads the command line. It is the same in both personalities.
func parse(args []string) (*request, error) {
	opts, operands, err := spec().Parse(args)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	r := &request{}
	setAct := func(a action, letter byte) error {
		if r.explicit && r.act != a {
			return &usageError{fmt.Sprintf("option -%c conflicts with an earlier option", letter)}
		}
		r.act, r.explicit = a, true
		return nil
	}
	for _, o := range opts {
		var err error
		switch o.Name {
		case 0:
			r.version = true // the only long option
		case 'a':
			err = setAct(actList, 'a')
		case 'l':
			err = setAct(actMarked, 'l')
		case 'o':
			err = setAct(actOffline, 'o')
		case 'c', 'r':
			err = setAct(actClear, o.Name)
		case 'N', 'C':
			v := o.Value
			r.note = &v
		case 'n':
			r.showNotes = true
		case 'S':
			r.summary = true
		case 'j':
			r.summary, r.jobView = true, true
		case 'L':
			r.summary, r.long = true, true
		case 'F':
			switch strings.ToLower(o.Value) {
			case "json", "dsv":
				r.format = strings.ToLower(o.Value)
			case "default":
				r.format = ""
			default:
				err = &usageError{fmt.Sprintf("unknown output format %q (want json or dsv)", o.Value)}
			}
		case 'D':
			r.delim = o.Value
		case 'x':
			r.xml = true
		case 'q':
			r.quiet = true
		case 's':
			r.server = o.Value
		case 'H':
			r.hostMode = true
		case 'v':
			// Every node is its own host and vnode here, so -v adds nothing.
		}
		if err != nil {
			return nil, err
		}
	}
	if r.version {
		return r, nil
	}
	for _, n := range operands {
		if strings.TrimSpace(n) == "" {
			return nil, &usageError{"empty node name"}
		}
		r.nodes = append(r.nodes, strings.TrimSpace(n))
	}
	if r.note != nil && !r.explicit {
		r.act = actNote
	}
	if r.act == actMarked && len(r.nodes) > 0 && stateKeyword(r.nodes[0]) {
		// Torque's "pbsnodes -l free [node...]": a state, not a node.
		r.filter = strings.ToLower(r.nodes[0])
		r.nodes = r.nodes[1:]
		if len(r.nodes) == 0 {
			r.nodes = nil // all nodes, as without operands
		}
	}
	return r, r.check()
}

// check rejects option combinations that have no meaning.
func (r *request) check() error {
	bad := func(msg string) error { return &usageError{msg} }
	listing := r.summary || r.format != "" || r.xml || r.hostMode
	switch r.act {
	case actList:
		if r.note != nil {
			return bad("-N and -C cannot be combined with -a")
		}
	case actMarked:
		if r.note != nil || listing {
			return bad("-l cannot be combined with -N, -C, -S, -F, -x or -H")
		}
	default:
		if listing {
			return bad("-S, -F, -x and -H only apply to listing nodes")
		}
		if len(r.nodes) == 0 {
			return bad("no node given")
		}
	}
	if r.showNotes && r.act != actMarked {
		return bad("-n requires -l")
	}
	if r.xml && (r.summary || r.format != "") {
		return bad("-x cannot be combined with -S or -F")
	}
	if r.hostMode && len(r.nodes) == 0 {
		return bad("-H needs a host")
	}
	return nil
}

func runWith(env *cmdutil.Env, args []string, d deps) int {
	p := env.Personality()
	r, err := parse(args)
	if err != nil {
		env.Errorf("%v", err)
		fmt.Fprint(env.Stderr, usageText)
		return 2
	}
	if r.version {
		fmt.Fprintln(env.Stdout, display.Version(p))
		return 0
	}
	n := &pbsnodes{env: env, p: p, r: r, now: d.now(), loc: d.loc}
	c, err := d.connect()
	if err != nil {
		return n.fail(err)
	}
	defer c.Close()
	n.c = c
	if r.server != "" {
		// The name is needed before any request: the server's refusal,
		// if any, is the answer.
		if err := c.Hello(); err != nil {
			return n.fail(err)
		}
	}
	if r.server != "" && !n.isOurServer(r.server) {
		// Commands reach only the configured server (DESIGN §10), so
		// asking for another one must not silently answer for this one.
		return n.fail(&proto.Error{Code: proto.PBSE_NOSERVER,
			Text: fmt.Sprintf("cannot connect to server %s: only %s is reachable", r.server, n.serverLabel())})
	}
	switch r.act {
	case actOffline, actClear, actNote:
		return n.change()
	case actMarked:
		return n.marked()
	}
	return n.list()
}

// pbsnodes is one call in progress.
type pbsnodes struct {
	env *cmdutil.Env
	p   config.Personality
	r   *request
	c   client
	now time.Time
	loc *time.Location
	rc  int
}

// exitFor is the exit status for a failure with code: Torque's pbsnodes
// exits 1 for every failure; the pbspro personality uses the PBSE code
// modulo 256 as the other commands do.
func (n *pbsnodes) exitFor(code proto.Code) int {
	if n.p == config.Torque {
		return 1
	}
	if s := code.ExitStatus(); s != 0 {
		return s
	}
	return 1
}

// fail reports an error that ends the call.
func (n *pbsnodes) fail(err error) int {
	if !n.r.quiet {
		msg := err.Error()
		var pe *proto.Error
		if errors.As(err, &pe) {
			msg = cmdutil.ErrorText(n.p, pe.Code, pe.Text, "")
		}
		n.env.Errorf("%s", msg)
	}
	return n.exitFor(proto.CodeOf(err))
}

// nodeError reports the failure of one node operand, "pbsnodes: <message>
// <node>", and remembers its exit status; the call goes on with the other
// nodes.
func (n *pbsnodes) nodeError(code proto.Code, text, node string) {
	if !n.r.quiet {
		n.env.Errorf("%s %s", cmdutil.ErrorText(n.p, code, text, node), node)
	}
	n.rc = n.exitFor(code)
}

// serverLabel is the server name JSON reports as pbs_server: PBS_SERVER as
// configured (as OpenPBS does), else the name the server gave.
func (n *pbsnodes) serverLabel() string {
	if n.env.Config != nil && n.env.Config.Server != "" {
		return n.env.Config.Server
	}
	return n.c.ServerName()
}

// isOurServer reports whether a -s operand names the connected server.
func (n *pbsnodes) isOurServer(s string) bool { return n.env.NamesServer(s, n.c.ServerName()) }

// noNodesText is reported when the server has no node at all: both PBS
// implementations say so with PBSE_NONODES's text and exit 1.
const noNodesText = "Server has no node list"

// status asks for the named nodes (all when names is empty) and returns
// those found in the order named; failed names are reported. ok is false
// when the whole request failed (already reported, n.rc set).
func (n *pbsnodes) status(names []string) (nodes []proto.Status, ok bool) {
	objs, errs, err := n.c.StatusNodes(&proto.StatusRequest{IDs: names})
	if err != nil {
		code := proto.CodeOf(err)
		switch {
		case len(names) == 1 && code == proto.PBSE_UNKNODE:
			// A server that rejects the whole request for a single
			// operand means that operand.
			var pe *proto.Error
			errors.As(err, &pe)
			errs = []proto.ObjectError{{Name: names[0], Code: code, Text: pe.Text}}
		case len(names) == 0 && code == proto.PBSE_NONODES:
			return nil, true
		default:
			n.rc = n.fail(err)
			return nil, false
		}
	}
	if len(names) == 0 {
		return objs, true
	}
	return n.inOrder(names, objs, errs), true
}

// inOrder matches the reply to the operands by name rather than by
// position, so that a reply in any order (or with a duplicate operand)
// still prints each node where it was named. An operand the reply says
// nothing about is reported as unknown.
func (n *pbsnodes) inOrder(names []string, objs []proto.Status, errs []proto.ObjectError) []proto.Status {
	byName := map[string][]proto.Status{}
	for _, o := range objs {
		byName[o.Name] = append(byName[o.Name], o)
	}
	errByName := map[string]proto.ObjectError{}
	for _, e := range errs {
		errByName[nodeKey(e.Name)] = e
	}
	var out []proto.Status
	for _, name := range names {
		key := nodeKey(name)
		if found := byName[key]; len(found) > 0 {
			out = append(out, found[0])
			if len(found) > 1 {
				byName[key] = found[1:]
			}
			continue
		}
		if e, ok := errByName[key]; ok {
			n.nodeError(e.Code, e.Text, name)
			continue
		}
		n.nodeError(proto.PBSE_UNKNODE, "", name)
	}
	return out
}

// nodeKey is the node name the server looks up for an operand: blanks
// around it and an "@server" suffix are ignored.
func nodeKey(operand string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(operand), "@")
	return name
}

// noNodes reports a server without nodes.
func (n *pbsnodes) noNodes() int {
	if !n.r.quiet {
		n.env.Errorf("%s", noNodesText)
	}
	return 1
}

// list shows nodes (-a, operands, -S, -F, -x).
func (n *pbsnodes) list() int {
	nodes, ok := n.status(n.r.nodes)
	if !ok {
		return n.rc
	}
	empty := len(n.r.nodes) == 0 && len(nodes) == 0
	if empty && n.r.format != "json" {
		return n.noNodes()
	}
	f := &formatter{p: n.p, loc: n.loc, server: n.c.ServerName(), long: n.r.long, delim: n.r.delim}
	out := n.env.Stdout
	var err error
	switch {
	case n.r.format == "json":
		doc := display.NodesHeader(n.now, n.serverLabel())
		if n.r.summary {
			err = f.summaryJSON(out, doc, nodes, n.r.jobView)
		} else {
			err = display.NodesJSON(out, doc, nodes)
		}
	case n.r.format == "dsv" && n.r.summary:
		err = f.summaryDSV(out, nodes, n.r.jobView)
	case n.r.format == "dsv":
		err = f.fullDSV(out, nodes)
	case n.r.summary:
		err = f.summaryTable(out, nodes, n.r.jobView)
	case n.r.xml:
		err = f.torqueXML(out, nodes)
	default:
		err = f.full(out, nodes)
	}
	if err != nil {
		n.env.Errorf("%v", err)
		return 1
	}
	if empty {
		return n.noNodes() // the JSON document above says "nodes":{} too
	}
	return n.rc
}

// marked is -l: nodes that are down, offline or unknown (or in the state
// a keyword names), or every node named whatever its state.
func (n *pbsnodes) marked() int {
	nodes, ok := n.status(n.r.nodes)
	if !ok {
		return n.rc
	}
	if len(n.r.nodes) == 0 && len(nodes) == 0 {
		return n.noNodes()
	}
	f := &formatter{p: n.p}
	var b strings.Builder
	for _, s := range nodes {
		state, _ := s.Get(proto.AttrNodeState)
		if (n.r.filter != "" || len(n.r.nodes) == 0) && !stateMatches(n.r.filter, state) {
			continue
		}
		note := ""
		if n.r.showNotes {
			note, _ = s.Get(proto.AttrNodeNote)
		}
		b.WriteString(f.markedLine(s.Name, state, note))
	}
	if _, err := fmt.Fprint(n.env.Stdout, b.String()); err != nil {
		n.env.Errorf("%v", err)
		return 1
	}
	return n.rc
}

// change is -o, -c, -r and -N/-C: one manager request per node (two when
// a state change comes with a note to clear, since set and unset are
// separate requests).
func (n *pbsnodes) change() int {
	var state string
	switch n.r.act {
	case actOffline:
		state = "offline"
	case actClear:
		state = "free" // the server takes free as "clear offline"
	}
	setNote, clearNote := false, false
	if n.r.note != nil {
		clearNote = *n.r.note == "" || (n.p == config.Torque && *n.r.note == "n")
		setNote = !clearNote
	}
	for _, node := range n.r.nodes {
		var set []proto.Attr
		if state != "" {
			set = append(set, proto.Attr{Name: proto.AttrNodeState, Value: state, Op: proto.OpSet})
		}
		if setNote {
			set = append(set, proto.Attr{Name: proto.AttrNodeNote, Value: *n.r.note, Op: proto.OpSet})
		}
		if len(set) > 0 {
			if err := n.c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjNode, Name: node, Attrs: set}); err != nil {
				n.managerError(err, node)
				continue
			}
		}
		if clearNote {
			unset := []proto.Attr{{Name: proto.AttrNodeNote, Op: proto.OpUnset}}
			if err := n.c.Manager(&proto.ManagerRequest{Command: proto.MgrUnset, Object: proto.ObjNode, Name: node, Attrs: unset}); err != nil {
				n.managerError(err, node)
			}
		}
	}
	return n.rc
}

func (n *pbsnodes) managerError(err error, node string) {
	var pe *proto.Error
	if !errors.As(err, &pe) {
		pe = &proto.Error{Code: proto.PBSE_SYSTEM, Text: err.Error()}
	}
	n.nodeError(pe.Code, pe.Text, node)
}
