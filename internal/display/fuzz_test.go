package display

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gopbs/gopbs/proto"
)

// fuzzJob builds a job whose id, attribute names and values all come from
// the fuzzer, including a resource list and a Variable_List.
func fuzzJob(id, name, res, value string) proto.Status {
	return proto.Status{Name: id, Attrs: []proto.Attr{
		{Name: "Job_Name", Value: value},
		{Name: name, Value: value},
		{Name: "Resource_List", Resource: res, Value: value},
		{Name: "Resource_List", Resource: "ncpus", Value: value},
		{Name: name, Resource: res, Value: value},
		{Name: "Variable_List", Value: value},
		{Name: "ctime", Value: value},
		{Name: "Exit_status", Value: value},
	}}
}

func fuzzSeeds() [][4]string {
	return [][4]string{
		{"1.srv", "comment", "mem", "plain"},
		{"2\".srv", "we\"ird", "a\\b", "q\"uote\\back\nnl\x00\x1f\x7f"},
		{"\xff", "\xfe", "", "\xc3\x28,A=\\,B\\"},
		{"", "", "x y", "1e999"},
		{"3", "<x>", "&", "]]><!--"},
		{"4", "Variable_List", "ncpus", "A=1,B=0123,C=-0.5e3"},
		{"5", "a", "b", "\u2028\u2029\ufffd\U0010FFFF\ud7ff"},
	}
}

func FuzzJobsJSON(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, id, name, res, value string) {
		var b bytes.Buffer
		if err := JobsJSON(&b, []proto.Status{fuzzJob(id, name, res, value)}, pro()); err != nil {
			t.Fatal(err)
		}
		out := b.Bytes()
		if !utf8.Valid(out) {
			t.Fatalf("output is not UTF-8: %q", out)
		}
		var doc struct {
			Jobs map[string]any
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("invalid JSON (%v):\n%s", err, out)
		}
		if doc.Jobs == nil {
			t.Fatalf("no Jobs object:\n%s", out)
		}
	})
}

func FuzzJobsXML(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, id, name, res, value string) {
		var b bytes.Buffer
		if err := JobsXML(&b, []proto.Status{fuzzJob(id, name, res, value)}, torque()); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		ls := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(ls) != 2 {
			t.Fatalf("want 2 lines, got %d:\n%s", len(ls), out)
		}
		if err := allTokens(out); err != nil {
			t.Fatalf("XML does not parse (%v):\n%s", err, out)
		}
		data := decodeXML(t, out)
		if len(data.Children) != 1 || data.Children[0].Children[0].XMLName.Local != "Job_Id" {
			t.Fatalf("want one <Job> starting with <Job_Id>:\n%s", out)
		}
		if utf8.ValidString(id) && !strings.ContainsFunc(id, func(r rune) bool { return !xmlChar(r) || r == '\r' }) {
			if got := data.Children[0].Children[0].Text; got != id {
				t.Fatalf("Job_Id = %q, want %q", got, id)
			}
		}
	})
}

// FuzzAttrLine checks the properties clients build on: continuation lines
// start with a TAB, nothing else breaks a line, and joining the lines back
// gives the value.
func FuzzAttrLine(f *testing.F) {
	f.Add("Variable_List", longVars, 78, false)
	f.Add("comment", strings.Repeat("x", 200), 77, false)
	f.Add("c", ",,,"+strings.Repeat("é,", 60), 78, false)
	f.Add("n", "a\nb\tc\x00", 78, true)
	f.Add(strings.Repeat("long_name", 12), "v,w", 78, false)
	f.Fuzz(func(t *testing.T, name, value string, limit int, oneLine bool) {
		if limit < 10 || limit > 400 {
			limit = 78
		}
		out := AttrLine(name, value, limit, oneLine)
		if !strings.HasPrefix(out, "    ") || !strings.HasSuffix(out, "\n") {
			t.Fatalf("bad frame: %q", out)
		}
		body := strings.TrimSuffix(out, "\n")
		if strings.Contains(strings.ReplaceAll(body, "\n\t", ""), "\n") {
			t.Fatalf("a line break not followed by a TAB: %q", out)
		}
		if oneLine && strings.Contains(body, "\n") {
			t.Fatalf("one-line output wrapped: %q", out)
		}
		if want := "    " + printable(name) + " = " + printable(value); strings.ReplaceAll(body, "\n\t", "") != want {
			t.Fatalf("joined lines %q, want %q", strings.ReplaceAll(body, "\n\t", ""), want)
		}
		for _, l := range strings.Split(body, "\n") {
			if l == "\t" {
				t.Fatalf("a line holding only a TAB: %q", out)
			}
		}
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
	})
}

// FuzzTables checks that the blank-separated tables keep their columns
// whatever the values hold.
func FuzzTables(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s[0], s[3], s[3], s[1])
	}
	f.Fuzz(func(t *testing.T, id, name, owner, state string) {
		j := proto.Status{Name: id, Attrs: []proto.Attr{
			{Name: "Job_Name", Value: name}, {Name: "Job_Owner", Value: owner},
			{Name: "job_state", Value: state}, {Name: "queue", Value: name},
			{Name: "resources_used", Resource: "cput", Value: owner},
		}}
		for _, o := range []Options{pro(), torque()} {
			var b bytes.Buffer
			if err := JobTable(&b, []proto.Status{j}, o); err != nil {
				t.Fatal(err)
			}
			rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(rows) != 3 {
				t.Fatalf("%s: want header and one row, got %q", o.Personality, b.String())
			}
			if n := len(strings.Fields(rows[2])); n != 6 {
				t.Fatalf("%s: row %q has %d fields", o.Personality, rows[2], n)
			}
			b.Reset()
			if err := AltJobTable(&b, []proto.Status{j}, o); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(b.String(), "\n"); n != 6 {
				t.Fatalf("%s: alternate format has %d lines:\n%s", o.Personality, n, b.String())
			}
		}
	})
}
