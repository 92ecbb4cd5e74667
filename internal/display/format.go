package display

import (
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Versions the commands report (qstat --version, JSON pbs_version).
const (
	PBSProVersion = "23.06.06"
	TorqueVersion = "6.1.3"
)

// SizeUnit selects how the alternate formats print memory sizes.
type SizeUnit int

// Size units.
const (
	SizeNatural   SizeUnit = iota // as requested, scaled to fit the column
	SizeMegawords                 // -M
	SizeGigabytes                 // -G
)

// Options are the presentation choices of one command call.
type Options struct {
	Personality config.Personality

	// Wide selects the wide columns (-w, PBS Pro).
	Wide bool
	// OneLine is -1: full listings do not wrap long values; the alternate
	// format keeps the node list (and comment) on the job's line.
	OneLine bool
	// Nodes and Comments add the exec_host (-n) and comment (-s) lines to
	// the alternate format.
	Nodes    bool
	Comments bool
	Size     SizeUnit

	// ServerName heads the alternate formats and is JSON's pbs_server;
	// ServerComment is the server's comment attribute, which PBS prints
	// above job tables.
	ServerName    string
	ServerComment string

	// Now stamps JSON output; Loc is the zone for ctime strings (UTC when
	// nil, so that output never depends on the machine's zone by accident).
	Now time.Time
	Loc *time.Location

	// Delim separates fields in -F dsv output ("|" when empty).
	Delim string
	// Percent is qstat -p (OpenPBS): the default table's Time Use column
	// shows how far each job is (percentDone).
	Percent bool
	// EstStart is qstat -T (OpenPBS): the alternate format's last column
	// shows the estimated start (estimated.start_time) of jobs that may
	// still start instead of the elapsed time, and the rows are ordered by
	// start, then estimated start.
	EstStart bool
}

func (o Options) torque() bool { return o.Personality == config.Torque }

func (o Options) loc() *time.Location {
	if o.Loc == nil {
		return time.UTC
	}
	return o.Loc
}

// Version is what "--version" prints (without the newline).
func Version(p config.Personality) string {
	if p == config.Torque {
		return "Version: " + TorqueVersion
	}
	return "pbs_version = " + PBSProVersion
}

// errWriter remembers the first write error so that formatting code reads
// as a sequence of prints.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *errWriter) print(parts ...string) {
	for _, s := range parts {
		if e.err != nil {
			return
		}
		_, e.err = io.WriteString(e.w, s)
	}
}

// ctimeLayout is ctime(3) without its newline.
const ctimeLayout = "Mon Jan _2 15:04:05 2006"

// FormatTime renders a wire time (decimal Unix seconds) the way ctime(3)
// does. A value that is not a number is returned unchanged: showing what
// the server sent beats hiding it.
func FormatTime(value string, loc *time.Location) string {
	n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil {
		return value
	}
	if loc == nil {
		loc = time.UTC
	}
	return time.Unix(n, 0).In(loc).Format(ctimeLayout)
}

// ParseTime reads back what FormatTime wrote (a ctime string in loc) or
// decimal Unix seconds, as Unix seconds.
func ParseTime(value string, loc *time.Location) (int64, bool) {
	v := strings.TrimSpace(value)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, true
	}
	if loc == nil {
		loc = time.UTC
	}
	t, err := time.ParseInLocation(ctimeLayout, v, loc)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// IsTimeAttr reports whether a full listing shows a as a date: the union
// of what OpenPBS and Torque convert, plus the other times the wire
// carries as seconds (proto/doc.go).
func IsTimeAttr(a proto.Attr) bool {
	if a.Name == "estimated" {
		return a.Resource == "start_time"
	}
	if a.Resource != "" {
		return false
	}
	switch a.Name {
	case proto.AttrCtime, proto.AttrEtime, proto.AttrMtime, proto.AttrQtime, proto.AttrStime,
		proto.AttrStartTimeTorque, proto.AttrCompTime, proto.AttrExecutionTime, proto.AttrObittime,
		proto.AttrHoldUntil, "checkpoint_time", "reserve_start", "reserve_end", "resv_start", "resv_end",
		"cred_validity", proto.AttrNodeLastState, proto.AttrNodeLastUsed:
		return true
	}
	return false
}

// showTime is the full-listing value of a time attribute; an estimated
// start of 0 means the scheduler has none, which PBS shows as UNKNOWN.
func showTime(a proto.Attr, loc *time.Location) string {
	if a.Name == "estimated" && strings.TrimSpace(a.Value) == "0" {
		return "UNKNOWN"
	}
	return FormatTime(a.Value, loc)
}

// StateLetter is the state a personality shows for a wire state. Torque
// clients (Galaxy raises on anything else) know only Q R E C plus the H, W
// and S a user explicitly asks for, so OpenPBS-only letters fold into those:
// finished, moved and expired become C, a begun array R, transit Q and a
// cycle-harvesting suspension S.
func StateLetter(p config.Personality, state string) string {
	if p != config.Torque {
		return state
	}
	switch state {
	case "F", "X", "M":
		return "C"
	case "B":
		return "R"
	case "T":
		return "Q"
	case "U":
		return "S"
	}
	return state
}

