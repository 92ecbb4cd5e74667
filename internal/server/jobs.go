package server

import (
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// What every job path shares: saving a job, accounting records, how long
// finished jobs stay, telling the scheduler of an eligible job. The
// paths themselves: admission.go (qsub), alter.go (qalter), control.go
// (delete, hold, signal, rerun), run.go (starts), lifecycle.go (a running
// job's phases, its end, requeue), queries.go (status, select).

// ExitDeleted is the Exit_status given to a job deleted before it ran.
const ExitDeleted = model.ExitDeleted

// defaultRetention keeps finished jobs visible when neither
// job_history_enable nor keep_completed says otherwise, long enough for
// workflow tools that poll for the exit status.
const defaultRetention = 10 * time.Minute

// retention is how long finished jobs stay visible (mu held).
func (s *Server) retention() time.Duration {
	if s.server.Bool(proto.AttrJobHistoryEnable) {
		if v, ok := s.server.Get(proto.AttrJobHistoryDuration); ok {
			if secs, err := resc.ParseDuration(v); err == nil {
				return time.Duration(secs) * time.Second
			}
		}
		return 14 * 24 * time.Hour
	}
	if n, ok := s.server.Long(proto.AttrKeepCompleted); ok {
		return time.Duration(n) * time.Second
	}
	return defaultRetention
}

// save stores j: a job or array's record, or a subjob's (mu held, inside
// a commit).
func (s *Server) save(b *store.Batch, j *model.Job) {
	if j.IsSubjob {
		b.PutSubjob(j)
	} else {
		b.PutJob(j)
	}
}

// eligible raises a NEW event when j is queued in an execution queue: a
// job the scheduler may now consider. It reads two fields a concurrent
// commit may change, so it takes the read lock.
func (s *Server) eligible(j *model.Job) {
	s.mu.RLock()
	ok := j.State == model.StateQueued && j.QueueType == "Execution"
	s.mu.RUnlock()
	if ok {
		s.schedEvent(proto.SchedNew)
	}
}

// account writes an accounting record, logging (not failing) on error: the
// state change it describes is already durable.
func (s *Server) account(kind byte, j *model.Job, kvs []accounting.KV) {
	if err := s.acct.Write(s.now(), kind, j.ID, kvs); err != nil {
		s.log.Error("accounting write failed", "job", j.ID, "error", err)
	}
}

// queuedRecord is the body of a Q record, as in OpenPBS logs.
func (s *Server) queuedRecord(j *model.Job) []accounting.KV {
	kvs := []accounting.KV{
		{Key: "user", Value: j.EUser}, {Key: "group", Value: j.EGroup}, {Key: "project", Value: j.Project},
		{Key: "jobname", Value: j.Name}, {Key: "queue", Value: j.Queue},
		{Key: "ctime", Value: strconv.FormatInt(j.Ctime, 10)}, {Key: "qtime", Value: strconv.FormatInt(j.Qtime, 10)},
		{Key: "etime", Value: strconv.FormatInt(j.Etime, 10)},
	}
	for _, p := range j.ResourceList {
		kvs = append(kvs, accounting.KV{Key: "Resource_List." + p.Name, Value: p.Value})
	}
	return kvs
}
