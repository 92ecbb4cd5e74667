package server

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/nodes"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/signals"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// Defaults of the node liveness attributes.
const (
	defaultNodeCheckRate   = 60  // seconds without a report before a node is down
	defaultNodeFailRequeue = 310 // seconds a node is down before its jobs are requeued
	defaultKillDelay       = 10  // seconds between SIGTERM and SIGKILL
	// lostJobGrace is how long after its start a job may be missing from
	// its mother superior's reports before it is taken as lost: covers a
	// report that was already on its way when the job was sent.
	lostJobGrace = 30 * time.Second
)

// Fencing (DESIGN §6.3, SECURITY.md). A mom's jobs live on a lease: each
// answered status report grants leaseFor(...) seconds, counted by the mom
// from before it sent the report, and the job shepherds kill their jobs
// when it lapses without renewal. The server requeues a node's jobs only
// after node_check_rate + node_fail_requeue of silence, and never before
// the last lease it granted has lapsed, plus fenceSlack for the shepherds
// to notice (they look every second) and kill.
const fenceSlack = 2 * time.Second

// leaseFor is the lease for a node that is marked down after downAfter of
// silence and whose jobs are requeued failAfter later: that total less a
// margin (a tenth, from 3 s to 30 s). Zero when jobs are never requeued
// (node_fail_requeue = 0): then nothing needs fencing and jobs outlive any
// outage of the server.
func leaseFor(downAfter, failAfter time.Duration) time.Duration {
	if failAfter <= 0 {
		return 0
	}
	total := downAfter + failAfter
	margin := min(max(total/10, 3*time.Second), 30*time.Second)
	return max(total-margin, time.Second)
}

// raiseLeaseCeiling stores the lease the settings now grant when it is
// longer than any granted before, before it is granted: a server started
// later (a restart, or another member of a replicated group taking over)
// then requeues nothing for a node's silence until that long after its
// start, even if the settings were lowered meanwhile (fencing across
// restarts and leaders). It commits only when the settings were raised.
func (s *Server) raiseLeaseCeiling() error {
	s.mu.RLock()
	rate := time.Duration(s.serverLong(proto.AttrNodeCheckRate, defaultNodeCheckRate)) * time.Second
	failAfter := time.Duration(s.serverLong(proto.AttrNodeFailRequeue, defaultNodeFailRequeue)) * time.Second
	ceiling := s.leaseCeiling
	s.mu.RUnlock()
	told := max(1, rate/time.Second/3) * time.Second // the interval a report is told
	want := int64(leaseFor(max(rate, 3*told), failAfter) / time.Second)
	if want <= ceiling {
		return nil
	}
	return s.commit.Do(func(b *store.Batch) error {
		if want > s.leaseCeiling {
			s.leaseCeiling = want
			b.SetLeaseCeiling(want)
		}
		return nil
	})
}

// downAfter is how long a node may stay silent before it is marked down:
// node_check_rate, or three of the intervals its mom was last told if that
// is longer (a lowered rate reaches a mom only with its next report).
func downAfter(rate time.Duration, rt *state.Runtime) time.Duration {
	return max(rate, 3*rt.Told)
}

// serverLong reads an integer server attribute with a default (mu held).
func (s *Server) serverLong(name string, def int64) int64 {
	if v, ok := s.server.Long(name); ok {
		return v
	}
	return def
}

