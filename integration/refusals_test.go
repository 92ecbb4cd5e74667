package integration

import (
	"strings"
	"testing"

	"gopbs/internal/testcluster"
)

// What the server cannot do yet it refuses, naming it, rather than
// accepting a job that would then quietly not do what was asked (a
// dependent job starting at once, a job without its input files).
func TestUnsupportedRequestsRefused(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	first := c.Submit("#!/bin/sh\n")
	for _, w := range []string{"depend=afterok:" + first} {
		r := c.RunStdin("#!/bin/sh\n", "qsub", "-W", w)
		name, _, _ := strings.Cut(w, "=")
		if r.Code == 0 || !strings.Contains(r.Stderr, name) || !strings.Contains(r.Stderr, "not supported yet") {
			t.Errorf("qsub -W %s: %s", w, r)
		}
	}
	// Staging from or to a host that runs no mom of the cluster (and no mom
	// copies with scp) is refused at once, naming the host; a list that
	// does not parse never leaves qsub.
	for _, w := range []string{"stagein=in.dat@elsewhere:/data/in.dat", "stageout=out.dat@elsewhere:/data/out.dat"} {
		r := c.RunStdin("#!/bin/sh\n", "qsub", "-W", w)
		name, _, _ := strings.Cut(w, "=")
		if r.Code == 0 || !strings.Contains(r.Stderr, name+": host elsewhere runs no pbs_mom") {
			t.Errorf("qsub -W %s: %s", w, r)
		}
	}
	if r := c.RunStdin("#!/bin/sh\n", "qsub", "-W", "stagein=in.dat:/data"); r.Code != 2 || !strings.Contains(r.Stderr, "illegal -W value") {
		t.Errorf("qsub -W stagein without a host: %s", r)
	}
	if r := c.Run("qalter", "-W", "depend=afterany:"+first, first); r.Code == 0 {
		t.Errorf("qalter -W depend accepted: %s", r)
	}
}
