package display

import (
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gopbs/gopbs/proto"
)

// JobsJSON writes PBS Pro's "qstat -f -F json" document:
//
//	{"timestamp":<now>,"pbs_version":"23.06.06","pbs_server":"<server>",
//	 "Jobs":{"<id>":{"Job_Name":"...", "Resource_List":{...},
//	 "Variable_List":{...}, "Exit_status":0, ...}}}
//
// laid out as OpenPBS lays it out (four-space indent, no blank after the
// colon). Resource lists become nested objects, Variable_List an object of
// its variables, times ctime strings, and values that are plain numbers
// JSON numbers, as OpenPBS does. "Jobs" is present even when empty
// ("Jobs":{}), where OpenPBS leaves it out: ReFrame needs it whenever qstat
// exits 0 or 153.
func JobsJSON(w io.Writer, jobs []proto.Status, o Options) error {
	return objectsJSON(w, "Jobs", jobs, true, o)
}

// QueuesJSON writes "qstat -Q -f -F json": the queues under "Queue".
func QueuesJSON(w io.Writer, queues []proto.Status, o Options) error {
	return objectsJSON(w, "Queue", queues, false, o)
}

// ServersJSON writes "qstat -B -f -F json": the server under "Server".
func ServersJSON(w io.Writer, servers []proto.Status, o Options) error {
	return objectsJSON(w, "Server", servers, false, o)
}

func objectsJSON(w io.Writer, key string, objs []proto.Status, jobs bool, o Options) error {
	j := &jsonOut{e: &errWriter{w: w}, indent: 4}
	j.e.print("{")
	j.raw("timestamp", strconv.FormatInt(o.Now.Unix(), 10))
	j.raw("pbs_version", jsonString(PBSProVersion))
	j.raw("pbs_server", jsonString(o.ServerName))
	j.open(key)
	for _, s := range objs {
		j.open(s.Name)
		attrs := s.Attrs
		if jobs {
			attrs = present(o.Personality, attrs)
		}
		inGroup, group := false, "" // the resource-list object currently open
		for _, a := range attrs {
			if inGroup && (a.Resource == "" || a.Name != group) {
				j.close()
				inGroup = false
			}
			if a.Resource != "" {
				if !inGroup {
					j.open(a.Name)
					inGroup, group = true, a.Name
				}
				j.raw(a.Resource, jsonValue(a.Value))
				continue
			}
			switch {
			case jobs && IsTimeAttr(a):
				j.raw(a.Name, jsonString(showTime(a, o.loc())))
			case a.Name == proto.AttrVariableList:
				j.open(a.Name)
				for _, kv := range proto.DecodeVariableList(a.Value) {
					j.raw(kv.Name, jsonValue(kv.Value))
				}
				j.close()
			default:
				j.raw(a.Name, jsonValue(a.Value))
			}
		}
		if inGroup {
			j.close()
		}
		j.close()
	}
	j.close()
	j.e.print("\n}\n")
	return j.e.err
}

// jsonOut prints nested objects in OpenPBS's layout: each member on its
// own line, indented four blanks per level.
type jsonOut struct {
	e      *errWriter
	indent int
	comma  bool
}

func (j *jsonOut) member(key string) {
	if j.comma {
		j.e.print(",")
	}
	j.e.print("\n", strings.Repeat(" ", j.indent), jsonString(key), ":")
}

func (j *jsonOut) raw(key, value string) {
	j.member(key)
	j.e.print(value)
	j.comma = true
}

func (j *jsonOut) open(key string) {
	j.member(key)
	j.e.print("{")
	j.indent += 4
	j.comma = false
}

// close ends the innermost object; an object without members prints as
// {} on its line.
func (j *jsonOut) close() {
	j.indent -= 4
	if j.comma {
		j.e.print("\n", strings.Repeat(" ", j.indent))
	}
	j.e.print("}")
	j.comma = true
}

// jsonValue is a value as OpenPBS types it: a number when the whole value
// reads as one (and does not start with a 0 unless it is below 1, so that
// "0123" stays a string, as Python would need), otherwise a string. Unlike
// OpenPBS, which accepts anything strtod reads ("1.", "inf", "0x1f", "00")
// and so prints invalid JSON, only numbers in JSON's own syntax that fit a
// float64 qualify.
func jsonValue(v string) string {
	if isJSONNumber(v) {
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) {
			return v
		}
	}
	return jsonString(v)
}

// isJSONNumber checks RFC 8259 number syntax:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// jsonString quotes s as a JSON string: quotes, backslashes and every
// control character escaped, invalid UTF-8 replaced by U+FFFD, and U+2028
// and U+2029 escaped so that the text is also valid JavaScript.
func jsonString(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r == 0x2028:
			b.WriteString(`\u2028`)
		case r == 0x2029:
			b.WriteString(`\u2029`)
		default:
			b.WriteRune(r) // an invalid byte decodes as U+FFFD
		}
	}
	b.WriteByte('"')
	return b.String()
}
