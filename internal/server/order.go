package server

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// orderJob is qorder (OpenPBS's req_orderjob): jobs id1 and id2 change
// places in the order the server lists jobs, which is the order the
// scheduler tries them in when no sort key separates them. Like OpenPBS
// it swaps the two jobs' queue_rank; jobs of different queues also swap
// queues, each entering the other's queue as qmove would put it there
// (enabled, access lists, limits, defaults). Each job must be the
// caller's own unless an operator or manager asks, must not be running
// (R, an array that began, E: OpenPBS refuses R and B; an exiting job
// is still on its nodes) and must be a job or a whole array, not
// subjobs (PBSE_IVALREQ). The ranks are stored, so the order survives a
// restart.
func (s *Server) orderJob(who *caller, id1, id2 string) error {
	mgr, op := s.privileges(who)
	var j1, j2 *model.Job
	err := s.commit.Do(func(b *store.Batch) error {
		var err error
		if j1, err = s.orderable(who, id1, mgr, op); err != nil {
			return err
		}
		if j2, err = s.orderable(who, id2, mgr, op); err != nil {
			return err
		}
		if j1 == j2 {
			return nil
		}
		now := s.nowUnix()
		if j1.Queue != j2.Queue {
			if err := s.swapQueues(b, who, j1, j2, now); err != nil {
				return err
			}
		}
		group1, group2 := append([]*model.Job{j1}, s.jobs.LiveSubjobs(j1)...), append([]*model.Job{j2}, s.jobs.LiveSubjobs(j2)...)
		r1, r2 := j1.QueueRank, j2.QueueRank
		groups := []struct {
			jobs []*model.Job
			rank int64
		}{{group1, r2}, {group2, r1}}
		s.jobs.Reorder(func() {
			for _, g := range groups {
				for _, j := range g.jobs {
					s.jobs.Update(j, func() { j.QueueRank = g.rank })
				}
			}
		}, append(group1, group2...)...)
		for _, j := range append(group1, group2...) {
			s.save(b, j)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if j1 != j2 {
		s.log.Info("jobs reordered", "job", j1.ID, "with", j2.ID, "by", who.user+"@"+who.host)
	}
	return nil
}

// orderable resolves one qorder operand (mu held).
func (s *Server) orderable(who *caller, id string, mgr, op bool) (*model.Job, error) {
	j, ref, _, err := s.resolve(who, id, mgr, op)
	if err != nil {
		return nil, err
	}
	if ref.NamesSubjobs() {
		return nil, proto.Errorf(proto.PBSE_IVALREQ, "(a subjob keeps its array's place, %s)", id)
	}
	if j.Active() || j.State == model.StateBegun {
		return nil, proto.NewError(proto.PBSE_BADSTATE)
	}
	return j, nil
}

// swapQueues puts j1 in j2's queue and j2 in j1's, each admitted there as
// qmove admits a job (mu held). Both leave their queues' counts first, so
// that neither is counted against a limit in the queue it is leaving.
func (s *Server) swapQueues(b *store.Batch, who *caller, j1, j2 *model.Job, now int64) error {
	for _, j := range []*model.Job{j1, j2} {
		if j.IsArray() && len(s.jobs.LiveSubjobs(j)) > 0 {
			return proto.Errorf(proto.PBSE_BADSTATE, "(array %s has subjobs changed on their own, which would stay in its queue)", j.ID)
		}
	}
	q1, ok1 := s.queues.Get(j1.Queue)
	q2, ok2 := s.queues.Get(j2.Queue)
	if !ok1 || !ok2 {
		return proto.NewError(proto.PBSE_UNKQUE)
	}
	var p1, p2 *model.Job
	var err1, err2 error
	s.jobs.Recount(j1, func() {
		s.jobs.Recount(j2, func() {
			p1, err1 = s.admitView().Enqueue(requested(j1), q2, admitCaller(who), false, now)
			p2, err2 = s.admitView().Enqueue(requested(j2), q1, admitCaller(who), false, now)
		})
	})
	if err1 != nil {
		return err1
	}
	if err2 != nil {
		return err2
	}
	s.replaceJob(j1, p1, now)
	s.replaceJob(j2, p2, now)
	s.save(b, j1)
	s.save(b, j2)
	return nil
}
