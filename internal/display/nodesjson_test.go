package display

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseNodeJobs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		slots []NodeJob
		ids   []string
	}{
		{"", nil, nil},
		{"1.srv/0", []NodeJob{{"1.srv", "0"}}, []string{"1.srv"}},
		{"1.srv/0, 1.srv/1, 2.srv/0", []NodeJob{{"1.srv", "0"}, {"1.srv", "1"}, {"2.srv", "0"}}, []string{"1.srv", "2.srv"}},
		{"3[1].srv/2,,  4.srv ", []NodeJob{{"3[1].srv", "2"}, {"4.srv", ""}}, []string{"3[1].srv", "4.srv"}},
		{"/0, x/, a/b/c", []NodeJob{{"x", ""}, {"a/b", "c"}}, []string{"x", "a/b"}},
		{"2.srv/0, 1.srv/1, 2.srv/2", []NodeJob{{"2.srv", "0"}, {"1.srv", "1"}, {"2.srv", "2"}}, []string{"2.srv", "1.srv"}},
	}
	for _, tt := range tests {
		if got := ParseNodeJobs(tt.in); !reflect.DeepEqual(got, tt.slots) {
			t.Errorf("ParseNodeJobs(%q) = %+v, want %+v", tt.in, got, tt.slots)
		}
		if got := NodeJobIDs(tt.in); !reflect.DeepEqual(got, tt.ids) {
			t.Errorf("NodeJobIDs(%q) = %q, want %q", tt.in, got, tt.ids)
		}
	}
}

func TestPlainInt(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		"0": true, "15002": true, "-3": true, "9223372036854775807": true,
		"": false, "-": false, "007": false, "1.5": false, "0.22": false, "1e3": false, "2gb": false,
		" 1": false, "+1": false, "9223372036854775808": false, "True": false,
	} {
		if got := PlainInt(v); got != want {
			t.Errorf("PlainInt(%q) = %v", v, got)
		}
	}
}

// The jobs parser never yields an empty id or one with blanks around it,
// and the distinct ids keep their first-seen order.
func FuzzParseNodeJobs(f *testing.F) {
	for _, s := range []string{"", "1.srv/0, 1.srv/1", "/,/,/", "a/b/c,,d", " x / 1 ", "\x00/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		slots := ParseNodeJobs(v)
		for _, js := range slots {
			if js.ID == "" || js.ID != strings.TrimSpace(js.ID) || strings.Contains(js.ID, ",") || strings.Contains(js.Slot, "/") {
				t.Fatalf("ParseNodeJobs(%q) gave %+v", v, js)
			}
		}
		ids := NodeJobIDs(v)
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("NodeJobIDs(%q) repeats %q", v, id)
			}
			seen[id] = true
		}
		if len(slots) > 0 && ids[0] != slots[0].ID {
			t.Fatalf("NodeJobIDs(%q) lost the first id", v)
		}
	})
}
