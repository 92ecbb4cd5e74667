package server

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// refusingMom is a mom that holds each start request until release is
// closed and then refuses every job of it; arrived is sent a value when a
// start request has come in. Any other request is answered that the job
// is unknown here (what a real mom says of a job it never started).
func refusingMom(t *testing.T, key []byte, arrived chan<- struct{}, release <-chan struct{}) int {
	t.Helper()
	return serveFakeMom(t, key, func(h proto.Header, body msgpack.RawMessage) (proto.Header, any) {
		if h.Type != proto.MsgMomRunJobs {
			return proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id: not running on n1"}, nil
		}
		var jobs proto.MomJobs
		proto.DecodeBody(body, &jobs)
		arrived <- struct{}{}
		<-release
		res := make([]proto.ObjectError, len(jobs.Jobs))
		for i := range res {
			res[i] = proto.ObjectError{Name: jobs.Jobs[i].JobID, Code: proto.PBSE_MOMREJECT, Text: "cannot start it here"}
		}
		return proto.Header{Type: proto.MsgReply, Seq: h.Seq}, &proto.MomJobsReply{Results: res}
	})
}

// A qdel that arrives while its job's start is in flight waits for the
// mom's answer; when the start fails and the job goes back to its queue,
// the qdel deletes it there (it used to do nothing, or fail with the
// mom's "not running here", and the job stayed queued).
func TestDeleteHeldByAStartThatFails(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	port := refusingMom(t, s.key, arrived, release)
	addMomNode(s, "n1", port)
	if _, err := s.momStatus(&caller{name: "n1", role: proto.RoleMom}, &proto.MomStatus{Node: "n1", Vnodes: []proto.VnodeStatus{{Name: "n1", Ncpus: 2, Physmem: 1 << 30}}, IdealLoad: -1, MaxLoad: -1}); err != nil {
		t.Fatal(err)
	}
	id, err := submit(c)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan []proto.ObjectError, 1)
	go func() {
		res, _ := c.RunJobs([]proto.RunSpec{{JobID: id, Nodes: "n1"}})
		ran <- res
	}()
	<-arrived // the start is committed (the job shows R); the mom holds its answer

	d, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(s.cfg.Home, "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	deleted := make(chan error, 1)
	go func() { deleted <- d.DeleteJob(id, proto.DeleteOptions{}) }()
	key := model.TopKey(mustSeq(t, id))
	if waited, _ := testcluster.Poll(10*time.Second, func() (bool, string) { return s.starting.held(key) > 0, "" }); !waited {
		select {
		case err := <-deleted:
			t.Fatalf("the qdel returned (%v) without waiting for the start", err)
		default:
		}
		t.Fatal("the qdel never waited for the start")
	}
	close(release)

	if res := <-ran; len(res) != 1 || res[0].Code == proto.PBSE_NONE {
		t.Fatalf("run results %+v, want the mom's refusal", res)
	}
	select {
	case err := <-deleted:
		if err != nil {
			t.Fatalf("qdel of a job whose start failed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("qdel did not return")
	}
	s.mu.RLock()
	j, _ := s.jobs.Get(key)
	state, comment := j.StateLetter(), j.Comment
	s.mu.RUnlock()
	if state != 'F' || !strings.Contains(comment, "deleted") {
		t.Errorf("after the qdel the job is %c (%q), want F, deleted", state, comment)
	}
}

func mustSeq(t *testing.T, id string) int64 {
	t.Helper()
	ref, ok := model.ParseJobRef(id)
	if !ok {
		t.Fatalf("bad job id %q", id)
	}
	return ref.Seq
}
