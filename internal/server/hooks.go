package server

import (
	"context"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/hookrun"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/management"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Site hooks at the server's events (package hook has the objects,
// hookrun the runs). A request an event's hooks judge goes through them
// before the server's own checks, with no lock held while they run: the
// hooks of the event, in order, each seeing what the ones before it
// changed; the first that rejects (or raises, or runs past its alarm)
// ends the chain, and the request is refused with OpenPBS's words. What
// an accepting hook changed is applied as a manager's request would be,
// and refused the same way: nothing a hook sets is dropped unseen.
// Submission filters (subfilters.go) come after the hooks, so a filter
// judges the job as the hooks left it.

// raisedEvents are the events hooks run at (README, "Site hooks"); qmgr
// refuses a hook of another.
const raisedEvents = hook.Events(hook.QueueJob) | hook.Events(hook.ModifyJob) | hook.Events(hook.MoveJob) | hook.Events(hook.RunJob) |
	hook.Events(hook.Periodic) | hook.Events(hook.JobObit) | hook.Events(hook.ResvSub) | hook.Events(hook.ModifyResv) |
	hook.Events(hook.Management) | hook.Events(hook.ModifyVnode) |
	hook.Events(hook.ResvConfirm) | hook.Events(hook.ResvBegin) | hook.Events(hook.ResvEnd) |
	hook.Events(hook.ExecjobBegin) | hook.Events(hook.ExecjobPrologue) | hook.Events(hook.ExecjobLaunch) |
	hook.Events(hook.ExecjobPostsuspend) | hook.Events(hook.ExecjobPreresume) | hook.Events(hook.ExecjobAbort) | hook.Events(hook.ExecjobPreterm) | hook.Events(hook.ExecjobResize) | hook.Events(hook.ExecjobEpilogue) | hook.Events(hook.ExecjobEnd) | hook.Events(hook.ExechostPeriodic) | hook.Events(hook.ExechostStartup)

// hookCheckTimeout bounds the check of an imported file (Python compiling
// it).
const hookCheckTimeout = 30 * time.Second

// mgrHook performs a qmgr create, set, unset, import or delete of a hook
// (managers only). An imported script must compile and a configuration
// file read, checked before anything is stored.
func (s *Server) mgrHook(who *caller, mgr bool, req *proto.ManagerRequest) error {
	if !mgr {
		return proto.Errorf(proto.PBSE_PERM, "hooks are managed by managers only")
	}
	var im management.Import
	if req.Command == proto.MgrImport {
		var err error
		if im, err = management.ParseImport(req); err != nil {
			return err
		}
		s.mu.RLock()
		cur, exists := s.siteHooks.Get(req.Name)
		s.mu.RUnlock()
		if !exists {
			return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: req.Name + " does not exist!"}
		}
		kind := ".py"
		if im.Config {
			kind = im.Suffix
		}
		ctx, cancel := context.WithTimeout(context.Background(), hookCheckTimeout)
		defer cancel()
		if err := s.hookRun.Check(ctx, req.Name, kind, im.Data, hookCheckTimeout); err != nil {
			var text string
			switch {
			case im.Config:
				text = fmt.Sprintf("Failed to validate config file, hook '%s' config file not overwritten: %v", req.Name, err)
			case len(cur.Script) > 0:
				text = fmt.Sprintf("Failed to compile script, hook '%s' contents not overwritten: %v", req.Name, err)
			default:
				text = fmt.Sprintf("Failed to compile script: %v", err)
			}
			return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: text}
		}
	}
	err := s.hookMgmt.Manage(req, mgr, im)
	if err == nil {
		s.hookFiles.Store(true)
		attrs := attrsText(req.Attrs)
		if req.Command == proto.MgrImport {
			attrs = fmt.Sprintf("%d bytes", len(im.Data))
		}
		s.log.Info("manager request", "command", mgrVerb(req.Command), "object", "hook", "name", req.Name, "attrs", attrs, "by", who.user+"@"+who.host)
	}
	return err
}

