package management

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/qsubopt"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// ServerStore is what management of the server object and the sched
// object needs of the server.
type ServerStore interface {
	// Tables are the server's tables (state locked, inside a commit).
	Tables() Tables
	// Resources is the resource table now (safe without the lock).
	Resources() *resc.Table
	// PutServer makes c the server's attributes (inside a commit).
	PutServer(c *model.Object)
	// ServerChanged does what follows from a change of the server's
	// attributes from was to now (inside the commit of the change:
	// eligible time turned on or off for every job).
	ServerChanged(b *store.Batch, was, now *model.Object)
	// Sched is the sched object's own attributes; PutSched replaces them
	// (inside a commit).
	Sched() *model.Object
	PutSched(c *model.Object)
	// NextSeq is the next job sequence number; SetNextSeq moves it
	// (inside a commit).
	NextSeq() int64
	SetNextSeq(n int64)
}

// Objects handles qmgr's set and unset of the server object and of the
// sched object (OpenPBS's scheduler object: since OpenPBS 19 the
// scheduler's settings live there). This system has one scheduler, named
// default. Its attributes are model.SchedDefs: scheduling,
// scheduler_iteration and sched_cycle_length are the server's own
// (model.SchedOnServer: one stored value, whichever object sets it),
// log_events and opt_backfill_fuzzy its own (stored beside the server's
// record); the rest, the server's view of its scheduler, is computed when
// shown and cannot be set.
type Objects struct {
	st ServerStore
	// host is the server's host, which default_qsub_arguments are read
	// as qsub on it would read them.
	host string
}

// NewObjects makes the handler over st for a server on host.
func NewObjects(st ServerStore, host string) *Objects { return &Objects{st: st, host: host} }

// ManageServer applies req, whose attributes the caller checked against
// the server's definitions and the caller's privileges, to the server
// object at now (inside a commit: b takes what changes). next_job_number
// is the store's sequence, not an attribute: a manager may move it
// forward, never back (ids are never reused); unset leaves it where it
// is.
func (h *Objects) ManageServer(b *store.Batch, req *proto.ManagerRequest, now time.Time) error {
	if req.Command != proto.MgrSet && req.Command != proto.MgrUnset {
		return proto.NewError(proto.PBSE_IVALREQ)
	}
	attrs := make([]proto.Attr, 0, len(req.Attrs))
	seq := h.st.NextSeq()
	next := seq
	for _, a := range req.Attrs {
		if a.Name != proto.AttrNextJobNumber {
			attrs = append(attrs, a)
			continue
		}
		if a.Op == proto.OpUnset {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
		if err != nil || a.Op != proto.OpSet || n < 0 {
			return proto.Errorf(proto.PBSE_BADATVAL, "next_job_number = %q (want a job number)", a.Value)
		}
		if n < seq {
			return proto.Errorf(proto.PBSE_BADATVAL, "next_job_number %d is below the next free id %d: job ids are never reused", n, seq)
		}
		next = n
	}
	t := h.st.Tables()
	c, err := ApplyAll(h.st.Resources(), model.ServerDefs, t.Server, attrs)
	if err != nil {
		return err
	}
	if v, ok := c.Get(proto.AttrDefaultQsubArguments); ok {
		// What qsub will take from it, read as qsub reads it.
		if _, err := qsubopt.ParseDefaults(v, qsubopt.Context{Cwd: "/", Host: h.host, Now: now}); err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%v)", err)
		}
	}
	if dq, ok := c.Get(proto.AttrDefaultQueue); ok && dq != "" {
		if _, exists := t.Queues.Get(dq); !exists {
			return proto.Errorf(proto.PBSE_UNKQUE, "%s", dq)
		}
	}
	if next != seq {
		h.st.SetNextSeq(next)
		b.SetNextSeq(next)
	}
	h.st.PutServer(c)
	b.PutServer(c)
	h.st.ServerChanged(b, t.Server, c)
	return nil
}

// SchedNamed reports whether name names the sched object: no name (the
// default one) or default, any "@server" aside.
func SchedNamed(name string) bool {
	n, _, _ := strings.Cut(strings.TrimSpace(name), "@")
	return n == "" || n == proto.DefaultSched
}

// ManageSched applies req to the sched object (inside a commit): the
// attributes it shares with the server are checked by the server's
// definitions (model.SchedDefs copies them) and stored as the server's,
// its own beside them. Another scheduler cannot be created, nor the
// default one deleted.
func (h *Objects) ManageSched(b *store.Batch, req *proto.ManagerRequest) error {
	switch req.Command {
	case proto.MgrCreate:
		if SchedNamed(req.Name) {
			return proto.Errorf(proto.PBSE_SCHEDEXIST, "%s", proto.DefaultSched)
		}
		return proto.Errorf(proto.PBSE_NOSUP, "(create sched %s: this system has one scheduler, %s; OpenPBS's multiple schedulers are not supported)", req.Name, proto.DefaultSched)
	case proto.MgrDelete:
		if SchedNamed(req.Name) {
			return proto.Errorf(proto.PBSE_SCHED_NO_DEL, "%s", proto.DefaultSched)
		}
		return proto.Errorf(proto.PBSE_UNKSCHED, "%s", req.Name)
	}
	if !SchedNamed(req.Name) {
		return proto.Errorf(proto.PBSE_UNKSCHED, "%s", req.Name)
	}
	var onServer, own []proto.Attr
	for _, a := range req.Attrs {
		if slices.Contains(model.SchedOnServer, a.Name) {
			onServer = append(onServer, a)
		} else {
			own = append(own, a)
		}
	}
	t, rt := h.st.Tables(), h.st.Resources()
	srv, err := ApplyAll(rt, model.ServerDefs, t.Server, onServer)
	if err != nil {
		return err
	}
	sch, err := ApplyAll(rt, model.SchedDefs, h.st.Sched(), own)
	if err != nil {
		return err
	}
	if len(onServer) > 0 {
		h.st.PutServer(srv)
		b.PutServer(srv)
		h.st.ServerChanged(b, t.Server, srv)
	}
	if len(own) > 0 {
		h.st.PutSched(sch)
		b.PutSched(sch)
	}
	return nil
}
