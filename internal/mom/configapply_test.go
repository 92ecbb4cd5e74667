package mom

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/proto"
)

// TestMomConfigDirectives: the OpenPBS and Torque directives this mom
// acts on, the ones it refuses, and the ones it ignores saying why.
func TestMomConfigDirectives(t *testing.T) {
	t.Parallel()
	c, err := ParseMomConfig(strings.NewReader("$usecp head:/home /nfs/home\n$usecp *.example.org:/data /mnt/data\n$tmpdir /scratch/\n$cputmult 1.5\n$wallmult 2\n$pbsserver head\n$clienthost head\n$prologalarm 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []stage.CpRule{{Host: "head", From: "/home", To: "/nfs/home"}, {Host: "*.example.org", From: "/data", To: "/mnt/data"}}
	if !reflect.DeepEqual(c.UseCp, want) || c.TmpDir != "/scratch" || c.CputMult != 1.5 || c.WallMult != 2 || !reflect.DeepEqual(c.PBSServer, []string{"head"}) || c.PrologAlarm != 5*time.Second {
		t.Fatalf("got %+v", c)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "$clienthost is ignored: every peer of this mom needs the cluster key") {
		t.Errorf("warnings %q", c.Warnings)
	}
	if d := DefaultMomConfig(); d.CputMult != 1 || d.WallMult != 1 {
		t.Errorf("defaults %+v", d)
	}
	for in, want := range map[string]string{
		"$enforce mem\n":          "$enforce is not supported: only walltime is enforced",
		"$usecp head:/home\n":     "want host:/from /to",
		"$tmpdir scratch\n":       "not an absolute path",
		"$wallmult 0\n":           "not a factor above 0",
		"$cputmult fast\n":        "not a factor above 0",
		"$cputmult NaN\n":         "not a factor above 0",
		"\n$usecp h:/a b\n":       "line 2",
		"$prologalarm 30\n$x 1\n": "unknown directive $x",
		"$prologalarm 0\n":        "not a number of seconds from 1 to 86400",
		"$prologalarm 1m\n":       "not a number of seconds from 1 to 86400",
	} {
		if _, err := ParseMomConfig(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
}

func TestCheckMomConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		c    MomConfig
		addr string
		err  string
	}{
		{MomConfig{PBSServer: []string{"head"}}, "head.example.org:15001", ""},
		{MomConfig{PBSServer: []string{"head.example.org"}}, "head:15001", ""},
		{MomConfig{PBSServer: []string{"other"}}, "head:15001", "$pbsserver other is not this mom's server head"},
		{MomConfig{TmpDir: dir}, "head:15001", ""},
		{MomConfig{TmpDir: dir + "/missing"}, "head:15001", "is not a directory"},
	} {
		err := checkMomConfig(&tt.c, tt.addr)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%+v with %s: %v, want %q", tt.c, tt.addr, err, tt.err)
		}
	}
}

// TestApplyUseCp: staged files and output paths that $usecp names become
// local ones; others stay as the server resolved them.
func TestApplyUseCp(t *testing.T) {
	t.Parallel()
	rules := []stage.CpRule{{Host: "head", From: "/home", To: "/nfs/home"}}
	job := &proto.MomJob{
		OutputPath: "head:/home/u/j.o1", ErrorPath: "other:/home/u/j.e1",
		StageIn: []proto.StageFile{
			{Local: "in", Host: "head", Remote: "/home/u/in.dat", Node: "n9", Addr: "n9:15002", Token: []byte{1}},
			{Local: "x", Host: "head", Remote: "/elsewhere/x"},
		},
		StageOut: []proto.StageFile{{Local: "out", Host: "head.example.org", Remote: "/home/u/out"}},
	}
	applyUseCp(job, rules)
	if job.OutputPath != "/nfs/home/u/j.o1" || job.ErrorPath != "other:/home/u/j.e1" {
		t.Errorf("paths %q %q", job.OutputPath, job.ErrorPath)
	}
	if f := job.StageIn[0]; !f.Here || f.Remote != "/nfs/home/u/in.dat" || f.Addr != "" || f.Node != "" || f.Token != nil {
		t.Errorf("stage-in through $usecp: %+v", f)
	}
	if f := job.StageIn[1]; f.Here || f.Remote != "/elsewhere/x" {
		t.Errorf("stage-in outside the prefix: %+v", f)
	}
	if f := job.StageOut[0]; !f.Here || f.Remote != "/nfs/home/u/out" {
		t.Errorf("stage-out through $usecp: %+v", f)
	}
	if got := useCpHosts(append(rules, stage.CpRule{Host: "head", From: "/a", To: "/b"}, stage.CpRule{Host: "*", From: "/s", To: "/s"})); !reflect.DeepEqual(got, []string{"head", "*"}) {
		t.Errorf("useCpHosts %q", got)
	}
}