// hookRoot is who the hooks' lookups (pbs.server().job(), vnodes()...)
// are made as: the hooks run as pbsadmin and see everything.
func (s *Server) hookRoot() *caller {
	return &caller{user: "root", host: s.cfg.Host, role: proto.RoleClient}
}

// jobHooks is one event's run of hooks over a job.
type jobHooks struct {
	event hook.Event
	who   *caller
	// data is the event's own part for the next hook (job, job_o,
	// src_queue...), made again for each so that it shows what the hooks
	// before it changed.
	data func() map[string]any
	// settable is what the hooks may change, by object.
	settable map[string]any
	// apply takes an accepting hook's changes, or refuses them.
	apply func(h *hook.Hook, changes []hookrun.Change) error
	// kept, when set, takes what a rejecting hook set before it
	// rejected (a runjob hook's holds stand).
	kept func(h *hook.Hook, changes []hookrun.Change)
	// only, when set, runs that hook of the event alone (a periodic
	// hook, when it is due).
	only string
}

// runHooks runs the hooks of c's event in order. It returns nil when
// every hook accepted (or none applies), or the refusal the requester
// sees. No lock may be held.
func (s *Server) runHooks(c jobHooks) error {
	s.mu.RLock()
	var hooks []*hook.Hook
	for _, h := range s.siteHooks.Of(c.event) {
		// As OpenPBS: a server hook runs as pbsadmin; another is not run.
		if h.User == hook.PbsAdmin && (c.only == "" || h.Name == c.only) {
			hooks = append(hooks, h)
		}
	}
	var types map[string]string
	if len(hooks) > 0 {
		types = hookResourceTypes(s.rt())
	}
	s.mu.RUnlock()
	if len(hooks) == 0 {
		return nil
	}
	st := s.statusServer(s.hookRoot(), &proto.StatusRequest{})
	srv := map[string]any{"name": s.cfg.ServerName, "attrs": hookAttrs(st.Objects[0].Attrs)}
	s.syncHookFiles()
	for _, h := range hooks {
		ev := c.data()
		ev["type"] = int(c.event)
		ev["requestor"], ev["requestor_host"] = c.who.user, c.who.host
		req := hookrun.Request{
			Hook: h, Event: ev, Settable: c.settable, Server: srv, ResourceTypes: types,
			LocalNode: s.cfg.Host, Query: s.hookQuery,
		}
		res := s.hookRun.Run(context.Background(), req)
		if res.Actions["scheduler_restart_cycle"] {
			s.schedEvent(proto.SchedRecyc) // pbs.server().scheduler_restart_cycle()
		}
		if err := s.hookVerdict(c.event, h, res); err != nil {
			if res.Outcome == hookrun.Rejected && c.kept != nil && len(res.Changes) > 0 {
				c.kept(h, res.Changes)
			}
			return err
		}
		if err := c.apply(h, res.Changes); err != nil {
			s.log.Info("hook's changes refused", "event", c.event.String(), "hook", h.Name, "error", err)
			return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: fmt.Sprintf("request rejected by filter hook '%s': %v", h.Name, err)}
		}
	}
	return nil
}

// hookVerdict is a run's outcome as the requester sees it (nil for an
// accept), logged as OpenPBS logs it.
func (s *Server) hookVerdict(e hook.Event, h *hook.Hook, res hookrun.Result) error {
	res.Log(s.log, e, h)
	if res.Outcome == hookrun.Accepted {
		return nil
	}
	return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: res.Refusal(e, h.Name)}
}

// syncHookFiles writes the hooks' scripts and configuration files when
// they changed since the last run (server_priv/hooks), outside any lock.
func (s *Server) syncHookFiles() {
	if !s.hookFiles.Swap(false) {
		return
	}
	s.mu.RLock()
	hooks := s.siteHooks.List()
	s.mu.RUnlock()
	if err := s.hookRun.Sync(hooks); err != nil {
		s.log.Error("hook files", "error", err)
		s.hookFiles.Store(true)
	}
}

