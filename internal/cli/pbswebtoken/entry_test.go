package pbswebtoken

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/webtoken"
)

func TestIssueListRevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web_tokens")
	now := func() time.Time { return time.Unix(1700000000, 0) }
	call := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		rc := run(path, args, now, &out, &errb)
		return rc, out.String(), errb.String()
	}
	rc, tok, _ := call("alice")
	tok = strings.TrimSpace(tok)
	if rc != 0 || !strings.HasPrefix(tok, webtoken.Prefix) {
		t.Fatalf("issue: %d %q", rc, tok)
	}
	call("bob")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("file: %v %v", info, err)
	}
	entries, err := webtoken.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := webtoken.Lookup(entries, tok); !ok || u != "alice" {
		t.Fatalf("alice's token: %q %v", u, ok)
	}
	if rc, out, _ := call("-l"); rc != 0 || out != "alice\t2023-11-14T22:13:20Z\nbob\t2023-11-14T22:13:20Z\n" {
		t.Fatalf("list: %d %q", rc, out)
	}
	if rc, _, _ := call("-d", "alice"); rc != 0 {
		t.Fatal("revoke failed")
	}
	entries, _ = webtoken.Load(path)
	if _, ok := webtoken.Lookup(entries, tok); ok || len(entries) != 1 {
		t.Fatalf("after revoking: %+v", entries)
	}
	if rc, _, e := call("-d", "alice"); rc != 1 || !strings.Contains(e, "no token") {
		t.Fatalf("second revoke: %d %q", rc, e)
	}
	for _, bad := range [][]string{{}, {"-l", "x"}, {"a", "b"}, {"-d"}, {"-x"}, {"-rf"}} {
		if rc, _, e := call(bad...); rc != 2 || !strings.Contains(e, "usage:") {
			t.Errorf("%q: %d %q", bad, rc, e)
		}
	}
	if rc, _, e := call("bad user"); rc != 2 || !strings.Contains(e, "not a user name") {
		t.Errorf("bad user: %d %q", rc, e)
	}
}
