package qmgr

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/qmgrparse"
	"github.com/gopbs/gopbs/proto"
)

// session is one qmgr run: its connection, options, the objects "active"
// made the default, and the exit status so far.
type session struct {
	srv    server
	out    io.Writer
	errw   io.Writer // io.Discard under -z
	opts   options
	loc    *time.Location
	torque bool

	activeServers []qmgrparse.ObjName
	activeQueues  []qmgrparse.ObjName
	activeNodes   []qmgrparse.ObjName
	activeScheds  []qmgrparse.ObjName

	// stdinFile reads the file of an "import hook ... -" from the
	// standard input.
	stdinFile func() ([]byte, error)

	status int  // exit status: that of the last command that failed
	dead   bool // the connection broke; later commands cannot run
}

// runAll runs commands in order and reports whether qmgr must stop (quit,
// -a after an error, or a broken connection).
func (s *session) runAll(cmds []string) bool {
	for _, c := range cmds {
		if s.do(c) {
			return true
		}
	}
	return false
}

func (s *session) do(text string) (stop bool) {
	if s.opts.echo {
		fmt.Fprintln(s.out, text)
	}
	cmd, err := qmgrparse.Parse(text)
	if err != nil {
		fmt.Fprintln(s.errw, err)
		return s.failed(exitParse)
	}
	if cmd == nil {
		return false
	}
	switch cmd.Verb {
	case qmgrparse.VerbHelp:
		fmt.Fprint(s.out, helpText(cmd.Topic))
		return false
	case qmgrparse.VerbQuit, qmgrparse.VerbExit:
		return true
	}
	var code int
	switch {
	case cmd.Verb == qmgrparse.VerbActive:
		code = s.active(cmd)
	case s.opts.noExec:
		return false
	case cmd.Verb == qmgrparse.VerbList:
		code = s.list(cmd)
	case cmd.Verb == qmgrparse.VerbPrint:
		code = s.print(cmd)
	case cmd.Verb == qmgrparse.VerbImport:
		code = s.importHook(cmd)
	case cmd.Verb == qmgrparse.VerbExport:
		code = s.exportHook(cmd)
	default:
		code = s.manage(cmd)
	}
	if code != 0 {
		return s.failed(code)
	}
	return false
}

func (s *session) failed(code int) bool {
	s.status = code
	return s.opts.abort || s.dead
}

// svr is the server name messages show for n: its @server, the server
// named on the command line, or "default" as PBS says for the server of
// pbs.conf.
func (s *session) svr(obj proto.ObjectType, n qmgrparse.ObjName) string {
	switch {
	case n.Server != "":
		return n.Server
	case obj == proto.ObjServer && n.Name != "":
		return n.Name
	case s.opts.server != "":
		return s.opts.server
	}
	return "default"
}

// label is the obj= part of a message: the object's name; for the server,
// the name it was given by, "" for the default one.
func (s *session) label(obj proto.ObjectType, n qmgrparse.ObjName) string {
	switch {
	case obj == proto.ObjServer && n.Name == "":
		return s.opts.server
	case obj == proto.ObjSched && n.Name == "":
		// The default scheduler, which the request names.
		return proto.DefaultSched
	}
	return n.Name
}

// targets are the objects a command acts on: the names given, else the
// active ones, else the server itself or (for list and print) every queue
// or node. false means there is nothing to act on.
func (s *session) targets(cmd *qmgrparse.Command) ([]qmgrparse.ObjName, bool) {
	if cmd.Names != nil {
		return cmd.Names, true
	}
	all := cmd.Verb == qmgrparse.VerbList || cmd.Verb == qmgrparse.VerbPrint
	switch cmd.Object {
	case proto.ObjServer:
		if s.activeServers != nil {
			return s.activeServers, true
		}
		return []qmgrparse.ObjName{{}}, true
	case proto.ObjQueue:
		if s.activeQueues != nil {
			return s.activeQueues, true
		}
		if all {
			return []qmgrparse.ObjName{{}}, true
		}
		fmt.Fprintln(s.errw, "No Active Queues, nothing done.")
	case proto.ObjNode:
		if s.activeNodes != nil {
			return s.activeNodes, true
		}
		if all {
			return []qmgrparse.ObjName{{}}, true
		}
		fmt.Fprintln(s.errw, "No Active Nodes, nothing done.")
	case proto.ObjResource:
		if all {
			return []qmgrparse.ObjName{{}}, true
		}
		fmt.Fprintln(s.errw, "qmgr: Syntax error - object name required for operation")
	case proto.ObjHook:
		if all {
			return []qmgrparse.ObjName{{}}, true
		}
		fmt.Fprintln(s.errw, "qmgr: Syntax error - object name required for operation")
	case proto.ObjSched:
		// No name is the default scheduler, as in OpenPBS's qmgr.
		if s.activeScheds != nil {
			return s.activeScheds, true
		}
		return []qmgrparse.ObjName{{}}, true
	}
	return nil, false
}