// hookQuery answers a hook's lookups of the server's objects, as a
// manager sees them (the hooks run as pbsadmin).
func (s *Server) hookQuery(what, name string) (any, error) {
	root := s.hookRoot()
	statusOf := func(a *statusAnswer, err error) ([]proto.Status, error) {
		reply, err := collected(a, err)
		if err != nil {
			return nil, err
		}
		return reply.Objects, nil
	}
	byName := func(objs []proto.Status) map[string]any {
		out := make(map[string]any, len(objs))
		for _, o := range objs {
			out[o.Name] = hookAttrs(o.Attrs)
		}
		return out
	}
	one := func(objs []proto.Status) any {
		if len(objs) == 0 {
			return nil
		}
		return hookAttrs(objs[0].Attrs)
	}
	ids := []string{name}
	switch what {
	case "job", "jobs":
		if what == "jobs" {
			ids = nil
		} else if !strings.Contains(name, ".") {
			ids = []string{name + "." + s.cfg.ServerName}
		}
		objs, err := statusOf(s.statusJobs(root, &proto.StatusRequest{IDs: ids}, answerTo{}))
		if err != nil {
			return nil, err
		}
		var out []any
		for _, o := range objs {
			out = append(out, map[string]any{"id": o.Name, "attrs": hookAttrs(o.Attrs)})
		}
		if what == "job" {
			if len(out) == 0 {
				return nil, nil
			}
			return out[0], nil
		}
		return out, nil
	case "vnode", "vnodes":
		if what == "vnodes" {
			ids = nil
		}
		objs, err := statusOf(s.statusNodes(root, &proto.StatusRequest{IDs: ids}, answerTo{}))
		if err != nil || what == "vnodes" {
			return byName(objs), err
		}
		return one(objs), nil
	case "queue", "queues":
		if what == "queues" {
			ids = nil
		}
		reply, err := s.statusQueues(root, &proto.StatusRequest{IDs: ids})
		if err != nil || what == "queues" {
			return byName(reply.Objects), err
		}
		return one(reply.Objects), nil
	case "resv", "resvs":
		if what == "resvs" {
			ids = nil
		}
		reply, err := s.statusResvs(root, &proto.StatusRequest{IDs: ids})
		if err != nil || what == "resvs" {
			return byName(reply.Objects), err
		}
		return one(reply.Objects), nil
	}
	return nil, fmt.Errorf("pbs.server() has no lookup of %q", what)
}

// hookAttrs are attributes as the pbs module reads them: resources
// gathered under their attribute, Variable_List as name-value pairs.
func hookAttrs(attrs []proto.Attr) map[string]any {
	out := make(map[string]any, len(attrs))
	for _, a := range attrs {
		switch {
		case a.Resource != "":
			m, _ := out[a.Name].(map[string]any)
			if m == nil {
				m = map[string]any{}
				out[a.Name] = m
			}
			m[a.Resource] = a.Value
		case a.Name == proto.AttrVariableList:
			var pairs [][2]string
			for _, v := range proto.DecodeVariableList(a.Value) {
				pairs = append(pairs, [2]string{v.Name, v.Value})
			}
			out[a.Name] = pairs
		default:
			out[a.Name] = a.Value
		}
	}
	return out
}

// hookResourceTypes names each resource's type for the pbs module.
func hookResourceTypes(rt *resc.Table) map[string]string {
	out := map[string]string{}
	for _, name := range rt.Names() {
		out[name] = hookTypeName(rt, name)
	}
	return out
}

// hookTypeName is the pbs module's type of resource name.
func hookTypeName(rt *resc.Table, name string) string {
	switch rt.Lookup(name).Type {
	case resc.TypeDuration:
		return "duration"
	case resc.TypeSize:
		return "size"
	case resc.TypeLong:
		return "long"
	case resc.TypeFloat:
		return "float"
	case resc.TypeBool:
		return "boolean"
	}
	return "string"
}

// hookJob is a job as a hook's event carries it.
func hookJob(j *model.Job) map[string]any {
	var id any
	if j.ID != "" {
		id = j.ID
	}
	return map[string]any{"id": id, "attrs": hookAttrs(model.JobStatus(j, nil))}
}

