package integration

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Every command answers --help with its usage on stdout and exit 0, and a
// bad option with its usage on stderr and exit 2 (qmgr and printjob: 1,
// OpenPBS's status for a command line they cannot parse).
func TestCommandsHelp(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	for _, cmd := range []string{"qsub", "qstat", "qmgr", "qalter", "qdel", "qhold", "qrls", "qselect",
		"qrun", "qrerun", "qmove", "qsig", "pbsnodes", "pbsfs", "tracejob", "qterm", "pbs_simulate", "pbsdsh", "qwait", "qwatch", "pbs_webtoken", "pbs_rsub", "pbs_rstat", "pbs_rdel", "pbs_ralter", "qorder", "printjob", "pbs_setup", "qacct"} {
		r := c.Run(cmd, "--help")
		if r.Code != 0 || !isUsage(r.Stdout, cmd) || r.Stderr != "" {
			t.Errorf("%s --help: %s", cmd, r)
		}
		bad := c.Run(cmd, "-@", "1")
		want := 2
		if cmd == "qmgr" || cmd == "printjob" {
			want = 1 // OpenPBS's printjob exits 1 after its usage too
		}
		if bad.Code != want || !isUsage(bad.Stderr, cmd) {
			t.Errorf("%s -@: want exit %d and the usage on stderr: %s", cmd, want, bad)
		}
	}
	// Without an -h of their own, -h is help too.
	for _, cmd := range []string{"qstat", "qrun", "qdel", "pbsnodes", "tracejob", "qwait", "qwatch"} {
		if r := c.Run(cmd, "-h"); r.Code != 0 || !isUsage(r.Stdout, cmd) {
			t.Errorf("%s -h: %s", cmd, r)
		}
	}
}

// isUsage reports whether text is a usage message of cmd ("usage: cmd
// ..." or, as qstat's, "usage:" then lines of cmd's forms).
func isUsage(text, cmd string) bool {
	low := strings.ToLower(text)
	i := strings.Index(low, "usage:")
	return i >= 0 && strings.Contains(low[i:], cmd+" ")
}
