// The server link: the mom's own connection to the server, over which it
// reports its host and jobs (status) and the jobs' ends (obits), and
// learns the lease and the jobs it must kill. One goroutine (serverLink,
// started by Run) owns the connection; a job ending wakes it (Mom.kick).

package mom

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// serverLink keeps the connection to the server: status reports every
// interval and job ends as soon as they happen, reconnecting with backoff.
func (m *Mom) serverLink() {
	defer m.wg.Done()
	if m.firstCheck != nil {
		// The first report says whether the node is healthy.
		select {
		case <-m.firstCheck:
		case <-m.stop:
			return
		}
	}
	backoff := 200 * time.Millisecond
	for !m.stopped() {
		c, err := proto.DialGroup(proto.DialOptions{Network: "tcp", Address: m.cfg.ServerAddr, Role: proto.RoleMom, Name: m.cfg.NodeName, Key: m.key, Timeout: 30 * time.Second}, m.cfg.ServerAddrs)
		if err != nil {
			m.log.Warn("cannot reach the server", "server", m.cfg.ServerAddr, "error", err)
			select {
			case <-m.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
		m.mu.Lock()
		m.serverName = c.ServerName()
		m.mu.Unlock()
		m.log.Info("connected to the server", "server", m.cfg.ServerAddr)
		err = m.talk(c)
		c.Close()
		if err != nil && !m.stopped() {
			m.log.Warn("server connection lost", "error", err)
		}
	}
}

// talk reports status and job ends over one connection until it fails.
func (m *Mom) talk(c *proto.Client) error {
	for {
		// Ends wait for the jobend check, whose verdict reaches the
		// server first (nodecheck.go).
		m.askEndCheck()
		if err := m.reportStatus(c); err != nil {
			return err
		}
		if err := m.sendObits(c); err != nil {
			return err
		}
		m.mu.Lock()
		interval := m.interval
		m.mu.Unlock()
		select {
		case <-m.stop:
			return nil
		case <-m.kick:
		case <-time.After(interval):
		}
	}
}

func (m *Mom) reportStatus(c *proto.Client) error {
	st, seq := m.status()
	var reply proto.MomStatusReply
	// The lease counts from before the report left: the server counts
	// its own deadline from when the report arrived, which is later.
	sent := shepherd.BootNow()
	if err := c.Call(proto.MsgMomStatus, st, &reply); err != nil {
		var pe *proto.Error
		if errors.As(err, &pe) && pe.Code == proto.PBSE_UNKNODE {
			return fmt.Errorf("the server has no node %q (create it with qmgr)", m.cfg.NodeName)
		}
		return err
	}
	deadline := time.Duration(0)
	if reply.Lease > 0 {
		deadline = sent + time.Duration(reply.Lease)*time.Second
	}
	renewed := false
	if err := shepherd.WriteLease(shepherd.LeasePath(m.jobsDir), deadline); err != nil {
		// The old lease stands and lapses on time: fencing stays safe.
		m.log.Error("cannot renew the jobs' lease", "error", err)
	} else {
		renewed = reply.Lease > 0
	}
	m.mu.Lock()
	if renewed {
		// Its age counts from before the report left, as the lease does.
		m.leaseRenewed = time.Now().Add(-(shepherd.BootNow() - sent))
		m.lease = time.Duration(reply.Lease) * time.Second
	}
	if reply.Interval > 0 {
		m.interval = time.Duration(reply.Interval) * time.Second
	}
	m.reportedSeq = max(m.reportedSeq, seq)
	close(m.reported)
	m.reported = make(chan struct{})
	m.mu.Unlock()
	for _, id := range reply.Kill {
		m.killOrphan(id)
	}
	m.takeHooks(&reply)
	return nil
}

// status builds the periodic report; seq is the node check whose verdict
// it carries (healthSeq).
func (m *Mom) status() (st *proto.MomStatus, seq uint64) {
	facts, err := readHostFacts()
	if err != nil {
		m.log.Warn("cannot read host facts", "error", err)
	}
	st = &proto.MomStatus{
		Node: m.cfg.NodeName, Version: Version, Port: m.cfg.Port, Arch: "linux",
		Ncpus: facts.Ncpus, Physmem: m.reportedMem(facts.Physmem), Loadave: facts.Loadave,
		IdealLoad: m.mc().IdealLoad, MaxLoad: m.mc().MaxLoad, Resources: m.withHookResources(m.live.Load().resources),
		HooksVersion: m.hooksVersion(),
		RemoteCopy:   m.mc().Rcp != "",
		UseCpHosts:   useCpHosts(m.mc().UseCp),
		HostNames:    m.host.names, HostAddrs: m.host.addrs,
	}
	applyVnodes(st, m.mc().Vnodes)
	hookHealth := m.hookHealth()
	m.mu.Lock()
	defer m.mu.Unlock()
	st.Health, seq = m.health, m.healthSeq
	if st.Health == "" {
		st.Health = hookHealth // a hook's fail_action (hooks.go)
	}
	ids := make([]string, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		j := m.jobs[id]
		if j.sister {
			used := j.taskUsed
			if j.cg != nil {
				used = cgroupUsage(j.cg)
				used.CPUSecs = max(used.CPUSecs, j.taskUsed.CPUSecs)
			}
			st.Sisters = append(st.Sisters, proto.MomJobState{JobID: id, RunCount: j.spec.RunCount, Suspended: j.suspended, Used: m.scaleUsage(used)})
			continue
		}
		js := proto.MomJobState{JobID: id, RunCount: j.spec.RunCount, SessionID: j.session.Pgid, Exited: j.result != nil, Suspended: j.suspended, Used: m.scaleUsage(j.used),
			GPUs: execGPUs(m.cfg.NodeName, j.gpus), ExecVnode: j.spec.ExecVnode}
		if j.result == nil && (len(j.spec.StageIn) > 0 || len(j.spec.StageOut) > 0) {
			js.Phase = shepherd.ReadPhase(j.dir)
		}
		st.Jobs = append(st.Jobs, js)
	}
	for id := range m.staging {
		st.Staging = append(st.Staging, id)
	}
	sort.Strings(st.Staging)
	return st, seq
}

// wakeLink has the server link report now rather than at its next
// interval.
func (m *Mom) wakeLink() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// sendObits reports every ended job; a job's directory goes only after the
// server has acknowledged its end.
func (m *Mom) sendObits(c *proto.Client) error {
	m.mu.Lock()
	var done []*momJob
	var views []jobView
	checksEnds := m.checksEnds()
	for _, j := range m.jobs {
		if j.result != nil && m.endReportable(j, checksEnds) {
			done = append(done, j)
			views = append(views, jobView{session: j.session, result: j.result, used: j.used, extra: j.extraUsed, local: j.localUsed, sisters: j.sisterUsed})
		}
	}
	m.mu.Unlock()
	for i, j := range done {
		v := views[i]
		r := v.result
		used := r.Used
		used.CPUSecs = max(used.CPUSecs, v.used.CPUSecs)
		used.MemBytes = max(used.MemBytes, v.used.MemBytes)
		used.VmemBytes = max(used.VmemBytes, v.used.VmemBytes)
		// By node, when it ran on sisters too: this node's part (its
		// tasks here with it), then each sister's.
		var byNode []proto.NodeUsage
		if len(v.sisters) > 0 {
			byNode = append([]proto.NodeUsage{{Node: m.cfg.NodeName, Used: m.scaleUsage(used.Plus(v.local))}}, v.sisters...)
		}
		// Its tasks here and its parts on the sisters (already scaled
		// by their moms).
		used = used.Plus(v.extra)
		obit := &proto.JobObit{JobID: j.spec.JobID, RunCount: j.spec.RunCount, ExitStatus: r.ExitStatus, Used: m.scaleUsage(used), Start: r.Start, End: r.End, Comment: r.Comment, SessionID: v.session.Pgid, Fenced: r.Fenced,
			StageInFailed: r.StageInFailed, StageOutSpool: r.StageOutSpool, ByNode: byNode}
		if err := fault.Hit(fault.MomBeforeObit); err != nil {
			return err
		}
		if err := c.Call(proto.MsgJobObit, obit, nil); err != nil {
			var pe *proto.Error
			if !errors.As(err, &pe) || transient(pe.Code) {
				// Kept, and sent again on the next connection.
				return err
			}
			m.log.Warn("server refused the job end; dropping it", "job", j.spec.JobID, "error", err)
		}
		m.log.Info("job end reported", "job", j.spec.JobID, "exit_status", r.ExitStatus)
		m.forget(j)
		m.laterJobHooks(hook.ExecjobEnd, j.spec, nil, "the job has ended: nothing more is done")
	}
	return m.sendStageReports(c)
}

// transient reports whether a server's refusal may not hold next time (a
// failed commit, a server going down): a job's end is never dropped for
// it, or the server would later take the job for lost and run it again.
func transient(code proto.Code) bool {
	switch code {
	case proto.PBSE_SAVE_ERR, proto.PBSE_SVRDOWN, proto.PBSE_SYSTEM, proto.PBSE_NOCONNECTS, proto.PBSE_INTERNAL:
		return true
	}
	return false
}
