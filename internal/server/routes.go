package server

import (
	"github.com/vmihailenco/msgpack/v5"

	"gopbs/internal/model"
	"gopbs/proto"
)

// routes maps every request type the server serves to its handler: one
// table, read by dispatch, where a new request is one line. A route
// decodes its body into the request type (a body that does not decode is
// PBSE_PROTOCOL), brings attribute names to their canonical case, and
// calls the handler of its noun. Who calls: handle, for each frame of a
// connection, with no lock held.
var routes = map[proto.MsgType]route{
	proto.MsgSubmit: on(func(s *Server, who *caller, req *proto.SubmitRequest, _ request) (any, error) {
		model.CanonicalJobAttrs(req.Attrs)
		id, err := s.submit(who, req)
		if err != nil {
			return nil, err
		}
		return &proto.SubmitReply{JobID: id}, nil
	}),
	proto.MsgStatusJob: on(func(s *Server, who *caller, req *proto.StatusRequest, r request) (any, error) {
		return s.statusJobs(who, req, r.to)
	}),
	proto.MsgStatusQueue: on(func(s *Server, who *caller, req *proto.StatusRequest, _ request) (any, error) {
		return s.statusQueues(who, req)
	}),
	proto.MsgStatusServer: on(func(s *Server, who *caller, req *proto.StatusRequest, _ request) (any, error) {
		return s.statusServer(who, req), nil
	}),
	proto.MsgStatusSched: on(func(s *Server, who *caller, req *proto.StatusRequest, _ request) (any, error) {
		return s.statusSched(who, req), nil
	}),
	proto.MsgStatusNode: on(func(s *Server, who *caller, req *proto.StatusRequest, r request) (any, error) {
		return s.statusNodes(who, req, r.to)
	}),
	proto.MsgDeleteJob:  jobRoute,
	proto.MsgHoldJob:    jobRoute,
	proto.MsgReleaseJob: jobRoute,
	proto.MsgRunJob:     jobRoute,
	proto.MsgSignalJob:  jobRoute,
	proto.MsgRerunJob:   jobRoute,
	proto.MsgStageInJob: jobRoute,
	proto.MsgMoveJob:    jobRoute,
	proto.MsgOrderJob:   jobRoute,
	proto.MsgResizeJob: on(func(s *Server, who *caller, req *proto.ResizeRequest, _ request) (any, error) {
		return nil, s.resizeJob(who, req)
	}),
	proto.MsgAlterJob: on(func(s *Server, who *caller, req *proto.AlterRequest, _ request) (any, error) {
		model.CanonicalJobAttrs(req.Attrs)
		return nil, s.alterJob(who, req)
	}),
	proto.MsgSelectJobs: on(func(s *Server, who *caller, req *proto.SelectRequest, _ request) (any, error) {
		model.CanonicalJobAttrs(req.Criteria)
		return s.selectJobs(who, req)
	}),
	proto.MsgManager: on(func(s *Server, who *caller, req *proto.ManagerRequest, _ request) (any, error) {
		if t := model.Defs(req.Object); t != nil {
			t.CanonicalAttrs(req.Attrs)
		}
		return nil, s.manager(who, req)
	}),
	proto.MsgRunJobs: on(func(s *Server, who *caller, req *proto.RunJobsRequest, _ request) (any, error) {
		return s.runJobs(who, req.Runs)
	}),
	proto.MsgAlterJobs: on(func(s *Server, who *caller, req *proto.AlterJobsRequest, _ request) (any, error) {
		for i := range req.Alters {
			model.CanonicalJobAttrs(req.Alters[i].Attrs)
		}
		return s.alterJobs(who, req.Alters)
	}),
	proto.MsgPreemptJobs: on(func(s *Server, who *caller, req *proto.PreemptJobsRequest, _ request) (any, error) {
		return s.preemptJobs(who, req)
	}),
	proto.MsgMomStatus: momOnly("only a mom reports node status", on(func(s *Server, who *caller, req *proto.MomStatus, _ request) (any, error) {
		return s.momStatus(who, req)
	})),
	proto.MsgJobObit: momOnly("only a mom reports job ends", on(func(s *Server, who *caller, req *proto.JobObit, _ request) (any, error) {
		return nil, s.jobObit(who, req)
	})),
	proto.MsgStageInDone: momOnly("only a mom reports stage-ins", on(func(s *Server, who *caller, req *proto.StageInDone, _ request) (any, error) {
		return nil, s.stageInDone(who, req)
	})),
	proto.MsgShutdown: on(func(s *Server, who *caller, req *proto.ShutdownRequest, _ request) (any, error) {
		return nil, s.shutdownRequest(who, req)
	}),
	proto.MsgSubmitResv: on(func(s *Server, who *caller, req *proto.ResvSubmitRequest, _ request) (any, error) {
		model.CanonicalResvAttrs(req.Attrs)
		return s.submitResv(who, req)
	}),
	proto.MsgStatusResv: on(func(s *Server, who *caller, req *proto.StatusRequest, _ request) (any, error) {
		return s.statusResvs(who, req)
	}),
	proto.MsgStatusResource: on(func(s *Server, _ *caller, req *proto.StatusRequest, _ request) (any, error) {
		return s.statusResources(req), nil
	}),
	proto.MsgDeleteResv: on(func(s *Server, who *caller, req *proto.ResvRequest, _ request) (any, error) {
		return nil, s.deleteResv(who, req.ID)
	}),
	proto.MsgAlterResv: on(func(s *Server, who *caller, req *proto.ResvAlterRequest, _ request) (any, error) {
		model.CanonicalResvAttrs(req.Attrs)
		return s.alterResv(who, req)
	}),
	proto.MsgConfirmResv: on(func(s *Server, who *caller, req *proto.ResvConfirm, _ request) (any, error) {
		return nil, s.confirmResv(who, req)
	}),
	proto.MsgWhoAmI: func(s *Server, who *caller, _ msgpack.RawMessage, _ request) (any, error) {
		mgr, op := s.privileges(who)
		return &proto.WhoAmIReply{User: who.user, Host: who.host, Manager: mgr, Operator: op, ServerName: s.cfg.ServerName}, nil
	},
}

