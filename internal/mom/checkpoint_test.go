package mom

import (
	"strings"
	"testing"
	"time"
)

func TestParseAction(t *testing.T) {
	t.Parallel()
	a, ok, err := parseAction("checkpoint_abort 60 !/usr/local/sbin/ckpt %jobid %sid")
	if err != nil || !ok || a.Path != "/usr/local/sbin/ckpt" || a.Timeout != time.Minute || strings.Join(a.Args, " ") != "%jobid %sid" {
		t.Fatalf("%+v %v %v", a, ok, err)
	}
	if _, ok, err := parseAction("restart 60 /r"); ok || err != nil {
		t.Errorf("restart: ok %v err %v; want ignored", ok, err)
	}
	for _, bad := range []string{"", "checkpoint_abort", "checkpoint_abort 60", "checkpoint_abort x /c", "checkpoint_abort 0 /c",
		"checkpoint_abort 301 /c", "checkpoint_abort 5 relative/c", "frobnicate 1 /c"} {
		if _, _, err := parseAction(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c, err := ParseMomConfig(strings.NewReader("$action checkpoint_abort 30 /c %jobid\n$action terminate 5 /t\n"))
	if err != nil || c.Checkpoint.Path != "/c" || len(c.Warnings) != 1 {
		t.Fatalf("config %+v %v", c, err)
	}
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"checkpoint_abort 60 !/c %jobid", "restart 1 /r", "checkpoint_abort 300 /a b c", "checkpoint_abort 1 !"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok, err := parseAction(s)
		if err != nil || !ok {
			return
		}
		if !strings.HasPrefix(a.Path, "/") || a.Timeout <= 0 || a.Timeout > maxCheckpointTimeout {
			t.Fatalf("%q gave %+v", s, a)
		}
	})
}
