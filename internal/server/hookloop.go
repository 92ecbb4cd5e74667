package server

import (
	"fmt"
	"maps"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/hookrun"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// The hooks no request waits for: periodic hooks, each every freq
// seconds; jobobit hooks, after a job's end is recorded; management
// hooks, after a qmgr request is answered; modifyvnode hooks, after a
// node's state or comment changed (looked for every second). One loop runs
// them, one at a time and in the order raised, outside any lock; their
// outcome changes nothing (a rejection is logged, as OpenPBS logs it), and
// a change they try is refused (their objects are read-only here).

// hookAfterQueue bounds the runs waiting for hookLoop: a full queue holds
// up the job ends that raise more (never drops one).
const hookAfterQueue = 1024

// serverRequestor is who OpenPBS names as the requestor of the events
// the server raises itself.
const serverRequestor = "PBS_Server"

// hookLoop runs periodic hooks when they are due and the queued runs.
func (s *Server) hookLoop() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	due := map[string]time.Time{}         // each periodic hook's next run
	vnodes := map[string]map[string]any{} // each node as modifyvnode hooks last saw it
	for {
		select {
		case <-s.stop:
			return
		case run := <-s.hookAfter:
			run()
		case <-t.C:
			s.periodicHooks(due, s.now())
			s.watchVnodes(vnodes)
		}
	}
}

// afterHooks queues run for hookLoop; it waits while the queue is full,
// and gives up when the server stops.
func (s *Server) afterHooks(run func()) {
	select {
	case s.hookAfter <- run:
	case <-s.stop:
	}
}

// informHooks runs the hooks of an event no request waits for: their
// objects are read-only (readOnly), who is PBS_Server unless by is
// given, only names one hook when set, and a rejection is logged with
// why and kv, since the change they see was already made.
func (s *Server) informHooks(e hook.Event, by *caller, only string, data map[string]any, why string, kv ...any) {
	if by == nil {
		by = &caller{user: serverRequestor, host: s.cfg.Host}
	}
	err := s.runHooks(jobHooks{
		event: e,
		who:   by,
		only:  only,
		data:  func() map[string]any { return maps.Clone(data) },
		apply: readOnly(e),
	})
	if err != nil {
		s.log.Info(e.String()+" hook rejected ("+why+")", append(kv, "message", err)...)
	}
}

// readOnly is the apply of an event whose objects a hook may not change.
func readOnly(e hook.Event) func(*hook.Hook, []hookrun.Change) error {
	return func(h *hook.Hook, changes []hookrun.Change) error {
		if len(changes) > 0 {
			return fmt.Errorf("a %s hook cannot change %s", e, changes[0].Name)
		}
		return nil
	}
}

// periodicHooks runs the periodic hooks that are due at now; a hook's
// first run is freq seconds after it is seen (or the server starts).
func (s *Server) periodicHooks(due map[string]time.Time, now time.Time) {
	s.mu.RLock()
	hooks := s.siteHooks.Of(hook.Periodic)
	s.mu.RUnlock()
	seen := map[string]bool{}
	for _, h := range hooks {
		seen[h.Name] = true
		next, ok := due[h.Name]
		if !ok || next.Sub(now) > time.Duration(h.Freq)*time.Second {
			due[h.Name] = now.Add(time.Duration(h.Freq) * time.Second)
			continue
		}
		if now.Before(next) {
			continue
		}
		due[h.Name] = now.Add(time.Duration(h.Freq) * time.Second)
		s.informHooks(hook.Periodic, nil, h.Name, map[string]any{}, "it has nothing to refuse", "hook", h.Name)
	}
	for name := range due {
		if !seen[name] {
			delete(due, name)
		}
	}
}

// jobobitHooks queues the jobobit hooks' run over a job that ended (its
// record as ended: exit status, resources used).
func (s *Server) jobobitHooks(ended *model.Job) {
	if !s.hasHooks(hook.JobObit) {
		return
	}
	s.mu.RLock()
	j := hookJob(ended)
	s.mu.RUnlock()
	s.afterHooks(func() {
		s.informHooks(hook.JobObit, nil, "", map[string]any{"job": j}, "the job has ended", "job", j["id"])
	})
}

