package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/filter"
	"github.com/gopbs/gopbs/internal/jobjson"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Submission filters (DESIGN §7): the programs of the destination queue's
// submission_filters, then the server's, run at qsub on the job's JSON
// file (package filter has the calling contract, package jobjson the
// file). Exit 0 accepts the job as it is, 1 as the program rewrote the
// file; anything else, a timeout or a missing program refuses it, and
// the filters that accepted it before are called again in reverse order
// with --revert.

// Environment of a submission filter, besides filter.EnvKind and
// filter.EnvJobID.
const (
	envUser  = "PBS_FILTER_USER"  // the submitting user
	envGroup = "PBS_FILTER_GROUP" // their group
	envHost  = "PBS_FILTER_HOST"  // the host qsub ran on
	envQueue = "PBS_FILTER_QUEUE" // the destination queue as submitted
	// envOperation is the request the filters judge: qsub, or qalter of a
	// job that has not started (the file then holds the job as altered).
	envOperation = "PBS_FILTER_OPERATION"
)

// The whole chain, and its reverts, must end well within qsub's request
// timeout (proto.DefaultTimeout, 60 s), or qsub would give up on a job
// the server then accepts: filters still running past chainBudget time out.
const (
	chainBudget  = 40 * time.Second
	revertBudget = 15 * time.Second
)

// filtered is a job the submission filters accepted.
type filtered struct {
	job   *model.Job
	queue string // the destination queue, as a filter may have changed it
	seq   int64  // the id the filters saw, reserved for the job
	chain filter.Chain
	file  string
	rm    func()
}

func (f *filtered) reserved() int64 {
	if f == nil {
		return 0
	}
	return f.seq
}

func (f *filtered) remove() { f.rm() }

// revert calls every filter of the chain again, last first: admission
// refused a job they all accepted.
func (f *filtered) revert(s *Server, why string) {
	s.revertFilters(f.chain, f.file, len(f.chain.Programs), f.job.ID, why)
}

func (s *Server) revertFilters(c filter.Chain, file string, n int, id, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), revertBudget)
	defer cancel()
	for _, r := range c.Revert(ctx, file, n) {
		s.log.Info("submission filter reverted", "job", id, "filter", r.Program, "result", r.Reason(), "why", why)
	}
}

// submissionFilters reads the chain for a job bound for queue (mu held
// for reading): the queue's filters first, then the server's.
func (s *Server) submissionFilters(queue string) filter.Chain {
	var c filter.Chain
	if q, ok := s.queues.Get(queue); ok {
		v, _ := q.Get(proto.AttrSubmissionFilters)
		c.Programs = append(c.Programs, model.SplitList(v)...)
	}
	v, _ := s.server.Get(proto.AttrSubmissionFilters)
	c.Programs = append(c.Programs, model.SplitList(v)...)
	if n, ok := s.server.Long(proto.AttrSubmissionFilterTimeout); ok {
		c.Timeout = time.Duration(n) * time.Second
	}
	return c
}

// filterSubmission is admission's step 2. It returns nil when no filter
// applies, and a refusal naming the filter and why when one refuses.
// No lock is held while filters run.
func (s *Server) filterSubmission(who *caller, base *model.Job, queueReq string) (*filtered, error) {
	s.mu.RLock()
	queue := queueReq
	if queue == "" {
		queue, _ = s.server.Get(proto.AttrDefaultQueue)
	}
	q, known := s.queues.Get(queue)
	chain := s.submissionFilters(queue)
	var view model.Resources
	var verr error
	if len(chain.Programs) > 0 {
		// Filters see the resources as they will be stored: nodes= turned
		// into a select, defaults in, and the totals (ncpus, mem, nodect)
		// derived, so a limit is one number to compare, whichever way the
		// user wrote the request. A route queue's destination is not known
		// yet: its jobs are shown with the server's defaults alone.
		if !known {
			q = nil
		} else if qt, _ := q.Get(proto.AttrQueueTypeQ); qt != "Execution" {
			q = nil
		}
		view, verr = s.admitView().NormalResources(base.ResourceList, q)
	}
	s.mu.RUnlock()
	// A job for no queue is refused before any filter sees it: filters
	// run as root and each run reserves an id, neither of which a typo
	// (or a hostile queue name in PBS_FILTER_QUEUE) should cost.
	switch {
	case queue == "":
		return nil, proto.NewError(proto.PBSE_QUENODFLT)
	case !known:
		return nil, proto.Errorf(proto.PBSE_UNKQUE, "%s", queue)
	}
	if len(chain.Programs) == 0 {
		return nil, nil
	}
	if verr != nil {
		return nil, verr // what admission would say, before root's filters read it
	}
	// The job gets its id now, so that the filters see it (and may
	// record it, as a license filter does). The next id is made durable
	// before they run, so that not even a crash gives that id to
	// another job: a refused job leaves a gap, never a reuse.
	var seq int64
	if err := s.commit.Do(func(b *store.Batch) error {
		seq = s.nextSeq
		s.nextSeq++
		b.SetNextSeq(s.nextSeq)
		return nil
	}); err != nil {
		return nil, err
	}

	j := base.Clone()
	j.ResourceList = view
	j.Seq, j.QueueRank = seq, seq
	j.ID = s.idOf(j)
	now := s.nowUnix()
	j.Submitted(queue, now)
	chain.Env = filter.Env(filter.EnvKind, "submission", filter.EnvJobID, j.ID, envOperation, "qsub",
		envUser, who.user, envGroup, who.group, envHost, j.SubmitHost, envQueue, queue)
	run, err := s.runSubmissionChain(chain, j, true, now)
	if err != nil {
		return nil, err
	}
	j.ResourceList = keptResources(s.rt(), base.ResourceList, j.ResourceList, run.changed)
	return &filtered{job: j, queue: j.Queue, seq: seq, chain: chain, file: run.file, rm: run.rm}, nil
}

