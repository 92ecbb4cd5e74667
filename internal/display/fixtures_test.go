package display

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Times used by the fixtures: 2024-01-01 00:00:00 UTC was a Monday.
const (
	jan1   = "1704067200"
	jan1m1 = "1704067260"
)

func attr(full, value string) proto.Attr {
	n, r := proto.SplitAttrName(full)
	return proto.Attr{Name: n, Resource: r, Value: value}
}

func job(id string, kv ...string) proto.Status {
	s := proto.Status{Name: id}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Attrs = append(s.Attrs, attr(kv[i], kv[i+1]))
	}
	return s
}

// runningJob, queuedJob and finishedJob are three jobs in the order and
// spelling the server sends (OpenPBS names, epoch times).
func runningJob() proto.Status {
	return job("1.srv",
		"Job_Name", "STDIN",
		"Job_Owner", "alice@submithost",
		"resources_used.cput", "00:00:00",
		"resources_used.mem", "0kb",
		"resources_used.walltime", "00:00:05",
		"job_state", "R",
		"queue", "workq",
		"server", "srv",
		"ctime", jan1,
		"exec_host", "node01/0*2",
		"Resource_List.mem", "1gb",
		"Resource_List.ncpus", "2",
		"Resource_List.nodect", "1",
		"Resource_List.walltime", "01:00:00",
		"session_id", "4242",
		"stime", jan1m1,
		"Variable_List", "PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice/w",
	)
}

func queuedJob() proto.Status {
	return job("2.srv",
		"Job_Name", "averyveryverylongjobname",
		"Job_Owner", "bob@h",
		"job_state", "Q",
		"queue", "workq",
		"Resource_List.ncpus", "1",
	)
}

func finishedJob() proto.Status {
	return job("3.srv",
		"Job_Name", "sleep",
		"Job_Owner", "carol@h",
		"resources_used.cput", "00:01:02",
		"job_state", "F",
		"queue", "workq",
		"stime", jan1m1,
		"Exit_status", "0",
	)
}

func threeJobs() []proto.Status {
	return []proto.Status{runningJob(), queuedJob(), finishedJob()}
}

func pro() Options {
	return Options{Personality: config.PBSPro, ServerName: "srv", Now: time.Unix(1704067300, 0), Loc: time.UTC}
}

func torque() Options {
	o := pro()
	o.Personality = config.Torque
	return o
}

// lines joins expected output lines; a trailing '|' marks where a line
// ends so that trailing blanks are visible in the test source.
func lines(ls ...string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(strings.TrimSuffix(l, "|"))
		b.WriteByte('\n')
	}
	return b.String()
}

type formatter func(w *bytes.Buffer) error

func render(t *testing.T, f func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func check(t *testing.T, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	t.Fatalf("output differs:\n%s", got)
}
