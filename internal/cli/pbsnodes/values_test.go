package pbsnodes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

func TestStates(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
				err = fm.summaryJSON(&b, display.NodesHeader(time.Unix(0, 0), "srv"), []proto.Status{s}, true)
			} else {
				err = display.NodesJSON(&b, display.NodesHeader(time.Unix(0, 0), "srv"), []proto.Status{s})
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
					if n["comment"] != comment && !display.PlainInt(comment) {
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
