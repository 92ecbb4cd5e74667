package signals

import (
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		sig     syscall.Signal
		special string
		ok      bool
	}{
		{"SIGTERM", syscall.SIGTERM, "", true}, {"term", syscall.SIGTERM, "", true}, {"KILL", syscall.SIGKILL, "", true},
		{"9", syscall.SIGKILL, "", true}, {"0", 0, "", true}, {"sigusr1", syscall.SIGUSR1, "", true},
		{"suspend", 0, Suspend, true}, {"Resume", 0, Resume, true},
		{"65", 0, "", false}, {"-1", 0, "", false}, {"BOGUS", 0, "", false}, {"", 0, "", false},
	}
	for _, tt := range tests {
		sig, special, ok := Parse(tt.in)
		if sig != tt.sig || special != tt.special || ok != tt.ok {
			t.Errorf("Parse(%q) = %v %q %v", tt.in, sig, special, ok)
		}
	}
}
