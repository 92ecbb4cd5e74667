package server

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// Queries: what the commands and schedulers read (qstat, qselect, the
// scheduler's fetches), each under the read lock, visible as the caller
// may see it.

// visibleTo says whether who may see j.
func (s *Server) visibleTo(who *caller, j *model.Job, privileged bool) bool {
	if privileged || j.User() == who.user || s.server.Bool(proto.AttrQueryOtherJobs) {
		return true
	}
	return false
}

// statusJobs answers qstat. An array is listed as its parent; with
// req.Subjobs (qstat -t) every subjob follows it, and with
// req.LiveSubjobs (schedulers) those that are jobs of their own (queued
// alone, running, exiting): a scheduler makes the others from the
// parent's array_indices_remaining.
func (s *Server) statusJobs(who *caller, req *proto.StatusRequest, to answerTo) (*statusAnswer, error) {
	mgr, op := s.privileges(who)
	priv := mgr || op
	want := model.WantSet(req.Attrs)
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.nowUnix()
	// The lock is let go while an add waits for a slow peer (see
	// newStatusAnswer): the version sent is the one the listing began
	// at, so what changes meanwhile is sent again next time.
	answer := newStatusAnswer(to, s.mu.RLocker())
	reply := &answer.tail
	reply.Version, reply.Epoch = s.jobs.Version(), s.epoch
	render := model.NewJobRenderer(want)
	if !priv {
		render.Hidden = s.rt().Invisible()
	}
	if s.eligibleTimeOn() {
		render.ShowAccrual(now)
	}
	incremental := req.Since > 0 && req.Epoch == s.epoch && len(req.IDs) == 0
	var attrs []proto.Attr
	gone := false // the peer is gone: stop (handle says why)
	add := func(j *model.Job) {
		if incremental {
			reply.Live = append(reply.Live, j.ID)
			if j.Version <= req.Since {
				return
			}
		}
		attrs = render.AppendTo(attrs[:0], j)
		gone = gone || !answer.frames.Add(j.ID, attrs)
	}
	// subjobs lists array p's subjobs of indices (all when nil) as they
	// stand (qstat -t). An array's index set is never changed in place,
	// so going on through it after a pause is safe.
	subjobs := func(p *model.Job, indices []int) {
		show := func(i int) bool {
			if j, _, ok := s.jobs.SubjobAt(p, i, s.cfg.ServerName, now); ok {
				add(j)
			}
			return !gone
		}
		if indices == nil {
			p.Array.Indices.Each(show)
			return
		}
		for _, i := range indices {
			if !show(i) {
				return
			}
		}
	}
	all := func(queue string) {
		for i := 0; i < len(s.jobs.List()) && !gone; i++ {
			j := s.jobs.List()[i] // taken again each time: jobs come and go at each pause
			if (queue != "" && j.Queue != queue) || (!req.History && j.Finished()) || !s.visibleTo(who, j, priv) {
				continue
			}
			pauses := answer.frames.Pauses()
			if j.IsSubjob {
				if req.LiveSubjobs && !req.Subjobs {
					add(j)
				}
			} else {
				add(j)
				if j.IsArray() && req.Subjobs {
					subjobs(j, nil)
				}
			}
			if answer.frames.Pauses() != pauses {
				// Jobs came and went meanwhile: go on after j,
				// neither repeating nor skipping one that stayed.
				i = s.jobs.After(j) - 1
			}
		}
	}
	if len(req.IDs) == 0 {
		all("")
		return answer, nil
	}
	for _, raw := range req.IDs {
		if gone {
			break
		}
		id := strings.TrimSpace(raw)
		if ref, isJob := model.ParseJobRef(id); isJob {
			j, ok := s.jobs.Top(ref.Seq)
			switch {
			case !ok || ref.Kind != model.IDJob && !j.IsArray():
				reply.Errors = append(reply.Errors, proto.ObjectErrorOf(raw, proto.NewError(proto.PBSE_UNKJOBID)))
			case !s.visibleTo(who, j, priv):
				// Before the history check: "Job has finished" would
				// tell who may not see the job that it ended.
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_PERM, Text: proto.PBSE_PERM.Message()})
			case j.Finished() && !req.History:
				reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_HISTJOBID, Text: proto.PBSE_HISTJOBID.Message()})
			case ref.NamesSubjobs():
				indices := ref.IndicesOf(j)
				if len(indices) == 0 {
					reply.Errors = append(reply.Errors, proto.ObjectErrorOf(raw, proto.NewError(proto.PBSE_UNKJOBID)))
					continue
				}
				subjobs(j, indices)
			default:
				add(j)
				if j.IsArray() && req.Subjobs {
					subjobs(j, nil)
				}
			}
			continue
		}
		queue, _, _ := strings.Cut(id, "@")
		if queue == "" {
			all("")
			continue
		}
		if _, ok := s.queues.Get(queue); !ok {
			reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKQUE, Text: proto.PBSE_UNKQUE.Message()})
			continue
		}
		all(queue)
	}
	return answer, nil
}

