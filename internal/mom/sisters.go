// A job on several moms (OpenPBS's mother superior and sisters). The
// mother superior, the mom of the job's first node, asks every other mom
// of the job to join it before its shepherd starts (joinSisters): a
// sister resolves the owner, takes the job's GPUs and cgroup for its
// share of the node, makes the job's directory (job.json marked Sister,
// the node file) and its TMPDIR, and from then runs the job's tasks
// there (tasks.go). A sister that cannot refuses, and the mother superior
// ends those that joined and refuses the start: the server puts the job
// back in its queue.
//
// When the job ends on the mother superior (its shepherd's result),
// windDown ends its tasks there and asks each sister to end its part
// (MsgMomEndJob): the sister ends its tasks, empties and removes the
// cgroup and the TMPDIR and answers with what the job used there, which
// the mother superior adds to the job's usage before it reports the end.
// A sister that cannot be reached then is told by the server instead:
// the sister reports the jobs it holds (MomStatus.Sisters) and the
// server answers Kill for one that no longer runs. A sister's tasks also
// die on their own when its lease lapses (their task shepherds watch it).

package mom

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/proto"
)

// sisterTimeout bounds a join (the sister makes the job's cgroup and
// directories) and momHandshake the connection to another mom before any
// request: a hung mom delays a job's end by that much, not by the
// request's bound.
const (
	sisterTimeout = 30 * time.Second
	momHandshake  = 5 * time.Second
)

// sisterMoms are the moms other than the mother superior of a job.
func sisterMoms(job *proto.MomJob) []proto.NodeMom {
	if len(job.Moms) < 2 {
		return nil
	}
	first := job.Moms[0]
	var out []proto.NodeMom
	for _, nm := range job.Moms[1:] {
		if nm.Addr != first.Addr {
			out = append(out, nm)
		}
	}
	return out
}

// newTaskCookie makes a job's secret for its tasks.
func newTaskCookie() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// callMom sends one request to the mom at addr as this mom and waits
// for the answer at most timeout.
func (m *Mom) callMom(addr string, t proto.MsgType, body, reply any, timeout time.Duration) error {
	c, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: addr, Role: proto.RoleMom, Name: m.cfg.NodeName, Key: m.key, Timeout: momHandshake})
	if err != nil {
		return err
	}
	defer c.Close()
	return proto.NewClient(c.Conn(), "", timeout).Call(t, body, reply)
}

// joinSisters asks every sister of a job to join it (in parallel); when
// one cannot, those that joined are ended and the error names the node.
func (m *Mom) joinSisters(job *proto.MomJob) error {
	sisters := sisterMoms(job)
	if len(sisters) == 0 {
		return nil
	}
	part := *job
	part.Script, part.StageIn, part.StageOut, part.Interactive = nil, nil, nil, nil
	errs := make([]error, len(sisters))
	var wg sync.WaitGroup
	for i, s := range sisters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.callMom(s.Addr, proto.MsgMomJoinJob, &proto.JoinJob{Job: part}, nil, sisterTimeout)
		}()
	}
	wg.Wait()
	var joined []proto.NodeMom
	var failed error
	for i, err := range errs {
		if err == nil {
			joined = append(joined, sisters[i])
		} else if failed == nil {
			failed = proto.SisterJoinError(sisters[i].Node, job.JobID, errText(err))
		}
	}
	if failed != nil {
		m.abortSisters(job, joined)
		return failed
	}
	return nil
}

// errText is an error's text without a PBSE prefix of its own.
func errText(err error) string {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return strings.TrimPrefix(pe.Text, proto.PBSE_MOMREJECT.Message()+": ")
	}
	return err.Error()
}

// endSisters asks sisters to end their part of a job and adds up what the
// job used there; a sister that cannot be reached is left to the server
// (see the file comment).
func (m *Mom) endSisters(job *proto.MomJob, sisters []proto.NodeMom) []proto.NodeUsage {
	return m.endSistersAs(job, sisters, 0, false)
}

// endSistersGrace is endSisters letting the tasks on the sisters end by
// themselves for grace seconds first (a graceful shrink).
func (m *Mom) endSistersGrace(job *proto.MomJob, sisters []proto.NodeMom, grace int) proto.Usage {
	return proto.SumUsage(m.endSistersAs(job, sisters, grace, false))
}

// abortSisters ends the job's part on sisters that joined a start given
// up: they run their execjob_abort hooks.
func (m *Mom) abortSisters(job *proto.MomJob, sisters []proto.NodeMom) {
	m.endSistersAs(job, sisters, 0, true)
}

