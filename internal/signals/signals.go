// Package signals maps the signal names qsig accepts to numbers, shared by
// the server (which validates them) and the mom (which sends them).
package signals

import (
	"strconv"
	"strings"
	"syscall"
)

// Special names that are not plain signals.
const (
	Suspend = "suspend"
	Resume  = "resume"
	Delete  = "delete" // SIGTERM, then SIGKILL after the kill delay
)

var names = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "ILL": syscall.SIGILL,
	"TRAP": syscall.SIGTRAP, "ABRT": syscall.SIGABRT, "BUS": syscall.SIGBUS, "FPE": syscall.SIGFPE,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "SEGV": syscall.SIGSEGV, "USR2": syscall.SIGUSR2,
	"PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM, "TERM": syscall.SIGTERM, "CHLD": syscall.SIGCHLD,
	"CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP, "TTIN": syscall.SIGTTIN,
	"TTOU": syscall.SIGTTOU, "URG": syscall.SIGURG, "XCPU": syscall.SIGXCPU, "XFSZ": syscall.SIGXFSZ,
	"VTALRM": syscall.SIGVTALRM, "PROF": syscall.SIGPROF, "WINCH": syscall.SIGWINCH, "IO": syscall.SIGIO,
	"PWR": syscall.SIGPWR, "SYS": syscall.SIGSYS,
}

// Parse resolves a qsig argument: a name with or without "SIG" in any
// case, a number from 0 to 64, or suspend/resume/delete (returned in
// special with sig 0).
func Parse(s string) (sig syscall.Signal, special string, ok bool) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case Suspend, Resume, Delete:
		return 0, strings.ToLower(t), true
	}
	if n, err := strconv.Atoi(t); err == nil {
		if n < 0 || n > 64 {
			return 0, "", false
		}
		return syscall.Signal(n), "", true
	}
	u := strings.TrimPrefix(strings.ToUpper(t), "SIG")
	sig, ok = names[u]
	return sig, "", ok
}