// momStatus handles a mom's report: the node is up, its facts are
// recorded, and the jobs it runs are reconciled with the server's view.
func (s *Server) momStatus(who *caller, st *proto.MomStatus) (*proto.MomStatusReply, error) {
	if st.Node != who.name {
		return nil, proto.Errorf(proto.PBSE_PERM, "mom %q reported as node %q", who.name, st.Node)
	}
	if s.cfg.Fence != nil {
		// No lease from a leader that lost its group (fencing
		// across leaders).
		if err := s.cfg.Fence(); err != nil {
			return nil, err
		}
	}
	if err := s.raiseLeaseCeiling(); err != nil {
		return nil, err
	}
	now := s.now()
	reply := &proto.MomStatusReply{}
	s.mu.Lock()
	node, ok := s.nodes.Get(st.Node)
	if !ok {
		s.mu.Unlock()
		return nil, proto.Errorf(proto.PBSE_UNKNODE, "%s", st.Node)
	}
	rt := s.nodes.RuntimeOf(st.Node)
	cameUp := !rt.Reported || rt.Down
	if cameUp {
		rt.LastChange = now
		s.log.Info("node up", "node", st.Node)
	}
	rt.Down, rt.LastSeen = false, now
	s.nodes.Report(st.Node, *st)
	wasBusy := rt.LoadBusy
	rt.LoadBusy = nodes.Overloaded(s.nodes, node, rt)
	unloaded := wasBusy && !rt.LoadBusy
	if wasBusy != rt.LoadBusy {
		rt.LastChange = now
		s.log.Info("node load", "node", st.Node, "busy", rt.LoadBusy, "loadave", st.Loadave)
	}
	rate := time.Duration(s.serverLong(proto.AttrNodeCheckRate, defaultNodeCheckRate)) * time.Second
	failAfter := time.Duration(s.serverLong(proto.AttrNodeFailRequeue, defaultNodeFailRequeue)) * time.Second
	reply.Interval = int(max(1, rate/time.Second/3))
	rt.Told = time.Duration(reply.Interval) * time.Second
	// Never longer than the ceiling stored (raiseLeaseCeiling): the
	// settings may have been raised since.
	lease := min(leaseFor(downAfter(rate, rt), failAfter), time.Duration(s.leaseCeiling)*time.Second)
	reply.Lease = int(lease / time.Second)
	if lease > 0 {
		rt.LeaseEnd = now.Add(lease + fenceSlack)
	}
	checked := []string{st.Node}
	if len(st.Vnodes) > 0 || len(rt.Vnodes) > 0 {
		recorded, stale := s.nodes.ReportVnodes(st, now)
		checked = append(checked, recorded...)
		for _, name := range stale {
			s.log.Warn("vnode stale: its mom no longer reports it", "node", name, "mom", st.Node)
		}
	}
	var defs []nodes.VnodeDef
	if len(st.Vnodes) > 0 || len(st.NodeAttrs) > 0 {
		var refused []error
		defs, refused = s.nodeView().DefChanges(st)
		for _, err := range refused {
			s.log.Warn("vnode definition refused", "mom", st.Node, "error", err)
		}
	}
	var healthChanges []string
	for _, name := range checked {
		n, _ := s.nodes.Get(name)
		if _, change := model.ApplyHealth(n, st.Health); change != model.HealthSame {
			healthChanges = append(healthChanges, name)
		}
	}
	seen := s.nodeView().Reconcile(st, now, lostJobGrace, func(k model.JobKey) bool { return s.resizing[k] })
	reply.Kill = seen.Kill
	for _, r := range seen.Running {
		// Usage is advisory and not worth a commit; it is saved with the
		// job's next durable change (its end at the latest). A change of
		// cpu time is a change schedulers fetch (fair share counts it).
		j, mj := r.Job, r.Report
		before, _ := j.ResourcesUsed.Get(proto.ResCput)
		j.ResourcesUsed = usageResources(j, s.withSisterUsage(j, st.Node, mj.Used))
		if after, _ := j.ResourcesUsed.Get(proto.ResCput); after != before {
			s.jobs.Touch(j)
		}
		if mj.SessionID != 0 {
			j.SessionID = mj.SessionID
		}
		if mj.GPUs != "" && mj.GPUs != j.ExecGPUs {
			// Shown, not committed: saved with the job's next durable
			// change, and reported again by a mom after a restart.
			j.ExecGPUs = mj.GPUs
			s.jobs.Touch(j)
		}
		s.notePhase(j, mj.Phase)
	}
	if version, hooks := s.momHooks(); version != st.HooksVersion {
		reply.HooksVersion, reply.HooksSent, reply.Hooks = version, true, hooks
	}
	resetStage := s.checkStaging(st.Node, st.Staging, now)
	lost, resync := seen.Lost, seen.Resync
	s.mu.Unlock()
	if len(defs) > 0 && s.applyVnodeDefs(st, defs) {
		cameUp = true
	}
	if len(healthChanges) > 0 && s.nodeHealth(healthChanges, st.Health) {
		cameUp = true
	}
	for _, key := range lost {
		s.requeue(key, "Job requeued: its execution host "+st.Node+" does not know it")
	}
	for _, key := range resync {
		go s.resyncJob(key)
	}
	for _, key := range resetStage {
		s.log.Warn("early stage-in lost: its mom does not report it", "seq", key.Seq, "index", key.Index, "node", st.Node)
		s.stageForget(key, st.Node)
	}
	if cameUp || unloaded {
		// Its resources may start queued jobs now, not at the next timer.
		s.schedEvent(proto.SchedNew)
	}
	return reply, nil
}

