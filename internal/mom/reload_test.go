package mom

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// TestReload: SIGHUP's reload applies a changed mom_priv/config, refuses
// a broken one naming the line (keeping what is in force), and keeps the
// settings only a start applies, saying which.
func TestReload(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	key := filepath.Join(home, "cluster.key")
	if _, err := proto.LoadOrCreateKey(key); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(home, "mom_priv", "config")
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	write("$ideal_load 2\n$max_load 4\nlicense 3\n$tmpdir " + tmp + "\n")
	m, err := New(Config{Home: home, NodeName: "n1", KeyFile: key})
	if err != nil {
		t.Fatal(err)
	}
	if m.mc().IdealLoad != 2 {
		t.Fatalf("ideal load %v at start", m.mc().IdealLoad)
	}

	write("$ideal_load 3\n$max_load oops\n")
	if _, err := m.Reload(); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken file: %v, want a refusal naming line 2", err)
	}
	if m.mc().IdealLoad != 2 || m.mc().MaxLoad != 4 {
		t.Errorf("after a refused reload: ideal %v max %v, want 2 and 4 kept", m.mc().IdealLoad, m.mc().MaxLoad)
	}

	write("$ideal_load 3\n$max_load 5\nlicense 7\n$tmpdir " + t.TempDir() + "\n")
	changed, err := m.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if m.mc().IdealLoad != 3 || m.mc().MaxLoad != 5 || m.live.Load().resources["license"] != "7" {
		t.Errorf("after the reload: ideal %v max %v license %q", m.mc().IdealLoad, m.mc().MaxLoad, m.live.Load().resources["license"])
	}
	if m.mc().TmpDir != tmp {
		t.Errorf("$tmpdir %q after a reload, want %q kept until a restart", m.mc().TmpDir, tmp)
	}
	for _, want := range []string{"$ideal_load", "$max_load", "resources"} {
		if !slices.Contains(changed, want) {
			t.Errorf("changed %v lacks %s", changed, want)
		}
	}
}
