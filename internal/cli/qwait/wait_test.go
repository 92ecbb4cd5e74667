package qwait

import (
	"bytes"
	"github.com/gopbs/gopbs/internal/testcluster"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/proto"
)

// fakeServer speaks the protocol on a Unix socket: status answers from
// status, and each Subscribe, in turn, handled by the next of subs.
type fakeServer struct {
	status func(id string) []proto.Status
	reads  atomic.Int32 // status requests answered
	// drops is how many status requests to come are answered by
	// dropping the connection, as a server that crashed in the middle.
	drops atomic.Int32
	subs  []func(c *proto.Conn, seq uint64, req *proto.SubscribeRequest)
	mu    sync.Mutex
	n     int
	asked []proto.SubscribeRequest
}

func (f *fakeServer) start(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(nc)
		}
	}()
	return path
}

func (f *fakeServer) serve(nc net.Conn) {
	defer nc.Close()
	c := proto.NewConn(nc, 0)
	if _, err := proto.ServerHandshake(c, "srv", func(proto.Hello) ([]byte, error) { return nil, nil }); err != nil {
		return
	}
	for {
		h, body, err := c.Recv()
		if err != nil {
			return
		}
		switch h.Type {
		case proto.MsgStatusJob:
			if f.drops.Add(-1) >= 0 {
				return
			}
			var req proto.StatusRequest
			proto.DecodeBody(body, &req)
			c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq}, &proto.StatusReply{Objects: f.status(req.IDs[0])})
			f.reads.Add(1)
		case proto.MsgSubscribe:
			var req proto.SubscribeRequest
			proto.DecodeBody(body, &req)
			f.mu.Lock()
			handle := f.subs[min(f.n, len(f.subs)-1)]
			f.n++
			f.asked = append(f.asked, req)
			f.mu.Unlock()
			handle(c, h.Seq, &req)
			return
		}
	}
}

// opened answers a Subscribe with last, then sends frames.
func opened(c *proto.Conn, seq, last uint64, frames ...[]proto.JobEvent) {
	c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, More: true}, &proto.SubscribeReply{Last: last, Heartbeat: 30})
	send(c, seq, frames...)
}

// send sends frames of changes on an open stream.
func send(c *proto.Conn, seq uint64, frames ...[]proto.JobEvent) {
	for _, f := range frames {
		c.Send(proto.Header{Type: proto.MsgEvent, Seq: seq, More: true}, &proto.EventFrame{Events: f})
	}
}

// afterRead waits until qwait has read the jobs once, at most 20 s. It
// runs on the fake server's goroutine, where only Errorf may report.
func (f *fakeServer) afterRead(t *testing.T) {
	t.Helper()
	if ok, _ := testcluster.Poll(20*time.Second, func() (bool, string) { return f.reads.Load() > 0, "" }); !ok {
		t.Errorf("qwait did not read the jobs within 20s")
	}
}

// hold keeps a stream open until the client goes.
func hold(c *proto.Conn) { c.Recv() }

func job(id, state, exit string) proto.Status {
	s := proto.Status{Name: id, Attrs: []proto.Attr{{Name: proto.AttrJobState, Value: state}}}
	if exit != "" {
		s.Attrs = append(s.Attrs, proto.Attr{Name: proto.AttrExitStatus, Value: exit})
	}
	return s
}

func runWaiter(t *testing.T, path string, args ...string) (int, string, string) {
	t.Helper()
	o, err := parseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qwait", Stdout: &out, Stderr: &errb}
	w := &waiter{env: env, opts: o, now: time.Now, connect: func() (*proto.Client, error) {
		return proto.Dial(proto.DialOptions{Network: "unix", Address: path, Timeout: 5 * time.Second})
	}}
	done := make(chan int, 1)
	go func() { done <- w.run() }()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(20 * time.Second):
		t.Fatalf("qwait did not return; stdout %q", out.String())
	}
	return 0, "", ""
}