// endSistersAs ends the job's part on sisters, each told whether the
// start was given up (aborted), after grace seconds, and returns what
// each used there (a sister that did not answer is left out).
func (m *Mom) endSistersAs(job *proto.MomJob, sisters []proto.NodeMom, grace int, aborted bool) []proto.NodeUsage {
	used := make([]*proto.NodeUsage, len(sisters))
	var wg sync.WaitGroup
	for i, s := range sisters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reply proto.SisterUsage
			// The sister waits for its tasks to end (kill_delay).
			wait := time.Duration(job.KillDelay+int64(grace))*time.Second + taskEndWait + momHandshake
			err := m.callMom(s.Addr, proto.MsgMomEndJob, &proto.EndJob{JobID: job.JobID, RunCount: job.RunCount, Grace: grace, Aborted: aborted}, &reply, wait)
			var pe *proto.Error
			switch {
			case err == nil:
				used[i] = &proto.NodeUsage{Node: s.Node, Used: reply.Used}
			case errors.As(err, &pe) && pe.Code == proto.PBSE_UNKJOBID:
				// Gone already (ended by the server's word, or never joined).
			default:
				m.log.Warn("cannot end a job on its sister; the server will", "job", job.JobID, "sister", s.Node, "error", err)
			}
		}()
	}
	wg.Wait()
	var out []proto.NodeUsage
	for _, u := range used {
		if u != nil {
			out = append(out, *u)
		}
	}
	return out
}

// windDown, once a job's shepherd has its result on the mother superior,
// ends the job's tasks here and its part on every sister, and records
// what they used; the end is reported after (sendObits).
func (m *Mom) windDown(j *momJob) {
	local := m.endTasks(j, "task killed: its job ended")
	sisters := m.endSisters(&j.spec, sisterMoms(&j.spec))
	m.mu.Lock()
	if j.cg != nil && j.cg.V2 {
		// The job's cgroup counted its tasks' cpu here already.
		local.CPUSecs = 0
	}
	j.extraUsed = local.Plus(proto.SumUsage(sisters)).Plus(j.releasedUsed)
	j.localUsed, j.sisterUsed = local.Plus(j.releasedUsed), sisters
	j.woundDown = true
	m.mu.Unlock()
	m.wakeLink()
}

// joinJob is a sister taking its part of a job for the mom of node from.
func (m *Mom) joinJob(from string, jj *proto.JoinJob) error {
	job := &jj.Job
	if len(job.Moms) == 0 || job.Moms[0].Node != from {
		return proto.Errorf(proto.PBSE_PERM, "only the mom of job %s's first node may ask %s to join it", job.JobID, m.cfg.NodeName)
	}
	if !jobHasNode(job, m.cfg.NodeName) {
		return proto.Errorf(proto.PBSE_PERM, "%s is not a node of job %s", m.cfg.NodeName, job.JobID)
	}
	if !validJobID(job.JobID) {
		return proto.Errorf(proto.PBSE_IVALREQ, "bad job id %q", job.JobID)
	}
	if err := fault.Hit(fault.MomJoinJob); err != nil {
		return fmt.Errorf("on %s: %w", m.cfg.NodeName, err)
	}
	m.mu.Lock()
	old := m.jobs[job.JobID]
	m.mu.Unlock()
	if old != nil {
		switch {
		case old.sister && old.spec.RunCount == job.RunCount:
			// A repeated request, or the job's new allocation.
			return m.updateSister(old, job)
		case !old.sister && !m.hasEnded(old):
			return proto.Errorf(proto.PBSE_MOMREJECT, ": job %s runs on %s as its first node", job.JobID, m.cfg.NodeName)
		case old.sister:
			m.endSisterJob(old, "task killed: the job started again")
		}
	}
	usr, err := m.jobOwner(job)
	if err != nil {
		return err
	}
	// The site's execjob_begin hooks judge the job's part here too
	// (hooks.go): a rejection refuses the join, and so the start.
	if err := m.execjobHooks(hook.ExecjobBegin, job, usr, nil); err != nil {
		return err
	}
	gpus, err := m.takeGPUs(job)
	if err != nil {
		return err
	}
	j := &momJob{spec: *job, sister: true, ownerUID: int64(usr.UID), gpus: gpus, dir: filepath.Join(m.jobsDir, job.JobID)}
	undo := func() {
		m.mu.Lock()
		m.releaseGPUs(job.JobID)
		m.mu.Unlock()
		if j.cg != nil {
			m.dropCgroup(job.JobID, j.cg, nil)
			m.releaseCpus(job.JobID)
		}
		os.RemoveAll(j.dir)
	}
	if m.conf != nil {
		if j.cg, err = m.makeCgroup(job, gpus); err != nil {
			undo()
			return fmt.Errorf("on %s: cannot make the job's cgroup: %w", m.cfg.NodeName, err)
		}
	}
	os.RemoveAll(j.dir)
	if !m.dirs.take(j.dir, 0) {
		if err := os.Mkdir(j.dir, 0o711); err != nil {
			undo()
			return fmt.Errorf("job directory: %w", err)
		}
	}
	set := m.shepherdSettings()
	// Its own name on this node, recorded for its tasks and a restarted
	// mom (shepherd.NewTmpDir).
	j.tmpDir = shepherd.NewTmpDir(set, job.JobID)
	if err := shepherd.WriteJSON(j.dir, shepherd.FileJob, shepherd.JobFile{MomJob: *job, OwnerAccount: usr, Settings: set, Cgroup: j.cg, GPUs: gpus, Sister: true, TmpDir: j.tmpDir}, 0o600); err != nil {
		undo()
		return fmt.Errorf("job file: %w", err)
	}
	nodes := strings.Join(job.NodeFile, "\n")
	if nodes != "" {
		nodes += "\n"
	}
	if err := os.WriteFile(filepath.Join(j.dir, shepherd.FileNodes), []byte(nodes), 0o644); err != nil {
		undo()
		return fmt.Errorf("node file: %w", err)
	}
	m.tmpDirs.take(j.tmpDir, usr.UID)
	if err := shepherd.OpenTmpDir(j.tmpDir, usr); err != nil {
		os.RemoveAll(j.tmpDir)
		undo()
		return fmt.Errorf("on %s: TMPDIR %s: %w", m.cfg.NodeName, j.tmpDir, err)
	}
	m.mu.Lock()
	m.jobs[job.JobID] = j
	m.mu.Unlock()
	m.log.Info("joined job as a sister", "job", job.JobID, "run", job.RunCount, "mother_superior", from, "user", job.EUser)
	return nil
}

