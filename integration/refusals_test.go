package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// What the server cannot do it refuses, naming it, rather than accepting a
// job that would then quietly not do what was asked (a job without its
// input files).
func TestUnsupportedRequestsRefused(t *testing.T) {
	t.Parallel()
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

// Mail addresses and job names that would reach root as something else
// are refused by qsub, qalter and the server alike (issue 19 items 6 and
// 7): sendmail reads "|prog" as a program and "/path" as a file to write,
// both as the server's user, and a job name starting with '-' reaches
// root's prologue and epilogue as an option. A client that skips qsub
// meets the same refusals at the server.
func TestHostileMailUsersAndJobNamesRefused(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	for _, tt := range []struct {
		args   []string
		script string
		stderr string
	}{
		{[]string{"-M", "|/tmp/prog"}, "", `illegal -M value "|/tmp/prog"`},
		{[]string{"-M", "alice,/tmp/file"}, "", `illegal -M value "alice,/tmp/file": "/tmp/file" is not a mail address`},
		{nil, "#PBS -M :include:/tmp/list\n", `illegal -M value ":include:/tmp/list"`},
		{[]string{"-N", "-rf"}, "", `illegal -N value "-rf"`},
		{[]string{"-N", "1abc"}, "", `illegal -N value "1abc"`},
		// PSI/J writes -N="name": OpenPBS refuses it, and so does qsub.
		{nil, "#PBS -N=\"psij\"\n", `illegal -N value "=psij"`},
	} {
		r := c.RunStdin("#!/bin/sh\n"+tt.script+"true\n", "qsub", tt.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.stderr) || r.Stdout != "" {
			t.Errorf("qsub %q with %q: %s", tt.args, tt.script, r)
		}
	}
	id := c.Submit("#!/bin/sh\ntrue\n", "-N", "fine")
	for _, args := range [][]string{{"-M", "|/tmp/prog"}, {"-N", "-rf"}} {
		if r := c.Run("qalter", append(args, id)...); r.Code == 0 || !strings.Contains(r.Stderr, "illegal "+args[0]+" value") {
			t.Errorf("qalter %q: %s", args, r)
		}
	}

	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(c.Home, "pbs_server.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	script := []byte("#!/bin/sh\ntrue\n")
	for _, a := range []proto.Attr{
		{Name: proto.AttrMailUsers, Value: "|/tmp/prog"},
		{Name: proto.AttrMailUsers, Value: "alice@h,/tmp/file"},
		{Name: proto.AttrMailUsers, Value: `"|/bin/sh -c id"`},
		{Name: proto.AttrJobName, Value: "-rf"},
		{Name: proto.AttrJobName, Value: "=name"},
		{Name: proto.AttrJobName, Value: "a b"},
	} {
		if got, err := cl.Submit(&proto.SubmitRequest{Attrs: []proto.Attr{a}, Script: script}); proto.CodeOf(err) != proto.PBSE_BADATVAL {
			t.Errorf("submit with %s = %q: job %q, error %v; want %s", a.Name, a.Value, got, err, proto.PBSE_BADATVAL.Message())
		}
	}
	// A script's file name may start with a digit (as OpenPBS), an
	// alteration may not.
	if _, err := cl.Submit(&proto.SubmitRequest{Attrs: []proto.Attr{{Name: proto.AttrJobName, Value: "1run.sh"}}, Script: script}); err != nil {
		t.Errorf("submit named 1run.sh: %v", err)
	}
	for _, a := range []proto.Attr{
		{Name: proto.AttrMailUsers, Value: "/tmp/file"},
		{Name: proto.AttrJobName, Value: "-rf"},
		{Name: proto.AttrJobName, Value: "1abc"},
	} {
		if err := cl.AlterJob(id, []proto.Attr{a}); proto.CodeOf(err) != proto.PBSE_BADATVAL {
			t.Errorf("alter %s = %q: %v; want %s", a.Name, a.Value, err, proto.PBSE_BADATVAL.Message())
		}
	}
	if name, _ := c.JobAttr(id, proto.AttrJobName); name != "fine" {
		t.Errorf("Job_Name %q after refused alterations", name)
	}
	if users, ok := c.JobAttr(id, proto.AttrMailUsers); ok {
		t.Errorf("Mail_Users %q after refused alterations", users)
	}
}