// keptResources is the resource list a filtered job goes on with. When no
// filter rewrote a resource it is the one submitted, which the destination
// queue normalises as usual (a route queue's destination applies its own
// defaults). Otherwise it is the filters' normalised view with the
// derived totals dropped for admission to derive again, as after qalter:
// a rewritten select keeps its shape; a rewritten total (ncpus) rebuilds
// a one-chunk select from the job-wide amounts.
func keptResources(rt *resc.Table, submitted, view model.Resources, changed []proto.Attr) model.Resources {
	for _, a := range changed {
		if a.Name == proto.AttrResourceList {
			return rederivable(rt, view, changed)
		}
	}
	return submitted
}

// chainRun is a submission chain that accepted a job: what the rewrites
// changed, and the job file (removed by rm) for a later revert.
type chainRun struct {
	changed []proto.Attr
	file    string
	rm      func()
}

// runSubmissionChain runs chain (its Env set by the caller) on j's job
// file, with no lock held. Rewrites (exit 1) are applied to j; a filter
// may move the job to another queue only when moveQueue is set (at qsub:
// qalter does not move jobs, qmove does). A refusal reverts the filters
// before it and comes back as the PBSE_PERM error the user sees.
func (s *Server) runSubmissionChain(chain filter.Chain, j *model.Job, moveQueue bool, now int64) (*chainRun, error) {
	data, err := jobjson.Encode(proto.Status{Name: j.ID, Attrs: model.JobStatus(j, nil)}, s.cfg.ServerName, time.Unix(now, 0), time.Local)
	if err != nil {
		return nil, fmt.Errorf("submission filters: %w", err)
	}
	accepted, err := jobjson.Decode(data, time.Local)
	if err != nil {
		return nil, fmt.Errorf("submission filters: the job file does not read back: %w", err)
	}
	file, rm, err := filter.TempFile(data)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_SYSTEM, "%v", err)
	}
	run := &chainRun{file: file, rm: rm}
	ctx, cancel := context.WithTimeout(context.Background(), chainBudget)
	defer cancel()
	_, ref := chain.Run(ctx, file, func(i int, r filter.Result) error {
		switch {
		case r.Exit0():
			// Accepted as it is: whatever the program wrote does not
			// count, and the next filter must not see it.
			return restore(file, data)
		case r.Outcome == filter.Exited && r.Code == 1:
			rewritten, err := readRewrite(file)
			if err == nil {
				var after *jobjson.Job
				if after, err = jobjson.Decode(rewritten, time.Local); err == nil {
					var diff []proto.Attr
					diff, err = applyRewrite(s.rt(), j, accepted, after, moveQueue)
					run.changed = append(run.changed, diff...)
					accepted, data = after, rewritten
				}
			}
			if err != nil {
				return fmt.Errorf("exit 1 with a rewrite that is refused: %w", err)
			}
			s.log.Info("submission filter rewrote the job", "job", j.ID, "filter", r.Program)
			return nil
		}
		return &filter.Refusal{Result: r}
	})
	if ref != nil {
		s.log.Info("submission filter refused a job", "job", j.ID, "owner", j.Owner, "filter", ref.Result.Program, "why", ref.Error())
		s.revertFilters(chain, file, ref.Index, j.ID, ref.Error())
		rm()
		return nil, &proto.Error{Code: proto.PBSE_PERM, Text: "Job rejected by submission " + ref.Error()}
	}
	return run, nil
}

// restore puts back what the last accepting filter left, when a program
// that exited 0 changed the file anyway.
func restore(file string, data []byte) error {
	now, err := os.ReadFile(file)
	if err == nil && bytes.Equal(now, data) {
		return nil
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return fmt.Errorf("restoring the job file: %w", err)
	}
	return nil
}