// nodeHealth applies a mom's health report to the nodes it speaks for
// whose state it changes (model.ApplyHealth), in one commit; it reports
// whether one came back online. A failed commit leaves the nodes as they
// were: the next report tries again.
func (s *Server) nodeHealth(names []string, health string) (online bool) {
	type change struct {
		name string
		what model.HealthChange
	}
	var changes []change
	err := s.commit.Do(func(b *store.Batch) error {
		changes = changes[:0]
		now := s.now()
		for _, name := range names {
			n, _ := s.nodes.Get(name)
			if n == nil {
				continue // deleted meanwhile
			}
			c, what := model.ApplyHealth(n, health)
			if what == model.HealthSame {
				continue
			}
			if what != model.HealthMessage {
				c.Set(proto.AttrNodeLastState, "", strconv.FormatInt(now.Unix(), 10))
				if rt := s.nodes.Runtime(name); rt != nil {
					rt.LastChange = now
				}
			}
			s.nodes.Put(c)
			b.PutNode(c)
			changes = append(changes, change{name, what})
		}
		return nil
	})
	if err != nil {
		s.log.Error("cannot record a node's health", "nodes", strings.Join(names, ","), "health", health, "error", err)
		return false
	}
	for _, c := range changes {
		switch c.what {
		case model.HealthOffline:
			s.log.Warn("node offline: its health check fails", "node", c.name, "message", health)
		case model.HealthMessage:
			s.log.Warn("node health check fails with another message", "node", c.name, "message", health)
		case model.HealthOnline:
			s.log.Info("node back online: its health check passes", "node", c.name)
			online = true
		}
	}
	return online
}

// withSisterUsage adds to what a job used on its first node (used) what
// its sisters last reported for it (mu held): resources_used sums every
// node of the job, as its end's record does.
func (s *Server) withSisterUsage(j *model.Job, first string, used proto.Usage) proto.Usage {
	for _, node := range j.Alloc.Hosts() {
		if node == first {
			continue
		}
		rt := s.nodes.Runtime(node)
		if rt == nil {
			continue
		}
		for _, sj := range rt.Status.Sisters {
			if sj.JobID == j.ID && sj.RunCount == j.RunCount {
				used = used.Plus(sj.Used)
			}
		}
	}
	return used
}

