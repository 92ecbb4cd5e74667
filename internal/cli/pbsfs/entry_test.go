package pbsfs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sched_config"), []byte("fair_share: true all\nhalf_life: 24:00:00\nunknown_shares: 10\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "resource_group"), []byte("physics 10 root 30\nann 11 physics 1\nabe 12 physics 3\nchem 20 root 30\n"), 0o644)
	if err := privdir.WriteUsageFile(dir, &schedpriv.UsageState{Entities: schedpriv.Usage{"ann": 3000, "abe": 1000, "zed": 50}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func pbsfs(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(dir, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestShow(t *testing.T) {
	dir := setup(t)
	tests := []struct {
		args []string
		code int
		want []string // substrings of stdout (or stderr on failure)
	}{
		{nil, 0, []string{"root", "  physics", "    ann", "shares 1  of parent 25.00%  of machine 10.71%  usage 3000", "unknown"}},
		{[]string{"-t"}, 0, []string{"    abe"}},
		{[]string{"-p"}, 0, []string{"entity", "abe                      physics"}},
		{[]string{"-g", "physics"}, 0, []string{"physics (parent root): shares 30", "usage 4000"}},
		// zed is not in the file: under unknown, with one share.
		{[]string{"-g", "zed"}, 0, []string{"zed (parent unknown): shares 1", "usage 50"}},
		{[]string{"-g", "nobody-at-all"}, 1, []string{"no such entity"}},
		{[]string{"-x"}, 2, []string{"usage: pbsfs"}},
		{[]string{"-s", "ann"}, 2, []string{"usage: pbsfs"}},
		{[]string{"-g", "ann", "-p"}, 2, []string{"usage: pbsfs"}},
	}
	for _, tt := range tests {
		code, out, errs := pbsfs(dir, tt.args...)
		text := out
		if code != 0 {
			text = errs
		}
		if code != tt.code {
			t.Errorf("pbsfs %v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("pbsfs %v: no %q in\n%s", tt.args, w, text)
			}
		}
	}
}

func TestChange(t *testing.T) {
	dir := setup(t)
	read := func() schedpriv.Usage {
		st, err := privdir.ReadUsageFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.Entities
	}
	if code, _, errs := pbsfs(dir, "-d"); code != 0 || read()["ann"] != 1500 || read()["zed"] != 25 {
		t.Fatalf("decay: %d %s %v", code, errs, read())
	}
	if code, _, errs := pbsfs(dir, "-s", "abe", "7"); code != 0 || read()["abe"] != 7 {
		t.Fatalf("set: %d %s %v", code, errs, read())
	}
	if code, _, _ := pbsfs(dir, "-s", "abe", "lots"); code != 2 || read()["abe"] != 7 {
		t.Fatalf("bad value accepted: %v", read())
	}
	if code, _, errs := pbsfs(dir, "-r"); code != 0 || len(read()) != 0 {
		t.Fatalf("reset: %d %s %v", code, errs, read())
	}
	// While a scheduler holds the lock, nothing is written.
	unlock, err := privdir.Lock(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// (flock locks belong to an open file: run opens its own, so the lock
	// held here stands for a scheduler's.)
	code, _, errs := pbsfs(dir, "-s", "abe", "9")
	if code != 1 || !strings.Contains(errs, "pbs_sched is running") || read()["abe"] != 0 {
		t.Fatalf("write while locked: %d %q %v", code, errs, read())
	}
	// Reading is fine.
	if code, _, _ := pbsfs(dir, "-t"); code != 0 {
		t.Error("reading refused while locked")
	}
}
