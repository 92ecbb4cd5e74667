package server

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// momTimeout bounds one request to a mom.
const momTimeout = 15 * time.Second

// momAddr is host:port of node's mom.
func (s *Server) momAddr(node string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.momAddrLocked(node)
}

// momAddrLocked is momAddr with mu held.
func (s *Server) momAddrLocked(node string) (string, error) {
	n, ok := s.nodes.Get(node)
	if !ok {
		return "", proto.Errorf(proto.PBSE_UNKNODE, "%s", node)
	}
	host, _ := n.Get(proto.AttrNodeMom)
	port, _ := n.Get(proto.AttrNodePort)
	if rt := s.nodes.Runtime(node); rt != nil && rt.Reported && port == "" {
		port = strconv.Itoa(rt.Status.Port)
	}
	if host == "" {
		host = node
	}
	return net.JoinHostPort(host, port), nil
}

// callMom sends one request to the mom of node and waits for its answer.
func (s *Server) callMom(node string, t proto.MsgType, body any) error {
	addr, err := s.momAddr(node)
	if err != nil {
		return err
	}
	return s.callMomAddr(addr, t, body, nil)
}

// errMomOutcomeUnknown marks a failed mom request that was sent and may
// have been carried out: the connection failed before the answer came.
var errMomOutcomeUnknown = errors.New("the mom may have carried it out")

// callMomAddr sends one request to the mom at addr over a pooled
// connection; a broken connection is redialed once (mom requests are
// idempotent: a repeated start of the same run is accepted once). An
// error wraps errMomOutcomeUnknown when a request went out and no answer
// came back.
func (s *Server) callMomAddr(addr string, t proto.MsgType, body, reply any) error {
	dial := func() (*proto.Client, error) {
		return s.dialDaemon(addr, momTimeout)
	}
	sent := false
	for attempt := 0; ; attempt++ {
		c, err := s.momPool.get(addr, dial)
		if err != nil {
			if sent {
				return fmt.Errorf("%w: %w", proto.Errorf(proto.PBSE_NORELYMOM, "(mom at %s: %v)", addr, err), errMomOutcomeUnknown)
			}
			return proto.Errorf(proto.PBSE_NORELYMOM, "(mom at %s: %v)", addr, err)
		}
		sent = true
		err = c.Call(t, body, reply)
		var pe *proto.Error
		if err == nil || errors.As(err, &pe) && pe.Code != proto.PBSE_PROTOCOL {
			return err
		}
		// A transport failure: the connection is dead (the mom restarted,
		// or died while answering).
		s.momPool.drop(addr, c)
		if attempt == 1 {
			return fmt.Errorf("%w: %w", proto.Errorf(proto.PBSE_NORELYMOM, "(mom at %s: %v)", addr, err), errMomOutcomeUnknown)
		}
	}
}

// runJob starts one queued or held job (qrun), on the nodes given
// ("n1+n2", one per chunk, or one for all) or where it fits.
func (s *Server) runJob(who *caller, id, nodes string) error {
	res, err := s.runJobs(who, []proto.RunSpec{{JobID: id, Nodes: nodes}})
	if err != nil {
		return err
	}
	if r := res.Results[0]; r.Code != proto.PBSE_NONE {
		// As OpenPBS: a qrun that did not start the job starts a
		// scheduling cycle, which says why (the job's comment) or runs
		// it.
		s.schedEvent(proto.SchedNew)
		return &proto.Error{Code: r.Code, Text: r.Text}
	}
	return nil
}

// startRequest is one job being started.
type startRequest struct {
	index int
	key   model.JobKey // the job's; its script is under key.Seq
	spec  *proto.MomJob
	alloc resc.Alloc // the job's, as started (its first chunk's host is the mom asked)
	job   *model.Job
	err   error
}

