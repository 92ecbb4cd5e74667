package server

import (
	"maps"
	"slices"
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
	return appendResourceList(jobRecordHead(j), j)
}

// jobRecordHead is what every record of a job's run begins with, in
// OpenPBS's order: who, what, where, and its times so far.
func jobRecordHead(j *model.Job) []accounting.KV {
	kvs := []accounting.KV{{Key: "user", Value: j.EUser}, {Key: "group", Value: j.EGroup}}
	if j.Account != "" {
		kvs = append(kvs, accounting.KV{Key: "account", Value: j.Account})
	}
	return append(kvs, accounting.KV{Key: "project", Value: j.Project},
		accounting.KV{Key: "jobname", Value: j.Name}, accounting.KV{Key: "queue", Value: j.Queue},
		accounting.KV{Key: "ctime", Value: strconv.FormatInt(j.Ctime, 10)}, accounting.KV{Key: "qtime", Value: strconv.FormatInt(j.Qtime, 10)},
		accounting.KV{Key: "etime", Value: strconv.FormatInt(j.Etime, 10)})
}

// appendResourceList appends the job's Resource_List.* in its order.
func appendResourceList(kvs []accounting.KV, j *model.Job) []accounting.KV {
	for _, p := range j.ResourceList {
		kvs = append(kvs, accounting.KV{Key: "Resource_List." + p.Name, Value: p.Value})
	}
	return kvs
}

// runRecordHead is the beginning of an S or E record, as OpenPBS writes
// it: the head, the start and where it runs, then Resource_List.*.
func runRecordHead(j *model.Job, start int64, alloc resc.Alloc) []accounting.KV {
	kvs := append(jobRecordHead(j),
		accounting.KV{Key: "start", Value: strconv.FormatInt(start, 10)},
		accounting.KV{Key: "exec_host", Value: alloc.ExecHost()}, accounting.KV{Key: "exec_vnode", Value: alloc.ExecVnode()})
	return appendResourceList(kvs, j)
}

// assignedRecord is an S record's resource_assigned.*: the consumable
// resources the allocation takes, summed over its chunks, by name, sizes
// in kb (as OpenPBS writes them).
func assignedRecord(alloc resc.Alloc, t *resc.Table) []accounting.KV {
	total := resc.Amounts{}
	for _, am := range alloc.Amounts(t) {
		for k, v := range am {
			total[k] += v
		}
	}
	names := slices.Sorted(maps.Keys(total))
	kvs := make([]accounting.KV, 0, len(names))
	for _, n := range names {
		v := t.Format(n, total[n])
		if t.Lookup(n).Type == resc.TypeSize {
			v = resc.FormatKB(int64(total[n]))
		}
		kvs = append(kvs, accounting.KV{Key: "resource_assigned." + n, Value: v})
	}
	return kvs
}
