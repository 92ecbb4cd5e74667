package display

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// JSONDoc builds a JSON document in OpenPBS's layout (the one qstat -F json
// uses too): each member on its own line, four blanks of indent per level,
// no blank after the colon. pbsnodes -F json writes its documents with it,
// and so does the web API's node listing (internal/web).
type JSONDoc struct {
	b      strings.Builder
	indent int
	comma  bool
}

// NodesHeader starts pbsnodes' document: the timestamp, version and
// server prologue, then the opened "nodes" object.
func NodesHeader(now time.Time, server string) *JSONDoc {
	j := &JSONDoc{indent: 4}
	j.b.WriteString("{")
	j.Raw("timestamp", strconv.FormatInt(now.Unix(), 10))
	j.Raw("pbs_version", JSONQuote(PBSProVersion))
	j.Raw("pbs_server", JSONQuote(server))
	j.Open("nodes", '{')
	return j
}

// Finish closes "nodes" and the document and writes it out.
func (j *JSONDoc) Finish(w io.Writer) error {
	j.Close('}')
	j.b.WriteString("\n}\n")
	_, err := io.WriteString(w, j.b.String())
	return err
}

func (j *JSONDoc) newline() {
	j.b.WriteString("\n")
	j.b.WriteString(strings.Repeat(" ", j.indent))
}

func (j *JSONDoc) member(key string) {
	if j.comma {
		j.b.WriteString(",")
	}
	j.newline()
	j.b.WriteString(JSONQuote(key))
	j.b.WriteString(":")
}

// Raw adds a member whose value is already JSON.
func (j *JSONDoc) Raw(key, value string) {
	j.member(key)
	j.b.WriteString(value)
	j.comma = true
}

// Str adds a string member; Value adds a member typed as pbsnodes types
// attribute values (NodeJSONValue); Num an integer member.
func (j *JSONDoc) Str(key, v string)   { j.Raw(key, JSONQuote(v)) }
func (j *JSONDoc) Value(key, v string) { j.Raw(key, NodeJSONValue(v)) }
func (j *JSONDoc) Num(key string, v int64) {
	j.Raw(key, strconv.FormatInt(v, 10))
}

// Open starts an object ('{') or array ('[') member.
func (j *JSONDoc) Open(key string, brace byte) {
	j.member(key)
	j.b.WriteByte(brace)
	j.indent += 4
	j.comma = false
}

// Elem adds an array element whose value is already JSON.
func (j *JSONDoc) Elem(value string) {
	if j.comma {
		j.b.WriteString(",")
	}
	j.newline()
	j.b.WriteString(value)
	j.comma = true
}

// Close ends the innermost object ('}') or array (']'); an empty one
// prints as {} or [].
func (j *JSONDoc) Close(brace byte) {
	j.indent -= 4
	if j.comma {
		j.newline()
	}
	j.b.WriteByte(brace)
	j.comma = true
}

// JSONQuote is s as a JSON string. encoding/json escapes quotes,
// backslashes, control characters, U+2028/U+2029 and replaces invalid
// UTF-8, so any attribute value yields valid JSON; HTML escaping is off so
// that a comment with "<" or "&" reads as written.
func JSONQuote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		return `""` // a string always encodes; this keeps the document valid regardless
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// NodeJSONValue is a node's value as a JSON number when it is a plain
// integer (Port, pcpus, ncpus, times in Unix seconds) and as a string
// otherwise ("24684096kb", "0.22", "True").
func NodeJSONValue(v string) string {
	if PlainInt(v) {
		return v
	}
	return JSONQuote(v)
}

// NodesJSON writes pbsnodes -a -F json into j (from NodesHeader): per node its attributes in the
// server's order; resources_available, resources_assigned (and any other
// attribute with resources) as nested objects at the place of their first
// resource; "jobs" as an array of distinct job ids, as OpenPBS prints it.
// Times stay Unix seconds, as in OpenPBS. A repeated key is dropped so
// that every object has distinct keys.
func NodesJSON(w io.Writer, j *JSONDoc, nodes []proto.Status) error {
	for _, s := range nodes {
		j.Open(s.Name, '{')
		type entry struct {
			attr  proto.Attr
			group []proto.Attr // set for an attribute with resources
		}
		var entries []*entry
		groups := map[string]*entry{}
		seen := map[string]bool{}
		for _, a := range s.Attrs {
			if a.Resource != "" {
				if g, ok := groups[a.Name]; ok {
					g.group = append(g.group, a)
					continue
				}
				if seen[a.Name] {
					continue
				}
				g := &entry{attr: proto.Attr{Name: a.Name}, group: []proto.Attr{a}}
				groups[a.Name], seen[a.Name] = g, true
				entries = append(entries, g)
				continue
			}
			if seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			entries = append(entries, &entry{attr: a})
		}
		for _, e := range entries {
			switch {
			case e.group != nil:
				j.Open(e.attr.Name, '{')
				inner := map[string]bool{}
				for _, r := range e.group {
					if !inner[r.Resource] {
						inner[r.Resource] = true
						j.Value(r.Resource, r.Value)
					}
				}
				j.Close('}')
			case e.attr.Name == "jobs":
				j.Open("jobs", '[')
				for _, id := range NodeJobIDs(e.attr.Value) {
					j.Elem(JSONQuote(id))
				}
				j.Close(']')
			default:
				j.Value(e.attr.Name, e.attr.Value)
			}
		}
		j.Close('}')
	}
	return j.Finish(w)
}

// NodeJob is one item of a node's jobs attribute.
type NodeJob struct {
	ID   string
	Slot string // "" when the item has none
}

// ParseNodeJobs reads a node's jobs attribute as the server sends it,
// "1.srv/0, 1.srv/1, 2.srv/0": items separated by commas (blanks around
// them ignored), each a job id and its slot after the last '/'. Empty
// items are skipped.
func ParseNodeJobs(v string) []NodeJob {
	var out []NodeJob
	for _, it := range strings.Split(v, ",") {
		it = strings.TrimSpace(it)
		if it == "" {
			continue
		}
		js := NodeJob{ID: it}
		if i := strings.LastIndexByte(it, '/'); i >= 0 {
			js.ID, js.Slot = strings.TrimSpace(it[:i]), strings.TrimSpace(it[i+1:])
		}
		if js.ID == "" {
			continue
		}
		out = append(out, js)
	}
	return out
}

// NodeJobIDs is the distinct job ids of a jobs attribute in first-seen order:
// a job with several cpus on the node is listed once.
func NodeJobIDs(v string) []string {
	var out []string
	seen := map[string]bool{}
	for _, js := range ParseNodeJobs(v) {
		if !seen[js.ID] {
			seen[js.ID] = true
			out = append(out, js.ID)
		}
	}
	return out
}

// PlainInt reports whether v is an integer JSON can carry as a number
// without loss: -?(0|[1-9][0-9]*) within int64. Anything else ("0.22",
// "007", "2gb", "1e3") stays a string.
func PlainInt(v string) bool {
	s := strings.TrimPrefix(v, "-")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(v, 10, 64)
	return err == nil
}
