package printjob

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

type fakeServer struct {
	jobs []proto.Status
	reqs []proto.StatusRequest
}

func (f *fakeServer) StatusJobs(r *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	f.reqs = append(f.reqs, *r)
	for _, j := range f.jobs {
		if seq, _, _ := strings.Cut(j.Name, "."); seq == strings.Split(r.IDs[0], ".")[0] {
			return []proto.Status{j}, nil, nil
		}
	}
	return nil, []proto.ObjectError{{Name: r.IDs[0], Code: proto.PBSE_UNKJOBID}}, nil
}
func (f *fakeServer) ServerName() string { return "srv" }
func (f *fakeServer) Close() error       { return nil }

func runPrintjob(uid int, f *fakeServer, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "printjob", Config: &config.Config{Personality: config.PBSPro}, Stdout: &out, Stderr: &errb}
	rc := run(env, args, deps{connect: func() (client, error) { return f, nil }, uid: func() int { return uid }})
	return rc, out.String(), errb.String()
}

func TestPrintjob(t *testing.T) {
	f := &fakeServer{jobs: []proto.Status{{Name: "12.srv", Attrs: []proto.Attr{
		{Name: "Job_Name", Value: "STDIN"}, {Name: "job_state", Value: "F"}, {Name: "substate", Value: "92"},
		{Name: "queue", Value: "workq"}, {Name: "stime", Value: "1704067200"},
		{Name: "Resource_List", Resource: "ncpus", Value: "1"},
	}}}}
	head := "---------------------------------------------------\njobid:\t12.srv\n---------------------------------------------------\n" +
		"state:\t\t0x9\nsubstate:\t0x5c (92)\nstime:\t\t1704067200\nqueue:\t\tworkq\n"
	cases := []struct {
		name         string
		uid          int
		args         []string
		rc           int
		stdout, errs string
	}{
		{"record", 0, []string{"12"}, 0, head + "--attributes--\nJob_Name = STDIN\njob_state = F\nsubstate = 92\nqueue = workq\nstime = 1704067200\nResource_List.ncpus = 1\n\n", ""},
		{"-a: no attributes", 0, []string{"-a", "12.srv"}, 0, head + "\n", ""},
		{"unknown", 0, []string{"13"}, 1, "", "Job 13.srv not found\n"},
		{"not root", 1000, []string{"12"}, 1, "", "printjob must be run by root\n"},
		{"no operand", 0, nil, 1, "", usage},
		{"script", 0, []string{"-s", "12"}, 1, "", "printjob: -s: the job script is kept in the server's store, and no request returns it\n"},
	}
	for _, c := range cases {
		rc, out, errs := runPrintjob(c.uid, f, c.args...)
		if rc != c.rc || out != c.stdout || errs != c.errs {
			t.Errorf("%s: rc %d\nstdout %q\nstderr %q", c.name, rc, out, errs)
		}
	}
	if !f.reqs[0].History {
		t.Error("printjob must ask for finished jobs too")
	}
}
