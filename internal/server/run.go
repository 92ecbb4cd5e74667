package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"gopbs/internal/accounting"
	"gopbs/internal/model"
	"gopbs/internal/resc"
	"gopbs/internal/signals"
	"gopbs/internal/store"
	"gopbs/proto"
)

// momTimeout bounds one request to a mom.
const momTimeout = 15 * time.Second

// callMom sends one request to the mom of node and waits for its answer.
func (s *Server) callMom(node string, t proto.MsgType, body any) error {
	s.mu.RLock()
	n, ok := s.nodes[node]
	var host, port string
	if ok {
		host, _ = n.Get(proto.AttrNodeMom)
		port, _ = n.Get(proto.AttrNodePort)
		if rt := s.runtime[node]; rt != nil && rt.reported && port == "" {
			port = strconv.Itoa(rt.status.Port)
		}
	}
	s.mu.RUnlock()
	if !ok {
		return proto.Errorf(proto.PBSE_UNKNODE, "%s", node)
	}
	if host == "" {
		host = node
	}
	c, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: net.JoinHostPort(host, port), Role: proto.RoleServer, Name: s.cfg.ServerName, Key: s.key, Timeout: momTimeout})
	if err != nil {
		return proto.Errorf(proto.PBSE_NORELYMOM, "(node %s at %s:%s: %v)", node, host, port, err)
	}
	defer c.Close()
	return c.Call(t, body, nil)
}

// freeNodes describes the nodes that can take work now (mu held).
func (s *Server) freeNodes() []*nodeFree {
	var out []*nodeFree
	for name := range s.nodes {
		if !s.nodeUp(name) {
			continue
		}
		avail := s.nodeAvailable(name)
		nf := &nodeFree{name: name, avail: avail, free: map[string]float64{}}
		for r, v := range avail {
			if !resc.Consumable(r) {
				continue
			}
			if x, ok := resc.Number(r, v); ok {
				nf.free[r] = x - s.counts.assigned[name][r]
			}
		}
		out = append(out, nf)
	}
	sortCands(out)
	return out
}

// runJob starts a queued or held job (qrun, or a scheduler's decision),
// on the nodes given ("n1+n2", one per chunk, or one for all) or where it
// fits. The job is recorded as running before the mom is asked, so a
// crash in between can only lose a start, never run a job twice; if the
// mom refuses, the job goes back to its queue with the reason.
func (s *Server) runJob(who *caller, id, nodes string) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.NewError(proto.PBSE_PERM)
	}
	var hosts []string
	for _, h := range strings.Split(nodes, "+") {
		if h = strings.TrimSpace(h); h != "" {
			// "-H n1:ncpus=2" style vnode specs: only the node name is used.
			h, _, _ = strings.Cut(strings.Trim(h, "()"), ":")
			hosts = append(hosts, h)
		}
	}
	var job *model.Job
	var spec *proto.MomJob
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.lookupJob(id)
		if err != nil {
			return err
		}
		switch j.State {
		case model.StateFinished:
			return proto.NewError(proto.PBSE_HISTJOBID)
		case model.StateRunning, model.StateExiting, model.StateTransit:
			return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c)", j.State)
		}
		if j.QueueType != "Execution" {
			return proto.Errorf(proto.PBSE_BADSTATE, "(job is in route queue %s)", j.Queue)
		}
		selText, _ := j.ResourceList.Get(proto.ResSelect)
		sel, err := resc.ParseSelect(selText)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "select: %v", err)
		}
		placeText, _ := j.ResourceList.Get(proto.ResPlace)
		place, _ := resc.ParsePlace(placeText)
		p, err := placeChunks(sel, place, s.freeNodes(), hosts)
		if err != nil {
			return proto.Errorf(proto.PBSE_RESCUNAV, "(%v)", err)
		}
		execHost, execVnode, nodefile := execStrings(p)
		now := s.nowUnix()
		s.updateJob(j, func() {
			j.State, j.Substate = model.StateRunning, model.SubRunning
			j.ExecHost, j.ExecVnode = execHost, execVnode
			j.Stime = now
			j.RunCount++
			j.HasExit = false
			j.ResourcesUsed = nil
			j.Comment = fmt.Sprintf("Job run at %s on (%s)", time.Unix(now, 0).Format("Mon Jan 02 at 15:04"), strings.Trim(execVnode, "()"))
		})
		b.PutJob(j)
		job = j
		spec = s.momJob(j, p, nodefile)
		return nil
	})
	if err != nil {
		return err
	}
	script, err := s.st.Script(job.Seq)
	if err == nil {
		spec.Script = script
		err = s.callMom(firstNode(spec.ExecHost), proto.MsgMomRunJob, spec)
	}
	if err != nil {
		s.log.Warn("job start failed", "job", spec.JobID, "node", firstNode(spec.ExecHost), "error", err)
		s.undoRun(job.Seq, spec.RunCount, err)
		return err
	}
	s.log.Info("job started", "job", spec.JobID, "exec_host", spec.ExecHost, "by", who.user+"@"+who.host)
	s.mu.RLock()
	rec := s.queuedRecord(job)
	s.mu.RUnlock()
	rec = append(rec, accounting.KV{Key: "start", Value: strconv.FormatInt(job.Stime, 10)},
		accounting.KV{Key: "exec_host", Value: spec.ExecHost}, accounting.KV{Key: "exec_vnode", Value: spec.ExecVnode})
	s.account(accounting.Started, job, rec)
	return nil
}

