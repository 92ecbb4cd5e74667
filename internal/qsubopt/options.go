package qsubopt

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// command selects the few letters whose meaning differs between qsub and
// qalter.
type command int

const (
	cmdSubmit command = iota
	cmdAlter
)

// source collects what one origin asked for: the command line, or all the
// directives of a script. On the command line a repeated setting replaces
// the earlier one; among directives the first one stays.
type source struct {
	directive bool
	attrs     []proto.Attr
	index     map[string]int // FullName -> position in attrs
	vars      []Var
	varIndex  map[string]int
	queue     string
	queueSet  bool
	prefix    string
	prefixSet bool
	exportAll bool
	quiet     bool
	// connectWait is -b: how long qsub keeps trying to reach the server.
	connectWait    time.Duration
	connectWaitSet bool
	// nodeExclusive is Torque's -n: the job's place gets :excl.
	nodeExclusive bool
	// interactive is -I.
	interactive bool
	// x11 is -X.
	x11 bool
}

func newSource(directive bool) *source {
	return &source{directive: directive, index: map[string]int{}, varIndex: map[string]int{}}
}

func (s *source) set(a proto.Attr) {
	k := a.FullName()
	if i, ok := s.index[k]; ok {
		if !s.directive {
			s.attrs[i] = a
		}
		return
	}
	s.index[k] = len(s.attrs)
	s.attrs = append(s.attrs, a)
}

func (s *source) setVar(v Var) {
	if i, ok := s.varIndex[v.Name]; ok {
		if !s.directive {
			s.vars[i] = v
		}
		return
	}
	s.varIndex[v.Name] = len(s.vars)
	s.vars = append(s.vars, v)
}

func (s *source) applyDirective(spec getopt.Spec, d Directive, c *Context) error {
	words, err := SplitWords(d.Text)
	if err != nil {
		return usagef("directive on line %d: %v", d.Line, err)
	}
	opts, operands, err := spec.Parse(words)
	if err != nil {
		return usagef("directive on line %d: %v", d.Line, err)
	}
	if len(operands) > 0 {
		return usagef("directive on line %d: unexpected argument %q", d.Line, operands[0])
	}
	for _, o := range opts {
		if err := s.apply(cmdSubmit, o, c); err != nil {
			var ue *UsageError
			if errors.As(err, &ue) {
				return usagef("directive on line %d: %s", d.Line, ue.Msg)
			}
			return fmt.Errorf("directive on line %d: %w", d.Line, err)
		}
	}
	return nil
}

// unsupported are the qsub options of OpenPBS and Torque that ask for
// what this system does not do, with the reason qsub gives when it
// refuses them.
var unsupported = map[byte]string{
	'E': "it has Moab add MOAB_* variables to the job's environment, and there is no Moab here (the job gets the PBS_* variables)",
	'i': "Torque's idle slot limit of a job array is kept by Moab, which is not here; bound an array's running subjobs with %N in -J or -t",
	'L': "Torque's NUMA-aware resource request is not supported; ask for resources with -l (select=..., nodes=..., ncpus=...)",
	'x': "running the script in an interactive job is not supported; qsub -I gives a shell",
}

func bad(letter byte, v, reason string) error {
	return usagef("illegal -%c value %q: %s", letter, v, reason)
}

