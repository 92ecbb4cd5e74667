package integration

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// TestBuildLinking checks the binaries scripts/build.sh makes (the ones
// every other test runs): the commands are static (no cgo: they start in
// half the time), pbs_server and pbs_mom link the C library, whose user
// lookup goes through NSS.
func TestBuildLinking(t *testing.T) {
	t.Parallel()
	bin := testcluster.Build(t)
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	dynamic := map[string]bool{"pbs_server": true, "pbs_mom": true, "pbs_sched": true, "swf_sched": true, "site_ranking": true}
	seen := 0
	for _, e := range entries {
		f, err := elf.Open(filepath.Join(bin, e.Name()))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		interp := false
		for _, p := range f.Progs {
			interp = interp || p.Type == elf.PT_INTERP
		}
		f.Close()
		if interp != dynamic[e.Name()] {
			t.Errorf("%s: dynamically linked = %v, want %v", e.Name(), interp, dynamic[e.Name()])
		}
		if e.Name() == "qsub" || e.Name() == "qstat" {
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("qsub and qstat not among the binaries of %s", bin)
	}
}
