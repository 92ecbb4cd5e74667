package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gopbs/proto"
)

func TestParseJobs(t *testing.T) {
	tests := []struct {
		in    string
		slots []jobSlot
		ids   []string
	}{
		{"", nil, nil},
		{"1.srv/0", []jobSlot{{"1.srv", "0"}}, []string{"1.srv"}},
		{"1.srv/0, 1.srv/1, 2.srv/0", []jobSlot{{"1.srv", "0"}, {"1.srv", "1"}, {"2.srv", "0"}}, []string{"1.srv", "2.srv"}},
		{"3[1].srv/2,,  4.srv ", []jobSlot{{"3[1].srv", "2"}, {"4.srv", ""}}, []string{"3[1].srv", "4.srv"}},
		{"/0, x/, a/b/c", []jobSlot{{"x", ""}, {"a/b", "c"}}, []string{"x", "a/b"}},
		{"2.srv/0, 1.srv/1, 2.srv/2", []jobSlot{{"2.srv", "0"}, {"1.srv", "1"}, {"2.srv", "2"}}, []string{"2.srv", "1.srv"}},
	}
	for _, tt := range tests {
		if got := parseJobs(tt.in); !reflect.DeepEqual(got, tt.slots) {
			t.Errorf("parseJobs(%q) = %+v, want %+v", tt.in, got, tt.slots)
		}
		if got := jobIDs(tt.in); !reflect.DeepEqual(got, tt.ids) {
			t.Errorf("jobIDs(%q) = %q, want %q", tt.in, got, tt.ids)
		}
	}
}