func errText(err error) string {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}

// serverError reports a failed request the PBS way. A protocol error means
// the connection is gone, so the session stops.
func (s *session) serverError(obj, svr string, err error) {
	s.report(obj, svr, proto.CodeOf(err), errText(err))
}

func (s *session) report(obj, svr string, code proto.Code, text string) {
	if text == "" {
		text = code.Message()
	}
	fmt.Fprintf(s.errw, "qmgr obj=%s svr=%s: %s\n", obj, svr, strings.TrimRight(text, " "))
	switch {
	case code == proto.PBSE_PROTOCOL:
		fmt.Fprintln(s.errw, "qmgr: Protocol error, server disconnected")
		s.dead = true
	case code == proto.PBSE_HOOKERROR:
		fmt.Fprintln(s.errw, "qmgr: hook error returned from server")
	case !s.torque && code != proto.PBSE_NONE:
		fmt.Fprintf(s.errw, "qmgr: Error (%d) returned from server\n", int(code))
	}
}

// manage sends one manager request per target.
func (s *session) manage(cmd *qmgrparse.Command) int {
	mc, ok := cmd.Verb.ManagerCommand()
	if !ok {
		return 0
	}
	targets, ok := s.targets(cmd)
	if !ok {
		return exitExec
	}
	code := 0
	for _, t := range targets {
		name := t.Name
		switch {
		case cmd.Object == proto.ObjServer:
			name = ""
		case cmd.Object == proto.ObjSched && name == "":
			name = proto.DefaultSched
		}
		err := s.srv.Manager(&proto.ManagerRequest{Command: mc, Object: cmd.Object, Name: name, Attrs: cmd.Attrs})
		if err != nil {
			s.serverError(s.label(cmd.Object, t), s.svr(cmd.Object, t), err)
			code = exitExec
			if s.opts.abort || s.dead {
				break
			}
		}
	}
	return code
}

func attrNames(attrs []proto.Attr) []string {
	var out []string
	for _, a := range attrs {
		out = append(out, a.FullName())
	}
	return out
}

// stat fetches the objects t names (all of its type when t.Name is "")
// and reports failures.
func (s *session) stat(obj proto.ObjectType, t qmgrparse.ObjName, attrs []string) ([]proto.Status, int) {
	label, svr := s.label(obj, t), s.svr(obj, t)
	if obj == proto.ObjServer {
		st, err := s.srv.StatusServer(attrs)
		if err != nil {
			s.serverError(label, svr, err)
			return nil, exitExec
		}
		return []proto.Status{st}, 0
	}
	req := &proto.StatusRequest{Attrs: attrs}
	if t.Name != "" {
		req.IDs = []string{t.Name}
	}
	call, unknown := s.srv.StatusQueues, proto.PBSE_UNKQUE
	switch obj {
	case proto.ObjNode:
		call, unknown = s.srv.StatusNodes, proto.PBSE_UNKNODE
	case proto.ObjResource:
		call, unknown = s.srv.StatusResources, proto.PBSE_UNKRESC
	case proto.ObjSched:
		call, unknown = s.srv.StatusSched, proto.PBSE_UNKSCHED
	case proto.ObjHook:
		call, unknown = s.srv.StatusHooks, proto.PBSE_IVAL_OBJ_NAME
	}
	objs, oerrs, err := call(req)
	if err != nil {
		s.serverError(label, svr, err)
		return nil, exitExec
	}
	code := 0
	for _, oe := range oerrs {
		s.report(oe.Name, svr, oe.Code, oe.Text)
		code = exitExec
	}
	if t.Name != "" && len(objs) == 0 && len(oerrs) == 0 {
		// A server that answers a named request with nothing has not
		// found the object; say so rather than print nothing.
		s.report(label, svr, unknown, "")
		code = exitExec
	}
	return objs, code
}

func (s *session) list(cmd *qmgrparse.Command) int {
	targets, ok := s.targets(cmd)
	if !ok {
		return exitExec
	}
	attrs := attrNames(cmd.Attrs)
	code := 0
	for _, t := range targets {
		objs, c := s.stat(cmd.Object, t, attrs)
		fmt.Fprint(s.out, qmgrparse.FormatList(cmd.Object, objs, s.loc))
		if c != 0 {
			code = c
			if s.opts.abort || s.dead {
				break
			}
		}
	}
	return code
}

