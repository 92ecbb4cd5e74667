package server

import (
	"time"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// tickInterval is how often timed work runs: waiting jobs whose
// Execution_Time passed, history expiry and route retries.
const tickInterval = time.Second

// routeRetryDefault is route_retry_time when unset (seconds).
const routeRetryDefault = 30

func (s *Server) timerLoop() {
	defer s.wg.Done()
	t := time.NewTicker(tickInterval)
	defer t.Stop()
	lastRoute := int64(0)
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.nowUnix()
		s.checkNodes(s.now())
		s.releaseWaiting(now)
		s.resvTick(s.now())
		s.expireHistory(now)
		if now-lastRoute >= 1 {
			s.retryRoutes(now)
			lastRoute = now
		}
	}
}

// releaseWaiting moves W jobs whose Execution_Time has come to Q, and
// lifts the system hold of jobs whose hold_until has passed (a scheduler
// or activation filter held them until then).
func (s *Server) releaseWaiting(now int64) {
	s.mu.RLock()
	var due []model.JobKey
	for _, j := range s.jobs.List() {
		if j.State == model.StateWaiting && j.ExecutionTime <= now || heldUntilPassed(j, now) {
			due = append(due, j.Key())
		}
	}
	s.mu.RUnlock()
	if len(due) == 0 {
		return
	}
	err := s.commit.Do(func(b *store.Batch) error {
		for _, key := range due {
			j, ok := s.jobs.Get(key)
			if !ok || !(j.State == model.StateWaiting || heldUntilPassed(j, now)) {
				continue
			}
			s.transitJob(b, j, now, func() model.Hooks {
				if heldUntilPassed(j, now) {
					j.Holds = model.RemoveHolds(j.Holds, string(model.HoldSystem))
					j.HoldUntil = 0
				}
				return j.Settle(now)
			})
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot release waiting jobs", "error", err)
		return
	}
	s.schedEvent(proto.SchedNew)
}

// expireHistory purges finished jobs older than the retention from
// memory and the store, or older than historyInMemory when the retention
// is longer (history.go: the accounting logs answer for those).
func (s *Server) expireHistory(now int64) {
	s.mu.RLock()
	keep := int64(s.keptInMemory() / time.Second)
	var old []int64
	for _, j := range s.jobs.List() {
		if j.Finished() && now-j.HistoryTime >= keep {
			old = append(old, j.Seq)
		}
	}
	s.mu.RUnlock()
	if len(old) == 0 {
		return
	}
	err := s.commit.Do(func(b *store.Batch) error {
		for _, seq := range old {
			if j, ok := s.jobs.Top(seq); ok && j.Finished() {
				s.jobs.Remove(j)
				b.DeleteJob(seq)
			}
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot expire job history", "error", err)
	} else {
		s.log.Debug("job history expired", "jobs", len(old))
	}
}

// retryRoutes offers jobs waiting in started route queues to their
// destinations again, every route_retry_time seconds per job.
func (s *Server) retryRoutes(now int64) {
	s.mu.RLock()
	var cands []int64
	for _, j := range s.jobs.List() {
		if j.QueueType != "Route" || j.Finished() || j.IsSubjob {
			continue
		}
		q, ok := s.queues.Get(j.Queue)
		if !ok || !q.Bool(proto.AttrStarted) {
			continue
		}
		retry, ok := q.Long(proto.AttrRouteRetryTime)
		if !ok {
			retry = routeRetryDefault
		}
		// A job not yet tried since it arrived goes at once; a refused one
		// waits route_retry_time after the last try.
		if s.admitView().Routable(j, q, now) && (j.Mtime == j.Qtime || now-j.Mtime >= retry) {
			cands = append(cands, j.Seq)
		}
	}
	s.mu.RUnlock()
	for _, seq := range cands {
		var moved *model.Job
		err := s.commit.Do(func(b *store.Batch) error {
			j, ok := s.jobs.Top(seq)
			if !ok || j.QueueType != "Route" {
				return nil
			}
			q, _ := s.queues.Get(j.Queue)
			if q == nil || !s.admitView().Routable(j, q, now) {
				return nil
			}
			who := &caller{user: j.User(), host: j.SubmitHost, group: j.EGroup}
			placed, permanent, err := s.admitView().Route(j, q, admitCaller(who), now)
			if err != nil {
				if permanent {
					s.finish(b, j, model.SubFailed, -1, "Job rejected by all possible destinations", now)
					s.mailJob(b, j, mailer.Abort, j.Comment)
					moved = j
					return nil
				}
				s.editJob(b, j, func() {})
				return nil
			}
			s.jobs.Recount(j, func() { *j = *placed })
			s.save(b, j)
			moved = j
			return nil
		})
		if err != nil {
			s.log.Error("route retry failed", "error", err)
		} else if moved != nil {
			s.log.Info("job routed", "job", moved.ID, "queue", moved.Queue, "state", string(moved.State))
			s.eligible(moved)
		}
	}
}

// heldUntilPassed reports whether j is held with a hold_until in the past.
func heldUntilPassed(j *model.Job, now int64) bool {
	return j.State == model.StateHeld && j.HoldUntil > 0 && j.HoldUntil <= now
}