// apply records one option. Letters the command's getopt spec does not
// accept never get here.
func (s *source) apply(cmd command, o getopt.Option, c *Context) error {
	v := o.Value
	str := func(name string) error {
		if v == "" {
			return bad(o.Name, v, "empty value")
		}
		s.set(proto.Attr{Name: name, Value: v})
		return nil
	}
	switch o.Name {
	case 0:
		// --version is answered before options are applied; in a
		// directive it means nothing.
	case 'a':
		t, err := ParseDateTime(v, c.Now)
		if err != nil {
			return bad('a', v, err.Error())
		}
		s.set(proto.Attr{Name: proto.AttrExecutionTime, Value: strconv.FormatInt(t.Unix(), 10)})
	case 'A':
		return str(proto.AttrAccountName)
	case 'b':
		// Torque's wait for an unreachable server: qsub keeps trying to
		// connect for this long.
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return bad('b', v, "want a number of seconds")
		}
		if !s.directive || !s.connectWaitSet {
			s.connectWait, s.connectWaitSet = time.Duration(n)*time.Second, true
		}
	case 'c':
		return str(proto.AttrCheckpoint)
	case 'C':
		if !s.directive {
			s.prefix, s.prefixSet = v, true
		}
	case 'd', 'w':
		p, err := absPath(o.Name, v, c)
		if err != nil {
			return err
		}
		s.set(proto.Attr{Name: proto.AttrInitWorkDir, Value: p})
	case 'D':
		p, err := absPath(o.Name, v, c)
		if err != nil {
			return err
		}
		s.set(proto.Attr{Name: proto.AttrInitRootDir, Value: p})
	case 'e', 'o':
		p, err := outputPath(o.Name, v, c)
		if err != nil {
			return err
		}
		name := proto.AttrOutputPath
		if o.Name == 'e' {
			name = proto.AttrErrorPath
		}
		s.set(proto.Attr{Name: name, Value: p})
	case 'f':
		// OpenPBS: qsub stays in the foreground rather than leave a
		// background process talking to the server; this qsub has none.
	case 'n':
		// Torque's node-exclusive job: place=...:excl (see exclusive).
		s.nodeExclusive = true
	case 'I':
		// An interactive job: qsub waits for it and relays its shell.
		s.interactive = true
	case 'X':
		// X11 forwarding of an interactive job (checked in Parse).
		s.x11 = true
	case 'E', 'i', 'L', 'x':
		return usagef("-%c is not supported: %s", o.Name, unsupported[o.Name])
	case 'K':
		return str(proto.AttrKillDelay)
	case 'T':
		return str(proto.AttrJobType)
	case 'F':
		if v != "" {
			s.set(proto.Attr{Name: proto.AttrJobArguments, Value: v})
		}
	case 'h':
		if cmd == cmdSubmit {
			s.set(proto.Attr{Name: proto.AttrHoldTypes, Value: "u"})
			break
		}
		if v == "" || strings.Trim(v, "uosn") != "" {
			return bad('h', v, "want letters of u, o, s or n")
		}
		s.set(proto.Attr{Name: proto.AttrHoldTypes, Value: v})
	case 'j':
		if v != "oe" && v != "eo" && v != "n" {
			return bad('j', v, "want oe, eo or n")
		}
		s.set(proto.Attr{Name: proto.AttrJoinPath, Value: v})
	case 'J', 't':
		return str(proto.AttrArrayIndices)
	case 'k':
		return str(proto.AttrKeepFiles)
	case 'l':
		return s.resources(v)
	case 'm':
		return str(proto.AttrMailPoints)
	case 'M':
		return s.mailUsers(v)
	case 'N':
		// As OpenPBS's qsub: a letter first, then letters, digits and
		// - _ + . ("-N=name", as PSI/J writes it, is refused, not
		// named "=name").
		if err := model.CheckJobName(v, true); err != nil {
			return bad('N', v, err.Error())
		}
		return str(proto.AttrJobName)
	case 'p':
		n, err := strconv.Atoi(v)
		if err != nil || n < -1024 || n > 1023 {
			return bad('p', v, "want an integer from -1024 to 1023")
		}
		s.set(proto.Attr{Name: proto.AttrPriority, Value: strconv.Itoa(n)})
	case 'P':
		return str(proto.AttrProject)
	case 'q':
		if s.directive && s.queueSet {
			break
		}
		// "queue@server" and "@server": there is one server, the local one.
		s.queue, _, _ = strings.Cut(v, "@")
		s.queueSet = true
	case 'r':
		switch v {
		case "y", "Y":
			s.set(proto.Attr{Name: proto.AttrRerunable, Value: "True"})
		case "n", "N":
			s.set(proto.Attr{Name: proto.AttrRerunable, Value: "False"})
		default:
			return bad('r', v, "want y or n")
		}
	case 'R':
		return str(proto.AttrRemoveFiles)
	case 'S':
		return str(proto.AttrShellPathList)
	case 'u':
		return str(proto.AttrUserList)
	case 'v':
		return s.variables(v, c)
	case 'V':
		s.exportAll = true
	case 'W':
		return s.extra(v, c.Now)
	case 'z':
		s.quiet = true
	default:
		return usagef("option -%c is not handled", o.Name)
	}
	return nil
}

// mailUsers records "-M user[@host][,...]". Anything else is refused
// here, as the server refuses it: the server's mailer would take "|prog"
// for a program to run and "/path" for a file to write.
func (s *source) mailUsers(v string) error {
	users, err := mailer.ParseUsers(v)
	if err != nil {
		return bad('M', v, err.Error())
	}
	s.set(proto.Attr{Name: proto.AttrMailUsers, Value: users})
	return nil
}

// resources records "-l name=value[,name=value...]". A name without '='
// is a boolean resource set to True (Torque's "-l wd").
func (s *source) resources(v string) error {
	if strings.TrimSpace(v) == "" {
		return bad('l', v, "empty value")
	}
	items, err := splitList(v)
	if err != nil {
		return bad('l', v, err.Error())
	}
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		name, val, hasValue := strings.Cut(it, "=")
		name = strings.TrimSpace(name)
		if !validResourceName(name) {
			return bad('l', v, fmt.Sprintf("bad resource name %q", name))
		}
		if !hasValue {
			val = "True"
		}
		val = strings.TrimSpace(stripQuotes(strings.TrimSpace(val)))
		if val == "" {
			return bad('l', v, fmt.Sprintf("no value for resource %q", name))
		}
		s.set(proto.Attr{Name: proto.AttrResourceList, Resource: name, Value: val})
	}
	return nil
}

func validResourceName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' && i > 0) {
			return false
		}
	}
	return true
}

