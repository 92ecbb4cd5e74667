// Tasks of a job (pbsdsh, pbs_tmrsh; see proto/tasks.go for the
// exchange). A request comes from a process of the job on this host (the
// mom socket: serveLocalTask) or from another mom of the job that checked
// its caller (the mom port: serveRemoteTask). This mom checks again that
// the job is here, that the caller is its owner (or root) and holds the
// job's cookie, and that the target is a node of the job; it runs the
// task itself (runTask: a task shepherd per task, shepherd/task.go) or
// passes the request on to the target's mom (forwardTask) and relays the
// streams. A task runs until it exits, its caller goes away, or its job
// ends here (endTasks).

package mom

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gopbs/gopbs/internal/listen"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// liveTask is a task running here: its task shepherd's process.
type liveTask struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it ended and its usage is counted
}

// taskEndWait bounds how long the end of a job waits for its tasks to
// die beyond the job's kill_delay.
const taskEndWait = 5 * time.Second

// taskJob finds the job a task request names and checks the caller: the
// job is here and running, the caller is its owner (or root), and holds
// the job's cookie.
func (m *Mom) taskJob(req *proto.TaskSpawn, uid uint32) (*momJob, error) {
	if req.JobID == "" {
		return nil, proto.Errorf(proto.PBSE_IVALREQ, "not inside a job (PBS_JOBID is not set)")
	}
	m.mu.Lock()
	j := m.jobs[req.JobID]
	var ended bool
	if j != nil {
		ended = j.result != nil || j.forgotten
	}
	m.mu.Unlock()
	switch {
	case j == nil:
		return nil, proto.Errorf(proto.PBSE_UNKJOBID, "job %s does not run on %s", req.JobID, m.cfg.NodeName)
	case ended:
		return nil, proto.Errorf(proto.PBSE_BADSTATE, "job %s has ended on %s", req.JobID, m.cfg.NodeName)
	case uid != 0 && int64(uid) != j.ownerUID:
		return nil, proto.Errorf(proto.PBSE_PERM, "job %s belongs to %s, not to uid %d", req.JobID, j.spec.EUser, uid)
	case j.spec.TaskCookie == "" || subtle.ConstantTimeCompare([]byte(req.Cookie), []byte(j.spec.TaskCookie)) != 1:
		return nil, proto.Errorf(proto.PBSE_PERM, "not inside job %s (PBS_JOBCOOKIE does not match)", req.JobID)
	}
	return j, nil
}

// taskTarget resolves the node a task is for: "" or a name of this node
// is here (local), else one of the job's other moms.
func (m *Mom) taskTarget(j *momJob, name string) (node, addr string, local bool, err error) {
	if name == "" || m.isThisNode(name) {
		return m.cfg.NodeName, "", true, nil
	}
	short := func(s string) string { h, _, _ := strings.Cut(s, "."); return strings.ToLower(h) }
	for _, nm := range j.spec.Moms {
		if strings.EqualFold(nm.Node, name) || short(nm.Node) == short(name) {
			if nm.Node == m.cfg.NodeName {
				return nm.Node, "", true, nil
			}
			return nm.Node, nm.Addr, false, nil
		}
	}
	return "", "", false, proto.Errorf(proto.PBSE_UNKNODE, "%s is not a node of job %s (its nodes: %s)", name, j.spec.JobID, jobNodes(j))
}

