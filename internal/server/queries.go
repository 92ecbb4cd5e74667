package server

import (
	"github.com/gopbs/gopbs/proto"
)

// Queries: what the commands and schedulers read of jobs (qstat,
// qselect, the scheduler's fetches), each under the read lock, visible as
// the caller may see it. The handler is internal/server/jobs.

// statusJobs answers qstat and the schedulers' job fetches.
func (s *Server) statusJobs(who *caller, req *proto.StatusRequest, to answerTo) (*statusAnswer, error) {
	c := s.jobCaller(who)
	logged := s.loggedHistory(req, c)
	s.mu.RLock()
	defer s.mu.RUnlock()
	answer := newStatusAnswer(to, s.mu.RLocker())
	s.jobView().Status(req, c, s.nowUnix(), answer.frames, &answer.tail)
	addLogged(answer, logged)
	return answer, nil
}

// selectJobs answers qselect.
func (s *Server) selectJobs(who *caller, req *proto.SelectRequest) (*proto.SelectReply, error) {
	c := s.jobCaller(who)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.jobView().Select(req, c, s.nowUnix())
}