// validJobID refuses ids that could name something outside mom_priv/jobs.
func validJobID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\x00")
}

// jobHasNode reports whether node is one of the job's moms' nodes.
func jobHasNode(job *proto.MomJob, node string) bool {
	for _, nm := range job.Moms {
		if nm.Node == node {
			return true
		}
	}
	return false
}

// endJob is a sister ending its part of a job for the mom of node from.
func (m *Mom) endJob(from string, req *proto.EndJob) (*proto.SisterUsage, error) {
	m.mu.Lock()
	j := m.jobs[req.JobID]
	m.mu.Unlock()
	if j == nil || !j.sister || j.spec.RunCount != req.RunCount {
		return nil, proto.Errorf(proto.PBSE_UNKJOBID, "%s (run %d) has no part on %s", req.JobID, req.RunCount, m.cfg.NodeName)
	}
	if len(j.spec.Moms) == 0 || j.spec.Moms[0].Node != from {
		return nil, proto.Errorf(proto.PBSE_PERM, "only the mom of job %s's first node may end it on %s", req.JobID, m.cfg.NodeName)
	}
	why := "task killed: its job ended"
	if req.Grace > 0 {
		// A graceful shrink: the job may let go of this node by itself.
		m.waitTasksGone(j, time.Duration(req.Grace)*time.Second)
		why = "task killed: its job gave this node back"
	}
	used := m.endSisterJob(j, why)
	if req.Aborted {
		m.laterJobHooks(hook.ExecjobAbort, j.spec, nil, "the job's start was given up all the same")
	} else if req.Grace == 0 {
		m.laterJobHooks(hook.ExecjobEnd, j.spec, nil, "the job has ended: nothing more is done")
	}
	return &proto.SisterUsage{Used: m.scaleUsage(used)}, nil
}

// endSisterJob ends a sister's part of a job: its tasks, its cgroup, its
// TMPDIR and its directory; it returns what the job used here.
func (m *Mom) endSisterJob(j *momJob, why string) proto.Usage {
	m.mu.Lock()
	if j.windingDown {
		m.mu.Unlock()
		return proto.Usage{} // another call ends it
	}
	j.windingDown = true
	m.mu.Unlock()
	// The result marks the job ended for task shepherds this mom no
	// longer knows (started by a previous mom): they kill their tasks.
	shepherd.WriteJSON(j.dir, shepherd.FileResult, shepherd.Result{End: time.Now().Unix(), Comment: why}, 0o600)
	used := m.endTasks(j, why)
	if j.cg != nil {
		u := cgroupUsage(j.cg)
		used.MemBytes = max(used.MemBytes, u.MemBytes)
		used.VmemBytes = max(used.VmemBytes, u.VmemBytes)
		if j.cg.V2 {
			used.CPUSecs = max(used.CPUSecs, u.CPUSecs)
		}
		m.dropCgroup(j.spec.JobID, j.cg, nil)
	}
	m.mu.Lock()
	if m.conf != nil && m.conf.alloc != nil {
		m.conf.alloc.Release(j.spec.JobID)
	}
	m.releaseGPUs(j.spec.JobID)
	m.mu.Unlock()
	if j.tmpDir != "" {
		shepherd.CloseTmpDir(j.tmpDir)
	}
	m.forget(j)
	m.log.Info("ended a job's part here", "job", j.spec.JobID, "run", j.spec.RunCount, "cput", used.CPUSecs, "mem", used.MemBytes)
	return used
}