// runJobs starts jobs (qrun, or a scheduler's decisions). Every start is
// checked against live state: the job must be queued or held in an
// execution queue, and the nodes up and with the resources free. Jobs are
// recorded as running in a commit before their moms are asked, so a crash
// in between can only lose a start, never run a job twice; a job whose mom
// refuses goes back to its queue with the reason.
//
// A large request is committed in parts of runPart jobs, and each part's
// moms are asked while the next part commits: the first jobs start after
// one part's commit instead of the whole request's.
func (s *Server) runJobs(who *caller, runs []proto.RunSpec) (*proto.RunJobsReply, error) {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return nil, proto.NewError(proto.PBSE_PERM)
	}
	reply := &proto.RunJobsReply{Results: make([]proto.ObjectError, len(runs))}
	for i, r := range runs {
		reply.Results[i].Name = r.JobID
	}
	verdicts := s.runjobHooks(who, runs) // before any lock
	var starts []*startRequest
	parts := make(chan []*startRequest, 1)
	sent := make(chan time.Duration)
	go func() {
		var busy time.Duration
		for part := range parts {
			t := time.Now()
			s.sendStarts(part)
			busy += time.Since(t)
		}
		sent <- busy
	}()
	t0 := time.Now()
	var commitErr error
	for off := 0; off < len(runs); off += runPart {
		var part []*startRequest
		err := s.commit.Do(func(b *store.Batch) error {
			part = part[:0]
			now := s.nowUnix()
			for i := off; i < min(off+runPart, len(runs)); i++ {
				var hooked []proto.Attr
				if verdicts != nil {
					v := verdicts[i]
					if v.err != nil {
						s.keepRefusedRun(b, runs[i].JobID, v.attrs)
						pe := toPBSE(v.err)
						reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
						continue
					}
					hooked = v.attrs
				}
				st, err := s.placeJob(b, runs[i], hooked, now)
				if err != nil {
					pe := toPBSE(err)
					reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
					continue
				}
				st.index = i
				s.starting.open(st.key)
				part = append(part, st)
			}
			return nil
		})
		if err != nil {
			// Parts already committed go on; this one and the rest are
			// refused with the store's error (nothing of them was saved),
			// and none of this part's starts is in flight.
			for _, st := range part {
				s.starting.close(st.key)
			}
			pe := toPBSE(err)
			for i := off; i < len(runs); i++ {
				reply.Results[i].Code, reply.Results[i].Text = pe.Code, pe.Error()
			}
			commitErr = err
			break
		}
		starts = append(starts, part...)
		parts <- part
	}
	close(parts)
	t1 := time.Now()
	moms := <-sent
	if commitErr != nil && len(starts) == 0 {
		return nil, commitErr
	}
	t2 := time.Now()
	defer func() {
		// One line per request: a cycle may start tens of thousands of jobs
		// (each has its S accounting record, and a debug line).
		s.log.Info("jobs started", "requested", len(runs), "started", who.started, "by", who.user+"@"+who.host,
			"commit", t1.Sub(t0).String(), "moms", moms.String(), "after", time.Since(t2).String())
	}()
	var failed, started []*startRequest
	var recs []accounting.Record
	for _, st := range starts {
		if errors.Is(st.err, errMomOutcomeUnknown) {
			// The job may be running: it stays running on its node, and
			// the mom's reports settle it (a report without it requeues
			// it after lostJobGrace; a node that stays silent fails as
			// any other, after its lease). Putting it back in the queue
			// now could start it twice.
			s.log.Warn("job start not confirmed by its mom; it stays running there until the mom reports", "job", st.spec.JobID, "node", st.alloc.Mother(), "error", st.err)
			st.err = nil
		}
		if st.err != nil {
			s.log.Warn("job start failed", "job", st.spec.JobID, "node", st.alloc.Mother(), "error", st.err)
			pe := toPBSE(st.err)
			reply.Results[st.index].Code, reply.Results[st.index].Text = pe.Code, pe.Error()
			failed = append(failed, st)
			continue
		}
		who.started++
		started = append(started, st)
		s.log.Debug("job started", "job", st.spec.JobID, "exec_host", st.spec.ExecHost, "by", who.user+"@"+who.host)
		recs = append(recs, accounting.Record{Kind: accounting.Started, ID: st.spec.JobID, KVs: s.startRecord(st)})
	}
	if err := s.acct.WriteAll(s.now(), recs); err != nil {
		s.log.Error("accounting write failed", "error", err)
	}
	if len(failed) > 0 {
		s.undoRuns(failed)
	}
	// A failed start's gate closes only now that its job is back in its
	// queue: a delete held there then finds it queued and deletes it.
	for _, st := range starts {
		s.starting.close(st.key)
	}
	s.mailStarted(started)
	return reply, nil
}

