// Elastic jobs: a running job's allocation grows (the scheduler adds
// chunks to its select's count range) or shrinks (the scheduler takes
// chunks above its minimum back, or the owner gives sister nodes back:
// pbs_release_nodes). See proto/resize.go for the order of the steps: a
// growth is committed, then carried out by the job's first mom (and
// undone if a new node's mom refuses to join); a shrink is marked
// (Job.Releasing), carried out by the first mom, then committed. A mom
// whose allocation differs from the store's is brought to it (resync,
// from its status reports), so that a restart in the middle leaves the
// job holding what the store says.

package server

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// allocation is a running job's chunks, each with the index of the chunk
// spec of its select it belongs to, in exec_vnode's order (mu held).
type allocation struct {
	sel   resc.Select // the select with the ranged spec's count as held
	chunk []place.Placement
	spec  []int
}

// allocationOf reads what j holds.
func allocationOf(j *model.Job) (allocation, error) {
	req, err := j.Request()
	if err != nil {
		return allocation{}, proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	as := j.Assigned()
	sel, ok := req.Select.WithNodeCount(len(as))
	if !ok {
		return allocation{}, proto.Errorf(proto.PBSE_SYSTEM, "(job %s holds %d chunks; its select %s takes %d to %d)", j.ID, len(as), req.Select, req.Select.NodeCount(), req.Select.MaxNodeCount())
	}
	var a allocation
	a.sel = sel
	k := 0
	for i, c := range sel {
		for n := 0; n < c.Count; n++ {
			a.chunk = append(a.chunk, place.Placement{Node: as[k].Node, Chunk: c.One()})
			a.spec = append(a.spec, i)
			k++
		}
	}
	return a, nil
}

// nodes lists the allocation's nodes, each once, in order.
func (a allocation) nodes() []string {
	var out []string
	for _, p := range a.chunk {
		if !slices.Contains(out, p.Node) {
			out = append(out, p.Node)
		}
	}
	return out
}

// without is the allocation less every chunk on the nodes given.
func (a allocation) without(nodes []string) allocation {
	var out allocation
	out.sel = slices.Clone(a.sel)
	for k, p := range a.chunk {
		if slices.Contains(nodes, p.Node) {
			out.sel[a.spec[k]].Count--
			continue
		}
		out.chunk = append(out.chunk, p)
		out.spec = append(out.spec, a.spec[k])
	}
	return out
}

// checkResizeSignal refuses a resize_signal this system has no signal of
// that name for (the model checks only its form).
func checkResizeSignal(j *model.Job) error {
	if j.ResizeSignal == "" {
		return nil
	}
	if _, special, ok := signals.Parse(j.ResizeSignal); !ok || special != "" {
		return proto.Errorf(proto.PBSE_BADATVAL, "resize_signal = %q (not a signal of this system)", j.ResizeSignal)
	}
	return nil
}

// resizing notes the jobs whose resize is under way (mu held), so that a
// status report in the meantime does not start a resync of its own.
func (s *Server) resizingNow(key model.JobKey, on bool) bool {
	if s.resizing == nil {
		s.resizing = map[model.JobKey]bool{}
	}
	if on && s.resizing[key] {
		return false
	}
	if on {
		s.resizing[key] = true
	} else {
		delete(s.resizing, key)
	}
	return true
}

// resizeJob grows or shrinks a running job (MsgResizeJob).
func (s *Server) resizeJob(who *caller, req *proto.ResizeRequest) error {
	mgr, op := s.privileges(who)
	switch {
	case len(req.Add) > 0 && (len(req.Release) > 0 || req.All):
		return proto.Errorf(proto.PBSE_IVALREQ, "(a resize either adds chunks or gives nodes back)")
	case len(req.Add) > 0 && !mgr && !op:
		return proto.Errorf(proto.PBSE_PERM, "(only a scheduler adds chunks to a job)")
	case len(req.Add) == 0 && len(req.Release) == 0 && !req.All:
		return proto.Errorf(proto.PBSE_IVALREQ, "(no node to add or give back)")
	}
	if len(req.Add) > 0 {
		return s.growJob(req)
	}
	return s.shrinkJob(who, mgr || op, req)
}

// growJob adds chunks to a running job's ranged chunk spec on the nodes
// req.Add names: committed first, then carried out by the first mom.
func (s *Server) growJob(req *proto.ResizeRequest) error {
	var key model.JobKey
	var after *resizeCall
	var old resc.Alloc
	err := s.commit.Do(func(b *store.Batch) error {
		j, a, err := s.resizable(req.JobID)
		if err != nil {
			return err
		}
		r, _ := j.Request()
		ei := r.Select.Elastic()
		if ei < 0 {
			return proto.Errorf(proto.PBSE_BADATVAL, "(job %s's select %s has no chunk count range)", j.ID, r.Select)
		}
		if n := len(a.chunk) + len(req.Add); n > r.Select.MaxNodeCount() {
			return proto.Errorf(proto.PBSE_BADATVAL, "(job %s would hold %d chunks; its select %s takes at most %d)", j.ID, n, r.Select, r.Select.MaxNodeCount())
		}
		held := a.nodes()
		for _, n := range req.Add {
			switch r.Place.Arrangement {
			case resc.ArrangeScatter, resc.ArrangeVScatter:
				if slices.Contains(held, n) {
					return proto.Errorf(proto.PBSE_RESCUNAV, "(job %s is place=%s and holds %s already)", j.ID, r.Place.Arrangement, n)
				}
			case resc.ArrangePack:
				if n != held[0] {
					return proto.Errorf(proto.PBSE_RESCUNAV, "(job %s is place=pack: it grows on %s only)", j.ID, held[0])
				}
			}
		}
		grown, _ := r.Select.WithNodeCount(len(a.chunk) + len(req.Add))
		if err := s.admitView().CheckGrowth(j, grown); err != nil {
			return err
		}
		add := r.Select[ei]
		add.Count, add.Max = len(req.Add), 0
		p, err := place.Chunks(resc.Select{add}, r.Place, s.startView().Free(req.Add, r.Place.Sharing == resc.SharingExclHost), req.Add)
		if err != nil {
			return proto.Errorf(proto.PBSE_RESCUNAV, "(%v)", err)
		}
		// The new chunks go after the ranged spec's own, keeping the
		// select's order in exec_vnode.
		last := 0
		for k, sp := range a.spec {
			if sp <= ei {
				last = k + 1
			}
		}
		chunks := slices.Concat(a.chunk[:last], p, a.chunk[last:])
		alloc, nodefile := place.AllocOf(chunks, s.nodes.MomOf)
		if !s.resizingNow(j.Key(), true) {
			return proto.Errorf(proto.PBSE_BADSTATE, "(job %s is being resized)", j.ID)
		}
		key, old = j.Key(), j.Alloc
		s.editJob(b, j, func() {
			j.Alloc = alloc
			if req.Comment != "" {
				j.Comment = req.Comment
			}
		})
		after = s.momResize(j, chunks, nodefile)
		b.After(func() { s.account(accounting.Update, j, s.updateRecord(j)) })
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		s.mu.Lock()
		s.resizingNow(key, false)
		s.mu.Unlock()
	}()
	err = fault.Hit(fault.ServerResizeMom)
	if err == nil {
		err = s.callMomResize(after)
	}
	if err != nil {
		// Undone in one step: the job holds what it held.
		s.commit.Do(func(b *store.Batch) error {
			if j, ok := s.jobs.Get(key); ok && j.Active() && j.Alloc.Equal(after.alloc) {
				s.editJob(b, j, func() { j.Alloc = old })
			}
			return nil
		})
		s.log.Warn("growth of a job undone: its mom could not add the nodes", "job", req.JobID, "nodes", strings.Join(req.Add, "+"), "error", err)
		var pe *proto.Error
		if errors.As(err, &pe) {
			if node, ok := proto.SisterJoinNode(pe.Text); ok && slices.Contains(req.Add, node) {
				// Marked, so that the next cycle does not try it again:
				// an admin looks and brings it back (pbsnodes -r).
				s.markNodeOffline(node, "job "+req.JobID+" could not grow onto this node: "+pe.Text)
			}
		}
		return proto.Errorf(proto.PBSE_MOMREJECT, "(growth undone: %v)", err)
	}
	s.log.Info("job grown", "job", req.JobID, "nodes", strings.Join(req.Add, "+"), "exec_vnode", after.ExecVnode)
	s.schedEvent(proto.SchedNew)
	return nil
}

// markNodeOffline takes a node offline with why as its comment.
func (s *Server) markNodeOffline(name, why string) {
	s.commit.Do(func(b *store.Batch) error {
		n, _ := s.nodes.Get(name)
		if n == nil {
			return nil
		}
		c := n.Clone()
		c.Set(proto.AttrNodeState, "", model.NodeOffline)
		c.Set(proto.AttrComment, "", why)
		c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(s.now().Unix(), 10))
		s.nodes.Put(c)
		b.PutNode(c)
		return nil
	})
	s.log.Warn("node marked offline", "node", name, "comment", why)
}

// resizable finds a job that may be resized now (mu held), with what it
// holds.
func (s *Server) resizable(id string) (*model.Job, allocation, error) {
	j, err := s.jobs.Lookup(id)
	if err != nil {
		return nil, allocation{}, err
	}
	if j.State != model.StateRunning || j.Substate == model.SubRerun {
		return nil, allocation{}, proto.Errorf(proto.PBSE_BADSTATE, "(job %s is not running)", j.ID)
	}
	if j.Releasing.Pending() {
		return nil, allocation{}, proto.Errorf(proto.PBSE_BADSTATE, "(job %s is giving nodes back)", j.ID)
	}
	a, err := allocationOf(j)
	return j, a, err
}

// resizeCall is a resize for a job's first mom: the request, and the
// allocation it brings the job to.
type resizeCall struct {
	*proto.MomResize
	alloc resc.Alloc
}

// momResize is the request that brings j's first mom to the allocation
// chunks (mu held); nodefile nil: made from the chunks.
func (s *Server) momResize(j *model.Job, chunks []place.Placement, nodefile []string) *resizeCall {
	alloc, nf := place.AllocOf(chunks, s.nodes.MomOf)
	if nodefile == nil {
		nodefile = nf
	}
	return &resizeCall{alloc: alloc, MomResize: &proto.MomResize{JobID: j.ID, RunCount: j.RunCount,
		ExecHost: alloc.ExecHost(), ExecVnode: alloc.ExecVnode(), NodeFile: nodefile, Moms: s.jobMoms(chunks), Alloc: momAlloc(chunks)}}
}

// callMomResize sends a resize to the job's first mom (its allocation's
// mother superior, which no resize changes) on a connection of its own,
// waiting as long as the mom may take: the new moms' joins, or a graceful
// shrink's grace and the kill delay after it.
func (s *Server) callMomResize(call *resizeCall) error {
	req := call.MomResize
	addr, err := s.momAddr(call.alloc.Mother())
	if err != nil {
		return err
	}
	wait := momTimeout + time.Minute
	if !req.Immediate {
		wait += time.Duration(req.Grace) * time.Second
	}
	c, err := s.dialDaemon(addr, wait)
	if err != nil {
		return proto.Errorf(proto.PBSE_NORELYMOM, "(mom at %s: %v)", addr, err)
	}
	defer c.Close()
	return c.Call(proto.MsgMomResizeJob, req, nil)
}

// updateRecord is the body of a u accounting record (OpenPBS's, for an
// allocation that changed while the job runs): the new allocation and
// what the job used so far.
func (s *Server) updateRecord(j *model.Job) []accounting.KV {
	kvs := s.queuedRecord(j)
	kvs = append(kvs, accounting.KV{Key: "exec_host", Value: j.ExecHost()}, accounting.KV{Key: "exec_vnode", Value: j.ExecVnode()})
	for _, p := range j.ResourcesUsed {
		kvs = append(kvs, accounting.KV{Key: "resources_used." + p.Name, Value: p.Value})
	}
	return kvs
}

// shrinkJob gives back the job's chunks on the nodes req names: marked,
// carried out by the first mom, then committed.
func (s *Server) shrinkJob(who *caller, privileged bool, req *proto.ResizeRequest) error {
	giveBack := !privileged || req.GiveBack
	var key model.JobKey
	var target *resizeCall
	err := s.commit.Do(func(b *store.Batch) error {
		j, a, err := s.resizable(req.JobID)
		if err != nil {
			return err
		}
		if !privileged && j.User() != who.user {
			return proto.NewError(proto.PBSE_PERM)
		}
		held := a.nodes()
		release := req.Release
		if req.All {
			release = held[1:]
		}
		if len(release) == 0 {
			return proto.Errorf(proto.PBSE_IVALREQ, "(job %s runs on its first node only: nothing to give back)", j.ID)
		}
		for _, n := range release {
			switch {
			case n == held[0]:
				return proto.Errorf(proto.PBSE_IVALREQ, "(%s is job %s's first node: it cannot be given back)", n, j.ID)
			case !slices.Contains(held, n):
				return proto.Errorf(proto.PBSE_UNKNODE, "(%s is not a node of job %s)", n, j.ID)
			}
		}
		r, _ := j.Request()
		rest := a.without(release)
		if !giveBack {
			// The scheduler takes back only what is above the minimum of
			// the ranged spec.
			ei := r.Select.Elastic()
			for k, p := range a.chunk {
				if slices.Contains(release, p.Node) && a.spec[k] != ei {
					return proto.Errorf(proto.PBSE_BADATVAL, "(%s holds a chunk of job %s outside its count range)", p.Node, j.ID)
				}
			}
			if ei < 0 || rest.sel[ei].Count < r.Select[ei].Count {
				return proto.Errorf(proto.PBSE_BADATVAL, "(job %s would hold fewer chunks than its select %s's minimum)", j.ID, r.Select)
			}
		}
		if !s.resizingNow(j.Key(), true) {
			return proto.Errorf(proto.PBSE_BADSTATE, "(job %s is being resized)", j.ID)
		}
		key = j.Key()
		s.editJob(b, j, func() { j.Releasing = model.Release{Nodes: release, GiveBack: giveBack} })
		target = s.momResize(j, rest.chunk, nil)
		target.Grace, target.Immediate = req.Grace, req.Immediate
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		s.mu.Lock()
		s.resizingNow(key, false)
		s.mu.Unlock()
	}()
	return s.finishShrink(key, target)
}

// finishShrink has the first mom end the job's parts the shrink gives
// back, then commits the smaller allocation; a mom that cannot leaves the
// job as it was (its mark taken back).
func (s *Server) finishShrink(key model.JobKey, target *resizeCall) error {
	if err := s.callMomResize(target); err != nil {
		s.commit.Do(func(b *store.Batch) error {
			if j, ok := s.jobs.Get(key); ok && j.Releasing.Pending() {
				s.editJob(b, j, func() { j.Releasing = model.Release{} })
			}
			return nil
		})
		return proto.Errorf(proto.PBSE_MOMREJECT, "(shrink not done: %v)", err)
	}
	return s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		if !ok || !j.Active() || j.RunCount != target.RunCount || !j.Releasing.Pending() {
			return nil
		}
		release, giveBack := j.Releasing.Nodes, j.Releasing.GiveBack
		a, err := allocationOf(j)
		if err != nil {
			return err
		}
		rest := a.without(release)
		rl := j.ResourceList
		if giveBack {
			// What the owner gave back is gone for good: the select
			// asks for what is left (the range's maximum too), as
			// OpenPBS lowers the job's request on pbs_release_nodes.
			r, _ := j.Request()
			sel := slices.Clone(r.Select)
			for i := range sel {
				left := rest.sel[i].Count
				if sel[i].Max > 0 {
					sel[i].Count, sel[i].Max = min(sel[i].Count, left), left
					if sel[i].Max <= sel[i].Count {
						sel[i].Max = 0
					}
				} else {
					sel[i].Count = left
				}
			}
			var kept resc.Select
			for _, c := range sel {
				if c.Count > 0 {
					kept = append(kept, c)
				}
			}
			rl = rl.Set(proto.ResSelect, kept.String())
			for name, v := range kept.Totals() {
				rl = rl.Set(name, v)
			}
		}
		alloc, _ := place.AllocOf(rest.chunk, s.nodes.MomOf)
		s.editJob(b, j, func() {
			j.Alloc, j.Releasing = alloc, model.Release{}
			j.ResourceList = rl
		})
		b.After(func() {
			s.account(accounting.Update, j, s.updateRecord(j))
			// What the job gave back is free: a job waiting for it
			// (the one a balanced shrink was for) need not wait for
			// the next periodic cycle.
			s.schedEvent(proto.SchedTerm)
		})
		s.log.Info("job shrunk", "job", j.ID, "released", strings.Join(release, "+"), "exec_vnode", alloc.ExecVnode())
		return nil
	})
}

