package server

import (
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/jobs"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/internal/server/nodes"
	"github.com/gopbs/gopbs/internal/server/resvs"
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

// SetResources makes t the resource table (mu held for writing).
func (m mgmtStore) SetResources(t *resc.Table) { m.s.setResources(t) }

// PutServer makes c the server's attributes (mu held for writing).
func (m mgmtStore) PutServer(c *model.Object) { m.s.server = c }

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
	return resvs.View{Resvs: s.resvs, Nodes: s.nodes, Jobs: s.jobs, Table: s.rt(), ServerName: s.cfg.ServerName}
}
