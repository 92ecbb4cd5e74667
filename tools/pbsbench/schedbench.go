package main

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// simulator is a mom that reports many simulated nodes over the real
// protocol (vnodes of node "simhost") and accepts every job start sent to
// them without running anything.
type simulator struct {
	key     []byte
	nodes   []string
	ncpus   int
	port    int
	started atomic.Int64
	l       net.Listener
}

// startSimulator creates simhost and the simulated nodes on the server and
// starts reporting for them.
func startSimulator(cl *testcluster.Cluster, cli *proto.Client, n, ncpus int) *simulator {
	key, err := os.ReadFile(filepath.Join(cl.Home, "auth", "cluster.key"))
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	sim := &simulator{key: key, ncpus: ncpus, port: l.Addr().(*net.TCPAddr).Port, l: l}
	go sim.serve()
	attrs := []proto.Attr{{Name: proto.AttrNodeMom, Value: "127.0.0.1"}, {Name: proto.AttrNodePort, Value: strconv.Itoa(sim.port)}}
	mgr := func(name string) {
		if err := cli.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: name, Attrs: attrs}); err != nil {
			log.Fatalf("create node %s: %v", name, err)
		}
	}
	mgr("simhost")
	for i := 1; i <= n; i++ {
		sim.nodes = append(sim.nodes, fmt.Sprintf("s%06d", i))
	}
	parallel(16, len(sim.nodes), cl, func(c *proto.Client, i int) {
		if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: sim.nodes[i], Attrs: attrs}); err != nil {
			log.Fatalf("create node %s: %v", sim.nodes[i], err)
		}
	})
	go sim.report(cl)
	return sim
}

// report sends status for simhost and every simulated node.
func (sim *simulator) report(cl *testcluster.Cluster) {
	c, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: fmt.Sprintf("127.0.0.1:%d", cl.BatchPort), Role: proto.RoleMom, Name: "simhost", Key: sim.key})
	if err != nil {
		log.Fatal(err)
	}
	st := &proto.MomStatus{Node: "simhost", Version: "sim", Port: sim.port, Arch: "linux", Ncpus: 1, Physmem: 1 << 30, IdealLoad: -1, MaxLoad: -1}
	for _, n := range sim.nodes {
		st.Vnodes = append(st.Vnodes, proto.VnodeStatus{Name: n, Ncpus: sim.ncpus, Physmem: 64 << 30})
	}
	for {
		var reply proto.MomStatusReply
		if err := c.Call(proto.MsgMomStatus, st, &reply); err != nil {
			log.Fatalf("simulator status: %v", err)
		}
		time.Sleep(time.Duration(max(reply.Interval, 1)) * time.Second)
	}
}

// serve accepts the server's job starts.
func (sim *simulator) serve() {
	for {
		nc, err := sim.l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			c := proto.NewConn(nc, 0)
			if _, err := proto.ServerHandshake(c, "simhost", func(proto.Hello) ([]byte, error) { return sim.key, nil }); err != nil {
				return
			}
			for {
				h, body, err := c.Recv()
				if err != nil {
					return
				}
				var reply any
				switch h.Type {
				case proto.MsgMomRunJob:
					sim.started.Add(1)
				case proto.MsgMomRunJobs:
					// A simulated mom runs nothing: it only needs the number
					// of jobs, read from the head of the body, so that the
					// benchmark measures the server and scheduler, not the
					// simulator decoding job specs.
					n := countJobs(body)
					reply = &proto.MomJobsReply{Results: make([]proto.ObjectError, n)}
					sim.started.Add(int64(n))
				}
				if err := c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq}, reply); err != nil {
					return
				}
			}
		}()
	}
}

// parallel runs fn for 0..n-1 on workers clients.
func parallel(workers, n int, cl *testcluster.Cluster, fn func(c *proto.Client, i int)) {
	var next atomic.Int64
	onClients(workers, cl, func(c *proto.Client) {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			fn(c, i)
		}
	})
}

// onClients runs fn on workers goroutines, each with a connection of its
// own to the server's socket, and waits for them.
func onClients(workers int, cl *testcluster.Cluster, fn func(c *proto.Client)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			fn(c)
		}()
	}
	wg.Wait()
}