// momBatch bounds the jobs of one start request to a mom.
const momBatch = 500

// runPart is how many starts of one run request are committed together
// (see runJobs).
const runPart = 5000

// sendStarts asks the moms to start jobs: one request per mom for all its
// jobs (in batches of momBatch), the moms in parallel. Each start's err is
// set when it failed. The gates of the starts that succeeded are closed
// as their moms answer; runJobs closes the others.
func (s *Server) sendStarts(starts []*startRequest) {
	byAddr := map[string][]*startRequest{}
	var order []string
	for _, st := range starts {
		addr, err := s.momAddr(st.alloc.Mother())
		if err != nil {
			st.err = err
			continue
		}
		if _, ok := byAddr[addr]; !ok {
			order = append(order, addr)
		}
		byAddr[addr] = append(byAddr[addr], st)
	}
	type batch struct {
		addr string
		sts  []*startRequest
	}
	work := make(chan batch)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				s.startBatch(b.addr, b.sts)
			}
		}()
	}
	for _, addr := range order {
		sts := byAddr[addr]
		for len(sts) > 0 {
			n := min(len(sts), momBatch)
			work <- batch{addr, sts[:n]}
			sts = sts[n:]
		}
	}
	close(work)
	wg.Wait()
}

// startBatch sends one start request to the mom at addr.
func (s *Server) startBatch(addr string, sts []*startRequest) {
	req := &proto.MomJobs{Jobs: make([]proto.MomJob, 0, len(sts))}
	seqs := make([]int64, len(sts))
	for i, st := range sts {
		seqs[i] = st.key.Seq
	}
	scripts, errs := s.st.Scripts(seqs)
	for i, st := range sts {
		if errs[i] != nil {
			st.err = errs[i]
			continue
		}
		job := *st.spec
		job.Script = scripts[i]
		req.Jobs = append(req.Jobs, job)
	}
	var reply proto.MomJobsReply
	err := fault.Hit(fault.ServerDispatchMom)
	if err == nil {
		err = s.callMomAddr(addr, proto.MsgMomRunJobs, req, &reply)
	}
	defer func() {
		for _, st := range sts {
			if st.err == nil {
				s.starting.close(st.key)
			}
		}
	}()
	i := 0
	for _, st := range sts {
		if st.err != nil {
			continue
		}
		switch {
		case err != nil:
			st.err = err
		case i >= len(reply.Results):
			st.err = proto.Errorf(proto.PBSE_PROTOCOL, "mom at %s answered %d of %d starts", addr, len(reply.Results), len(req.Jobs))
		case reply.Results[i].Code != proto.PBSE_NONE:
			st.err = &proto.Error{Code: reply.Results[i].Code, Text: reply.Results[i].Text}
		}
		i++
	}
}