// isThisNode reports whether name names this mom's node or host.
func (m *Mom) isThisNode(name string) bool {
	if strings.EqualFold(name, m.cfg.NodeName) {
		return true
	}
	for _, h := range m.host.names {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

// jobNodes lists a job's nodes for a refusal.
func jobNodes(j *momJob) string {
	if len(j.spec.Moms) == 0 {
		return j.spec.ExecHost
	}
	var names []string
	for _, nm := range j.spec.Moms {
		names = append(names, nm.Node)
	}
	return strings.Join(names, ", ")
}

// refuseTask answers a task request with err.
func refuseTask(c *proto.Conn, seq uint64, err error) {
	pe := momError(err)
	c.Send(proto.Header{Type: proto.MsgReply, Seq: seq, Code: pe.Code, Text: pe.Error()}, nil)
}

// serveLocalTask serves a task request of a process on this host, whose
// uid the kernel gave (peer).
func (m *Mom) serveLocalTask(c *proto.Conn, peer listen.Peer, h proto.Header, body []byte) {
	c.NetConn().SetDeadline(time.Time{})
	var req proto.TaskSpawn
	if err := proto.DecodeBody(body, &req); err != nil {
		refuseTask(c, h.Seq, proto.Errorf(proto.PBSE_PROTOCOL, "%v", err))
		return
	}
	j, err := m.taskJob(&req, peer.UID)
	if err == nil {
		var addr string
		var local bool
		var node string
		if node, addr, local, err = m.taskTarget(j, req.Node); err == nil {
			req.Node = node
			if local {
				m.runTask(c, h.Seq, j, &req)
				return
			}
			req.Forwarded, req.UID = true, peer.UID
			m.forwardTask(c, h.Seq, addr, &req)
			return
		}
	}
	m.log.Info("refused a task", "job", req.JobID, "uid", peer.UID, "node", req.Node, "error", err)
	refuseTask(c, h.Seq, err)
}

// serveRemoteTask serves a task request another mom of the job passed on.
func (m *Mom) serveRemoteTask(c *proto.Conn, from string, h proto.Header, body []byte) {
	var req proto.TaskSpawn
	if err := proto.DecodeBody(body, &req); err != nil {
		refuseTask(c, h.Seq, proto.Errorf(proto.PBSE_PROTOCOL, "%v", err))
		return
	}
	j, err := m.taskJob(&req, req.UID)
	switch {
	case err != nil:
	case !req.Forwarded:
		err = proto.Errorf(proto.PBSE_PERM, "a task request from another mom must carry its caller")
	case !jobHasNode(&j.spec, from):
		err = proto.Errorf(proto.PBSE_PERM, "%s is not a node of job %s", from, req.JobID)
	case !m.isThisNode(req.Node):
		err = proto.Errorf(proto.PBSE_UNKNODE, "task for %s sent to %s", req.Node, m.cfg.NodeName)
	}
	if err != nil {
		m.log.Info("refused a task", "job", req.JobID, "from", from, "error", err)
		refuseTask(c, h.Seq, err)
		return
	}
	m.runTask(c, h.Seq, j, &req)
}

// forwardTask passes a task request to the mom at addr and relays the
// exchange both ways until the task's exit or either side goes.
func (m *Mom) forwardTask(c *proto.Conn, seq uint64, addr string, req *proto.TaskSpawn) {
	nc, err := net.DialTimeout("tcp", addr, momHandshake)
	if err != nil {
		refuseTask(c, seq, proto.Errorf(proto.PBSE_NORELYMOM, "cannot reach the mom of %s at %s: %v", req.Node, addr, err))
		return
	}
	defer nc.Close()
	up := proto.NewConn(nc, 0)
	nc.SetDeadline(time.Now().Add(momHandshake))
	if _, err := proto.ClientHandshake(up, proto.RoleMom, m.cfg.NodeName, m.key); err != nil {
		refuseTask(c, seq, proto.Errorf(proto.PBSE_NORELYMOM, "mom of %s at %s: %v", req.Node, addr, err))
		return
	}
	nc.SetDeadline(time.Time{})
	if err := up.Send(proto.Header{Type: proto.MsgTaskSpawn, Seq: 1}, req); err != nil {
		refuseTask(c, seq, proto.Errorf(proto.PBSE_NORELYMOM, "mom of %s: %v", req.Node, err))
		return
	}
	done := make(chan struct{})
	go func() {
		// The caller's stdin and its going away, to the task's mom.
		defer close(done)
		for {
			h, body, err := c.Recv()
			if err != nil {
				nc.Close()
				return
			}
			if h.Type != proto.MsgTaskData || up.Send(proto.Header{Type: h.Type}, rawBody(body)) != nil {
				nc.Close()
				return
			}
		}
	}()
	for {
		h, body, err := up.Recv()
		if err != nil {
			break
		}
		if h.Type == proto.MsgReply {
			h.Seq = seq
		}
		if c.Send(h, rawBody(body)) != nil || h.Type == proto.MsgTaskExit || h.Type == proto.MsgReply && h.Code != proto.PBSE_NONE {
			break
		}
	}
	c.NetConn().Close()
	nc.Close()
	<-done
}

// runTask starts a task of j here and serves its streams on c.
func (m *Mom) runTask(c *proto.Conn, seq uint64, j *momJob, req *proto.TaskSpawn) {
	if len(req.Argv) == 0 {
		refuseTask(c, seq, proto.Errorf(proto.PBSE_IVALREQ, "no command to run"))
		return
	}
	var closeAfter []*os.File
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			closeAfter = append(closeAfter, r, w)
		}
		return r, w, err
	}
	fail := func(err error) { refuseTask(c, seq, fmt.Errorf("on %s: %w", m.cfg.NodeName, err)) }
	var stdinR, stdinW *os.File
	var err error
	if req.Stdin {
		if stdinR, stdinW, err = pipe(); err != nil {
			fail(err)
			return
		}
	} else if stdinR, err = os.Open(os.DevNull); err != nil {
		fail(err)
		return
	} else {
		closeAfter = append(closeAfter, stdinR)
	}
	outR, outW, err1 := pipe()
	errR, errW, err2 := pipe()
	specR, specW, err3 := pipe()
	resR, resW, err4 := pipe()
	for _, e := range []error{err1, err2, err3, err4} {
		if e != nil {
			fail(e)
			return
		}
	}
	cmd := exec.Command(m.exe, shepherd.TaskArg, j.dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, outW, errW
	cmd.ExtraFiles = []*os.File{specR, resW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	t := &liveTask{cmd: cmd, done: make(chan struct{})}
	m.mu.Lock()
	if j.result != nil || j.forgotten {
		m.mu.Unlock()
		fail(proto.Errorf(proto.PBSE_BADSTATE, "job %s has ended", j.spec.JobID))
		return
	}
	err = cmd.Start()
	if err == nil {
		if j.tasks == nil {
			j.tasks = map[int]*liveTask{}
		}
		j.tasks[cmd.Process.Pid] = t
	}
	m.mu.Unlock()
	if err != nil {
		fail(fmt.Errorf("cannot start the task: %w", err))
		return
	}
	pid := cmd.Process.Pid
	os.WriteFile(shepherd.TaskFile(j.dir, pid), nil, 0o600)
	// The child's ends are its own now.
	for _, f := range []*os.File{stdinR, outW, errW, specR, resW} {
		f.Close()
	}
	json.NewEncoder(specW).Encode(shepherd.TaskSpec{Argv: req.Argv, Shell: req.Shell, Env: req.Env})
	specW.Close()
	m.log.Info("task started", "job", j.spec.JobID, "pid", pid, "command", req.Argv[0])

	var sendMu sync.Mutex
	send := func(h proto.Header, body any) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return c.Send(h, body)
	}
	send(proto.Header{Type: proto.MsgReply, Seq: seq}, &proto.TaskStarted{Node: m.cfg.NodeName, PID: pid})
	var exited atomic.Bool
	var outputs sync.WaitGroup
	for stream, r := range map[uint8]*os.File{proto.StreamStdout: outR, proto.StreamStderr: errR} {
		outputs.Add(1)
		go func() {
			defer outputs.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					send(proto.Header{Type: proto.MsgTaskData}, &proto.TaskData{Stream: stream, Data: buf[:n]})
				}
				if err != nil {
					send(proto.Header{Type: proto.MsgTaskData}, &proto.TaskData{Stream: stream, EOF: true})
					return
				}
			}
		}()
	}
	go func() {
		// The caller's stdin; its going away kills the task.
		for {
			h, body, err := c.Recv()
			if err != nil {
				break
			}
			var d proto.TaskData
			if h.Type != proto.MsgTaskData || proto.DecodeBody(body, &d) != nil {
				break
			}
			if stdinW != nil && d.Stream == proto.StreamStdin {
				if len(d.Data) > 0 {
					stdinW.Write(d.Data)
				}
				if d.EOF {
					stdinW.Close()
				}
			}
		}
		if !exited.Load() && !req.Detach {
			// The caller went away while its task ran.
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}()
	// The first result comes when the task's process exits; what it left
	// running may keep its task shepherd (and its output) for longer.
	dec := json.NewDecoder(resR)
	var res shepherd.TaskResult
	gotFirst := dec.Decode(&res) == nil
	outputs.Wait()
	if !gotFirst {
		cmd.Wait()
		res = shepherd.TaskResult{Status: 126, Comment: "the task's shepherd ended without a result"}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			res.Status = ws.ExitStatus()
		}
	}
	exited.Store(true)
	m.log.Info("task ended", "job", j.spec.JobID, "pid", pid, "status", res.Status, "comment", res.Comment)
	send(proto.Header{Type: proto.MsgTaskExit}, &proto.TaskExit{Status: res.Status, Comment: res.Comment})
	c.NetConn().Close()
	// The final result counts everything the task started.
	var final shepherd.TaskResult
	if gotFirst && dec.Decode(&final) == nil {
		res.Used = final.Used
	}
	if gotFirst {
		cmd.Wait()
	}
	m.mu.Lock()
	j.taskUsed.CPUSecs += res.Used.CPUSecs
	j.taskUsed.MemBytes = max(j.taskUsed.MemBytes, res.Used.MemBytes)
	delete(j.tasks, pid)
	m.mu.Unlock()
	os.Remove(shepherd.TaskFile(j.dir, pid))
	close(t.done)
}

