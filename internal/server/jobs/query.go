package jobs

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// View is the server's state as the job queries read it, under the
// server's lock.
type View struct {
	Jobs   *state.Jobs
	Queues *state.Queues
	// Table is the resource table: resources flagged invisible are
	// hidden from who is not an operator or a manager.
	Table *resc.Table
	// ServerName completes the ids of subjobs made from their array.
	ServerName string
	// Epoch names this run of the server: a scheduler's incremental
	// fetch (Since) holds only within one.
	Epoch string
	// QueryOthers is the server's query_other_jobs: every job is
	// visible to everyone.
	QueryOthers bool
	// EligibleTime is the server's eligible_time_enable: jobs show their
	// accrual.
	EligibleTime bool
}

// Caller is who asks: a user, and whether an operator or a manager.
type Caller struct {
	User       string
	Privileged bool
}

// Visible says whether who may see j.
func (v View) Visible(who Caller, j *model.Job) bool {
	return who.Privileged || j.User() == who.User || v.QueryOthers
}

// Status answers qstat and the schedulers' job fetches for who at now:
// the jobs streamed through frames, refusals and the listing's version in
// reply. An array is listed as its parent; with req.Subjobs (qstat -t)
// every subjob follows it, and with req.LiveSubjobs (schedulers) those
// that are jobs of their own (queued alone, running, exiting): a
// scheduler makes the others from the parent's array_indices_remaining.
// frames may let the server's lock go while a slow peer reads: the
// version sent is the one the listing began at, so what changes meanwhile
// is sent again next time.
func (v View) Status(req *proto.StatusRequest, who Caller, now int64, frames *proto.StatusFrames, reply *proto.StatusReply) {
	priv := who.Privileged
	want := model.WantSet(req.Attrs)
	reply.Version, reply.Epoch = v.Jobs.Version(), v.Epoch
	render := model.NewJobRenderer(want)
	if !priv {
		render.Hidden = v.Table.Invisible()
	}
	if v.EligibleTime {
		render.ShowAccrual(now)
	}
	incremental := req.Since > 0 && req.Epoch == v.Epoch && len(req.IDs) == 0
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
		st := proto.Status{Name: j.ID, Attrs: attrs}
		if req.Alloc && (want == nil || want[proto.AttrExecVnode]) {
			st.Alloc = HeldOf(j.Alloc)
		}
		gone = gone || !frames.AddStatus(&st)
	}
	// subjobs lists array p's subjobs of indices (all when nil) as they
	// stand (qstat -t). An array's index set is never changed in place,
	// so going on through it after a pause is safe.
	subjobs := func(p *model.Job, indices []int) {
		show := func(i int) bool {
			if j, _, ok := v.Jobs.SubjobAt(p, i, v.ServerName, now); ok {
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
		for i := 0; i < len(v.Jobs.List()) && !gone; i++ {
			j := v.Jobs.List()[i] // taken again each time: jobs come and go at each pause
			if (queue != "" && j.Queue != queue) || (!req.History && j.Finished()) || !v.Visible(who, j) {
				continue
			}
			pauses := frames.Pauses()
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
			if frames.Pauses() != pauses {
				// Jobs came and went meanwhile: go on after j,
				// neither repeating nor skipping one that stayed.
				i = v.Jobs.After(j) - 1
			}
		}
	}
	if len(req.IDs) == 0 {
		all("")
		return
	}
	for _, raw := range req.IDs {
		if gone {
			break
		}
		id := strings.TrimSpace(raw)
		if ref, isJob := model.ParseJobRef(id); isJob {
			j, ok := v.Jobs.Top(ref.Seq)
			switch {
			case !ok || ref.Kind != model.IDJob && !j.IsArray():
				reply.Errors = append(reply.Errors, proto.ObjectErrorOf(raw, proto.NewError(proto.PBSE_UNKJOBID)))
			case !v.Visible(who, j):
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
		if _, ok := v.Queues.Get(queue); !ok {
			reply.Errors = append(reply.Errors, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKQUE, Text: proto.PBSE_UNKQUE.Message()})
			continue
		}
		all(queue)
	}
}

// Select answers qselect for who at now: ids of visible jobs matching
// every criterion; with req.Subjobs, arrays are replaced by their
// subjobs.
func (v View) Select(req *proto.SelectRequest, who Caller, now int64) (*proto.SelectReply, error) {
	// A queue that does not exist is an error, not an empty selection
	// (OpenPBS: "qselect: Unknown queue", exit 170).
	for _, c := range req.Criteria {
		if c.Name != proto.AttrQueue {
			continue
		}
		if q, _, _ := strings.Cut(c.Value, "@"); q != "" {
			if _, ok := v.Queues.Get(q); !ok {
				return nil, proto.Errorf(proto.PBSE_UNKQUE, "%s", q)
			}
		}
	}
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
	for _, j := range v.Jobs.List() {
		if j.IsSubjob || (!req.History && j.Finished()) || !v.Visible(who, j) {
			continue
		}
		if j.IsArray() && req.Subjobs {
			j.Array.Indices.Each(func(i int) bool {
				if sub, _, ok := v.Jobs.SubjobAt(j, i, v.ServerName, now); ok {
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

// HeldOf is an allocation on the wire (proto.Held, chunk by chunk), nil
// for none.
func HeldOf(a resc.Alloc) []proto.Held {
	if len(a) == 0 {
		return nil
	}
	out := make([]proto.Held, len(a))
	for i, h := range a {
		rs := make([]proto.ResourceValue, len(h.Resources))
		for k, p := range h.Resources {
			rs[k] = proto.ResourceValue{Name: p.Name, Value: p.Value}
		}
		out[i] = proto.Held{Vnode: h.Vnode, Host: h.Host, Ncpus: h.Ncpus, Resources: rs}
	}
	return out
}