// readRewrite reads a rewritten job file, bounded in size.
func readRewrite(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("the job file is gone: %w", err)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, jobjson.MaxSize+1))
}

// filterPriv is what a filter may change: anything an operator and
// manager may set at submission, besides the destination queue.
var filterPriv = model.Privilege{Owner: true, Operator: true, Manager: true}

// applyRewrite applies to j what a filter changed in the job file from
// before to after. The id, the owner and every attribute the server alone
// sets may not change; the queue may.
// It returns the changes applied.
func applyRewrite(rt *resc.Table, j *model.Job, before, after *jobjson.Job, moveQueue bool) ([]proto.Attr, error) {
	if after.ID != before.ID {
		return nil, fmt.Errorf("the job id changed from %s to %s, which a filter may not change", before.ID, after.ID)
	}
	if top := jobjson.TopChanges(before, after); len(top) > 0 {
		return nil, fmt.Errorf("%s is written at the top of the job file, outside \"Jobs\" (a change is written under Jobs.%s)", strings.Join(top, ", "), after.ID)
	}
	// A filter may write a name in any case, as qsub -W may.
	canon := make(map[jobjson.Key]string, len(after.Attrs))
	for k, v := range after.Attrs {
		written := k.Name
		k.Name = model.CanonicalJobAttr(k.Name)
		if _, dup := canon[k]; dup {
			return nil, fmt.Errorf("%s is written twice (as %s and in another case)", k.Name, written)
		}
		canon[k] = v
	}
	after = &jobjson.Job{ID: after.ID, Attrs: canon}
	diff := jobjson.Diff(before, after)
	for _, a := range diff {
		if a.Name == proto.AttrQueue && a.Resource == "" {
			if !moveQueue {
				return nil, fmt.Errorf("the queue changed to %q, which a filter may not change on qalter (qmove moves jobs)", a.Value)
			}
			if a.Op == proto.OpUnset || model.CheckQueueName(a.Value) != nil {
				return nil, fmt.Errorf("queue %q is not a queue name", a.Value)
			}
			j.Queue = a.Value
			continue
		}
		if err := model.SetJobAttr(rt, j, a, filterPriv, model.AtSubmit); err != nil {
			if proto.CodeOf(err) == proto.PBSE_ATTRRO {
				return nil, fmt.Errorf("%s changed, which a filter may not change", a.FullName())
			}
			return nil, fmt.Errorf("%s: %w", a.FullName(), err)
		}
	}
	return diff, nil
}

// alterVerdict is what the submission filters said of one qalter request.
// err is their refusal; run, when set, is an acceptance to revert should
// the alteration then fail.
type alterVerdict struct {
	chain filter.Chain
	run   *chainRun
	err   error
	// hooked are what the modifyjob hooks set (hooks.go).
	hooked []proto.Attr
}

// extra are the changes the hooks and the filters' rewrites add to the
// request, applied with the filters' (a manager's) rights.
func (v alterVerdict) extra() []proto.Attr {
	if v.run == nil {
		return v.hooked
	}
	return append(slices.Clip(v.hooked), v.run.changed...)
}

// filterAlteration runs the submission filters of the job's queue and the
// server on the job as req would leave it, when the job has not started
// (OpenPBS runs its modifyjob hooks on every qalter; a limit a filter keeps
// at qsub must hold after qalter too). Errors resolving or altering the
// job are left to the commit, which finds them again under its lock; no
// lock is held while the filters run.
func (s *Server) filterAlteration(who *caller, req *proto.AlterRequest, hooked []proto.Attr, mgr, op bool) alterVerdict {
	s.mu.RLock()
	top, _, priv, err := s.resolve(who, req.JobID, mgr, op)
	if err != nil || top.Active() {
		s.mu.RUnlock()
		return alterVerdict{hooked: hooked}
	}
	chain := s.submissionFilters(top.Queue)
	var c *model.Job
	if len(chain.Programs) > 0 {
		c, _, err = s.alteredCopy(top, priv, req.Attrs)
		if err == nil && len(hooked) > 0 {
			c, _, err = s.alteredCopy(c, filterPriv, hooked)
		}
	}
	s.mu.RUnlock()
	if c == nil || err != nil {
		return alterVerdict{hooked: hooked}
	}
	chain.Env = filter.Env(filter.EnvKind, "submission", filter.EnvJobID, c.ID, envOperation, "qalter",
		envUser, who.user, envGroup, who.group, envHost, who.host, envQueue, c.Queue)
	run, err := s.runSubmissionChain(chain, c, false, s.nowUnix())
	return alterVerdict{chain: chain, run: run, err: err, hooked: hooked}
}
