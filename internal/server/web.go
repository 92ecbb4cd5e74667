package server

import (
	"math"

	"github.com/gopbs/gopbs/internal/events"
	"github.com/gopbs/gopbs/internal/web"
	"github.com/gopbs/gopbs/proto"
)

// webSource is the server as the web status page and JSON API read it
// (internal/web): each read is the batch request a command would make,
// answered as to the viewer, collected in process instead of streamed.
type webSource struct{ s *Server }

// WebSource is the server's state for internal/web.
func (s *Server) WebSource() web.Source { return webSource{s} }

// WebFeed is the server's event hub for internal/web's live page.
func (s *Server) WebFeed() web.Feed { return webSource{s} }

// caller is the viewer as a client of the batch protocol: a named user
// as that user on this host (vouched for by the token or the proxy), an
// anonymous viewer as nobody with no privilege.
func (w webSource) caller(v web.Viewer) *caller {
	if v.Anonymous() {
		return &caller{anonymous: true, role: proto.RoleClient, host: w.s.cfg.Host, uid: math.MaxUint32, gid: math.MaxUint32}
	}
	c := w.s.users.identifyName(v.User, math.MaxUint32, math.MaxUint32)
	c.host, c.role = w.s.cfg.Host, proto.RoleClient
	return &c
}

func (w webSource) Rights(v web.Viewer) web.Rights {
	s := w.s
	who := w.caller(v)
	s.mu.RLock()
	others := s.server.Bool(proto.AttrQueryOtherJobs)
	aclUsers := s.server.Bool(proto.AttrAclUserEnable)
	s.mu.RUnlock()
	if v.Anonymous() {
		// What any user may see when query_other_jobs is true; nothing
		// when it is false, or when only listed users may use the server.
		see := others && !aclUsers
		return web.Rights{See: see, OtherJobs: see}
	}
	if s.serverACL(who) != nil {
		return web.Rights{}
	}
	mgr, op := s.privileges(who)
	return web.Rights{See: true, Manager: mgr || op, OtherJobs: others || mgr || op}
}

func (w webSource) Jobs(v web.Viewer, ids []string, history bool) ([]proto.Status, []proto.ObjectError, error) {
	reply, err := collected(w.s.statusJobs(w.caller(v), &proto.StatusRequest{IDs: ids, History: history}, answerTo{}))
	if err != nil {
		return nil, nil, err
	}
	return reply.Objects, reply.Errors, nil
}

func (w webSource) Nodes(v web.Viewer) ([]proto.Status, error) {
	reply, err := collected(w.s.statusNodes(w.caller(v), &proto.StatusRequest{}, answerTo{}))
	if err != nil {
		return nil, err
	}
	return reply.Objects, nil
}

func (w webSource) Queues(v web.Viewer) ([]proto.Status, error) {
	reply, err := w.s.statusQueues(w.caller(v), &proto.StatusRequest{})
	if err != nil {
		return nil, err
	}
	return reply.Objects, nil
}

func (w webSource) Server(v web.Viewer) (proto.Status, error) {
	return w.s.statusServer(w.caller(v), &proto.StatusRequest{}).Objects[0], nil
}

// Subscribe opens v's event stream: a named user's as the batch
// protocol's Subscribe would (eventFilter, maySee), an anonymous
// viewer's only while query_other_jobs is true.
func (w webSource) Subscribe(v web.Viewer, resume bool, after uint64, buffer int) (*events.Sub, func(*events.Event) bool, error) {
	s := w.s
	var f events.Filter
	var may func(*events.Event) bool
	if v.Anonymous() {
		if !s.queryOthers() {
			return nil, nil, proto.NewError(proto.PBSE_PERM)
		}
		may = func(*events.Event) bool { return s.queryOthers() }
	} else {
		var rights eventRights
		var err error
		if f, rights, err = s.eventFilter(w.caller(v), &proto.SubscribeRequest{}); err != nil {
			return nil, nil, err
		}
		may = func(e *events.Event) bool { return s.maySee(rights, e) }
	}
	var sub *events.Sub
	var err error
	if resume {
		sub, err = s.ev.hub.Resume(f, after, buffer)
	} else {
		sub, err = s.ev.hub.Subscribe(f, 0, buffer)
	}
	return sub, may, err
}

func (w webSource) Last() uint64 { return w.s.ev.hub.Last() }