// OpenPBS's numbers for a management event's command and object.
var (
	mgrCmdNumber = map[proto.ManagerCommand]int{proto.MgrCreate: 0, proto.MgrDelete: 1, proto.MgrSet: 2, proto.MgrUnset: 3, proto.MgrImport: 7}
	mgrObjNumber = map[proto.ObjectType]int{proto.ObjServer: 0, proto.ObjQueue: 1, proto.ObjNode: 3, proto.ObjResource: 5, proto.ObjSched: 6, proto.ObjHook: 8}
	mgrOpNumber  = map[proto.Op]int{proto.OpSet: 0, proto.OpUnset: 1, proto.OpIncr: 2, proto.OpDecr: 3}
)

// managementHooks queues the management hooks' run over a qmgr request
// the server has answered (err, nil for success), as OpenPBS runs them:
// after the request, to see what was asked and how it went.
func (s *Server) managementHooks(who *caller, req *proto.ManagerRequest, at time.Time, err error) {
	if !s.hasHooks(hook.Management) {
		return
	}
	code, text := 0, ""
	if err != nil {
		pe := toPBSE(err)
		code, text = int(pe.Code), pe.Error()
	}
	var attribs []any
	for _, a := range req.Attrs {
		attribs = append(attribs, map[string]any{"name": a.Name, "resource": a.Resource, "value": a.Value, "op": mgrOpNumber[a.Op]})
	}
	m := map[string]any{"cmd": mgrCmdNumber[req.Command], "objtype": mgrObjNumber[req.Object], "objname": req.Name,
		"request_time": at.Unix(), "reply_code": code, "reply_text": text, "attribs": attribs}
	by := *who
	s.afterHooks(func() {
		s.informHooks(hook.Management, &by, "", map[string]any{"management": m}, "the request was already answered")
	})
}

// watchVnodes runs the modifyvnode hooks over each node whose state or
// comment changed since the last look (seen: what each was), with the
// node as it is (vnode) and as it was (vnode_o). It looks only while such
// a hook exists; a node first seen is only noted.
func (s *Server) watchVnodes(seen map[string]map[string]any) {
	if !s.hasHooks(hook.ModifyVnode) {
		clear(seen)
		return
	}
	reply, err := collected(s.statusNodes(s.hookRoot(), &proto.StatusRequest{}, answerTo{}))
	if err != nil {
		return
	}
	now := map[string]bool{}
	for _, o := range reply.Objects {
		now[o.Name] = true
		cur := hookAttrs(o.Attrs)
		old, known := seen[o.Name]
		seen[o.Name] = cur
		if !known || old[proto.AttrNodeState] == cur[proto.AttrNodeState] && old[proto.AttrComment] == cur[proto.AttrComment] {
			continue
		}
		s.informHooks(hook.ModifyVnode, nil, "", map[string]any{"vnode": map[string]any{"name": o.Name, "attrs": cur}, "vnode_o": map[string]any{"name": o.Name, "attrs": old}},
			"the change was already made", "node", o.Name)
	}
	for name := range seen {
		if !now[name] {
			delete(seen, name)
		}
	}
}

// resvEvents are the hook events of a reservation's accounting records:
// confirmed (Y), its period began (B), it finished (F) or was deleted or
// denied (K), as OpenPBS raises resv_confirm, resv_begin and resv_end.
var resvEvents = map[byte]hook.Event{accounting.ResvConfirmed: hook.ResvConfirm, accounting.ResvBegin: hook.ResvBegin,
	accounting.ResvFinished: hook.ResvEnd, accounting.ResvRemoved: hook.ResvEnd, accounting.ResvDeleted: hook.ResvEnd}

// resvEventHooks queues the hooks' run of the event of a reservation's
// record kind, over the reservation as it is then.
func (s *Server) resvEventHooks(kind byte, r *model.Resv) {
	e, ok := resvEvents[kind]
	if !ok || !s.hasHooks(e) {
		return
	}
	s.mu.RLock()
	st := r.Status(s.cfg.ServerName, true)
	s.mu.RUnlock()
	resv := map[string]any{"id": st.Name, "attrs": hookAttrs(st.Attrs)}
	s.afterHooks(func() {
		s.informHooks(e, nil, "", map[string]any{"resv": resv}, "the reservation's change was already made", "resv", st.Name)
	})
}
