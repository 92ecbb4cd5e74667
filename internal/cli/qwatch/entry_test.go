package qwatch

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestParseArgs(t *testing.T) {
	req, n, err := parseArgs([]string{"-u", "alice", "-q", "workq", "-a", "41", "-n", "3", "12", "13[]"})
	if err != nil || req.Owner != "alice" || req.Queue != "workq" || !req.Resume || req.After != 41 || n != 3 || len(req.JobIDs) != 2 {
		t.Fatalf("%+v %d %v", req, n, err)
	}
	if req, _, _ := parseArgs(nil); req.Resume {
		t.Fatal("no -a: resume set")
	}
	for _, bad := range [][]string{{"-a", "x"}, {"-n", "0"}, {"-n"}, {"-z"}} {
		if _, _, err := parseArgs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLine(t *testing.T) {
	x := 3
	e := proto.JobEvent{Seq: 7, Time: 1700000000123, JobID: "12.srv", State: "F", Substate: "92", ExitStatus: &x, Queue: "workq", Owner: "alice"}
	if got, want := line(&e), "7 2023-11-14T22:13:20.123Z 12.srv F 92 3 workq alice"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
