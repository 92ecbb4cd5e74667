// Package apischema checks JSON documents against the web API's schema
// (internal/web/api-v1.schema.json), for the tests that keep the API's
// promise: a released field is never removed nor given another meaning.
//
// It implements the part of JSON Schema 2020-12 the file uses: $ref to
// #/$defs/..., allOf, type (a name or a list; "integer" is a number
// without a fraction), properties (a schema or true), additionalProperties
// (false or a schema), required, pattern, enum, minimum and items.
// Keywords it does not know are ignored, as JSON Schema says.
package apischema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Schema is a parsed schema document.
type Schema struct {
	defs map[string]any
	re   map[string]*regexp.Regexp
}

// Parse reads a schema document.
func Parse(doc []byte) (*Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	defs, _ := root["$defs"].(map[string]any)
	if defs == nil {
		return nil, fmt.Errorf("schema: no $defs")
	}
	return &Schema{defs: defs, re: map[string]*regexp.Regexp{}}, nil
}

// Def is the schema of $defs/name, nil if there is none.
func (s *Schema) Def(name string) map[string]any {
	d, _ := s.defs[name].(map[string]any)
	return d
}

// Properties lists the property names $defs/name declares.
func (s *Schema) Properties(name string) []string {
	props, _ := s.Def(name)["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for p := range props {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Result is what Check found: problems, each naming the path of the
// value ("Jobs/1.srv/Resource_List/walltime"), and the fields seen, as
// "def.property" and "def.property.member" for the $defs the document
// went through.
type Result struct {
	Problems []string
	Seen     map[string]bool
}

// Check validates doc against $defs/def.
func (s *Schema) Check(def string, doc []byte) Result {
	r := Result{Seen: map[string]bool{}}
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		r.Problems = append(r.Problems, "not JSON: "+err.Error())
		return r
	}
	s.check(&r, map[string]any{"$ref": "#/$defs/" + def}, v, "", "")
	return r
}

// check validates v against sch at path; def is the innermost $defs
// entry, for Seen.
func (s *Schema) check(r *Result, sch any, v any, path, def string) {
	switch sc := sch.(type) {
	case bool:
		if !sc {
			r.Problems = append(r.Problems, path+": not allowed")
		}
		return
	case map[string]any:
		s.checkObject(r, sc, v, path, def)
	default:
		r.Problems = append(r.Problems, path+": bad schema")
	}
}

func (s *Schema) checkObject(r *Result, sc map[string]any, v any, path, def string) {
	fail := func(format string, args ...any) {
		r.Problems = append(r.Problems, path+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := sc["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		target, ok := s.defs[name]
		if !ok {
			fail("unknown $ref %s", ref)
			return
		}
		if m, ok := target.(map[string]any); ok && m["properties"] != nil {
			def = name
		}
		s.check(r, target, v, path, def)
	}
	if all, ok := sc["allOf"].([]any); ok {
		for _, sub := range all {
			s.check(r, sub, v, path, def)
		}
	}
	if t, ok := sc["type"]; ok && !typeMatches(t, v) {
		fail("%s is not of type %v", brief(v), t)
		return
	}
	if enum, ok := sc["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			fail("%s is not one of %v", brief(v), enum)
		}
	}
	if p, ok := sc["pattern"].(string); ok {
		if str, isStr := v.(string); isStr {
			re := s.re[p]
			if re == nil {
				re = regexp.MustCompile(p)
				s.re[p] = re
			}
			if !re.MatchString(str) {
				fail("%q does not match %s", str, p)
			}
		}
	}
	if m, ok := sc["minimum"].(float64); ok {
		if n, isNum := v.(json.Number); isNum {
			if f, err := n.Float64(); err == nil && f < m {
				fail("%s is below %v", n, m)
			}
		}
	}
	if items, ok := sc["items"]; ok {
		if arr, isArr := v.([]any); isArr {
			for i, e := range arr {
				s.check(r, items, e, fmt.Sprintf("%s/%d", path, i), def)
			}
		}
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return
	}
	props, _ := sc["properties"].(map[string]any)
	required, _ := sc["required"].([]any)
	for _, req := range required {
		if _, ok := obj[fmt.Sprint(req)]; !ok {
			fail("required field %s is missing", req)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, declared := props[k]
		if declared && props != nil {
			if def != "" {
				r.Seen[seenName(def, path, k)] = true
			}
			s.check(r, sub, obj[k], path+"/"+k, def)
			continue
		}
		switch ap := sc["additionalProperties"].(type) {
		case bool:
			if !ap {
				r.Problems = append(r.Problems, path+"/"+k+": field not in the schema (document it, or it is a change of v1)")
			}
		case map[string]any:
			s.check(r, ap, obj[k], path+"/"+k, def)
		}
	}
}

// seenName is def.field for a field of a def's object, with the members
// of a nested object (Resource_List.walltime) as def.field.member.
func seenName(def, path, k string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// The path of a def's own fields ends at the object's key (a job id,
	// a node name); a member is one level deeper, under its field.
	if len(parts) >= 2 {
		if parent := parts[len(parts)-1]; parent != "" && isFieldOf(parts) {
			return def + "." + parent + "." + k
		}
	}
	return def + "." + k
}

// isFieldOf reports whether the last element of parts is a field name
// rather than an object's key: documents nest objects as
// /<Collection>/<key>/<field>/<member>.
func isFieldOf(parts []string) bool { return len(parts) >= 3 }

func typeMatches(t any, v any) bool {
	switch tt := t.(type) {
	case string:
		return typeIs(tt, v)
	case []any:
		for _, x := range tt {
			if name, ok := x.(string); ok && typeIs(name, v) {
				return true
			}
		}
	}
	return false
}

func typeIs(name string, v any) bool {
	switch name {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !strings.ContainsAny(n.String(), ".eE")
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