// hookChanges turns a hook's changes of a job or reservation into the
// attributes of a request, named as canon spells them: a Variable_List
// whole, an unset as OpUnset.
func hookChanges(changes []hookrun.Change, canon func(string) string) []proto.Attr {
	out := make([]proto.Attr, 0, len(changes))
	for _, c := range changes {
		a := proto.Attr{Name: canon(c.Name), Resource: c.Resource, Value: c.Value}
		switch {
		case c.Vars != nil:
			vars := make([]proto.Var, len(c.Vars))
			for i, v := range c.Vars {
				vars[i] = proto.Var{Name: v[0], Value: v[1]}
			}
			a.Value = proto.EncodeVariableList(vars)
		case c.Unset:
			a.Op = proto.OpUnset
		}
		out = append(out, a)
	}
	return out
}

// queuejobHooks runs the queuejob hooks over a job being submitted to
// queue (as requested: "" for the default). It returns the job and the
// queue as the hooks left them.
func (s *Server) queuejobHooks(who *caller, base *model.Job, queue string) (*model.Job, string, error) {
	j := base
	copied := false
	settable := map[string]any{"job": append(model.HookSettable(), proto.AttrQueue)}
	err := s.runHooks(jobHooks{
		event:    hook.QueueJob,
		who:      who,
		settable: settable,
		data: func() map[string]any {
			d := hookJob(j)
			attrs := d["attrs"].(map[string]any)
			delete(attrs, proto.AttrJobState)
			if queue != "" {
				attrs[proto.AttrQueue] = queue
			} else {
				delete(attrs, proto.AttrQueue)
			}
			return map[string]any{"job": d}
		},
		apply: func(h *hook.Hook, changes []hookrun.Change) error {
			if len(changes) == 0 {
				return nil
			}
			if !copied {
				j, copied = j.Clone(), true
			}
			for _, a := range hookChanges(changes, model.CanonicalJobAttr) {
				if a.Name == proto.AttrQueue && a.Resource == "" {
					if a.Op == proto.OpUnset {
						queue = ""
						continue
					}
					if err := model.CheckQueueName(a.Value); err != nil {
						return err
					}
					queue = a.Value
					continue
				}
				if err := model.SetJobAttr(s.rt(), j, a, filterPriv, model.AtSubmit); err != nil {
					return err
				}
				s.log.Info(fmt.Sprintf("'%s' hook set job's %s = %s", h.Name, a.FullName(), a.Value))
			}
			return nil
		},
	})
	return j, queue, err
}

// modifyjobHooks runs the modifyjob hooks over a qalter: the event's job
// holds the attributes being altered (the hooks may change them, add to
// them or take them out), job_o the job as it is. It returns the
// request's attributes the hooks left as they were, applied with the
// requester's rights, and what the hooks set, applied with a manager's
// (as OpenPBS applies a hook's changes).
func (s *Server) modifyjobHooks(who *caller, id string, attrs []proto.Attr) (asked, hooked []proto.Attr, err error) {
	if who.role == proto.RoleSched {
		return attrs, nil, nil // as OpenPBS: the scheduler's alterations are not judged
	}
	s.mu.RLock()
	var cur map[string]any
	if top, _, _, err := s.resolve(s.hookRoot(), id, true, true); err == nil {
		cur = hookJob(top)
	}
	s.mu.RUnlock()
	if cur == nil {
		return attrs, nil, nil // the alteration's own lookup says why
	}
	rq := newHookedRequest(attrs)
	err = s.runHooks(jobHooks{
		event:    hook.ModifyJob,
		who:      who,
		settable: map[string]any{"job": model.HookSettable()},
		data: func() map[string]any {
			return map[string]any{"job": map[string]any{"id": cur["id"], "attrs": hookAttrs(rq.all())}, "job_o": cur}
		},
		apply: func(h *hook.Hook, changes []hookrun.Change) error {
			for _, a := range hookChanges(changes, model.CanonicalJobAttr) {
				rq.set(a)
				s.log.Info(fmt.Sprintf("'%s' hook set job's %s = %s", h.Name, a.FullName(), a.Value), "job", cur["id"])
			}
			return nil
		},
	})
	return rq.asked, rq.hooked, err
}