// signalSister delivers a signal the mother superior forwards to the
// job's tasks here (suspend and resume freeze and thaw its cgroup where
// the host can).
func (m *Mom) signalSister(j *momJob, req *proto.MomSignal) error {
	sig, special, ok := signals.Parse(req.Signal)
	if !ok {
		return proto.Errorf(proto.PBSE_UNKSIG, "%s", req.Signal)
	}
	if special == signals.Delete {
		return proto.Errorf(proto.PBSE_IVALREQ, "a job's part on a sister ends with the job, not by a delete")
	}
	frozen, err := m.freezeJob(j, special)
	if err != nil {
		return err
	}
	if !frozen {
		switch special {
		case signals.Suspend:
			sig = syscall.SIGSTOP
		case signals.Resume:
			sig = syscall.SIGCONT
		}
		m.signalTasks(j, sig)
	}
	m.noteSuspended(j, special)
	return nil
}

// forwardSignal passes a signal of a job with sisters on to them.
func (m *Mom) forwardSignal(j *momJob, req *proto.MomSignal) {
	for _, s := range sisterMoms(&j.spec) {
		if err := m.callMom(s.Addr, proto.MsgMomSignalJob, req, nil, freezeWait+momHandshake); err != nil {
			m.log.Warn("cannot pass a signal on to a sister", "job", j.spec.JobID, "sister", s.Node, "signal", req.Signal, "error", err)
		}
	}
}

// momRequest is what each of another mom's requests is served with: the
// asking mom's node name.
type momRequest struct {
	m    *Mom
	from string
}

// momRoutes are another mom's requests answered with one reply (a job's
// part joined or ended, a signal passed on), one handler each
// (proto.Routes, as serverRoutes and pbs_server's routes).
var momRoutes = proto.Routes[momRequest]{
	proto.MsgMomJoinJob: proto.Decoded(func(r momRequest, req *proto.JoinJob) (any, error) {
		return nil, r.m.joinJob(r.from, req)
	}),
	proto.MsgMomEndJob: proto.Decoded(func(r momRequest, req *proto.EndJob) (any, error) {
		return r.m.endJob(r.from, req)
	}),
	proto.MsgMomSignalJob: proto.Decoded(func(r momRequest, req *proto.MomSignal) (any, error) {
		m := r.m
		m.mu.Lock()
		j := m.jobs[req.JobID]
		m.mu.Unlock()
		switch {
		case j == nil || !j.sister:
			return nil, proto.Errorf(proto.PBSE_UNKJOBID, "%s has no part on %s", req.JobID, m.cfg.NodeName)
		case len(j.spec.Moms) == 0 || j.spec.Moms[0].Node != r.from:
			return nil, proto.Errorf(proto.PBSE_PERM, "only the mom of job %s's first node may signal it on %s", req.JobID, m.cfg.NodeName)
		}
		return nil, m.signalSister(j, req)
	}),
}

// momStream serves a request of another mom that keeps the connection
// for a stream (a task's, a staging transfer's) and answers it itself.
type momStream func(m *Mom, c *proto.Conn, from string, h proto.Header, body []byte)

// momStreams are those requests, by type.
var momStreams = map[proto.MsgType]momStream{
	proto.MsgTaskSpawn: func(m *Mom, c *proto.Conn, from string, h proto.Header, body []byte) {
		c.NetConn().SetDeadline(time.Time{})
		m.serveRemoteTask(c, from, h, body)
	},
	proto.MsgMomFileGet: (*Mom).serveFile,
	proto.MsgMomFilePut: (*Mom).serveFile,
}

// serveMom answers another mom's request on the mom port: a join, an
// end, a forwarded signal or task, or one staging transfer.
func (m *Mom) serveMom(c *proto.Conn, from string, h proto.Header, body []byte) {
	if stream, ok := momStreams[h.Type]; ok {
		stream(m, c, from, h, body)
		return
	}
	out, rerr := momRoutes.Serve(h.Type, momRequest{m: m, from: from}, body)
	reply := proto.Header{Type: proto.MsgReply, Seq: h.Seq}
	if rerr != nil {
		pe := momError(rerr)
		reply.Code, reply.Text = pe.Code, pe.Error()
		out = nil
	}
	c.Send(reply, out)
}