// checkNodes marks nodes down when their moms stop reporting and, after
// node_fail_requeue, requeues or finishes their jobs.
func (s *Server) checkNodes(now time.Time) {
	// It runs every second: the nodes with something to do are found
	// under the read lock, and only those are handled under the write
	// lock (with tens of thousands of nodes, sorting them all under it
	// held up every request each second).
	s.mu.RLock()
	rate := time.Duration(s.serverLong(proto.AttrNodeCheckRate, defaultNodeCheckRate)) * time.Second
	failAfter := time.Duration(s.serverLong(proto.AttrNodeFailRequeue, defaultNodeFailRequeue)) * time.Second
	var names []string
	for name := range s.nodes.All() {
		rt := s.nodes.Runtime(name)
		if rt == nil {
			rt = &state.Runtime{LastSeen: s.started} // as Nodes.RuntimeOf would make it
		}
		if !rt.Down && now.Sub(rt.LastSeen) > downAfter(rate, rt) ||
			rt.Down && failAfter > 0 && now.Sub(rt.DownSince) >= failAfter && !now.Before(rt.LeaseEnd) && !now.Before(s.fenceUntil) {
			names = append(names, name)
		}
	}
	s.mu.RUnlock()
	if len(names) == 0 {
		return
	}
	s.mu.Lock()
	var victims []model.JobKey
	var failedNode []string
	sort.Strings(names)
	for _, name := range names {
		if _, ok := s.nodes.Get(name); !ok {
			continue // deleted meanwhile
		}
		rt := s.nodes.RuntimeOf(name)
		if !rt.Down && now.Sub(rt.LastSeen) > downAfter(rate, rt) {
			rt.Down, rt.DownSince, rt.LastChange = true, now, now
			s.log.Warn("node down: its mom stopped reporting", "node", name, "last_report", rt.LastSeen.Format(time.RFC3339))
		}
		if rt.Down && failAfter > 0 && now.Sub(rt.DownSince) >= failAfter && !now.Before(rt.LeaseEnd) && !now.Before(s.fenceUntil) {
			for _, j := range s.jobs.List() {
				if j.Active() && j.Alloc.OnHost(name) {
					victims = append(victims, j.Key())
					failedNode = append(failedNode, name)
				}
			}
		}
	}
	s.mu.Unlock()
	for i, key := range victims {
		reason := "Job requeued, execution node " + failedNode[i] + " down"
		if s.rerunAfterSisterFailed(key, failedNode[i], reason) {
			continue
		}
		s.requeue(key, reason)
	}
}

// rerunAfterSisterFailed handles a rerunnable job whose failed node is a
// sister while its first node's mom still reports: the job's script still
// runs there, so the job may not be queued (and started elsewhere) until
// that mom has killed it. The job is marked for rerun, as by qrerun, and
// its first node's mom told to kill it; its end then requeues it. It
// reports whether it took the job in hand (marked now or before); false
// leaves the job to requeue as any node failure.
func (s *Server) rerunAfterSisterFailed(key model.JobKey, node, reason string) bool {
	var req *proto.MomSignal
	var first, before string
	marked := false
	s.commit.Do(func(b *store.Batch) error {
		j, ok := s.jobs.Get(key)
		if !ok || !j.Active() || !j.Rerunable || j.State == model.StateExiting {
			return nil
		}
		first = j.Alloc.Mother()
		if rt := s.nodes.Runtime(first); first == node || rt == nil || rt.Down {
			return nil
		}
		marked = true
		if j.Substate == model.SubRerun {
			return nil // told already; its end is awaited
		}
		before = j.Comment
		req = &proto.MomSignal{JobID: j.ID, Signal: signals.Delete, KillDelay: s.killDelay(j)}
		s.editJob(b, j, func() { j.MarkRerun(reason) })
		return nil
	})
	if req == nil {
		return marked
	}
	if err := s.callMom(first, proto.MsgMomSignalJob, req); err != nil {
		s.log.Warn("cannot have a job killed on its first node after its sister failed; trying again", "job", req.JobID, "node", first, "sister", node, "error", err)
		s.commit.Do(func(b *store.Batch) error {
			if j, ok := s.jobs.Get(key); ok && j.Substate == model.SubRerun {
				s.editJob(b, j, func() { j.UnmarkRerun(before) })
			}
			return nil
		})
		return true
	}
	s.log.Warn("job killed on its first node: a sister node is down", "job", req.JobID, "node", first, "sister", node)
	return true
}
