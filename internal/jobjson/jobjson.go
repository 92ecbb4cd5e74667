package jobjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

// MaxSize bounds a job file read back: a job's attributes are a few KiB;
// a filter that writes more is broken.
const MaxSize = 1 << 20

// Encode renders job as the document qstat -f -F json prints for it;
// times are written in loc.
func Encode(job proto.Status, server string, now time.Time, loc *time.Location) ([]byte, error) {
	var b bytes.Buffer
	err := display.JobsJSON(&b, []proto.Status{job}, display.Options{ServerName: server, Now: now, Loc: loc})
	return b.Bytes(), err
}

// Key names one attribute value: a plain attribute (Resource "") or one
// resource of a resource list.
type Key struct{ Name, Resource string }

// Job is a decoded job file: its id and every attribute value as text
// (numbers as written, times as Unix seconds, Variable_List encoded as
// the wire carries it).
type Job struct {
	ID    string
	Attrs map[Key]string
	// Top holds the document's members beside "Jobs" (timestamp,
	// pbs_version, pbs_server), compacted: a filter that writes an
	// attribute there has written it outside the job (TopChanges).
	Top map[string]string
}

// TopChanges names the members of b's document beside "Jobs" that a's
// has not, or has with another value, sorted.
func TopChanges(a, b *Job) []string {
	var out []string
	for k, v := range b.Top {
		if old, ok := a.Top[k]; !ok || old != v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Decode reads a job file; times are read in loc.
func Decode(data []byte, loc *time.Location) (*Job, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("job file of %d bytes (at most %d)", len(data), MaxSize)
	}
	var doc map[string]json.RawMessage
	if err := strictUnmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	jobsRaw, ok := doc["Jobs"]
	if !ok {
		return nil, errors.New(`no "Jobs" object`)
	}
	var jobs map[string]json.RawMessage
	if err := strictUnmarshal(jobsRaw, &jobs); err != nil {
		return nil, fmt.Errorf(`"Jobs": %w`, err)
	}
	if len(jobs) != 1 {
		return nil, fmt.Errorf(`"Jobs" holds %d jobs (want exactly one)`, len(jobs))
	}
	j := &Job{Attrs: map[Key]string{}, Top: map[string]string{}}
	for k, raw := range doc {
		if k == "Jobs" {
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
		j.Top[k] = c.String()
	}
	var body json.RawMessage
	for id, raw := range jobs {
		j.ID, body = id, raw
	}
	var attrs map[string]json.RawMessage
	if err := strictUnmarshal(body, &attrs); err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	for name, raw := range attrs {
		if name == "" || strings.ContainsAny(name, ".\x00\n") {
			return nil, fmt.Errorf("bad attribute name %q", name)
		}
		if isObject(raw) {
			var members map[string]json.RawMessage
			if err := strictUnmarshal(raw, &members); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if name == proto.AttrVariableList {
				v, err := variableList(members)
				if err != nil {
					return nil, err
				}
				j.Attrs[Key{Name: name}] = v
				continue
			}
			for r, rawv := range members {
				if r == "" {
					return nil, fmt.Errorf("%s has an empty resource name", name)
				}
				v, err := scalar(rawv)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", name, r, err)
				}
				if v, err = readTime(name, r, v, loc); err != nil {
					return nil, err
				}
				j.Attrs[Key{name, r}] = v
			}
			continue
		}
		if name == proto.AttrVariableList {
			return nil, fmt.Errorf("%s: want an object of variables", name)
		}
		v, err := scalar(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if v, err = readTime(name, "", v, loc); err != nil {
			return nil, err
		}
		j.Attrs[Key{Name: name}] = v
	}
	return j, nil
}

// strictUnmarshal decodes one JSON value with nothing after it.
func strictUnmarshal(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("text after the JSON value")
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// scalar is a string, number or boolean as text; null, arrays and objects
// are refused.
func scalar(raw json.RawMessage) (string, error) {
	var v any
	if err := strictUnmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return "", errors.New("value contains NUL")
		}
		return x, nil
	case json.Number:
		return string(x), nil
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case nil:
		return "", errors.New("null (leave the attribute out to unset it)")
	}
	return "", errors.New("want a string, number or boolean")
}

func variableList(members map[string]json.RawMessage) (string, error) {
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	vars := make([]proto.Var, 0, len(names))
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "=,\x00") {
			return "", fmt.Errorf("Variable_List: bad variable name %q", n)
		}
		v, err := scalar(members[n])
		if err != nil {
			return "", fmt.Errorf("Variable_List.%s: %w", n, err)
		}
		vars = append(vars, proto.Var{Name: n, Value: v})
	}
	return proto.EncodeVariableList(vars), nil
}

// readTime turns a time attribute's ctime string back into Unix seconds.
func readTime(name, resource, v string, loc *time.Location) (string, error) {
	if !display.IsTimeAttr(proto.Attr{Name: name, Resource: resource}) {
		return v, nil
	}
	if name == proto.AttrEstimated && v == "UNKNOWN" {
		return "0", nil
	}
	n, ok := display.ParseTime(v, loc)
	if !ok {
		full := name
		if resource != "" {
			full += "." + resource
		}
		return "", fmt.Errorf("%s = %q is not a time (want the form qstat prints or Unix seconds)", full, v)
	}
	return fmt.Sprint(n), nil
}

// Diff lists what b changes from a: attributes set to a new value (OpSet)
// or left out (OpUnset), sorted by name and resource.
func Diff(a, b *Job) []proto.Attr {
	var out []proto.Attr
	for k, v := range b.Attrs {
		if old, ok := a.Attrs[k]; !ok || old != v {
			out = append(out, proto.Attr{Name: k.Name, Resource: k.Resource, Value: v, Op: proto.OpSet})
		}
	}
	for k := range a.Attrs {
		if _, ok := b.Attrs[k]; !ok {
			out = append(out, proto.Attr{Name: k.Name, Resource: k.Resource, Op: proto.OpUnset})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// Status turns a decoded job back into a status object (attributes in
// name order), for Encode.
func (j *Job) Status() proto.Status {
	keys := make([]Key, 0, len(j.Attrs))
	for k := range j.Attrs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].Name != keys[b].Name {
			return keys[a].Name < keys[b].Name
		}
		return keys[a].Resource < keys[b].Resource
	})
	st := proto.Status{Name: j.ID}
	for _, k := range keys {
		st.Attrs = append(st.Attrs, proto.Attr{Name: k.Name, Resource: k.Resource, Value: j.Attrs[k]})
	}
	return st
}
