package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"gopbs/internal/display"
	"gopbs/proto"
)

// jsonDoc builds a JSON document in OpenPBS's layout (the one qstat -F json
// uses too): each member on its own line, four blanks of indent per level,
// no blank after the colon.
type jsonDoc struct {
	b      strings.Builder
	indent int
	comma  bool
}

// jsonHeader starts pbsnodes' document: the timestamp, version and server
// prologue, then the opened "nodes" object.
func jsonHeader(now time.Time, server string) *jsonDoc {
	j := &jsonDoc{indent: 4}
	j.b.WriteString("{")
	j.raw("timestamp", strconv.FormatInt(now.Unix(), 10))
	j.raw("pbs_version", quote(display.PBSProVersion))
	j.raw("pbs_server", quote(server))
	j.open("nodes", '{')
	return j
}

// finish closes "nodes" and the document and writes it out.
func (j *jsonDoc) finish(w io.Writer) error {
	j.close('}')
	j.b.WriteString("\n}\n")
	_, err := io.WriteString(w, j.b.String())
	return err
}

func (j *jsonDoc) newline() {
	j.b.WriteString("\n")
	j.b.WriteString(strings.Repeat(" ", j.indent))
}

func (j *jsonDoc) member(key string) {
	if j.comma {
		j.b.WriteString(",")
	}
	j.newline()
	j.b.WriteString(quote(key))
	j.b.WriteString(":")
}

// raw adds a member whose value is already JSON.
func (j *jsonDoc) raw(key, value string) {
	j.member(key)
	j.b.WriteString(value)
	j.comma = true
}

// str adds a string member; value adds a member typed as OpenPBS types
// attribute values.
func (j *jsonDoc) str(key, v string)   { j.raw(key, quote(v)) }
func (j *jsonDoc) value(key, v string) { j.raw(key, jsonValue(v)) }
func (j *jsonDoc) num(key string, v int64) {
	j.raw(key, strconv.FormatInt(v, 10))
}

// open starts an object ('{') or array ('[') member.
func (j *jsonDoc) open(key string, brace byte) {
	j.member(key)
	j.b.WriteByte(brace)
	j.indent += 4
	j.comma = false
}

// elem adds an array element whose value is already JSON.
func (j *jsonDoc) elem(value string) {
	if j.comma {
		j.b.WriteString(",")
	}
	j.newline()
	j.b.WriteString(value)
	j.comma = true
}

// close ends the innermost object ('}') or array (']'); an empty one
// prints as {} or [].
func (j *jsonDoc) close(brace byte) {
	j.indent -= 4
	if j.comma {
		j.newline()
	}
	j.b.WriteByte(brace)
	j.comma = true
}

// quote is s as a JSON string. encoding/json escapes quotes, backslashes,
// control characters, U+2028/U+2029 and replaces invalid UTF-8, so any
// attribute value yields valid JSON; HTML escaping is off so that a
// comment with "<" or "&" reads as written.
func quote(s string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		return `""` // a string always encodes; this keeps the document valid regardless
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonValue is a value as a JSON number when it is a plain integer
// (Port, pcpus, ncpus, times in Unix seconds) and as a string otherwise
// ("24684096kb", "0.22", "True").
func jsonValue(v string) string {
	if plainInt(v) {
		return v
	}
	return quote(v)
}

// nodesJSON writes pbsnodes -a -F json: per node its attributes in the
// server's order; resources_available, resources_assigned (and any other
// attribute with resources) as nested objects at the place of their first
// resource; "jobs" as an array of distinct job ids, as OpenPBS prints it.
// Times stay Unix seconds, as in OpenPBS. A repeated key is dropped so
// that every object has distinct keys.
func (f *formatter) nodesJSON(w io.Writer, j *jsonDoc, nodes []proto.Status) error {
	for _, s := range nodes {
		j.open(s.Name, '{')
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
				j.open(e.attr.Name, '{')
				inner := map[string]bool{}
				for _, r := range e.group {
					if !inner[r.Resource] {
						inner[r.Resource] = true
						j.value(r.Resource, r.Value)
					}
				}
				j.close('}')
			case e.attr.Name == "jobs":
				j.open("jobs", '[')
				for _, id := range jobIDs(e.attr.Value) {
					j.elem(quote(id))
				}
				j.close(']')
			default:
				j.value(e.attr.Name, e.attr.Value)
			}
		}
		j.close('}')
	}
	return j.finish(w)
}

// summaryJSON writes -S -F json and -Sj -F json with OpenPBS's member
// names: "State", "OS", "hardware", "host", "queue", "Memory", "ncpus",
// "nmics", "ngpus", "comment" for the node view; "State", "Total Jobs",
// "Running Jobs", "Suspended Jobs", "mem f/t", "ncpus f/t", "nmics f/t",
// "ngpus f/t" and the "jobs" array (full ids) for the job view.
func (f *formatter) summaryJSON(w io.Writer, j *jsonDoc, nodes []proto.Status, jobView bool) error {
	for _, s := range nodes {
		m := f.summarize(s)
		j.open(s.Name, '{')
		j.str("State", m.state)
		if jobView {
			j.num("Total Jobs", int64(len(m.jobs)))
			j.num("Running Jobs", int64(len(m.jobs)))
			j.num("Suspended Jobs", 0)
			j.str("mem f/t", m.memFreeTotal())
			j.str("ncpus f/t", m.ncpus.freeTotal())
			j.str("nmics f/t", m.nmics.freeTotal())
			j.str("ngpus f/t", m.ngpus.freeTotal())
			j.open("jobs", '[')
			for _, id := range m.jobs {
				j.elem(quote(id))
			}
			j.close(']')
		} else {
			j.str("OS", m.os)
			j.str("hardware", m.hardware)
			j.str("host", m.host)
			j.str("queue", m.queue)
			j.str("Memory", m.memTotal())
			j.num("ncpus", m.ncpus.total)
			j.num("nmics", m.nmics.total)
			j.num("ngpus", m.ngpus.total)
			j.str("comment", m.comment)
		}
		j.close('}')
	}
	return j.finish(w)
}
