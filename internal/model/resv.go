package model

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Reservation kinds: the letter in front of the id, as OpenPBS's.
const (
	ResvAdvance     byte = 'R'
	ResvStanding    byte = 'S'
	ResvMaintenance byte = 'M'
)

// Resv is a reservation: a window of time (or, standing, a series of
// them) during which its nodes are kept for the jobs of its queue.
type Resv struct {
	Seq  int64
	Kind byte // ResvAdvance, ResvStanding or ResvMaintenance
	Name string
	// Owner is user@host of whoever made it; EUser and EGroup its account.
	Owner  string
	EUser  string
	EGroup string
	State  proto.ResvState
	// Duration is each occurrence's length in seconds.
	Duration int64
	// Occ are the occurrences not yet over, the current (or next) first;
	// an advance or maintenance reservation has one. Count is how many
	// a standing one had in all (reserve_count).
	Occ   []ResvOcc
	Count int
	Rrule string
	TZ    string
	// Select is its chunks (canonical text: typed with the site's
	// resources where it is read), Place its placement, typed (stored as
	// its text, as stores before it held it); Resources the rest of its
	// Resource_List (ncpus, nodect, walltime ...).
	Select    string
	Place     resc.Place
	Resources map[string]string
	// AuthUsers, AuthGroups and AuthHosts say who may submit to its
	// queue, and from where (Authorized_Users, Authorized_Groups,
	// Authorized_Hosts: comma lists; no hosts: any).
	AuthUsers  string
	AuthGroups string
	AuthHosts  string
	MailPoints string
	MailUsers  string
	Comment    string
	Hosts      []string // a maintenance reservation's hosts
	Ctime      int64
	Mtime      int64
	// Retry is when the scheduler next tries to move a DEGRADED
	// reservation (Unix seconds; 0: not degraded): reserve_retry_time
	// after it was degraded or last failed to move.
	Retry int64
	// Before holds what a pbs_ralter of the times changed while the
	// scheduler has not confirmed the new ones (BEING_ALTERED): a denial
	// puts it back.
	Before *ResvBefore
}

// ResvBefore is a reservation's current occurrence as it was before an
// alteration.
type ResvBefore struct {
	Start    int64
	Duration int64
	State    proto.ResvState
}

// ResvOcc is one occurrence: when it starts and, once the scheduler
// confirmed it, the nodes it holds (an exec_vnode: "(n1:ncpus=2)+...").
type ResvOcc struct {
	Start int64
	Nodes string
}

// ResvID is a reservation's id: R12.srv, S12.srv, M12.srv.
func ResvID(kind byte, seq int64, server string) string {
	return ResvQueue(kind, seq) + "." + server
}

// ResvQueue is the name of a reservation's queue: its id's first part.
func ResvQueue(kind byte, seq int64) string { return string(kind) + strconv.FormatInt(seq, 10) }

// ParseResvID reads "R12", "R12.srv", "S3.srv": the kind and sequence
// number (the server part is not checked).
func ParseResvID(id string) (kind byte, seq int64, ok bool) {
	id = strings.TrimSpace(id)
	name, _, _ := strings.Cut(id, ".")
	if len(name) < 2 || len(name) > 19 {
		return 0, 0, false
	}
	kind = name[0]
	if kind != ResvAdvance && kind != ResvStanding && kind != ResvMaintenance {
		return 0, 0, false
	}
	n, err := strconv.ParseInt(name[1:], 10, 64)
	if err != nil || n < 0 || strings.TrimLeft(name[1:], "0123456789") != "" {
		return 0, 0, false
	}
	return kind, n, true
}

// SetState moves the reservation to state st: the server changes a
// reservation's state only through it, as a job's only through its
// transitions (internal/archtest).
func (r *Resv) SetState(st proto.ResvState) { r.State = st }

// Queue is the reservation's queue name.
func (r *Resv) Queue() string { return ResvQueue(r.Kind, r.Seq) }

// ID is the reservation's id on server.
func (r *Resv) ID(server string) string { return ResvID(r.Kind, r.Seq, server) }

// Start is the current (or next) occurrence's start; End its end.
func (r *Resv) Start() int64 {
	if len(r.Occ) == 0 {
		return 0
	}
	return r.Occ[0].Start
}

// End is when the current occurrence ends.
func (r *Resv) End() int64 { return r.Start() + r.Duration }

// Nodes is what the current occurrence holds (resv_nodes).
func (r *Resv) Nodes() string {
	if len(r.Occ) == 0 {
		return ""
	}
	return r.Occ[0].Nodes
}

