package web

import "github.com/gopbs/gopbs/proto"

// Viewer is who a request is for: a user name, or "" for an anonymous
// request.
type Viewer struct {
	User string
}

// Anonymous reports whether v names no user.
func (v Viewer) Anonymous() bool { return v.User == "" }

// Rights are what a viewer may see, as the server's settings say now.
type Rights struct {
	// See is whether the viewer may see anything: false for an anonymous
	// viewer when query_other_jobs is false (or the server's acl_users is
	// on), and for a user the server's ACLs refuse.
	See bool
	// Manager: a manager or operator, who sees everything.
	Manager bool
	// OtherJobs: the viewer sees other users' jobs (query_other_jobs, or
	// a manager).
	OtherJobs bool
}

// Source is the server's state as the page and the API read it. Every
// method answers as the batch protocol would answer the viewer (named
// users as the user, anonymous viewers as a user who owns no job and has
// no privilege); the caller strips what anonymous viewers may not see.
type Source interface {
	Rights(v Viewer) Rights
	// Jobs is qstat -f of ids (every job when none), finished jobs
	// included with history; objErrs say why a named job is not listed.
	Jobs(v Viewer, ids []string, history bool) (jobs []proto.Status, objErrs []proto.ObjectError, err error)
	Nodes(v Viewer) ([]proto.Status, error)
	Queues(v Viewer) ([]proto.Status, error)
	Server(v Viewer) (proto.Status, error)
}