// hookedRequest is a request's attributes as the hooks of its event
// leave them: asked, what the requester asked that no hook changed;
// hooked, what the hooks set.
type hookedRequest struct {
	asked, hooked []proto.Attr
}

func newHookedRequest(attrs []proto.Attr) *hookedRequest {
	return &hookedRequest{asked: append([]proto.Attr(nil), attrs...)}
}

// all is the request as it stands.
func (rq *hookedRequest) all() []proto.Attr {
	return append(append([]proto.Attr(nil), rq.asked...), rq.hooked...)
}

// set takes a hook's change: it replaces what was asked or set of the
// attribute; an unset takes it out of the request.
func (rq *hookedRequest) set(a proto.Attr) {
	same := func(o proto.Attr) bool { return o.Name == a.Name && o.Resource == a.Resource }
	rq.asked = slices.DeleteFunc(rq.asked, same)
	rq.hooked = slices.DeleteFunc(rq.hooked, same)
	if a.Op != proto.OpUnset {
		rq.hooked = append(rq.hooked, a)
	}
}

// resvHooks runs the resvsub (pbs_rsub) or modifyresv (pbs_ralter, cur
// the reservation as it is) hooks over a reservation request: the event's
// resv is the reservation as the request would make it (view: its
// reserve_start, reserve_end, reserve_duration worked out, as OpenPBS
// shows them), and the hooks' changes are made to the request. It
// returns the request as the hooks left it (their changes are the
// requester's: a reservation's attributes are its owner's to set).
func (s *Server) resvHooks(e hook.Event, who *caller, id string, attrs []proto.Attr, cur map[string]any, view func([]proto.Attr) []proto.Attr) ([]proto.Attr, error) {
	if !s.hasHooks(e) {
		return attrs, nil
	}
	rq := newHookedRequest(attrs)
	err := s.runHooks(jobHooks{
		event:    e,
		who:      who,
		settable: map[string]any{"resv": model.ResvSettable()},
		data: func() map[string]any {
			var rid any
			if id != "" {
				rid = id
			}
			d := map[string]any{"resv": map[string]any{"id": rid, "attrs": hookAttrs(view(rq.all()))}}
			if cur != nil {
				d["resv_o"] = cur
			}
			return d
		},
		apply: func(h *hook.Hook, changes []hookrun.Change) error {
			for _, a := range hookChanges(changes, model.CanonicalResvAttr) {
				rq.set(a)
				s.log.Info(fmt.Sprintf("'%s' hook set reservation's %s = %s", h.Name, a.FullName(), a.Value))
			}
			return nil
		},
	})
	return rq.all(), err
}

// movejobHooks runs the movejob hooks over a qmove of job id to dest:
// the event's job has its queue set to dest (the one thing a hook may
// change), src_queue is where it is. It returns the destination as the
// hooks left it.
func (s *Server) movejobHooks(who *caller, id, dest string) (string, error) {
	s.mu.RLock()
	var cur map[string]any
	var src string
	if top, _, _, err := s.resolve(s.hookRoot(), id, true, true); err == nil {
		cur, src = hookJob(top), top.Queue
	}
	s.mu.RUnlock()
	if cur == nil {
		return dest, nil
	}
	err := s.runHooks(jobHooks{
		event:    hook.MoveJob,
		who:      who,
		settable: map[string]any{"job": []string{proto.AttrQueue}},
		data: func() map[string]any {
			j := map[string]any{"id": cur["id"], "attrs": map[string]any{}}
			for k, v := range cur["attrs"].(map[string]any) {
				j["attrs"].(map[string]any)[k] = v
			}
			j["attrs"].(map[string]any)[proto.AttrQueue] = dest
			return map[string]any{"job": j, "src_queue": src}
		},
		apply: func(h *hook.Hook, changes []hookrun.Change) error {
			for _, c := range changes {
				if c.Name != proto.AttrQueue || c.Unset {
					return fmt.Errorf("Can only set job's 'queue' attribute under MOVEJOB event - got <%s>", c.Name)
				}
				if err := model.CheckQueueName(c.Value); err != nil {
					return err
				}
				dest = c.Value
			}
			return nil
		},
	})
	return dest, err
}

