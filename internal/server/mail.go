package server

import (
	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Job mail (OpenPBS's Mail_Points and Mail_Users, the server's
// mail_from). A message is composed under the server's lock from the job
// as the change leaves it, and handed to the mailer once the change is
// durable (the batch's After hook): a commit that fails sends nothing.
// The mailer runs in the background from a bounded queue
// (internal/mailer/sendmail); the server never waits for it.
//
// What mails:
//   - b: a job's start, once its mom took it; an array's first subjob
//     start (the array begins);
//   - e: the end of a job that ran, with Exit_status and resources_used;
//     an array's end, with its exit status;
//   - a: the system ended the job: deleted by someone other than its
//     owner (a manager, an operator, the scheduler), could not start on
//     its mom, killed for its walltime, lost with its node while not
//     rerunnable, a dependency that can never be met, rejected by every
//     route destination. A job that could not start or was killed this
//     way mails its abort and no end, as in OpenPBS.
//
// Subjobs mail only with j in Mail_Points; an array mails as a whole.

// mailJob queues j's mail for ev once b is durable, when j's Mail_Points
// ask for it (mu held, inside a commit).
func (s *Server) mailJob(b *store.Batch, j *model.Job, ev mailer.Event, text string) {
	if s.mailer == nil || !mailer.Wanted(j.MailPoints, ev, j.IsSubjob) {
		return
	}
	m := s.composeMail(j, ev, text)
	b.After(func() { s.mailer.Send(m) })
}

// composeMail writes j's mail for ev (mu held).
func (s *Server) composeMail(j *model.Job, ev mailer.Event, text string) mailer.Message {
	from, _ := s.server.Get(proto.AttrMailFrom)
	if from == "" {
		from = mailer.DefaultFrom
	}
	mj := mailer.Job{ID: j.ID, Name: j.Name, Owner: j.Owner, MailUsers: j.MailUsers, ExecHost: j.ExecHost(), ExitStatus: j.ExitStatus}
	for _, p := range j.ResourcesUsed {
		mj.Used = append(mj.Used, [2]string{p.Name, p.Value})
	}
	if ev == mailer.End {
		mj.Efficiency = acctsum.FromResources(j.ResourcesUsed.Get, j.ResourceList.Get).Efficiency().Lines()
	}
	return mailer.Compose(from, mj, ev, text)
}

// mailStarted sends the begin mail of jobs their moms took (mu not held).
func (s *Server) mailStarted(started []*startRequest) {
	if s.mailer == nil {
		return
	}
	var msgs []mailer.Message
	s.mu.RLock()
	for _, st := range started {
		if mailer.Wanted(st.job.MailPoints, mailer.Begin, st.job.IsSubjob) {
			msgs = append(msgs, s.composeMail(st.job, mailer.Begin, ""))
		}
	}
	s.mu.RUnlock()
	for _, m := range msgs {
		s.mailer.Send(m)
	}
}

// endMail is the event and text of the mail for a job that ran and
// ended with exit status exit: an abort for a start that failed or a
// kill by the system (a negative status), else an end.
func endMail(exit int, comment string) (mailer.Event, string) {
	switch {
	case exit == proto.JobExecKillWalltime:
		return mailer.Abort, "Job exceeded resource walltime\nSee job standard error file"
	case exit < 0:
		if comment == "" {
			comment = "Job cannot be executed"
		}
		return mailer.Abort, comment + "\nSee job standard error file"
	}
	return mailer.End, ""
}