// The stream drops and the server no longer has the changes since:
// qwait subscribes from now and reads the job again, which ended
// meanwhile.
func TestResumeRefusedReadsAgain(t *testing.T) {
	var ended atomic.Bool
	var f *fakeServer
	f = &fakeServer{
		status: func(id string) []proto.Status {
			if ended.Load() {
				return []proto.Status{job("1.srv", "F", "3")}
			}
			return []proto.Status{job("1.srv", "R", "")}
		},
		subs: []func(*proto.Conn, uint64, *proto.SubscribeRequest){
			func(c *proto.Conn, seq uint64, _ *proto.SubscribeRequest) {
				opened(c, seq, 10, []proto.JobEvent{{Seq: 11, JobID: "2.srv", State: "R"}})
				f.afterRead(t)
				ended.Store(true) // then the connection drops
			},
			func(c *proto.Conn, seq uint64, _ *proto.SubscribeRequest) {
				c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, Code: proto.PBSE_EVENTGAP, Text: "gone"}, nil)
			},
			func(c *proto.Conn, seq uint64, _ *proto.SubscribeRequest) { opened(c, seq, 500); hold(c) },
		},
	}
	code, out, errs := runWaiter(t, f.start(t), "1")
	if code != 3 || out != "1.srv 3 F\n" || !strings.Contains(errs, "reconnecting") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if len(f.asked) < 3 || !f.asked[1].Resume || f.asked[1].After != 11 || f.asked[2].Resume {
		t.Fatalf("subscriptions asked: %+v (want a resume after 11, then one from now)", f.asked)
	}
}

// The server goes away in the middle of qwait's first read of the job:
// qwait reads it again once the server is back (as it follows the stream
// across the same), rather than failing on the broken read.
func TestReadAcrossLostServer(t *testing.T) {
	exit := 4
	var f *fakeServer
	f = &fakeServer{
		status: func(string) []proto.Status { return []proto.Status{job("1.srv", "R", "")} },
		subs: []func(*proto.Conn, uint64, *proto.SubscribeRequest){
			func(c *proto.Conn, seq uint64, _ *proto.SubscribeRequest) {
				opened(c, seq, 10)
				if ok, _ := testcluster.Poll(20*time.Second, func() (bool, string) { return f.reads.Load() > 0, "" }); !ok {
					t.Errorf("qwait did not read the job again within 20s")
				}
				send(c, seq, []proto.JobEvent{{Seq: 11, JobID: "1.srv", State: "F", ExitStatus: &exit}})
				hold(c)
			},
		},
	}
	f.drops.Store(1)
	code, out, errs := runWaiter(t, f.start(t), "1")
	if code != 4 || out != "1.srv 4 F\n" || !strings.Contains(errs, "lost the server while reading 1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// An array ends: the subjob deleted while it waited has no change of its
// own, and is read when the array's end arrives.
func TestArrayEndReadsDeletedSubjobs(t *testing.T) {
	var ended atomic.Bool
	var f *fakeServer
	f = &fakeServer{
		status: func(id string) []proto.Status {
			if ended.Load() {
				return []proto.Status{job("2[].srv", "F", "1"), job("2[1].srv", "X", "0"), job("2[2].srv", "X", "271")}
			}
			return []proto.Status{job("2[].srv", "B", ""), job("2[1].srv", "R", ""), job("2[2].srv", "Q", "")}
		},
		subs: []func(*proto.Conn, uint64, *proto.SubscribeRequest){
			func(c *proto.Conn, seq uint64, _ *proto.SubscribeRequest) {
				zero, one := 0, 1
				opened(c, seq, 0)
				f.afterRead(t)
				ended.Store(true)
				send(c, seq, []proto.JobEvent{{Seq: 1, JobID: "2[1].srv", State: "F", ExitStatus: &zero}, {Seq: 2, JobID: "2[].srv", State: "F", ExitStatus: &one}})
				hold(c)
			},
		},
	}
	code, out, _ := runWaiter(t, f.start(t), "2[]")
	if code != 15 || out != "2[1].srv 0 X\n2[2].srv 271 X\n" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}