// request is what a handler may need of its frame beyond the body: its
// type (one handler serves several) and where to stream a long answer.
type request struct {
	t  proto.MsgType
	to answerTo
}

// route serves one request type.
type route func(s *Server, who *caller, body msgpack.RawMessage, r request) (any, error)

// jobRoute serves the requests on one job that share proto.JobRequest.
var jobRoute = on(func(s *Server, who *caller, req *proto.JobRequest, r request) (any, error) {
	return nil, s.jobRequest(who, r.t, req)
})

// on makes a route of a handler of decoded requests of type T.
func on[T any](fn func(s *Server, who *caller, req *T, r request) (any, error)) route {
	return func(s *Server, who *caller, body msgpack.RawMessage, r request) (any, error) {
		req, err := decode[T](body)
		if err != nil {
			return nil, err
		}
		return fn(s, who, req, r)
	}
}

// momOnly refuses a route to every peer but a mom, with why.
func momOnly(why string, next route) route {
	return func(s *Server, who *caller, body msgpack.RawMessage, r request) (any, error) {
		if who.role != proto.RoleMom {
			return nil, proto.Errorf(proto.PBSE_PERM, "%s", why)
		}
		return next(s, who, body, r)
	}
}

func decode[T any](body msgpack.RawMessage) (*T, error) {
	var v T
	if err := proto.DecodeBody(body, &v); err != nil {
		return nil, proto.Errorf(proto.PBSE_PROTOCOL, "%v", err)
	}
	return &v, nil
}

// dispatch serves one request by its route; a type with none is
// PBSE_UNKREQ.
func (s *Server) dispatch(who *caller, t proto.MsgType, body msgpack.RawMessage, to answerTo) (any, error) {
	serve, ok := routes[t]
	if !ok {
		return nil, proto.Errorf(proto.PBSE_UNKREQ, "%s", t)
	}
	return serve(s, who, body, request{t: t, to: to})
}