// variables records "-v NAME[=value][,...]". A NAME without '=' takes the
// value qsub itself has, and is skipped when qsub has none.
func (s *source) variables(v string, c *Context) error {
	if strings.TrimSpace(v) == "" {
		return bad('v', v, "empty value")
	}
	items, err := splitList(v)
	if err != nil {
		return bad('v', v, err.Error())
	}
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		name, raw, hasValue := strings.Cut(it, "=")
		name = strings.TrimSpace(name)
		if !validVarName(name) || strings.ContainsAny(name, `'"`) {
			return bad('v', v, fmt.Sprintf("bad variable name %q", name))
		}
		if !hasValue {
			if val, ok := lookupEnv(c.Environ, name); ok {
				s.setVar(Var{Name: name, Value: val})
			}
			continue
		}
		val, err := unquote(raw)
		if err != nil {
			return bad('v', v, err.Error())
		}
		s.setVar(Var{Name: name, Value: val})
	}
	return nil
}

// extra records "-W name=value[,name=value...]". Values such as depend and
// stagein lists contain commas themselves, so an item without '=' belongs
// to the value before it.
func (s *source) extra(v string, now time.Time) error {
	items, err := splitList(v)
	if err != nil {
		return bad('W', v, err.Error())
	}
	type pair struct{ name, value string }
	var pairs []pair
	for _, it := range items {
		name, val, ok := strings.Cut(it, "=")
		if !ok {
			if len(pairs) == 0 {
				return bad('W', v, "want name=value")
			}
			pairs[len(pairs)-1].value += "," + it
			continue
		}
		pairs = append(pairs, pair{strings.TrimSpace(name), val})
	}
	for _, p := range pairs {
		if !validAttrName(p.name) {
			return bad('W', v, fmt.Sprintf("bad attribute name %q", p.name))
		}
		name, res := proto.SplitAttrName(p.name)
		value := stripQuotes(strings.TrimSpace(p.value))
		if name == proto.AttrBlock && res == "" {
			// qsub itself waits when block is true: read it here.
			b, err := resc.ParseBool(value)
			if err != nil {
				return bad('W', v, "block: want true or false")
			}
			value = resc.FormatBool(b)
		}
		if (strings.EqualFold(name, proto.AttrHoldUntil) || strings.EqualFold(name, proto.AttrExecutionTime)) && res == "" {
			// PBS's datetime as -a takes it, or Unix seconds.
			t, err := ParseTimeAttr(value, now)
			if err != nil {
				return bad('W', v, fmt.Sprintf("%s: %v", name, err))
			}
			value = t
		}
		if name == proto.AttrStagein || name == proto.AttrStageout {
			// As OpenPBS's qsub: a list that does not parse is refused
			// before anything is sent.
			if _, err := stage.ParseList(value); err != nil {
				return bad('W', v, fmt.Sprintf("%s: %v", name, err))
			}
		}
		s.set(proto.Attr{Name: name, Resource: res, Value: value})
	}
	return nil
}

// validAttrName accepts "name" and "name.resource".
func validAttrName(n string) bool {
	name, res, dotted := strings.Cut(n, ".")
	if !validResourceName(name) || name[0] == '-' {
		return false
	}
	return !dotted || validResourceName(res)
}

func absPath(letter byte, v string, c *Context) (string, error) {
	if v == "" {
		return "", bad(letter, v, "empty path")
	}
	if path.IsAbs(v) {
		return v, nil
	}
	if !path.IsAbs(c.Cwd) {
		return "", fmt.Errorf("cannot tell the current directory to resolve -%c %s", letter, v)
	}
	return path.Join(c.Cwd, v), nil
}

// outputPath turns an -o or -e value into "host:/absolute/path". A value
// that names a host already is kept as it is. A trailing slash (or a last
// element "." or "..") marks a directory; the slash is kept so that the
// server appends the default file name.
func outputPath(letter byte, v string, c *Context) (string, error) {
	if v == "" {
		return "", bad(letter, v, "empty path")
	}
	if host, p, ok := strings.Cut(v, ":"); ok && validHostName(host) {
		if p == "" {
			return "", bad(letter, v, "no path after the host name")
		}
		return v, nil
	}
	p := v
	if !path.IsAbs(v) {
		if !path.IsAbs(c.Cwd) {
			return "", fmt.Errorf("cannot tell the current directory to resolve -%c %s", letter, v)
		}
		p = path.Join(c.Cwd, v)
		if base := path.Base(v); (strings.HasSuffix(v, "/") || base == "." || base == "..") && !strings.HasSuffix(p, "/") {
			p += "/"
		}
	}
	return c.Host + ":" + p, nil
}

func validHostName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Resources reads a -l value, "name=value[,name=value...]", as qsub
// does, into Resource_List attributes (pbs_rsub -l shares it).
func Resources(v string) ([]proto.Attr, error) {
	s := &source{index: map[string]int{}}
	if err := s.resources(v); err != nil {
		return nil, err
	}
	return s.attrs, nil
}