func TestStates(t *testing.T) {
	if got := torqueState("offline,job-busy"); got != "offline,job-exclusive" {
		t.Errorf("torqueState = %q", got)
	}
	if got := torqueState(" free , "); got != "free" {
		t.Errorf("torqueState blanks = %q", got)
	}
	tests := []struct {
		filter, state string
		want          bool
	}{
		{"", "free", false}, {"", "job-busy", false}, {"", "busy", false},
		{"", "offline", true}, {"", "down", true}, {"", "state-unknown,down", true},
		{"", "offline_by_mom", true}, {"", "unresolvable", true},
		{"free", "free", true}, {"free", "offline,free", true}, {"free", "job-busy", false},
		{"down", "state-unknown", true}, {"down", "offline", false},
		{"offline", "offline,down", true}, {"offline", "down", false},
		{"job-exclusive", "job-busy", true}, {"active", "job-busy", true}, {"active", "busy", true},
		{"active", "free", false}, {"up", "free", true}, {"up", "offline", false},
		{"all", "", true}, {"reserve", "resv-exclusive", true}, {"busy", "job-busy", false},
	}
	for _, tt := range tests {
		if got := stateMatches(tt.filter, tt.state); got != tt.want {
			t.Errorf("stateMatches(%q, %q) = %v", tt.filter, tt.state, got)
		}
	}
	for _, k := range []string{"free", "ALL", "Up", "job-exclusive", "state-unknown"} {
		if !stateKeyword(k) {
			t.Errorf("%q is a keyword", k)
		}
	}
	for _, k := range []string{"n1", "job-busy", "", "offline,down"} {
		if stateKeyword(k) {
			t.Errorf("%q is not a keyword", k)
		}
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0kb", 999: "999kb", 1000: "1mb", 1536: "2mb", 24684096: "24gb", 8388608: "8gb",
		1 << 50: "1024pb", 3 << 40: "3pb",
	} {
		if got := shortSize(in); got != want {
			t.Errorf("shortSize(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]int64{"24684096kb": 24684096, "2gb": 2 << 20, "1b": 1, "1025b": 2, "0kb": 0, "1GB": 1 << 20} {
		if got, ok := sizeKB(in); !ok || got != want {
			t.Errorf("sizeKB(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "lots", "-1kb", "1xb"} {
		if _, ok := sizeKB(in); ok {
			t.Errorf("sizeKB(%q) accepted", in)
		}
	}
}

func TestPlainInt(t *testing.T) {
	for v, want := range map[string]bool{
		"0": true, "15002": true, "-3": true, "9223372036854775807": true,
		"": false, "-": false, "007": false, "1.5": false, "0.22": false, "1e3": false, "2gb": false,
		" 1": false, "+1": false, "9223372036854775808": false, "True": false,
	} {
		if got := plainInt(v); got != want {
			t.Errorf("plainInt(%q) = %v", v, got)
		}
	}
}

// The jobs parser never yields an empty id or one with blanks around it,
// and the distinct ids keep their first-seen order.
func FuzzParseJobs(f *testing.F) {
	for _, s := range []string{"", "1.srv/0, 1.srv/1", "/,/,/", "a/b/c,,d", " x / 1 ", "\x00/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		slots := parseJobs(v)
		for _, js := range slots {
			if js.id == "" || js.id != strings.TrimSpace(js.id) || strings.Contains(js.id, ",") || strings.Contains(js.slot, "/") {
				t.Fatalf("parseJobs(%q) gave %+v", v, js)
			}
		}
		ids := jobIDs(v)
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("jobIDs(%q) repeats %q", v, id)
			}
			seen[id] = true
		}
		if len(slots) > 0 && ids[0] != slots[0].id {
			t.Fatalf("jobIDs(%q) lost the first id", v)
		}
	})
}

// Whatever a node's name and values hold, every JSON output parses, keeps
// a valid-UTF-8 comment exactly, and every text output keeps one line per
// attribute.
func FuzzNodeOutputs(f *testing.F) {
	f.Add("n1", "free", "a \"note\"\n", "1.srv/0, 2.srv/1", "24684096kb", "2")
	f.Add("", "", "", "", "", "")
	f.Add("n\x00", "offline,\xff", "\u2028</x>&", ",,/", "-5kb", "007")
	f.Fuzz(func(t *testing.T, name, state, comment, jobs, mem, ncpus string) {
		s := proto.Status{Name: name, Attrs: []proto.Attr{
			attr("state", "", state), attr("jobs", "", jobs), attr("comment", "", comment),
			attr("resources_available", "mem", mem), attr("resources_available", "ncpus", ncpus),
			attr("resources_assigned", "ncpus", ncpus), attr("last_state_change_time", "", ncpus),
		}}
		fm := &formatter{server: "srv"}
		for _, jobView := range []bool{false, true} {
			var b strings.Builder
			var err error
			if jobView {
				err = fm.summaryJSON(&b, jsonHeader(time.Unix(0, 0), "srv"), []proto.Status{s}, true)
			} else {
				err = fm.nodesJSON(&b, jsonHeader(time.Unix(0, 0), "srv"), []proto.Status{s})
			}
			if err != nil {
				t.Fatal(err)
			}
			var doc struct{ Nodes map[string]map[string]any }
			if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
				t.Fatalf("invalid JSON: %v\n%s", err, b.String())
			}
			if len(doc.Nodes) != 1 {
				t.Fatalf("nodes %v", doc.Nodes)
			}
			if !jobView && utf8.ValidString(comment) && !strings.ContainsAny(comment, "\u2028\u2029") {
				for _, n := range doc.Nodes {
					if n["comment"] != comment && !plainInt(comment) {
						t.Fatalf("comment %q came back as %#v", comment, n["comment"])
					}
				}
			}
		}
		var b strings.Builder
		if err := fm.full(&b, []proto.Status{s}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(b.String(), "\n"); got != len(s.Attrs)+2 {
			t.Fatalf("-a printed %d lines for %d attributes:\n%s", got, len(s.Attrs), b.String())
		}
		b.Reset()
		if err := fm.summaryTable(&b, []proto.Status{s}, true); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(b.String(), "\n"); got != 4 {
			t.Fatalf("-Sj printed %d lines:\n%s", got, b.String())
		}
		if line := fm.markedLine(name, state, comment); strings.Count(line, "\n") != 1 {
			t.Fatalf("-l line %q", line)
		}
	})
}
