package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/proto"
)

// A qdel of a running job is answered once its mom has the delete; the
// job then ends however its run ends. When that end is one that would
// put the job back (its stage-in failed, its mom's lease lapsed, its mom
// could not start it), the delete wins: the job ends deleted, Exit_status
// 271, and is never queued again, also when the server restarted in
// between (issue 19 item 4: the job went to W, then ran).
func TestDeleteWinsOverTheEndOfItsRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, c := newTestServerAt(t, dir, func(*Config) {})
	port := serveFakeMom(t, s.key, func(h proto.Header, _ msgpack.RawMessage) (proto.Header, any) {
		return proto.Header{Type: proto.MsgReply, Seq: h.Seq}, nil // every delete delivered
	})
	addMomNode(s, "n1", port)
	ends := map[string]*proto.JobObit{
		"stage-in failed": {StageInFailed: true, ExitStatus: proto.JobExecFail1, Comment: "stage-in of in@n2:/in failed: no progress"},
		"lease lapsed":    {Fenced: true, ExitStatus: proto.JobExecRerun, Comment: "lost contact with the server"},
		"not started":     {ExitStatus: proto.JobExecRetry, Comment: "prologue /p exited 2"},
	}
	ids := map[string]string{}
	for name := range ends {
		id := mustSubmit(t, c)
		startJobOn(t, s, id, "n1/0")
		if err := c.DeleteJob(id, proto.DeleteOptions{KillDelay: proto.NoKillDelay}); err != nil {
			t.Fatalf("%s: qdel: %v", name, err)
		}
		if st := jobAttr(t, c, id, proto.AttrJobState); st != "R" {
			t.Fatalf("%s: after the qdel the job is %s; it should run until its mom ends it", name, st)
		}
		ids[name] = id
	}
	s.Close()
	s, c = newTestServerAt(t, dir, func(*Config) {})
	mom := &caller{role: proto.RoleMom, name: "n1"}
	for name, ob := range ends {
		id := ids[name]
		ob.JobID, ob.RunCount = id, 1
		if err := s.jobObit(mom, ob); err != nil {
			t.Fatalf("%s: obit: %v", name, err)
		}
		state, exit, comment := jobAttr(t, c, id, proto.AttrJobState), jobAttr(t, c, id, proto.AttrExitStatus), jobAttr(t, c, id, proto.AttrComment)
		if state != "F" || exit != strconv.Itoa(ExitDeleted) || !strings.HasPrefix(comment, "Job deleted by ") {
			t.Errorf("%s after a qdel: state %s, Exit_status %s, comment %q; want F, %d, deleted", name, state, exit, comment, ExitDeleted)
		}
		if rc := jobAttr(t, c, id, proto.AttrRunCount); rc != "1" {
			t.Errorf("%s: run_count %s", name, rc)
		}
	}
}
