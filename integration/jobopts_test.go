package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Job options that used to be stored and shown without effect now act:
// -W umask (the job's umask and its output files' modes), Torque's -F
// (the script's arguments), -R (output removed after a job that exits 0)
// and -W block=true (qsub waits and exits with the job's exit status);
// what cannot be honoured is refused at qsub and qalter, naming it.
func TestJobOptionsAct(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	out := func(name, id string) string { return filepath.Join(c.Home, name+".o"+strings.SplitN(id, ".", 2)[0]) }
	errf := func(name, id string) string { return filepath.Join(c.Home, name+".e"+strings.SplitN(id, ".", 2)[0]) }
	run := func(id string) {
		t.Helper()
		c.MustRun("qrun", id)
		c.WaitJobState(id, "F", 20*time.Second)
	}

	t.Run("umask", func(t *testing.T) {
		id := c.Submit("#!/bin/sh\numask\n", "-N", "um", "-W", "umask=077")
		if got := attr(t, c, id, "umask"); got != "077" {
			t.Errorf("qstat -f umask = %q, want 077", got)
		}
		run(id)
		if got := readFile(t, out("um", id)); got != "0077\n" {
			t.Errorf("the job's umask printed %q, want 0077", got)
		}
		for _, p := range []string{out("um", id), errf("um", id)} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v (%v), want 0600 under umask 077", p, st.Mode().Perm(), err)
			}
		}
		// Without -W umask the mom's own applies, as before.
		plain := c.Submit("#!/bin/sh\ntrue\n", "-N", "plain")
		run(plain)
		if st, err := os.Stat(out("plain", plain)); err != nil || st.Mode().Perm()&0o044 == 0 {
			t.Errorf("output without -W umask: mode %v (%v)", st.Mode().Perm(), err)
		}
	})

	t.Run("job arguments", func(t *testing.T) {
		torque := append(c.Env(), "PBS_PERSONALITY=torque")
		r := c.RunEnvAs(torque, nil, "#!/bin/sh\necho \"$#:$1:$2\"\n", "qsub", "-N", "args", "-F", "first second=2")
		if r.Code != 0 {
			t.Fatalf("qsub -F: %s", r)
		}
		id := strings.TrimSpace(r.Stdout)
		run(id)
		if got := readFile(t, out("args", id)); got != "2:first:second=2\n" {
			t.Errorf("script arguments printed %q", got)
		}
	})

	t.Run("remove files", func(t *testing.T) {
		ok := c.Submit("#!/bin/sh\necho out\necho err >&2\n", "-N", "rmok", "-R", "o")
		failed := c.Submit("#!/bin/sh\necho out\nexit 1\n", "-N", "rmfail", "-R", "oe")
		run(ok)
		run(failed)
		if _, err := os.Stat(out("rmok", ok)); !os.IsNotExist(err) {
			t.Errorf("-R o after exit 0: output file still there (%v)", err)
		}
		if got := readFile(t, errf("rmok", ok)); got != "err\n" {
			t.Errorf("-R o kept the error file with %q, want err", got)
		}
		if got := readFile(t, out("rmfail", failed)); got != "out\n" {
			t.Errorf("-R oe after exit 1: output %q, want it kept", got)
		}
	})

	t.Run("block", func(t *testing.T) {
		done := make(chan testcluster.Result, 1)
		go func() { done <- c.RunStdin("#!/bin/sh\nexit 3\n", "qsub", "-N", "blk", "-W", "block=true") }()
		// qsub prints the id only when it returns: find the job the
		// server holds and start it.
		var id string
		testcluster.WaitFor(t, "the blocking job on the server", 20*time.Second, func() (bool, string) {
			for _, l := range strings.Fields(c.Run("qselect", "-N", "blk").Stdout) {
				id = l
			}
			return id != "", "none"
		})
		select {
		case r := <-done:
			t.Fatalf("qsub -W block=true returned before the job ran: %s", r)
		default:
		}
		c.MustRun("qrun", id)
		select {
		case r := <-done:
			if r.Code != 3 || strings.TrimSpace(r.Stdout) != id {
				t.Errorf("qsub -W block=true: %s; want exit 3 and the id %s", r, id)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("qsub -W block=true did not return after the job ended")
		}
		if r := c.Run("qalter", "-W", "block=true", id); r.Code == 0 {
			t.Errorf("qalter -W block: %s", r)
		}
	})

	t.Run("refused", func(t *testing.T) {
		torque := append(c.Env(), "PBS_PERSONALITY=torque")
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"-D", "/tmp"}, "init_root_dir"},
			{[]string{"-W", "x=NACCESSPOLICY:SINGLEJOB"}, "x: Moab"},
			{[]string{"-W", "tolerate_node_failures=all"}, "tolerate_node_failures = all"},
			{[]string{"-W", "release_nodes_on_stageout=true"}, "release_nodes_on_stageout = True"},
		} {
			r := c.RunEnvAs(torque, nil, "#!/bin/sh\n", "qsub", tt.args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, tt.want) || !strings.Contains(r.Stderr, "No support") {
				t.Errorf("qsub %v: %s; want a refusal naming %q", tt.args, r, tt.want)
			}
		}
		// The values that say what the system does anyway are accepted.
		id := c.Submit("#!/bin/sh\n", "-W", "tolerate_node_failures=none", "-W", "release_nodes_on_stageout=false")
		if got := attr(t, c, id, "tolerate_node_failures"); got != "none" {
			t.Errorf("tolerate_node_failures = %q", got)
		}
		if r := c.Run("qalter", "-W", "x=FLAGS:ADVRES", id); r.Code == 0 || !strings.Contains(r.Stderr, "x: Moab") {
			t.Errorf("qalter -W x: %s", r)
		}
	})
}
