package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test SECURITY.md names as the check of a promise exists: a
// promise whose test was renamed or removed would otherwise go on being
// claimed as checked.
func TestSecurityNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("../../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]*)\(`)
	err = filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcRE.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(?:[a-z]+\\.)?((?:Test|Fuzz)[A-Za-z0-9_]*)(?:/[^`]*)?`").FindAllSubmatch(doc, -1)
	if len(named) < 20 {
		t.Fatalf("SECURITY.md names %d tests: the pattern missed them", len(named))
	}
	for _, m := range named {
		if !defined[string(m[1])] {
			t.Errorf("SECURITY.md names %s, which no test file defines", m[1])
		}
	}
}
