package sched

import (
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched/core"
)

// apply counts what the metrics show: starts, of which backfills, and the
// server's refusals by the reason's standard text (the text the server
// sends names the job and is not a label).
func TestApplyCountsBackfillAndRefusals(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		srv := proto.NewConn(b, 0)
		for {
			h, body, err := srv.Recv()
			if err != nil {
				return
			}
			var reply any = struct{}{}
			switch h.Type {
			case proto.MsgRunJobs:
				var req proto.RunJobsRequest
				proto.DecodeBody(body, &req)
				res := make([]proto.ObjectError, len(req.Runs))
				for i, r := range req.Runs {
					res[i].Name = r.JobID
					if r.JobID == "3.s" || r.JobID == "4.s" {
						res[i].Code, res[i].Text = proto.PBSE_BADSTATE, "Request invalid for state of job "+r.JobID
					}
				}
				reply = &proto.RunJobsReply{Results: res}
			case proto.MsgAlterJobs:
				var req proto.AlterJobsRequest
				proto.DecodeBody(body, &req)
				reply = &proto.AlterJobsReply{Results: make([]proto.ObjectError, len(req.Alters))}
			}
			if err := srv.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq}, reply); err != nil {
				return
			}
		}
	}()
	c := proto.NewClient(proto.NewConn(a, 0), "s", 5*time.Second)
	where := []core.Chunk{{Node: "n1"}}
	plan := core.NewPlan()
	plan.Run(&core.Job{ID: "1.s"}, where, "")
	plan.Backfill(&core.Job{ID: "2.s"}, where, "")
	plan.Backfill(&core.Job{ID: "3.s"}, where, "")
	plan.Run(&core.Job{ID: "4.s"}, where, "")
	st := apply(c, plan.Decisions(), nil, hclog.NewNullLogger())
	if st.started != 2 || st.backfilled != 1 || st.refused != 2 {
		t.Fatalf("started %d backfilled %d refused %d, want 2 1 2", st.started, st.backfilled, st.refused)
	}
	if len(st.refusedBy) != 1 || st.refusedBy[proto.PBSE_BADSTATE.Message()] != 2 {
		t.Fatalf("refusals by reason %v, want 2 for %q", st.refusedBy, proto.PBSE_BADSTATE.Message())
	}
}
