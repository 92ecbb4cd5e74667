// The mom port and the local socket: accepting connections under their
// budgets, and answering the requests of the server (run, signal, early
// stage-in, shutdown) and of other moms (one staging transfer each).
// Run starts one acceptLoop per listener; each connection is served on a
// goroutine of its own, counted in Mom.wg.

package mom

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/connlimit"
	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/proto"
)

// Connection budgets. The TCP port serves only the server (its pool of
// connections); the Unix socket serves the commands of this host's users,
// each of whom gets a share, so that one user's idle connections cannot
// lock out the others, nor open an unbounded number of server connections.
var (
	remoteBudget = connlimit.Budget{Max: 512, PerPeer: 256, Pending: 64, PerPeerPending: 16}
	localBudget  = connlimit.Budget{Max: 1024, PerPeer: 64, Pending: 128, PerPeerPending: 16}
)

// handshakeTimeout bounds a peer's Hello, and the server's first tagged
// request after it.
const handshakeTimeout = 3 * time.Second

// acceptLoop serves the connections of l, each admitted by its class's
// budget (per IP address on TCP, per uid on the Unix socket).
func (m *Mom) acceptLoop(l net.Listener, limit *connlimit.Limiter, serve func(net.Conn, listen.Peer, *connlimit.Slot)) {
	defer m.wg.Done()
	loop := &listen.Loop{
		Listener: l, Limit: limit, Handshake: handshakeTimeout, Serve: serve,
		Stop: m.stop, Conns: &m.wg, Log: m.log,
		// The server keeps its connections open for reuse: close them
		// when the mom stops so that stopping does not wait for them.
		CloseOnStop: true,
	}
	loop.Run()
}

// serveServer answers the server's requests on the mom port.
func (m *Mom) serveServer(nc net.Conn, _ listen.Peer, slot *connlimit.Slot) {
	c := proto.NewConn(nc, 0)
	hello, err := proto.ServerHandshake(c, m.cfg.NodeName, func(hi proto.Hello) ([]byte, error) {
		if hi.Role != proto.RoleServer && hi.Role != proto.RoleMom {
			return nil, fmt.Errorf("only the server and other moms may connect to a mom's port")
		}
		return m.key, nil
	})
	if err != nil {
		m.log.Debug("refused a connection", "remote", nc.RemoteAddr().String(), "error", err)
		return
	}
	for {
		if slot.IsEstablished() {
			nc.SetDeadline(time.Now().Add(5 * time.Minute))
		}
		h, body, err := c.Recv()
		if err != nil {
			return
		}
		slot.Established()
		if hello.Role == proto.RoleMom {
			// Another mom: one request per connection (a job's part,
			// a task, one staging transfer).
			m.serveMom(c, hello.Name, h, body)
			return
		}
		body2, rerr := serverRoutes.Serve(h.Type, serverRequest{m: m, nc: nc}, body)
		reply := proto.Header{Type: proto.MsgReply, Seq: h.Seq}
		if rerr != nil {
			pe := momError(rerr)
			reply.Code, reply.Text = pe.Code, pe.Error()
			body2 = nil
		}
		if err := c.Send(reply, body2); err != nil {
			return
		}
		if h.Type == proto.MsgMomShutdown {
			m.signalStop()
			return
		}
	}
}

// serverRequest is what each handler of a server's request gets beside its
// body: the mom and the connection (a long request lifts its deadline).
type serverRequest struct {
	m  *Mom
	nc net.Conn
}

// serverRoutes are the server's requests on the mom port, one handler each
// (proto.Routes, the shape pbs_server's routes have too).
var serverRoutes = proto.Routes[serverRequest]{
	proto.MsgMomStageIn: proto.Decoded(func(r serverRequest, job *proto.MomJob) (any, error) {
		return nil, r.m.startEarlyStage(job)
	}),
	proto.MsgMomRunJobs: proto.Decoded(func(r serverRequest, jobs *proto.MomJobs) (any, error) {
		return r.m.runJobs(jobs.Jobs), nil
	}),
	proto.MsgMomRunJob: proto.Decoded(func(r serverRequest, job *proto.MomJob) (any, error) {
		// As one job of a request, so that the jobstart node check runs
		// for it too.
		if res := r.m.runJobs([]proto.MomJob{*job}).Results[0]; res.Code != proto.PBSE_NONE {
			return nil, &proto.Error{Code: res.Code, Text: res.Text}
		}
		return nil, nil
	}),
	proto.MsgMomResizeJob: proto.Decoded(func(r serverRequest, req *proto.MomResize) (any, error) {
		// A graceful shrink waits for the job: no deadline here.
		r.nc.SetDeadline(time.Time{})
		return nil, r.m.resizeJob(req)
	}),
	proto.MsgMomSignalJob: proto.Decoded(func(r serverRequest, sig *proto.MomSignal) (any, error) {
		return nil, r.m.signalJob(sig)
	}),
	proto.MsgMomPreterm: proto.Decoded(func(r serverRequest, sig *proto.MomSignal) (any, error) {
		// The hooks may take up to their alarms.
		r.nc.SetDeadline(time.Now().Add(pretermWait))
		return nil, r.m.pretermHooks(sig.JobID)
	}),
	proto.MsgMomCheckpoint: proto.Decoded(func(r serverRequest, sig *proto.MomSignal) (any, error) {
		// The action may take longer than a request's deadline.
		r.nc.SetDeadline(time.Now().Add(maxCheckpointTimeout + time.Minute))
		return nil, r.m.checkpointJob(sig)
	}),
	proto.MsgMomShutdown: func(r serverRequest, _ msgpack.RawMessage) (any, error) {
		// Answered first; serveServer then stops the mom (qterm -m).
		r.m.log.Info("the server asked the mom to stop (qterm -m); running jobs continue")
		return nil, nil
	},
}

// momError gives any failure a PBSE code for the server.
func momError(err error) *proto.Error {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe
	}
	return &proto.Error{Code: proto.PBSE_MOMREJECT, Text: proto.PBSE_MOMREJECT.Message() + ": " + err.Error()}
}
