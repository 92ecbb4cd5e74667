package integration

import (
	"strings"
	"testing"

	"gopbs/internal/testcluster"
)

// What the server cannot do it refuses, naming it, rather than accepting a
// job that would then quietly not do what was asked (a job without its
// input files).
func TestUnsupportedRequestsRefused(t *testing.T) {
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
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
}