// resyncJob brings the first mom of a running job whose reported
// allocation differs from the store's to the store's (after a restart in
// the middle of a resize), or finishes a shrink under way.
func (s *Server) resyncJob(key model.JobKey) {
	s.mu.Lock()
	j, ok := s.jobs.Get(key)
	if !ok || !j.Active() || !s.resizingNow(key, true) {
		s.mu.Unlock()
		return
	}
	a, err := allocationOf(j)
	var target *resizeCall
	if err == nil {
		if j.Releasing.Pending() {
			target = s.momResize(j, a.without(j.Releasing.Nodes).chunk, nil)
			target.Immediate = true
		} else {
			target = s.momResize(j, a.chunk, nil)
		}
	}
	releasing := j.Releasing.Pending()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.resizingNow(key, false)
		s.mu.Unlock()
	}()
	if target == nil {
		return
	}
	s.log.Warn("job's mom holds another allocation than the store: bringing it to the store's", "job", target.JobID, "exec_vnode", target.ExecVnode)
	if releasing {
		if err := s.finishShrink(key, target); err != nil {
			s.log.Warn("shrink not finished", "job", target.JobID, "error", err)
		}
		return
	}
	if err := s.callMomResize(target); err != nil {
		s.log.Warn("cannot bring the job's mom to its allocation", "job", target.JobID, "error", err)
	}
}