func submitMany(cl *testcluster.Cluster, n int, script string) {
	req := &proto.SubmitRequest{Script: []byte(script), Attrs: []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=1"}}}
	parallel(16, n, cl, func(c *proto.Client, _ int) {
		if _, err := c.Submit(req); err != nil {
			log.Fatal(err)
		}
	})
}

var cycleEnd = regexp.MustCompile(`scheduling cycle ends: event=(\S+) jobs=(\d+) nodes=(\d+) started=(\d+) refused=(\d+) comments=(\d+) fetch="?([^" ]+)"? decide="?([^" ]+)"? apply="?([^" ]+)"?`)

// cycles returns the cycle-end lines logged so far.
func cycles(cl *testcluster.Cluster) [][]string {
	return cycleEnd.FindAllStringSubmatch(cl.SchedLog(), -1)
}

// schedExperiment places jobs on simulated nodes with pbs_sched and
// reports the cycle times from the scheduler's log.
func schedExperiment(nodes, ncpus, jobs, queued int) {
	tb := &benchTB{}
	defer tb.cleanup()
	// PBSBENCH_SERVER_LOG=info makes the server log, per run request, how
	// long its commit, the moms and the accounting took (printed below).
	level := "warn"
	if v := os.Getenv("PBSBENCH_SERVER_LOG"); v != "" {
		level = v
	}
	args := []string{"-log-level", level}
	if p := os.Getenv("PBSBENCH_SERVER_PROFILE"); p != "" {
		args = append(args, "-cpuprofile", p)
	}
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: args})
	cl.MustRun("qmgr", "-c", "set server scheduling = False")
	cli, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(cl.Home, "pbs_server.sock")})
	if err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	sim := startSimulator(cl, cli, nodes, ncpus)
	log.Printf("%d simulated nodes of %d cpus created in %v", nodes, ncpus, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	submitMany(cl, jobs, "#!/bin/sh\n/bin/true\n")
	log.Printf("%d jobs submitted in %v", jobs, time.Since(t0).Round(time.Millisecond))
	time.Sleep(1500 * time.Millisecond) // a status report covers every node
	var schedArgs []string
	if p := os.Getenv("PBSBENCH_SCHED_PROFILE"); p != "" {
		schedArgs = append(schedArgs, "-cpuprofile", p)
	}
	cl.StartScheduler("pbs_sched", schedArgs...)
	before := len(cycles(cl))
	start := time.Now()
	cl.MustRun("qmgr", "-c", "set server scheduling = True")
	for sim.started.Load() < int64(jobs) {
		if time.Since(start) > 10*time.Minute {
			log.Fatalf("only %d of %d jobs started", sim.started.Load(), jobs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	total := time.Since(start)
	for len(cycles(cl)) <= before {
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range cycles(cl)[before:] {
		if c[4] != "0" {
			fmt.Printf("placement cycle (event %s): %s jobs, %s nodes, %s started; fetch %s, decide %s, apply %s\n", c[1], c[2], c[3], c[4], c[7], c[8], c[9])
		}
	}
	fmt.Printf("%d one-cpu jobs on %d nodes of %d cpus: all started %v after scheduling was set True\n", jobs, nodes, ncpus, total.Round(time.Millisecond))
	for _, line := range strings.Split(cl.ServerLog(), "\n") {
		if strings.Contains(line, "jobs started") {
			fmt.Println("server:", line)
		}
	}
	if queued == 0 {
		return
	}
	// Then many queued jobs that cannot run: the first cycle writes their
	// comments, later ones find nothing to change.
	t0 = time.Now()
	submitMany(cl, queued, "#!/bin/sh\n/bin/true\n")
	log.Printf("%d more jobs submitted in %v", queued, time.Since(t0).Round(time.Millisecond))
	before = len(cycles(cl))
	for i := 0; i < 3; i++ {
		cl.MustRun("qmgr", "-c", "set server scheduling = True")
		for len(cycles(cl)) <= before+i {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, c := range cycles(cl)[before:] {
		fmt.Printf("cycle (event %s) over %s jobs (%d queued) on %s nodes: %s comments; fetch %s, decide %s, apply %s\n", c[1], c[2], queued, c[3], c[6], c[7], c[8], c[9])
	}
}

// countJobs reads the length of the Jobs array at the head of an encoded
// proto.MomJobs ({"Jobs": [...]}).
func countJobs(body []byte) int {
	dec := msgpack.NewDecoder(bytes.NewReader(body))
	if n, err := dec.DecodeMapLen(); err != nil || n < 1 {
		log.Fatalf("simulator: body is not a map: %v", err)
	}
	if k, err := dec.DecodeString(); err != nil || k != "Jobs" {
		log.Fatalf("simulator: first key %q, %v", k, err)
	}
	n, err := dec.DecodeArrayLen()
	if err != nil {
		log.Fatalf("simulator: %v", err)
	}
	return n
}