// undoRun returns a job whose start failed to its queue.
func (s *Server) undoRun(seq int64, run int, cause error) {
	s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs[seq]
		if !ok || !j.Active() || j.RunCount != run {
			return nil
		}
		now := s.nowUnix()
		s.updateJob(j, func() {
			j.State = model.StateTransit
			j.ExecHost, j.ExecVnode = "", ""
			j.Stime = 0
			j.Comment = "Not Running: PBS Error: " + cause.Error()
			j.EvalState(now)
		})
		b.PutJob(j)
		return nil
	})
}

// momJob builds the run request for the mother superior (mu held).
func (s *Server) momJob(j *model.Job, p []placed, nodefile []string) *proto.MomJob {
	res := map[string]string{}
	for _, r := range j.ResourceList {
		res[r.Name] = r.Value
	}
	walltime := int64(0)
	if v, ok := j.ResourceList.Get(proto.ResWalltime); ok {
		walltime, _ = resc.ParseDuration(v)
	}
	ompthreads := 0
	if v, ok := p[0].chunk.Get("ompthreads"); ok {
		ompthreads, _ = strconv.Atoi(v)
	}
	allowRoot := false
	if j.EUser == "root" {
		roots, _ := s.server.Get(proto.AttrAclRoots)
		allowRoot = matchesUserList(roots, "root", j.SubmitHost)
	}
	return &proto.MomJob{
		JobID: j.ID, RunCount: j.RunCount, Name: j.Name, Owner: j.Owner, EUser: j.EUser, EGroup: j.EGroup,
		Queue: j.Queue, VariableList: j.VariableList, OutputPath: j.OutputPath, ErrorPath: j.ErrorPath,
		JoinPath: j.JoinPath, KeepFiles: j.KeepFiles, ShellPath: j.ShellPathList, WorkDir: j.InitWorkDir,
		ExecHost: j.ExecHost, ExecVnode: j.ExecVnode, NodeFile: nodefile, Ncpus: int(chunkNcpus(p[0].chunk)),
		OMPThreads: ompthreads, Walltime: walltime, KillDelay: s.killDelay(j), Resources: res, AllowRoot: allowRoot,
	}
}

// killDelay is the queue's kill_delay, else the server's, else the
// default (mu held).
func (s *Server) killDelay(j *model.Job) int64 {
	if q, ok := s.queues[j.Queue]; ok {
		if v, ok := q.Long(proto.AttrKillDelay); ok {
			return v
		}
	}
	return s.serverLong(proto.AttrKillDelay, defaultKillDelay)
}

// deleteRunning asks a running job's mom to end it (SIGTERM, SIGKILL after
// kill_delay); the job finishes when the mom reports its end. With force,
// a job whose mom cannot be reached is finished at once.
func (s *Server) deleteRunning(who *caller, seq int64, force bool) error {
	s.mu.RLock()
	j, ok := s.jobs[seq]
	if !ok || !j.Active() {
		s.mu.RUnlock()
		return nil
	}
	node := firstNode(j.ExecHost)
	req := &proto.MomSignal{JobID: j.ID, Signal: signals.Delete, KillDelay: s.killDelay(j)}
	run := j.RunCount
	s.mu.RUnlock()
	err := s.callMom(node, proto.MsgMomSignalJob, req)
	if err == nil {
		s.log.Info("delete of running job sent to its mom", "job", req.JobID, "node", node, "by", who.user+"@"+who.host)
		return nil
	}
	if !force {
		return err
	}
	var done *model.Job
	cerr := s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs[seq]
		if !ok || !j.Active() || j.RunCount != run {
			return nil
		}
		s.finish(b, j, model.SubTerminated, ExitDeleted, fmt.Sprintf("Job deleted by force by %s@%s; node %s did not answer", who.user, who.host, node), s.nowUnix())
		done = j
		return nil
	})
	if cerr != nil {
		return cerr
	}
	if done != nil {
		s.account(accounting.Deleted, done, []accounting.KV{{Key: "requestor", Value: who.user + "@" + who.host}})
	}
	return nil
}

// signalJob delivers qsig to a running job through its mom; suspend and
// resume also change the state shown (S).
func (s *Server) signalJob(who *caller, id, sig string) error {
	_, special, ok := signals.Parse(sig)
	if !ok || special == signals.Delete {
		return proto.Errorf(proto.PBSE_UNKSIG, "%s", sig)
	}
	mgr, op := s.privileges(who)
	s.mu.RLock()
	j, _, err := s.modifiableJob(who, id, mgr, op)
	if err != nil {
		s.mu.RUnlock()
		return err
	}
	if !j.Active() {
		s.mu.RUnlock()
		return proto.NewError(proto.PBSE_BADSTATE)
	}
	if special == signals.Resume && !j.Suspended || special == signals.Suspend && j.Suspended {
		s.mu.RUnlock()
		return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c)", j.StateLetter())
	}
	seq, node, run, jobID := j.Seq, firstNode(j.ExecHost), j.RunCount, j.ID
	s.mu.RUnlock()
	if err := s.callMom(node, proto.MsgMomSignalJob, &proto.MomSignal{JobID: jobID, Signal: sig}); err != nil {
		return err
	}
	s.log.Info("job signalled", "job", jobID, "signal", sig, "by", who.user+"@"+who.host)
	if special == "" {
		return nil
	}
	return s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs[seq]
		if !ok || !j.Active() || j.RunCount != run {
			return nil
		}
		s.updateJob(j, func() {
			j.Suspended = special == signals.Suspend
			if j.Suspended {
				j.Substate = model.SubSuspended
			} else {
				j.Substate = model.SubRunning
			}
		})
		b.PutJob(j)
		return nil
	})
}