// endTasks ends every task of j here (those of a previous mom too, by
// their records in the job directory), waits for them within the job's
// kill_delay and a margin, and returns what the tasks used.
func (m *Mom) endTasks(j *momJob, why string) proto.Usage {
	m.mu.Lock()
	var live []*liveTask
	ours := map[int]bool{}
	for pid, t := range j.tasks {
		live = append(live, t)
		ours[pid] = true
	}
	m.mu.Unlock()
	for _, t := range live {
		t.cmd.Process.Signal(syscall.SIGTERM)
	}
	// Task shepherds of a previous mom: their sessions.
	ents, _ := os.ReadDir(j.dir)
	for _, e := range ents {
		if pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), shepherd.TaskFilePrefix)); err == nil && strings.HasPrefix(e.Name(), shepherd.TaskFilePrefix) {
			if !ours[pid] && isTaskShepherdOf(pid, j.dir) {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}
	deadline := time.After(time.Duration(j.spec.KillDelay)*time.Second + taskEndWait)
	for _, t := range live {
		select {
		case <-t.done:
		case <-deadline:
			m.log.Warn("a task did not end in time", "job", j.spec.JobID, "pid", t.cmd.Process.Pid, "why", why)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return j.taskUsed
}

// isTaskShepherdOf reports whether pid is a live task shepherd of the job
// in dir (its command line, so a reused pid is not mistaken for it).
func isTaskShepherdOf(pid int, dir string) bool { return runsFor(pid, shepherd.TaskArg, dir) }

// signalTasks sends sig to every process of j's tasks here.
func (m *Mom) signalTasks(j *momJob, sig syscall.Signal) {
	m.mu.Lock()
	var pids []int
	for pid := range j.tasks {
		pids = append(pids, pid)
	}
	m.mu.Unlock()
	for _, pid := range pids {
		// All the task started, what left its session too (Open MPI's
		// orted under pbs_tmrsh, and the ranks it starts).
		for _, p := range shepherd.Descendants(pid) {
			syscall.Kill(p, sig)
		}
	}
}