// torqueName is the Torque spelling of an attribute name.
func torqueName(name string) string {
	switch name {
	case proto.AttrExitStatus:
		return proto.AttrExitStatusTorque
	case proto.AttrStime:
		return proto.AttrStartTimeTorque
	}
	return name
}

// present returns the attributes of a job as the personality shows them,
// without touching the caller's slice.
func present(p config.Personality, attrs []proto.Attr) []proto.Attr {
	if p != config.Torque {
		return attrs // as they are: callers only read them
	}
	out := make([]proto.Attr, 0, len(attrs))
	for _, a := range attrs {
		if p == config.Torque {
			if a.Name == "exec_port" {
				continue // Torque hides it
			}
			if a.Resource == "" {
				a.Name = torqueName(a.Name)
			}
			if a.Name == proto.AttrJobState && a.Resource == "" {
				a.Value = StateLetter(p, a.Value)
			}
			if a.Name == proto.AttrExecHost && a.Resource == "" {
				a.Value = torqueExecHost(a.Value)
			}
		}
		out = append(out, a)
	}
	return out
}

// torqueExecHost writes an OpenPBS exec_host ("n1/0*2+n2/1", host/index
// and a count of cpus) the way Torque 6 lists a job's slots: a range per
// host ("n1/0-1+n2/1"), which Torque clients such as Open OnDemand count
// processors from. A chunk it cannot read is kept as it is.
func torqueExecHost(v string) string {
	chunks := strings.Split(v, "+")
	for i, c := range chunks {
		host, slot, ok := strings.Cut(c, "/")
		if !ok {
			continue
		}
		first, count, hasCount := strings.Cut(slot, "*")
		lo, err := strconv.Atoi(first)
		if !hasCount || err != nil || lo < 0 {
			continue
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > 1<<20 {
			continue
		}
		chunks[i] = host + "/" + strconv.Itoa(lo)
		if n > 1 {
			chunks[i] += "-" + strconv.Itoa(lo+n-1)
		}
	}
	return strings.Join(chunks, "+")
}

// get returns an attribute value by name and resource.
func get(attrs []proto.Attr, name, res string) (string, bool) {
	for _, a := range attrs {
		if a.Name == name && a.Resource == res {
			return a.Value, true
		}
	}
	return "", false
}

// --- printf-style cells, counted in runes so that a cut never splits a
// UTF-8 sequence (C counts bytes; the difference only shows for non-ASCII).

// cut keeps the first n runes of s (C's %.Ns).
func cut(s string, n int) string {
	if n < 0 {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// star shortens s to n runes, marking the cut with a final '*' as OpenPBS
// does.
func star(s string, n int) string {
	if utf8.RuneCountInString(s) <= n || n <= 0 {
		return s
	}
	return cut(s, n-1) + "*"
}

// left pads s with blanks on the right to n runes (%-Ns).
func left(s string, n int) string { return string(appendLeft(nil, s, n)) }

// right pads s with blanks on the left to n runes (%Ns).
func right(s string, n int) string { return string(appendRight(nil, s, n)) }

// appendLeft appends left(s, n) to b.
func appendLeft(b []byte, s string, n int) []byte {
	b = append(b, s...)
	return appendBlanks(b, n-utf8.RuneCountInString(s))
}

// appendRight appends right(s, n) to b.
func appendRight(b []byte, s string, n int) []byte {
	return append(appendBlanks(b, n-utf8.RuneCountInString(s)), s...)
}

func appendBlanks(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

// leftCut is %-N.Ns and rightCut %N.Ns.
func leftCut(s string, n int) string  { return left(cut(s, n), n) }
func rightCut(s string, n int) string { return right(cut(s, n), n) }

// cell makes a value safe for a blank-separated table: whitespace and
// control characters become '_' and an empty value becomes the
// placeholder.
func cell(s, placeholder string) string {
	if s == "" {
		return placeholder
	}
	if plainASCII(s) || strings.IndexFunc(s, needsCellFix) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if needsCellFix(r) {
			r = '_'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plainASCII reports whether s is printable ASCII without blanks, which
// every cell of a long listing is (the common case, checked byte by byte).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

func needsCellFix(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError
}

// printable makes a value safe for one line of text output: a newline
// shows as \n and a form feed as \f (as OpenPBS's one-line mode does),
// other control characters in caret notation, invalid UTF-8 as U+FFFD.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// userOf strips "@host" from an owner.
func userOf(owner string) string {
	if i := strings.IndexByte(owner, '@'); i >= 0 {
		return owner[:i]
	}
	return owner
}

// istrue is PBS's reading of a boolean attribute.
func istrue(v string) bool {
	return strings.EqualFold(v, "true") || v == "1"
}

// stateCounts reads a state_count value ("Transit:0 Queued:1 ... ") into a
// map by state name.
func stateCounts(v string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(v) {
		if name, n, ok := strings.Cut(f, ":"); ok {
			m[name] = n
		}
	}
	return m
}