// hasHooks reports whether an enabled hook of event e exists: a cycle's
// thousands of starts pay nothing for hooks a site does not have.
func (s *Server) hasHooks(e hook.Event) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.siteHooks.Of(e)) > 0
}

// runjobSettable is what a runjob hook may change of a job, as OpenPBS
// lets it: its job-wide resources (not what placed it: the nodes are
// chosen), when it may run, its holds, project and dependencies. Changes
// to Execution_Time and hold_types stand when the hook rejects, so that a
// hook can keep the job from being tried again at once.
var runjobSettable = []string{proto.AttrResourceList, proto.AttrExecutionTime, proto.AttrHoldTypes, proto.AttrProject, proto.AttrDepend}

// runVerdict is what the runjob hooks said of one start: refused (err),
// and the changes to apply (on a refusal, those that stand).
type runVerdict struct {
	err   error
	attrs []proto.Attr
}

// runjobHooks runs the runjob hooks over each start of a run request
// (qrun or a scheduler's), outside any lock; nil when there are none.
func (s *Server) runjobHooks(who *caller, runs []proto.RunSpec) []runVerdict {
	if !s.hasHooks(hook.RunJob) {
		return nil
	}
	requestor := *who
	if who.role == proto.RoleSched {
		requestor.user = "Scheduler" // as OpenPBS names a scheduler's start
	}
	out := make([]runVerdict, len(runs))
	judge := func(i int, r proto.RunSpec) {
		s.mu.RLock()
		j, _, err := s.runnable(r.JobID, s.nowUnix())
		var cur map[string]any
		if err == nil {
			cur = hookJob(j)
		}
		s.mu.RUnlock()
		if cur == nil {
			return // the start's own checks say why
		}
		var attrs, kept []proto.Attr
		err = s.runHooks(jobHooks{
			event:    hook.RunJob,
			who:      &requestor,
			settable: map[string]any{"job": runjobSettable},
			data:     func() map[string]any { return map[string]any{"job": cur} },
			kept: func(h *hook.Hook, changes []hookrun.Change) {
				// What stands of a refused start: when it may run, its
				// holds (with what the hooks before it set).
				for _, a := range append(attrs, hookChanges(changes, model.CanonicalJobAttr)...) {
					if a.Name == proto.AttrExecutionTime || a.Name == proto.AttrHoldTypes {
						kept = append(kept, a)
						s.log.Info(fmt.Sprintf("'%s' hook set job's %s = %s", h.Name, a.FullName(), a.Value), "job", cur["id"])
					}
				}
			},
			apply: func(h *hook.Hook, changes []hookrun.Change) error {
				for _, a := range hookChanges(changes, model.CanonicalJobAttr) {
					if a.Name == proto.AttrResourceList && s.rt().Lookup(a.Resource).Chunk || a.Resource == proto.ResSelect || a.Resource == proto.ResPlace || a.Resource == proto.ResNodes {
						return fmt.Errorf("a runjob hook cannot change %s: the job's nodes are chosen", a.FullName())
					}
					attrs = append(attrs, a)
					s.log.Info(fmt.Sprintf("'%s' hook set job's %s = %s", h.Name, a.FullName(), a.Value), "job", cur["id"])
				}
				return nil
			},
		})
		out[i] = runVerdict{err: err, attrs: attrs}
		if err != nil {
			out[i].attrs = kept
		}
	}
	// The runs of a cycle's many starts go several at once (each is a
	// process of its own); the files they read are written first.
	s.syncHookFiles()
	workers := min(len(runs), 2*runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(runs); i = int(next.Add(1) - 1) {
				judge(i, runs[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// keepRefusedRun applies what stands of a start the runjob hooks refused
// (mu held, inside a commit): a stored job's new Execution_Time or holds.
// A change that does not hold is logged, the refusal stays the answer.
func (s *Server) keepRefusedRun(b *store.Batch, id string, attrs []proto.Attr) {
	if len(attrs) == 0 {
		return
	}
	top, ref, _, err := s.resolve(s.hookRoot(), id, true, true)
	if err != nil || top.IsArray() && ref.NamesSubjobs() {
		return // a subjob waiting in its array has no record of its own to change
	}
	now := s.nowUnix()
	c := top.Clone()
	for _, a := range attrs {
		if err := model.SetJobAttr(s.rt(), c, a, filterPriv, model.AtAlter); err != nil {
			s.log.Warn("runjob hook's change of a refused job not applied", "job", top.ID, "attr", a.FullName(), "error", err)
			return
		}
	}
	h := c.Settle(now)
	s.replaceJob(top, c, now)
	s.save(b, top)
	s.hooks(b, top, h, now)
}

// momHooksCache is what the moms are given of the hooks, made again when
// the hook table changes (mu held for writing guards it).
type momHooksCache struct {
	gen     uint64
	version uint64
	hooks   []proto.MomHook
}

// momHooks are the hooks of the moms' events and their version (mu held
// for writing): a hash of what they hold, the same after a restart, so
// that a mom is sent them only when they changed; 0 when there are none.
func (s *Server) momHooks() (uint64, []proto.MomHook) {
	c := &s.momHookCache
	if gen := s.siteHooks.Gen(); c.hooks == nil || c.gen != gen {
		c.gen, c.version, c.hooks = gen, 0, []proto.MomHook{}
		for _, h := range s.siteHooks.List() {
			if h.Events&hook.MomEvents() != 0 {
				c.hooks = append(c.hooks, h.Wire())
			}
		}
		if len(c.hooks) > 0 {
			b, err := msgpack.Marshal(c.hooks)
			if err != nil {
				panic(err) // plain data: cannot fail
			}
			sum := fnv.New64a()
			sum.Write(b)
			c.version = max(sum.Sum64(), 1)
		}
	}
	return c.version, c.hooks
}

// pretermWait bounds the server's wait for a mom's execjob_preterm
// hooks (their alarms are the mom's to enforce).
const pretermWait = 5 * time.Minute

// pretermHooks asks the first mom of each running job a qdel names to run
// its execjob_preterm hooks, before anything of the delete is recorded:
// a rejection refuses the delete (the job keeps running), as in OpenPBS.
// A mom that cannot be asked does not hold up the delete: it is logged,
// and the delete goes on (a delete of a job on a lost node must work).
func (s *Server) pretermHooks(who *caller, id string, mgr, op bool) error {
	if !s.hasHooks(hook.ExecjobPreterm) {
		return nil
	}
	type target struct{ id, node string }
	var targets []target
	s.mu.RLock()
	top, ref, _, err := s.resolve(who, id, mgr, op)
	if err == nil {
		var jobs []*model.Job
		if !top.IsArray() {
			jobs = []*model.Job{top}
		} else {
			want := map[int]bool{}
			for _, i := range ref.IndicesOf(top) {
				want[i] = true
			}
			for _, j := range s.jobs.LiveSubjobs(top) {
				if !ref.NamesSubjobs() || want[j.Index] {
					jobs = append(jobs, j)
				}
			}
		}
		for _, j := range jobs {
			if j.Active() && j.Alloc.Mother() != "" {
				targets = append(targets, target{j.ID, j.Alloc.Mother()})
			}
		}
	}
	s.mu.RUnlock()
	for _, t := range targets {
		s.mu.RLock()
		addr, err := s.momAddrLocked(t.node)
		s.mu.RUnlock()
		if err == nil {
			var c *proto.Client
			if c, err = s.dialDaemon(addr, pretermWait); err == nil {
				err = c.Call(proto.MsgMomPreterm, &proto.MomSignal{JobID: t.id}, nil)
				c.Close()
			}
		}
		if proto.CodeOf(err) == proto.PBSE_HOOKERROR {
			return err
		}
		if err != nil {
			s.log.Warn("execjob_preterm hooks not run: the delete goes on", "job", t.id, "node", t.node, "error", err)
		}
	}
	return nil
}
