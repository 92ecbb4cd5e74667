package server

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// A job its mom could not start and says may be retried (a prologue that
// exited 2, timed out or was refused) goes back to its queue even when it
// is not rerunnable, since it never ran (OpenPBS's JOB_EXEC_RETRY); after
// more than 20 such runs it is held, as OpenPBS holds it.
func TestRetryRequeuesThenHolds(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	id := mustSubmit(t, c, proto.Attr{Name: proto.AttrRerunable, Value: "False"})
	mom := &caller{role: proto.RoleMom, name: "n1"}
	for run := 1; run <= maxStartAttempts+1; run++ {
		startJobOn(t, s, id, "n1/0")
		if err := s.jobObit(mom, &proto.JobObit{JobID: id, RunCount: run, ExitStatus: proto.JobExecRetry, Comment: "prologue /p exited 2"}); err != nil {
			t.Fatal(err)
		}
		state, comment := jobAttr(t, c, id, proto.AttrJobState), jobAttr(t, c, id, proto.AttrComment)
		if run <= maxStartAttempts {
			if state != "Q" || comment != "Job requeued: prologue /p exited 2 (n1)" {
				t.Fatalf("run %d: state %s, comment %q; want Q and the mom's reason", run, state, comment)
			}
			continue
		}
		if state != "H" || !strings.HasPrefix(comment, "job held, too many failed attempts to run") || jobAttr(t, c, id, proto.AttrHoldTypes) != "s" {
			t.Fatalf("run %d: state %s, comment %q, holds %s; want a system hold", run, state, comment, jobAttr(t, c, id, proto.AttrHoldTypes))
		}
	}
}