// selectJobs answers qselect: ids of visible jobs matching every
// criterion; with req.Subjobs, arrays are replaced by their subjobs.
func (s *Server) selectJobs(who *caller, req *proto.SelectRequest) (*proto.SelectReply, error) {
	mgr, op := s.privileges(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	// A queue that does not exist is an error, not an empty selection
	// (OpenPBS: "qselect: Unknown queue", exit 170).
	for _, c := range req.Criteria {
		if c.Name != proto.AttrQueue {
			continue
		}
		if q, _, _ := strings.Cut(c.Value, "@"); q != "" {
			if _, ok := s.queues.Get(q); !ok {
				return nil, proto.Errorf(proto.PBSE_UNKQUE, "%s", q)
			}
		}
	}
	now := s.nowUnix()
	reply := &proto.SelectReply{}
	var failed error
	consider := func(j *model.Job) {
		if failed != nil || (!req.History && (j.Finished() || j.State == model.StateExpired)) {
			return
		}
		for _, c := range req.Criteria {
			match, err := matchCriterion(j, c)
			if err != nil {
				failed = err
				return
			}
			if !match {
				return
			}
		}
		reply.IDs = append(reply.IDs, j.ID)
	}
	for _, j := range s.jobs.List() {
		if j.IsSubjob || (!req.History && j.Finished()) || !s.visibleTo(who, j, mgr || op) {
			continue
		}
		if j.IsArray() && req.Subjobs {
			j.Array.Indices.Each(func(i int) bool {
				if sub, _, ok := s.jobs.SubjobAt(j, i, s.cfg.ServerName, now); ok {
					consider(sub)
				}
				return failed == nil
			})
			continue
		}
		consider(j)
	}
	if failed != nil {
		return nil, failed
	}
	return reply, nil
}

// matchCriterion evaluates one qselect criterion against j.
func matchCriterion(j *model.Job, c proto.Attr) (bool, error) {
	switch c.Name {
	case proto.AttrJobState:
		in := strings.ContainsRune(c.Value, rune(j.StateLetter()))
		if c.Op == proto.OpNE {
			return !in, nil
		}
		return in, nil
	case proto.AttrJobOwner, proto.AttrEuser, proto.AttrUserList:
		for _, u := range model.SplitList(c.Value) {
			name, host, hasHost := strings.Cut(u, "@")
			if name == j.User() && (!hasHost || strings.HasSuffix(j.Owner, "@"+host)) {
				return c.Op != proto.OpNE, nil
			}
		}
		return c.Op == proto.OpNE, nil
	case proto.AttrQueue:
		q, _, _ := strings.Cut(c.Value, "@")
		if q == "" {
			return true, nil
		}
		return (j.Queue == q) == (c.Op != proto.OpNE), nil
	case proto.AttrArray:
		isArray := strings.EqualFold(c.Value, "True")
		return (j.IsArray() == isArray) == (c.Op != proto.OpNE), nil
	case proto.AttrHoldTypes:
		h, _ := model.NormalizeHolds(c.Value)
		eq := j.Holds == h
		return eq == (c.Op != proto.OpNE), nil
	}
	if !model.IsJobAttr(c.Name) {
		return false, proto.Errorf(proto.PBSE_NOATTR, "%s", c.FullName())
	}
	v, ok := model.JobAttrValue(j, c.Name, c.Resource)
	if !ok {
		return c.Op == proto.OpNE, nil
	}
	var cmp int
	ordered := false
	if c.Resource != "" {
		cmp, ordered = j.Resources().Compare(c.Resource, v, c.Value)
	} else {
		x, errx := strconv.ParseFloat(v, 64)
		y, erry := strconv.ParseFloat(c.Value, 64)
		if errx == nil && erry == nil {
			ordered = true
			switch {
			case x < y:
				cmp = -1
			case x > y:
				cmp = 1
			}
		} else if !strings.EqualFold(v, c.Value) {
			cmp = 1
		}
	}
	switch c.Op {
	case proto.OpEQ, proto.OpSet:
		return cmp == 0, nil
	case proto.OpNE:
		return cmp != 0, nil
	}
	if !ordered {
		return false, proto.Errorf(proto.PBSE_BADATVAL, "%s cannot be compared with an ordering operator", c.FullName())
	}
	switch c.Op {
	case proto.OpGE:
		return cmp >= 0, nil
	case proto.OpGT:
		return cmp > 0, nil
	case proto.OpLE:
		return cmp <= 0, nil
	case proto.OpLT:
		return cmp < 0, nil
	}
	return false, proto.Errorf(proto.PBSE_IVALREQ, "operator %d", c.Op)
}
