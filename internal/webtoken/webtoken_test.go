package webtoken

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripAndLookup(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New()
	if a == b || !strings.HasPrefix(a, Prefix) || len(a) != len(Prefix)+43 {
		t.Fatalf("tokens %q %q", a, b)
	}
	entries := []Entry{{User: "alice", Hash: Hash(a), Created: 1}, {User: "bob", Hash: Hash(b), Created: 2}}
	data := Format(entries)
	if bytes.Contains(data, []byte(a)) {
		t.Fatal("the file holds a token itself, not its hash")
	}
	got, err := Parse(bytes.NewReader(data), "f")
	if err != nil || len(got) != 2 || got[1] != entries[1] {
		t.Fatalf("parse: %v %+v", err, got)
	}
	if u, ok := Lookup(got, b); !ok || u != "bob" {
		t.Fatalf("lookup b: %q %v", u, ok)
	}
	if _, ok := Lookup(got, a+"x"); ok {
		t.Fatal("a changed token was accepted")
	}
}

func TestParseRefusals(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for _, bad := range []string{
		"alice " + h + " 1",
		"alice\t" + h,
		"-rf\t" + h + "\t1",
		"al ice\t" + h + "\t1",
		"alice\t" + h[:62] + "\t1",
		"alice\t" + h + "\t-1",
		"alice\t" + h + "\tnow",
	} {
		if _, err := Parse(strings.NewReader("# c\n\n"+bad+"\n"), "f"); err == nil || !strings.Contains(err.Error(), "f:3") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The server trusts the file only when no one else may read or change it.
func TestLoadChecksTheMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web_tokens")
	if got, err := Load(path); err != nil || got != nil {
		t.Fatalf("missing file: %v %v", got, err)
	}
	tok, _ := New()
	if err := os.WriteFile(path, Format([]Entry{{User: "u", Hash: Hash(tok)}}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("a world-readable file was trusted: %v", err)
	}
	os.Chmod(path, 0o600)
	if got, err := Load(path); err != nil || len(got) != 1 {
		t.Fatalf("mode 0600: %v %v", got, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("alice\t" + strings.Repeat("0f", 32) + "\t12\n# x\n")
	f.Add("\t\t\n")
	f.Fuzz(func(t *testing.T, in string) {
		entries, err := Parse(strings.NewReader(in), "f")
		if err != nil {
			return
		}
		// What parses formats back to the same entries.
		again, err := Parse(bytes.NewReader(Format(entries)), "f")
		if err != nil || len(again) != len(entries) {
			t.Fatalf("round trip: %v %d/%d", err, len(again), len(entries))
		}
		for i := range entries {
			if again[i] != entries[i] || !ValidUser(entries[i].User) {
				t.Fatalf("entry %d: %+v / %+v", i, entries[i], again[i])
			}
		}
	})
}