// placeJob checks one start and records the job as running (mu held,
// inside a commit), with what its runjob hooks changed (hooked). A subjob waiting in its array's queued indices is
// made a job of its own once its placement holds; naming an array starts
// its first waiting subjob.
func (s *Server) placeJob(b *store.Batch, r proto.RunSpec, hooked []proto.Attr, now int64) (*startRequest, error) {
	j, parent, err := s.runnable(r.JobID, now)
	if err != nil {
		return nil, err
	}
	orig := j
	if len(hooked) > 0 {
		// The runjob hooks' changes must all hold before the start is
		// recorded (tried on a copy, which is planned), and are the
		// job's as it starts.
		c := j.Clone()
		for _, a := range hooked {
			if err := model.SetJobAttr(s.rt(), c, a, filterPriv, model.AtAlter); err != nil {
				return nil, err
			}
		}
		j = c
	}
	plan, err := s.startView().Plan(j, r, s.resvView().Allows, now)
	if err != nil {
		return nil, err
	}
	if _, live := s.jobs.Get(orig.Key()); live && j != orig {
		s.replaceJob(orig, j, now)
		j = orig
	}
	alloc, stagedIn, wall := plan.Alloc, plan.StagedIn, plan.Walltime
	s.recordStart(b, j, parent, alloc, stagedIn, r.Comment, now)
	if wall != "" {
		// The walltime the start chose, in the commit of the start (the
		// job is live now: a subjob's record was made by recordStart).
		s.editJob(b, j, func() { j.ResourceList = j.ResourceList.Set(proto.ResWalltime, wall) })
	}
	delete(s.stageAsked, j.Key())
	spec := s.momJob(j, plan.Chunks, plan.Nodefile)
	spec.StagedIn = stagedIn
	return &startRequest{key: j.Key(), job: j, spec: spec, alloc: alloc}, nil
}

