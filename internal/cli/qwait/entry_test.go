package qwait

import (
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		history bool
		limited bool
		timeout time.Duration
		ids     int
		bad     bool
	}{
		{args: []string{"12"}, ids: 1},
		{args: []string{"-x", "12", " 13.srv\n"}, history: true, ids: 2},
		{args: []string{"-t", "90", "12[]"}, limited: true, timeout: 90 * time.Second, ids: 1},
		{args: []string{"-t", "1:30", "-x", "12"}, history: true, limited: true, timeout: 90 * time.Second, ids: 1},
		{args: []string{"-t", "0", "12"}, limited: true, ids: 1},
		{args: []string{"-t", "soon", "12"}, bad: true},
		{args: []string{"-t"}, bad: true},
		{args: []string{"-x"}, bad: true},
		{args: []string{"-q", "12"}, bad: true},
	} {
		o, err := parseArgs(tc.args)
		if tc.bad {
			if err == nil {
				t.Errorf("%q accepted: %+v", tc.args, o)
			}
			continue
		}
		if err != nil || o.history != tc.history || o.limited != tc.limited || o.timeout != tc.timeout || len(o.ids) != tc.ids {
			t.Errorf("%q: %+v, %v", tc.args, o, err)
		}
	}
}

func TestShellStatus(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		exit *int
		want int
	}{
		{n(1), 1}, {n(3), 3}, {n(255), 255},
		{n(256 + 9), 9}, // killed by SIGKILL
		{n(271), 15},    // deleted: SIGTERM
		{n(-1), 255},    // could not run
		{n(-29), 227},   // walltime
		{n(512), 1},     // low bits 0, yet a failure
		{nil, 1},        // no exit status
	} {
		if got := shellStatus(tc.exit); got != tc.want {
			t.Errorf("shellStatus(%v) = %d, want %d", tc.exit, got, tc.want)
		}
	}
}
