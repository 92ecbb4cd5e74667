package server

import (
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/acctlog"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/jobs"
	"github.com/gopbs/gopbs/proto"
)

// historyInMemory bounds how long a finished job stays in the server's
// memory and store, whatever job_history_duration says: beyond it, for
// as long as the duration lasts, qstat -x of the job's id is answered
// from its accounting record (loggedHistory), so that months of history
// cost the server no memory. The accounting logs are never purged.
const historyInMemory = 14 * 24 * time.Hour

// keptInMemory is how long finished jobs stay in memory (mu held).
func (s *Server) keptInMemory() time.Duration { return min(s.retention(), historyInMemory) }

// loggedHistory finds, in the accounting logs, the finished jobs of
// req's ids that have left memory but not the history's duration, as who
// may see them (by id: a listing shows only what memory holds). It reads
// files: called before the lock is taken.
func (s *Server) loggedHistory(req *proto.StatusRequest, who jobs.Caller) map[string]proto.Status {
	if !req.History || len(req.IDs) == 0 {
		return nil
	}
	s.mu.RLock()
	retention, queryOthers := s.retention(), s.server.Bool(proto.AttrQueryOtherJobs)
	var missing []string
	if retention > historyInMemory {
		for _, raw := range req.IDs {
			ref, isJob := model.ParseJobRef(raw)
			if _, ok := s.jobs.Top(ref.Seq); isJob && ref.Kind == model.IDJob && !ok {
				missing = append(missing, raw)
			}
		}
	}
	s.mu.RUnlock()
	if len(missing) == 0 {
		return nil
	}
	now := s.now()
	files, err := acctlog.DayFiles(s.cfg.AccountingDir, time.Local)
	if err != nil {
		return nil
	}
	out := map[string]proto.Status{}
	for _, raw := range missing {
		q, err := acctlog.ParseJobQuery(raw)
		if err != nil || q.Index != "" {
			continue
		}
		order, byID, _ := acctlog.FindJob(files, s.cfg.AccountingDir, q, time.Local)
		for _, id := range order {
			jr := byID[id]
			var end *accounting.Line
			for i := range jr.Lines {
				if jr.Lines[i].Kind == accounting.Ended {
					end = &jr.Lines[i]
				}
			}
			if end == nil || now.Sub(end.At) > retention {
				continue
			}
			st, user, err := jobs.LoggedStatus(id, end.At, end.Body)
			if err != nil || !(who.Privileged || user == who.User || queryOthers) {
				continue
			}
			out[raw] = st
		}
	}
	return out
}

// addLogged puts the jobs loggedHistory found into answer, in place of
// their "Unknown Job Id" (mu held: frames may pause it).
func addLogged(answer *statusAnswer, logged map[string]proto.Status) {
	if len(logged) == 0 {
		return
	}
	kept := answer.tail.Errors[:0]
	for _, e := range answer.tail.Errors {
		st, found := logged[e.Name]
		if !found || e.Code != proto.PBSE_UNKJOBID {
			kept = append(kept, e)
			continue
		}
		answer.frames.AddStatus(&st)
	}
	answer.tail.Errors = kept
}
