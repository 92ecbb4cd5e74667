package server

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/admit"
	"github.com/gopbs/gopbs/internal/server/jobs"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/internal/server/nodes"
	"github.com/gopbs/gopbs/internal/server/resvs"
	"github.com/gopbs/gopbs/internal/server/starts"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// mgmtStore is the server as qmgr's handlers see it (management.Store
// and management.QueueStore): nothing of the server but its commit, its
// lock, its state tables and its resource table.
type mgmtStore struct{ s *Server }

// Commit runs change in the next commit group (the store's Committer
// holds mu for writing across it).
func (m mgmtStore) Commit(change func(b *store.Batch) error) error { return m.s.commit.Do(change) }

// View runs read under the read lock.
func (m mgmtStore) View(read func()) {
	m.s.mu.RLock()
	defer m.s.mu.RUnlock()
	read()
}

// Tables are the state tables (mu held).
func (m mgmtStore) Tables() management.Tables {
	s := m.s
	return management.Tables{Jobs: s.jobs, Resvs: s.resvs, Queues: s.queues, Nodes: s.nodes, Server: s.server, ServerName: s.cfg.ServerName}
}

func (m mgmtStore) Resources() *resc.Table { return m.s.rt() }

// HookTable is the site hooks (mu held).
func (m mgmtStore) HookTable() *state.Hooks { return m.s.siteHooks }

// SetResources makes t the resource table (mu held for writing).
func (m mgmtStore) SetResources(t *resc.Table) { m.s.setResources(t) }

// PutServer makes c the server's attributes (mu held for writing).
func (m mgmtStore) PutServer(c *model.Object) { m.s.server = c }

// ServerChanged turns eligible time on or off for every job when the
// change turned eligible_time_enable (mu held for writing, in a commit).
func (m mgmtStore) ServerChanged(b *store.Batch, was, now *model.Object) {
	if on := now.Bool(proto.AttrEligibleTimeEnable); on != was.Bool(proto.AttrEligibleTimeEnable) {
		m.s.eligibleTimeSwitched(b, on)
	}
}

// Sched is the sched object's own attributes (mu held).
func (m mgmtStore) Sched() *model.Object { return m.s.schedObj }

// PutSched makes c the sched object's own attributes (mu held for
// writing).
func (m mgmtStore) PutSched(c *model.Object) { m.s.schedObj = c }

// NextSeq is the next job sequence number (mu held).
func (m mgmtStore) NextSeq() int64 { return m.s.nextSeq }

// SetNextSeq moves the next job sequence number (mu held for writing).
func (m mgmtStore) SetNextSeq(n int64) { m.s.nextSeq = n }

// startView is the state a start is checked against (mu held).
func (s *Server) startView() starts.View {
	return starts.View{Jobs: s.jobs, Nodes: s.nodes, Table: s.rt()}
}

// admitView is the state as admission reads it (mu held for reading at
// least).
func (s *Server) admitView() admit.View {
	return admit.View{Jobs: s.jobs, Queues: s.queues, Server: s.server, Table: s.rt()}
}

// admitCaller is who as a queue's ACLs see it.
func admitCaller(who *caller) admit.Caller { return admit.Caller{Groups: who.groups} }

// nodeView is the state as the node handler reads it (mu held for
// reading at least).
func (s *Server) nodeView() nodes.View {
	return nodes.View{Nodes: s.nodes, Jobs: s.jobs, Resvs: s.resvs, Table: s.rt(), ServerName: s.cfg.ServerName}
}

// jobView is the state as the job queries read it (mu held for reading
// at least).
func (s *Server) jobView() jobs.View {
	return jobs.View{Jobs: s.jobs, Queues: s.queues, Table: s.rt(), ServerName: s.cfg.ServerName, Epoch: s.epoch,
		QueryOthers: s.server.Bool(proto.AttrQueryOtherJobs), EligibleTime: s.eligibleTimeOn()}
}

// jobCaller is who as the job queries see it (before mu: privileges
// reads the ACLs under it).
func (s *Server) jobCaller(who *caller) jobs.Caller {
	mgr, op := s.privileges(who)
	return jobs.Caller{User: who.user, Privileged: mgr || op}
}

// resvView is the state as the reservation handler reads it (mu held for
// reading at least).
func (s *Server) resvView() resvs.View {
	return resvs.View{Resvs: s.resvs, Nodes: s.nodes, Jobs: s.jobs, Server: s.server, Table: s.rt(), ServerName: s.cfg.ServerName}
}

// resvCaller is who as the reservation handler sees it.
func resvCaller(who *caller) resvs.Caller {
	return resvs.Caller{User: who.user, Host: who.host, Group: who.group, Client: who.role == proto.RoleClient && !who.anonymous}
}
