package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// mom_priv/config directives of OpenPBS and Torque moms that act here:
// $usecp (files of a host and prefix are local files: staged with a local
// copy, output written there), $tmpdir (where TMPDIR is made), $wallmult
// (this host's wall seconds count double, in resources_used.walltime and
// against the limit); $enforce is refused at start.
func TestMomConfigDirectivesAct(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	src, dst, tmp, work := filepath.Join(dir, "src"), filepath.Join(dir, "dst"), filepath.Join(dir, "tmp"), filepath.Join(dir, "work")
	for _, d := range []string{src, dst, tmp, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "in.dat"), []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	conf := "$usecp fileserver.example.org:" + src + " " + dst + "\n$tmpdir " + tmp + "\n$wallmult 2\n"
	c.AddMom("n1", testcluster.MomOptions{Config: conf})

	// fileserver runs no mom: the server takes the lists because n1 names
	// it in $usecp, and n1 copies locally.
	id := c.Submit("#!/bin/sh\ncat in.dat\necho \"tmpdir=$TMPDIR\"\ncp in.dat out.dat\nsleep 2\n",
		"-d", work, "-o", "fileserver.example.org:"+src+"/job.out", "-j", "oe",
		"-W", "stagein=in.dat@fileserver.example.org:"+src+"/in.dat",
		"-W", "stageout=out.dat@fileserver.example.org:"+src+"/out.dat")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 30*time.Second)
	if got := attr(t, c, id, "Exit_status"); got != "0" {
		t.Fatalf("Exit_status %s; comment %q", got, attr(t, c, id, "comment"))
	}
	out := readFile(t, filepath.Join(dst, "job.out"))
	jobTmp := regexp.MustCompile(`tmpdir=(` + regexp.QuoteMeta(tmp+"/pbs."+id+".") + `[a-z2-7]{12})\n`).FindStringSubmatch(out)
	if !strings.Contains(out, "input\n") || jobTmp == nil {
		t.Fatalf("job output (written through $usecp), want a TMPDIR pbs.%s.<random> in $tmpdir:\n%s", id, out)
	}
	if got := readFile(t, filepath.Join(dst, "out.dat")); got != "input\n" {
		t.Errorf("staged out through $usecp: %q", got)
	}
	// The job's TMPDIR is gone once its end is reported: emptied and kept
	// by the mom, under a name of its own, for the next job.
	waitFor(t, "the job's TMPDIR to go", 10*time.Second, func() bool {
		_, err := os.Lstat(jobTmp[1])
		return os.IsNotExist(err)
	})
	spares, _ := filepath.Glob(filepath.Join(tmp, ".pbs_spare.n1.*"))
	if len(spares) != 1 {
		t.Errorf("spare TMPDIRs in $tmpdir: %q, want the job's", spares)
	}
	for _, sp := range spares {
		fi, err := os.Lstat(sp)
		ents, _ := os.ReadDir(sp)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || len(ents) != 0 {
			t.Errorf("spare TMPDIR %s: %v %v, holding %d entries", sp, fi.Mode(), err, len(ents))
		}
	}
	for _, p := range []string{filepath.Join(src, "job.out"), filepath.Join(src, "out.dat")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written under the remote prefix itself", p)
		}
	}
	// sleep 2 counted twice.
	if got := attr(t, c, id, "resources_used.walltime"); got < "00:00:04" || got > "00:00:07" {
		t.Errorf("resources_used.walltime %s with $wallmult 2, want about 00:00:04", got)
	}
	// A walltime of 3 is reached after 1.5 seconds here.
	start := time.Now()
	wall := c.Submit("#!/bin/sh\nsleep 30\n", "-l", "walltime=3")
	c.MustRun("qrun", wall)
	c.WaitJobState(wall, "F", 30*time.Second)
	if got := attr(t, c, wall, "Exit_status"); got != "-29" || time.Since(start) > 20*time.Second {
		t.Errorf("walltime job: Exit_status %s after %v", got, time.Since(start))
	}
	if got := attr(t, c, wall, "comment"); !strings.Contains(got, "walltime 3 exceeded limit 3") {
		t.Errorf("walltime job comment %q", got)
	}

	// A host nobody names is still refused at qsub.
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-W", "stagein=x@nowhere:"+src+"/x"); r.Code == 0 || !strings.Contains(r.Stderr, "no mom names it in $usecp") {
		t.Errorf("qsub naming an unknown host: %s", r)
	}

	// $enforce would leave limits unenforced: the mom refuses to start.
	bad := c.AddMomNoWait("n2", testcluster.MomOptions{Config: "$enforce mem\n"})
	if code := bad.WaitExit(20 * time.Second); code == 0 || !strings.Contains(bad.Log(), "$enforce is not supported") {
		t.Errorf("mom with $enforce: exit %d, log:\n%s", code, bad.Log())
	}
}
