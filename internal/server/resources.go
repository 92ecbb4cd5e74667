package server

import (
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// rt is the resource table: the built-ins and the site's custom
// resources. Safe without mu; a request parsed with it is checked again
// under mu only where a definition's change would matter (deletion).
func (s *Server) rt() *resc.Table { return s.resources.Load() }

// mgrResource hands qmgr's create, set or delete of a custom resource to
// its handler (internal/server/management) and logs what was done.
func (s *Server) mgrResource(who *caller, mgr bool, req *proto.ManagerRequest) error {
	err := s.resdefs.Manage(req, mgr)
	if err == nil {
		s.log.Info("manager request", "command", mgrVerb(req.Command), "object", req.Object.String(), "name", req.Name, "attrs", attrsText(req.Attrs), "by", who.user+"@"+who.host)
	}
	return err
}

// setResources makes t the resource table and reads every job's request
// and every node's availability again with it (mu held): what a job takes
// is counted as its resources' new types.
func (s *Server) setResources(t *resc.Table) {
	s.resources.Store(t)
	for _, j := range s.jobs.List() {
		s.jobs.Recount(j, func() {})
	}
	s.nodes.Retype()
}
