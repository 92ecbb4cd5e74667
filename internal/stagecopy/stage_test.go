package stagecopy

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
)

// scp gets its operands after "--" and never through a shell.
func TestScpArgs(t *testing.T) {
	got := scpArgs("n9:/data/in.dat", "/work/-in", time.Minute)
	want := []string{"-B", "-q", "-p", "-o", "BatchMode=yes", "-o", "ConnectTimeout=60", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "--", "n9:/data/in.dat", "/work/-in"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q", got)
	}
	s := &Stager{Cfg: Config{Rcp: "/nonexistent/scp"}, Usr: &asuser.Account{Name: "x", Home: "/"}}
	if err := s.scp("n9:/data/a b", "/tmp/x"); err == nil || !strings.Contains(err.Error(), "remote shell") {
		t.Fatalf("a remote path with a blank: %v", err)
	}
}
