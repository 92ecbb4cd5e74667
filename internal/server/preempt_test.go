package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// preemptMom is a fake mom that carries out everything and records what
// it was asked ("signal suspend 1.srv", "checkpoint 1.srv", "run 2.srv");
// with noCheckpoint it refuses checkpoints as a mom without a checkpoint
// action does.
type preemptMom struct {
	mu           sync.Mutex
	asked        []string
	noCheckpoint bool
}

func (m *preemptMom) serve(t *testing.T, s *Server) {
	port := serveFakeMom(t, s.key, func(h proto.Header, body msgpack.RawMessage) (proto.Header, any) {
		reply := proto.Header{Type: proto.MsgReply, Seq: h.Seq}
		m.mu.Lock()
		defer m.mu.Unlock()
		switch h.Type {
		case proto.MsgMomSignalJob:
			var sig proto.MomSignal
			proto.DecodeBody(body, &sig)
			m.asked = append(m.asked, "signal "+sig.Signal+" "+sig.JobID)
		case proto.MsgMomCheckpoint:
			var sig proto.MomSignal
			proto.DecodeBody(body, &sig)
			if m.noCheckpoint {
				reply.Code, reply.Text = proto.PBSE_NOSUP, "no checkpoint action on n1"
				return reply, nil
			}
			m.asked = append(m.asked, "checkpoint "+sig.JobID)
		case proto.MsgMomRunJobs:
			var jobs proto.MomJobs
			proto.DecodeBody(body, &jobs)
			for _, j := range jobs.Jobs {
				m.asked = append(m.asked, "run "+j.JobID)
			}
			return reply, &proto.MomJobsReply{Results: make([]proto.ObjectError, len(jobs.Jobs))}
		}
		return reply, nil
	})
	addMomNode(s, "n1", port)
	if _, err := s.momStatus(&caller{name: "n1", role: proto.RoleMom}, &proto.MomStatus{Node: "n1", Vnodes: []proto.VnodeStatus{{Name: "n1", Ncpus: 2, Physmem: 1 << 30}}, IdealLoad: -1, MaxLoad: -1}); err != nil {
		t.Fatal(err)
	}
}

func (m *preemptMom) took(want string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.asked {
		if a == want {
			return true
		}
	}
	return false
}

var schedCaller = &caller{role: proto.RoleSched, user: "root", host: "host", name: "scheduler"}

// runOnN1 starts a queued job on both cpus of n1, as the scheduler does.
func runOnN1(t *testing.T, s *Server, id string) {
	t.Helper()
	res, err := s.runJobs(schedCaller, []proto.RunSpec{{JobID: id, Where: []string{"n1"}}})
	if err != nil || res.Results[0].Code != proto.PBSE_NONE {
		t.Fatalf("run %s: %v %+v", id, err, res)
	}
}

func preempt(s *Server, id, methods, forID string) proto.PreemptResult {
	reply, err := s.preemptJobs(schedCaller, &proto.PreemptJobsRequest{Jobs: []proto.PreemptSpec{{JobID: id, Methods: methods, For: forID}}})
	if err != nil {
		return proto.PreemptResult{Code: proto.PBSE_SYSTEM, Text: err.Error()}
	}
	return reply.Results[0]
}

