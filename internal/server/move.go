package server

import (
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// moveJob is qmove: a job that is not running, and not finished, enters
// another queue of this server as a new submission would (the queue must
// be enabled; its access lists, limits and resource defaults apply; a
// route queue forwards it), with a new qtime and a Q accounting record.
// The job's owner, operators and managers may move it. Moving to another
// server is refused: jobs do not travel between servers here (an
// unknown server as OpenPBS refuses it, PBSE_BADHOST).
func (s *Server) moveJob(who *caller, id, dest string) error {
	queue, server, _ := strings.Cut(strings.TrimSpace(dest), "@")
	if queue == "" {
		return proto.Errorf(proto.PBSE_UNKQUE, "(no destination queue in %q)", dest)
	}
	if server != "" && server != s.cfg.ServerName && server != s.cfg.Host {
		// OpenPBS's server refuses a destination whose host it cannot
		// resolve with PBSE_BADHOST's words alone; one it can is
		// another server, which jobs do not travel to here.
		host, _, _ := strings.Cut(server, ":")
		s.hosts.resolve([]string{host}, s.now())
		if len(s.hosts.addrs(host)) == 0 {
			return proto.NewError(proto.PBSE_BADHOST)
		}
		return proto.Errorf(proto.PBSE_NOSUP, "(moving a job to another server, %s)", server)
	}
	queue, err := s.movejobHooks(who, id, queue)
	if err != nil {
		return err
	}
	mgr, op := s.privileges(who)
	var moved *model.Job
	err = s.commit.Do(func(b *store.Batch) error {
		j, ref, _, err := s.resolve(who, id, mgr, op)
		if err != nil {
			return err
		}
		if ref.NamesSubjobs() {
			return proto.Errorf(proto.PBSE_NOSUP, "(a subjob moves with its array, %s)", j.ID)
		}
		if j.IsArray() && (j.State == model.StateBegun || len(s.jobs.LiveSubjobs(j)) > 0) {
			return proto.Errorf(proto.PBSE_BADSTATE, "(array %s has subjobs that started or were changed on their own)", j.ID)
		}
		if j.Active() || j.Finished() {
			return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c; only jobs not running are moved)", j.State)
		}
		q, ok := s.queues.Get(queue)
		if !ok {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", queue)
		}
		now := s.nowUnix()
		// The job leaves its queue's counts first, so that it is not
		// counted twice against the server's limits.
		var placed *model.Job
		s.jobs.Recount(j, func() { placed, err = s.admitView().Enqueue(requested(j), q, admitCaller(who), false, now) })
		if err != nil {
			return err
		}
		s.replaceJob(j, placed, now)
		b.PutJob(j)
		s.hooks(b, j, model.Hooks{Eligible: j.State == model.StateQueued}, now)
		b.After(func() { s.account(accounting.Queued, j, s.queuedRecord(j)) })
		moved = j
		return nil
	})
	if err != nil {
		return err
	}
	s.log.Info("job moved", "job", moved.ID, "queue", moved.Queue, "by", who.user+"@"+who.host)
	return nil
}

// requested is a copy of j with its resources as a submission gives them:
// the host-level totals admission derived from the select are dropped,
// for the destination's admission to derive them again (with its own
// defaults and limits) from the select, which stays.
func requested(j *model.Job) *model.Job {
	c := j.Clone()
	if _, ok := c.ResourceList.Get(proto.ResSelect); !ok {
		return c
	}
	var rl model.Resources
	for _, p := range c.ResourceList {
		if j.Resources().Lookup(p.Name).Chunk && p.Name != proto.ResSelect {
			continue
		}
		rl = append(rl, p)
	}
	c.ResourceList = rl
	return c
}