// Index is the current occurrence's number, from 1 (reserve_index).
func (r *Resv) Index() int { return r.Count - len(r.Occ) + 1 }

// User is the owner's user name.
func (r *Resv) User() string { u, _, _ := strings.Cut(r.Owner, "@"); return u }

// NodeNames lists the nodes of an exec_vnode-like string, each once, in
// order.
func NodeNames(nodes string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range resc.SplitExecVnode(nodes) {
		if name := p.Node; name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// Occurrences renders the occurrences for the scheduler
// (reserve_occurrences): "start=nodes" items separated by blanks, the
// nodes empty until confirmed.
func (r *Resv) Occurrences() string {
	var b strings.Builder
	for i, o := range r.Occ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(o.Start, 10))
		b.WriteByte('=')
		b.WriteString(o.Nodes)
	}
	return b.String()
}

// ParseOccurrences reads reserve_occurrences.
func ParseOccurrences(v string) ([]ResvOcc, bool) {
	var out []ResvOcc
	for _, f := range strings.Fields(v) {
		start, nodes, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(start, 10, 64)
		if !ok || err != nil {
			return nil, false
		}
		out = append(out, ResvOcc{Start: n, Nodes: nodes})
	}
	return out, true
}

// Status renders the reservation as pbs_rstat -f lists it (OpenPBS's
// order); full adds what only managers and the scheduler see
// (reserve_occurrences).
func (r *Resv) Status(server string, full bool) proto.Status {
	var a []proto.Attr
	add := func(name, value string) {
		if value != "" {
			a = append(a, proto.Attr{Name: name, Value: value})
		}
	}
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	name := r.Name
	if name == "" {
		name = "NULL"
	}
	add(proto.AttrResvName, name)
	add(proto.AttrResvOwner, r.Owner)
	add(proto.AttrResvType, resvType(r.Kind))
	add(proto.AttrResvState, r.State.Wire())
	add(proto.AttrResvSubstate, r.State.Wire())
	add(proto.AttrResvStart, num(r.Start()))
	add(proto.AttrResvEnd, num(r.End()))
	add(proto.AttrResvDuration, num(r.Duration))
	add(proto.AttrQueue, r.Queue())
	for _, k := range sortedKeys(r.Resources) {
		a = append(a, proto.Attr{Name: proto.AttrResourceList, Resource: k, Value: r.Resources[k]})
	}
	a = append(a, proto.Attr{Name: proto.AttrResourceList, Resource: proto.ResSelect, Value: r.Select})
	a = append(a, proto.Attr{Name: proto.AttrResourceList, Resource: proto.ResPlace, Value: r.Place.String()})
	a = append(a, proto.Attr{Name: proto.AttrResourceList, Resource: proto.ResWalltime, Value: resc.FormatDuration(r.Duration)})
	add(proto.AttrResvNodes, r.Nodes())
	add(proto.AttrAuthUsers, r.AuthUsers)
	add(proto.AttrAuthGroups, r.AuthGroups)
	add(proto.AttrAuthHosts, r.AuthHosts)
	if r.Kind == ResvStanding {
		add(proto.AttrResvStanding, "1")
		add(proto.AttrResvRrule, r.Rrule)
		add(proto.AttrResvTimezone, r.TZ)
		add(proto.AttrResvCount, strconv.Itoa(r.Count))
		add(proto.AttrResvIndex, strconv.Itoa(r.Index()))
	}
	add(proto.AttrMailPoints, r.MailPoints)
	add(proto.AttrMailUsers, r.MailUsers)
	add(proto.AttrServer, server)
	add(proto.AttrComment, r.Comment)
	add(proto.AttrCtime, num(r.Ctime))
	add(proto.AttrMtime, num(r.Mtime))
	if r.Retry != 0 {
		add(proto.AttrResvRetry, num(r.Retry))
	}
	add(proto.AttrEuser, r.EUser)
	add(proto.AttrEgroup, r.EGroup)
	if full {
		add(proto.AttrResvOccurrences, r.Occurrences())
	}
	return proto.Status{Name: r.ID(server), Attrs: a}
}

// resvType is reserve_type: OpenPBS's 2 for an advance or maintenance
// reservation, 3 for a standing one.
func resvType(kind byte) string {
	if kind == ResvStanding {
		return "3"
	}
	return "2"
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != proto.ResSelect && k != proto.ResPlace && k != proto.ResWalltime {
			out = append(out, k)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