func accountingOf(t *testing.T, s *Server) string {
	t.Helper()
	var out strings.Builder
	files, _ := filepath.Glob(filepath.Join(s.cfg.AccountingDir, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out.Write(b)
	}
	return out.String()
}

var twoCPUs = proto.Attr{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=2"}

// A job suspended by preemption is frozen by its mom, then holds nothing:
// the job it was preempted for starts on its cpus. Its comment says why;
// z and r records are written; only the scheduler may preempt, and only
// the scheduler resumes it, once its cpus are free again.
func TestPreemptSuspendFreesAndResumes(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	mom := &preemptMom{}
	mom.serve(t, s)
	victim, express := mustSubmit(t, c, twoCPUs), mustSubmit(t, c, twoCPUs)
	runOnN1(t, s, victim)
	if _, err := s.preemptJobs(&caller{role: proto.RoleClient, user: "root", host: "host"}, &proto.PreemptJobsRequest{Jobs: []proto.PreemptSpec{{JobID: victim, Methods: "S"}}}); err == nil {
		t.Fatal("a client (even root) preempted a job: only the scheduler may")
	}
	if _, err := c.PreemptJobs([]proto.PreemptSpec{{JobID: victim, Methods: "S"}}); err == nil {
		t.Fatal("a preempt request over a client's connection was accepted")
	}
	if r := preempt(s, express, "S", ""); r.Method != 0 || r.Code != proto.PBSE_BADSTATE {
		t.Fatalf("a queued job preempted: %+v", r)
	}
	if r := preempt(s, victim, "S", express); r.Method != proto.PreemptSuspend {
		t.Fatalf("suspend: %+v", r)
	}
	if !mom.took("signal suspend " + victim) {
		t.Fatalf("the mom was not asked to suspend %s: %v", victim, mom.asked)
	}
	if st, sub := jobAttr(t, c, victim, proto.AttrJobState), jobAttr(t, c, victim, proto.AttrSubstate); st != "S" || sub != "45" {
		t.Fatalf("victim is %s/%s, want S/45", st, sub)
	}
	if cm := jobAttr(t, c, victim, proto.AttrComment); cm != "Job preempted by suspension to run job "+express+" (queue workq)" {
		t.Errorf("victim's comment %q", cm)
	}
	runOnN1(t, s, express) // its cpus are free
	if acct := accountingOf(t, s); !strings.Contains(acct, ";z;"+victim+";") || !strings.Contains(acct, "resources_released=(n1:ncpus=2)") {
		t.Errorf("no z record with resources_released:\n%s", acct)
	}
	var pe *proto.Error
	if err := c.SignalJob(victim, "resume"); !errors.As(err, &pe) || pe.Code != proto.PBSE_BADSTATE {
		t.Errorf("an operator resumed a job suspended by preemption: %v", err)
	}
	if err := s.signalJob(schedCaller, victim, "resume"); !errors.As(err, &pe) || pe.Code != proto.PBSE_RESCUNAV {
		t.Errorf("resumed while the express job holds its cpus: %v", err)
	}
	if err := s.jobObit(&caller{role: proto.RoleMom, name: "n1"}, &proto.JobObit{JobID: express, RunCount: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.signalJob(schedCaller, victim, "resume"); err != nil {
		t.Fatalf("the scheduler's resume once the cpus are free: %v", err)
	}
	if st, sub := jobAttr(t, c, victim, proto.AttrJobState), jobAttr(t, c, victim, proto.AttrSubstate); st != "R" || sub != "42" || !mom.took("signal resume "+victim) {
		t.Fatalf("after resume %s/%s, mom asked %v", st, sub, mom.asked)
	}
	if acct := accountingOf(t, s); !strings.Contains(acct, ";r;"+victim+";") {
		t.Errorf("no r record:\n%s", acct)
	}
	if res, _ := s.runJobs(schedCaller, []proto.RunSpec{{JobID: mustSubmit(t, c, twoCPUs), Where: []string{"n1"}}}); res.Results[0].Code == proto.PBSE_NONE {
		t.Error("a job started on the cpus the resumed job holds")
	}
}

// Requeue needs a rerunnable job; a checkpoint a mom without the action
// refuses falls back to the next method; a checkpoint done is requeued
// with a C record, a requeue with an R record.
func TestPreemptRequeueAndCheckpoint(t *testing.T) {
	t.Parallel()
	s, c := newTestServer(t, store.Options{})
	mom := &preemptMom{noCheckpoint: true}
	mom.serve(t, s)
	n1 := &caller{role: proto.RoleMom, name: "n1"}
	stay := mustSubmit(t, c, twoCPUs, proto.Attr{Name: proto.AttrRerunable, Value: "n"})
	runOnN1(t, s, stay)
	if r := preempt(s, stay, "R", "9.srv"); r.Method != 0 || r.Code != proto.PBSE_NORERUN {
		t.Fatalf("a job that is not rerunnable requeued: %+v", r)
	}
	if st := jobAttr(t, c, stay, proto.AttrSubstate); st != "42" {
		t.Fatalf("a refused requeue left substate %s", st)
	}
	if r := preempt(s, stay, "CR", "9.srv"); r.Method != 0 {
		t.Fatalf("checkpoint without an action, then requeue of a job not rerunnable: %+v", r)
	}
	if st := jobAttr(t, c, stay, proto.AttrSubstate); st != "42" {
		t.Fatalf("a refused checkpoint left substate %s", st)
	}
	if err := s.jobObit(n1, &proto.JobObit{JobID: stay, RunCount: 1}); err != nil {
		t.Fatal(err)
	}

	requeued := mustSubmit(t, c, twoCPUs)
	runOnN1(t, s, requeued)
	if r := preempt(s, requeued, "CR", "9.srv"); r.Method != proto.PreemptRequeue {
		t.Fatalf("checkpoint refused, then requeue: %+v", r)
	}
	if cm := jobAttr(t, c, requeued, proto.AttrComment); !strings.HasPrefix(cm, "Job requeued: preempted to run job 9.srv") || !mom.took("signal delete "+requeued) {
		t.Fatalf("comment %q, mom asked %v", cm, mom.asked)
	}
	if err := s.jobObit(n1, &proto.JobObit{JobID: requeued, RunCount: 1, ExitStatus: 271}); err != nil {
		t.Fatal(err)
	}
	if st := jobAttr(t, c, requeued, proto.AttrJobState); st != "Q" {
		t.Fatalf("requeued job is %s", st)
	}

	mom.mu.Lock()
	mom.noCheckpoint = false
	mom.mu.Unlock()
	ckpt := mustSubmit(t, c, twoCPUs)
	runOnN1(t, s, ckpt)
	if r := preempt(s, ckpt, "CR", "9.srv"); r.Method != proto.PreemptCheckpoint || !mom.took("checkpoint "+ckpt) {
		t.Fatalf("checkpoint: %+v, mom asked %v", r, mom.asked)
	}
	if err := s.jobObit(n1, &proto.JobObit{JobID: ckpt, RunCount: 1, ExitStatus: 271}); err != nil {
		t.Fatal(err)
	}
	acct := accountingOf(t, s)
	if st := jobAttr(t, c, ckpt, proto.AttrJobState); st != "Q" || !strings.Contains(acct, ";C;"+ckpt+";") || !strings.Contains(acct, ";R;"+requeued+";") {
		t.Fatalf("checkpointed job is %s; accounting:\n%s", st, acct)
	}
	noCkpt := mustSubmit(t, c, twoCPUs, proto.Attr{Name: proto.AttrCheckpoint, Value: "n"})
	runOnN1(t, s, noCkpt)
	if r := preempt(s, noCkpt, "C", "9.srv"); r.Method != 0 || r.Code != proto.PBSE_NOSUP {
		t.Fatalf("a job with Checkpoint=n checkpointed: %+v", r)
	}
}
