package acctlog

import (
	"strings"
	"testing"
)

// -j's ids: which records each names.
func TestJobQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id      string
		matches []string
		not     []string
		err     bool
	}{
		{"12", []string{"12.s", "12.t", "12[].s", "12[3].s"}, []string{"120.s", "1.s"}, false},
		{"12.s", []string{"12.s", "12[1].s"}, []string{"12.t"}, false},
		{"12[]", []string{"12[].s", "12[5].s"}, []string{"13[].s"}, false},
		{"12[3].s", []string{"12[3].s"}, []string{"12[4].s", "12[3].t", "12[].s"}, false},
		{"abc", nil, nil, true},
		{"12[3", nil, nil, true},
		{"-1", nil, nil, true},
	}
	for _, tc := range tests {
		q, err := ParseJobQuery(tc.id)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "want a job id") {
				t.Errorf("%q: error %v", tc.id, err)
			}
			continue
		}
		for _, m := range tc.matches {
			if !q.Matches([]byte(m)) {
				t.Errorf("%q does not match %q", tc.id, m)
			}
		}
		for _, m := range tc.not {
			if q.Matches([]byte(m)) {
				t.Errorf("%q matches %q", tc.id, m)
			}
		}
	}
}

// FuzzJobQuery: any id is a query or an error, and a query matches the
// id it was made from when that is a record's id.
func FuzzJobQuery(f *testing.F) {
	for _, s := range []string{"12", "12.s", "12[]", "12[3].srv", "x[", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		q, err := ParseJobQuery(id)
		if err != nil {
			return
		}
		if q.Seq < 0 {
			t.Fatalf("%q: seq %d", id, q.Seq)
		}
		if strings.Contains(id, ".") && !strings.HasSuffix(id, ".") && strings.Count(id, ".") == 1 && !q.Matches([]byte(id)) && q.Index != "[]" && !strings.HasPrefix(id, "+") && !strings.HasPrefix(id, "0") {
			t.Fatalf("%q does not match itself", id)
		}
	})
}