// runnable finds the job a run request names (mu held): a job, a subjob
// (made from its array while it waits there, not yet stored), or an
// array's first waiting subjob; parent is the array of a subjob.
func (s *Server) runnable(id string, now int64) (j, parent *model.Job, err error) {
	ref, ok := model.ParseJobRef(id)
	if !ok || ref.Kind == model.IDRange {
		return nil, nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	top, ok := s.jobs.Top(ref.Seq)
	if !ok || ref.Kind != model.IDJob && !top.IsArray() {
		return nil, nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	if !top.IsArray() {
		return top, nil, nil
	}
	if top.Finished() {
		return nil, nil, proto.NewError(proto.PBSE_HISTJOBID)
	}
	index := 0
	if ref.Kind == model.IDSubjob {
		index = ref.Indices[0].Lo
	} else if index, ok = s.jobs.NextWaiting(top); !ok {
		return nil, nil, proto.Errorf(proto.PBSE_BADSTATE, "(array %s has no queued subjob left)", top.ID)
	}
	j, _, ok = s.jobs.SubjobAt(top, index, s.cfg.ServerName, now)
	if !ok {
		return nil, nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	return j, top, nil
}

// startRecord is the body of an S accounting record.
func (s *Server) startRecord(st *startRequest) []accounting.KV {
	s.mu.RLock()
	rec := runRecordHead(st.job, st.job.Stime, st.alloc)
	s.mu.RUnlock()
	return append(rec, assignedRecord(st.alloc, s.resources.Load())...)
}

func toPBSE(err error) *proto.Error {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe
	}
	return &proto.Error{Code: proto.PBSE_SYSTEM, Text: proto.PBSE_SYSTEM.Message() + err.Error()}
}

// momJob builds the run request for the mother superior (mu held).
func (s *Server) momJob(j *model.Job, p []place.Placement, nodefile []string) *proto.MomJob {
	res := map[string]string{}
	for _, r := range j.ResourceList {
		res[r.Name] = r.Value
	}
	walltime := int64(0)
	if v, ok := j.ResourceList.Get(proto.ResWalltime); ok {
		walltime, _ = resc.ParseDuration(v)
	}
	ompthreads := 0
	if v, ok := p[0].Chunk.Get("ompthreads"); ok {
		ompthreads, _ = strconv.Atoi(v)
	}
	allowRoot := false
	if j.EUser == "root" {
		roots, _ := s.server.Get(proto.AttrAclRoots)
		allowRoot = model.MatchesUserList(roots, "root", j.SubmitHost)
	}
	first := s.nodes.MomOf(p[0].Node)
	arrayID := ""
	if j.IsSubjob {
		arrayID = model.FormatArrayID(j.Seq, s.cfg.ServerName)
	}
	umask, hasUmask := model.ParseUmask(j.Umask)
	// Streams Keep_Files keeps stay in the owner's home on the node,
	// under their default names.
	var keepOut, keepErr string
	keptOut, keptErr := model.KeptStreams(j.KeepFiles)
	if keptOut {
		keepOut = j.StdFileName('o')
	}
	if keptErr {
		keepErr = j.StdFileName('e')
	}
	return &proto.MomJob{
		Account: j.Account, JobType: j.JobType, KeepOutput: keepOut, KeepError: keepErr,
		ArrayID: arrayID, ArrayIndex: j.Index,
		HasUmask: hasUmask, Umask: umask, Args: model.JobArgWords(j.JobArgs),
		RemoveOutput: strings.Contains(j.RemoveFiles, "o"), RemoveError: strings.Contains(j.RemoveFiles, "e"),
		JobID: j.ID, RunCount: j.RunCount, Name: j.Name, Owner: j.Owner, EUser: j.EUser, EGroup: j.EGroup,
		Queue: j.Queue, VariableList: j.VariableList, OutputPath: j.OutputPath, ErrorPath: j.ErrorPath,
		JoinPath: j.JoinPath, KeepFiles: j.KeepFiles, ShellPath: j.ShellPathList, WorkDir: j.InitWorkDir,
		ExecHost: j.ExecHost(), ExecVnode: j.ExecVnode(), NodeFile: nodefile, Ncpus: int(p[0].Chunk.Ncpus()),
		OMPThreads: ompthreads, Walltime: walltime, KillDelay: s.killDelay(j), Resources: res, AllowRoot: allowRoot,
		StageIn:     s.stageFiles(j, j.Stagein, first, proto.StageGet),
		StageOut:    s.stageFiles(j, j.Stageout, first, proto.StagePut),
		Interactive: interactiveFor(j),
		Moms:        s.jobMoms(p), ResizeSignal: j.ResizeSignal,
		Alloc: momAlloc(p),
	}
}

// momAlloc is a placement as the moms read it: each chunk's node and the
// amounts it takes there (resc.Chunk.Amounts, one cpu when it names none),
// as exec_vnode (place.ExecStrings) renders them.
func momAlloc(p []place.Placement) []proto.MomChunk {
	out := make([]proto.MomChunk, len(p))
	for i, pc := range p {
		out[i] = proto.MomChunk{Node: pc.Node, Amounts: maps.Clone(pc.Chunk.Amounts)}
	}
	return out
}

// jobMoms lists the moms of a placement, each once by the node it reports
// as (momNode: a vnode's part runs under its host's mom), with their
// addresses, the first node's first, for the mother superior to ask the
// others to join the job (mu held); nil when one mom holds the whole job.
func (s *Server) jobMoms(p []place.Placement) []proto.NodeMom {
	var moms []proto.NodeMom
	seen := map[string]bool{}
	addrs := map[string]bool{}
	for _, pl := range p {
		node := s.nodes.MomOf(pl.Node)
		if seen[node] {
			continue
		}
		seen[node] = true
		addr, err := s.momAddrLocked(node)
		if err != nil {
			continue
		}
		addrs[addr] = true
		moms = append(moms, proto.NodeMom{Node: node, Addr: addr})
	}
	if len(addrs) < 2 {
		return nil
	}
	return moms
}

// interactiveFor is where the shepherd of an interactive job finds its
// qsub: the port qsub gave, on the host the job was submitted from.
func interactiveFor(j *model.Job) *proto.InteractiveSession {
	if j.Interactive == nil {
		return nil
	}
	return &proto.InteractiveSession{Host: j.SubmitHost, Port: j.Interactive.Port, Cookie: j.Interactive.Cookie}
}

// killDelay is the job's own kill_delay (Torque's qsub -K), else its
// queue's, else the server's, else the default (mu held).
func (s *Server) killDelay(j *model.Job) int64 {
	if j.HasKillDelay {
		return j.KillDelay
	}
	if q, ok := s.queues.Get(j.Queue); ok {
		if v, ok := q.Long(proto.AttrKillDelay); ok {
			return v
		}
	}
	return s.serverLong(proto.AttrKillDelay, defaultKillDelay)
}
