package server

import (
	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// routes maps every request type the server serves to its handler: one
// table, read by dispatch, where a new request is one line. A route
// decodes its body into the request type (a body that does not decode is
// PBSE_PROTOCOL), brings attribute names to their canonical case, and
// calls the handler of its noun. Who calls: handle, for each frame of a
// connection, with no lock held.
var routes = proto.Routes[request]{
	proto.MsgSubmit: proto.Decoded(func(r request, req *proto.SubmitRequest) (any, error) {
		model.CanonicalJobAttrs(req.Attrs)
		id, err := r.s.submit(r.who, req)
		if err != nil {
			return nil, err
		}
		return &proto.SubmitReply{JobID: id}, nil
	}),
	proto.MsgStatusJob: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusJobs(r.who, req, r.to)
	}),
	proto.MsgStatusQueue: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusQueues(r.who, req)
	}),
	proto.MsgStatusServer: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusServer(r.who, req), nil
	}),
	proto.MsgStatusSched: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusSched(r.who, req), nil
	}),
	proto.MsgStatusNode: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusNodes(r.who, req, r.to)
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
	proto.MsgResizeJob: proto.Decoded(func(r request, req *proto.ResizeRequest) (any, error) {
		return nil, r.s.resizeJob(r.who, req)
	}),
	proto.MsgAlterJob: proto.Decoded(func(r request, req *proto.AlterRequest) (any, error) {
		model.CanonicalJobAttrs(req.Attrs)
		return nil, r.s.alterJob(r.who, req)
	}),
	proto.MsgSelectJobs: proto.Decoded(func(r request, req *proto.SelectRequest) (any, error) {
		model.CanonicalJobAttrs(req.Criteria)
		return r.s.selectJobs(r.who, req)
	}),
	proto.MsgManager: proto.Decoded(func(r request, req *proto.ManagerRequest) (any, error) {
		if t := model.Defs(req.Object); t != nil {
			t.CanonicalAttrs(req.Attrs)
		}
		return nil, r.s.manager(r.who, req)
	}),
	proto.MsgRunJobs: proto.Decoded(func(r request, req *proto.RunJobsRequest) (any, error) {
		return r.s.runJobs(r.who, req.Runs)
	}),
	proto.MsgAlterJobs: proto.Decoded(func(r request, req *proto.AlterJobsRequest) (any, error) {
		for i := range req.Alters {
			model.CanonicalJobAttrs(req.Alters[i].Attrs)
		}
		return r.s.alterJobs(r.who, req.Alters)
	}),
	proto.MsgPreemptJobs: proto.Decoded(func(r request, req *proto.PreemptJobsRequest) (any, error) {
		return r.s.preemptJobs(r.who, req)
	}),
	proto.MsgMomStatus: momOnly("only a mom reports node status", proto.Decoded(func(r request, req *proto.MomStatus) (any, error) {
		return r.s.momStatus(r.who, req)
	})),
	proto.MsgJobObit: momOnly("only a mom reports job ends", proto.Decoded(func(r request, req *proto.JobObit) (any, error) {
		return nil, r.s.jobObit(r.who, req)
	})),
	proto.MsgStageInDone: momOnly("only a mom reports stage-ins", proto.Decoded(func(r request, req *proto.StageInDone) (any, error) {
		return nil, r.s.stageInDone(r.who, req)
	})),
	proto.MsgShutdown: proto.Decoded(func(r request, req *proto.ShutdownRequest) (any, error) {
		return nil, r.s.shutdownRequest(r.who, req)
	}),
	proto.MsgSubmitResv: proto.Decoded(func(r request, req *proto.ResvSubmitRequest) (any, error) {
		model.CanonicalResvAttrs(req.Attrs)
		return r.s.submitResv(r.who, req)
	}),
	proto.MsgStatusResv: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.statusResvs(r.who, req)
	}),
	proto.MsgStatusResource: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		return r.s.resdefs.Status(req), nil
	}),
	proto.MsgStatusHook: proto.Decoded(func(r request, req *proto.StatusRequest) (any, error) {
		mgr, _ := r.s.privileges(r.who)
		return r.s.hookMgmt.Status(req, mgr)
	}),
	proto.MsgDeleteResv: proto.Decoded(func(r request, req *proto.ResvRequest) (any, error) {
		return nil, r.s.deleteResv(r.who, req.ID)
	}),
	proto.MsgAlterResv: proto.Decoded(func(r request, req *proto.ResvAlterRequest) (any, error) {
		model.CanonicalResvAttrs(req.Attrs)
		return r.s.alterResv(r.who, req)
	}),
	proto.MsgConfirmResv: proto.Decoded(func(r request, req *proto.ResvConfirm) (any, error) {
		return nil, r.s.confirmResv(r.who, req)
	}),
	proto.MsgWhoAmI: func(r request, _ msgpack.RawMessage) (any, error) {
		mgr, op := r.s.privileges(r.who)
		return &proto.WhoAmIReply{User: r.who.user, Host: r.who.host, Manager: mgr, Operator: op, ServerName: r.s.cfg.ServerName}, nil
	},
}

// request is what every handler gets beside its body: the server, who
// sent the request, its type (one handler serves several) and where to
// stream a long answer.
type request struct {
	s   *Server
	who *caller
	t   proto.MsgType
	to  answerTo
}

// jobRoute serves the requests on one job that share proto.JobRequest.
var jobRoute = proto.Decoded(func(r request, req *proto.JobRequest) (any, error) {
	return nil, r.s.jobRequest(r.who, r.t, req)
})

// momOnly refuses a route to every peer but a mom, with why.
func momOnly(why string, next proto.Handler[request]) proto.Handler[request] {
	return func(r request, body msgpack.RawMessage) (any, error) {
		if r.who.role != proto.RoleMom {
			return nil, proto.Errorf(proto.PBSE_PERM, "%s", why)
		}
		return next(r, body)
	}
}

// dispatch serves one request by its route.
func (s *Server) dispatch(who *caller, t proto.MsgType, body msgpack.RawMessage, to answerTo) (any, error) {
	return routes.Serve(t, request{s: s, who: who, t: t, to: to}, body)
}