func (s *session) print(cmd *qmgrparse.Command) int {
	targets, ok := s.targets(cmd)
	if !ok {
		return exitExec
	}
	attrs := attrNames(cmd.Attrs)
	code := 0
	note := func(c int) {
		if c != 0 {
			code = c
		}
	}
	if cmd.Object != proto.ObjServer {
		var all []proto.Status
		for _, t := range targets {
			want := attrs
			if cmd.Object == proto.ObjHook {
				// The hooks' files too, which print writes as imports.
				want = append(slices.Clip(attrs), proto.AttrHookContent)
			}
			objs, c := s.stat(cmd.Object, t, want)
			all = append(all, objs...)
			note(c)
			if c != 0 && (s.opts.abort || s.dead) {
				break
			}
		}
		fmt.Fprint(s.out, qmgrparse.FormatPrint(cmd.Object, all))
		return code
	}
	for _, t := range targets {
		svrObjs, c := s.stat(proto.ObjServer, t, attrs)
		note(c)
		if c != 0 {
			if s.opts.abort || s.dead {
				break
			}
			continue
		}
		if attrs != nil {
			// Selected server attributes only, as PBS does.
			fmt.Fprint(s.out, qmgrparse.FormatPrint(proto.ObjServer, svrObjs))
			continue
		}
		at := qmgrparse.ObjName{Server: t.Server}
		queues, c := s.stat(proto.ObjQueue, at, nil)
		note(c)
		var nodes, resources []proto.Status
		if !s.dead {
			nodes, c = s.stat(proto.ObjNode, at, nil)
			note(c)
		}
		if !s.dead {
			resources, c = s.stat(proto.ObjResource, at, nil)
			note(c)
		}
		fmt.Fprint(s.out, qmgrparse.FormatPrintServer(svrObjs[0], resources, queues, nodes))
	}
	return code
}

// active sets the objects later commands default to, or lists them. Named
// queues and nodes must exist (unless -n), as in PBS.
func (s *session) active(cmd *qmgrparse.Command) int {
	list := map[proto.ObjectType]*[]qmgrparse.ObjName{
		proto.ObjServer: &s.activeServers, proto.ObjQueue: &s.activeQueues, proto.ObjNode: &s.activeNodes,
		proto.ObjSched: &s.activeScheds,
	}[cmd.Object]
	if cmd.Names == nil {
		switch cmd.Object {
		case proto.ObjServer:
			fmt.Fprintln(s.out, "Active servers:")
			servers := s.activeServers
			if servers == nil {
				servers = []qmgrparse.ObjName{{}}
			}
			for _, n := range servers {
				fmt.Fprintln(s.out, s.svr(proto.ObjServer, n))
			}
		case proto.ObjQueue, proto.ObjNode:
			fmt.Fprintf(s.out, "Active %ss:\n", cmd.Object)
			for _, n := range *list {
				fmt.Fprintf(s.out, "%s@%s\n", n.Name, s.svr(cmd.Object, n))
			}
		case proto.ObjSched:
			fmt.Fprintln(s.out, "Active schedulers:")
			for _, n := range *list {
				fmt.Fprintf(s.out, "%s@%s\n", n.Name, s.svr(cmd.Object, n))
			}
		}
		return 0
	}
	// OpenPBS's qmgr checks queues and nodes, not schedulers: a
	// scheduler's name is checked by the commands that use it.
	if !s.opts.noExec && (cmd.Object == proto.ObjQueue || cmd.Object == proto.ObjNode) {
		what := "Queue"
		if cmd.Object == proto.ObjNode {
			what = "Node"
		}
		for _, n := range cmd.Names {
			if !s.exists(cmd.Object, n) {
				fmt.Fprintf(s.errw, "%s does not exist: %s.\n", what, n.Name)
				return exitActive
			}
		}
	}
	*list = cmd.Names
	return 0
}

// exists asks the server about one object; an answer other than "unknown"
// is reported, since it says more than "does not exist".
func (s *session) exists(obj proto.ObjectType, n qmgrparse.ObjName) bool {
	if n.Name == "" {
		return true
	}
	req := &proto.StatusRequest{IDs: []string{n.Name}}
	call, probe, unknown := s.srv.StatusQueues, proto.AttrQueueType, proto.PBSE_UNKQUE
	if obj == proto.ObjNode {
		call, probe, unknown = s.srv.StatusNodes, proto.AttrNodeState, proto.PBSE_UNKNODE
	}
	req.Attrs = []string{probe}
	objs, oerrs, err := call(req)
	if err != nil {
		if code := proto.CodeOf(err); code != unknown {
			s.serverError(n.Name, s.svr(obj, n), err)
		}
		return false
	}
	return len(oerrs) == 0 && len(objs) > 0
}
