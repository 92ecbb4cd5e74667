package nodes

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/server/state"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// View is the server's state as the node handler reads it (under the
// server's lock).
type View struct {
	Nodes *state.Nodes
	Jobs  *state.Jobs
	Resvs *state.Resvs
	// Table is the resource table the amounts are rendered with.
	Table *resc.Table
	// ServerName completes reservation ids.
	ServerName string
}

// State is the state shown for node n.
func (v View) State(n *model.Object) string {
	admin, _ := n.Get(proto.AttrNodeState)
	rt := v.Nodes.Runtime(n.Name)
	var st string
	switch {
	case rt == nil || !rt.Reported:
		st = model.NodeUnknown + "," + model.NodeDown
	case rt.Stale:
		st = model.NodeStale
	case rt.Down:
		st = model.NodeDown
	default:
		st = model.NodeFree
		ncpus := v.Nodes.Amounts(n.Name)[proto.ResNcpus]
		switch {
		case v.Jobs.Exclusively(n.Name):
			st = model.NodeJobExcl
		case v.Jobs.Assigned(n.Name)[proto.ResNcpus] >= ncpus && ncpus > 0:
			st = model.NodeJobBusy
		case rt.LoadBusy:
			st = model.NodeBusy
		}
	}
	if admin == model.NodeOffline {
		if st == model.NodeFree {
			return model.NodeOffline
		}
		return model.NodeOffline + "," + st
	}
	return st
}

// JobsByNode lists, per node, the running jobs' slots ("1.srv/0") for
// the jobs attribute. One pass over the jobs serves every node.
func (v View) JobsByNode() map[string][]string {
	out := map[string][]string{}
	for _, j := range v.Jobs.List() {
		if !j.Active() {
			continue
		}
		slot := map[string]int{}
		for _, node := range j.ChunkNodes() {
			out[node] = append(out[node], j.ID+"/"+strconv.Itoa(slot[node]))
			slot[node]++
		}
	}
	return out
}

// ResvsByNode lists, per node, the reservations confirmed on it and not
// over (pbsnodes shows them as the node's resv).
func (v View) ResvsByNode() map[string][]string {
	out := map[string][]string{}
	for r := range v.Resvs.All() {
		if r.State == proto.ResvUnconfirmed || r.State == proto.ResvBeingDeleted {
			continue
		}
		for _, n := range model.NodeNames(r.Nodes()) {
			out[n] = append(out[n], r.ID(v.ServerName))
		}
	}
	return out
}

// Attrs appends node n's attributes to out in NodeDefs order, the stored
// ones and those derived from its mom's reports and the running jobs
// (jobs, its slots). want limits the attributes (nil for all).
func (v View) Attrs(out []proto.Attr, n *model.Object, want map[string]bool, jobs []string) []proto.Attr {
	wants := func(name string) bool { return want == nil || want[name] }
	plain := func(name, value string) {
		if value != "" && wants(name) {
			out = append(out, proto.Attr{Name: name, Value: value})
		}
	}
	resources := func(name string, m map[string]string) {
		if !wants(name) || len(m) == 0 {
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, proto.Attr{Name: name, Resource: k, Value: m[k]})
		}
	}
	rt := v.Nodes.Runtime(n.Name)
	reported := rt != nil && rt.Reported
	get := func(name string) string { v, _ := n.Get(name); return v }
	plain(proto.AttrNodeMom, get(proto.AttrNodeMom))
	plain(proto.AttrNodePort, get(proto.AttrNodePort))
	if reported {
		plain(proto.AttrNodeVersion, rt.Status.Version)
	}
	plain(proto.AttrNodeNtype, get(proto.AttrNodeNtype))
	if wants(proto.AttrNodeState) {
		plain(proto.AttrNodeState, v.State(n))
	}
	if reported {
		plain(proto.AttrNodePcpus, strconv.Itoa(rt.Status.Ncpus))
	}
	plain(proto.AttrNodeJobs, strings.Join(jobs, ", "))
	if wants(proto.AttrResourcesAvail) {
		out = appendAvail(out, n, rt)
	}
	if wants(proto.AttrResourcesAssigned) {
		used := v.Jobs.Assigned(n.Name)
		if len(used) == 0 {
			// The common case (an idle node) without a map per node.
			out = append(out, proto.Attr{Name: proto.AttrResourcesAssigned, Resource: proto.ResMem, Value: "0kb"},
				proto.Attr{Name: proto.AttrResourcesAssigned, Resource: proto.ResNcpus, Value: "0"})
		} else {
			assigned := map[string]string{proto.ResNcpus: "0", proto.ResMem: "0kb"}
			for r, x := range used {
				if v.Table.Lookup(r).Type == resc.TypeSize {
					assigned[r] = resc.FormatKB(int64(x))
				} else {
					assigned[r] = strconv.FormatInt(int64(x), 10)
				}
			}
			resources(proto.AttrResourcesAssigned, assigned)
		}
	}
	ideal, maxLoad := get(proto.AttrNodeIdealLoad), get(proto.AttrNodeMaxLoad)
	if reported {
		plain(proto.AttrNodeLoadave, strconv.FormatFloat(rt.Status.Loadave, 'f', 2, 64))
		if rt.Status.IdealLoad >= 0 && ideal == "" {
			ideal = strconv.FormatFloat(rt.Status.IdealLoad, 'f', -1, 64)
		}
		if rt.Status.MaxLoad >= 0 && maxLoad == "" {
			maxLoad = strconv.FormatFloat(rt.Status.MaxLoad, 'f', -1, 64)
		}
	}
	plain(proto.AttrNodeIdealLoad, ideal)
	plain(proto.AttrNodeMaxLoad, maxLoad)
	plain(proto.AttrNodeProperties, get(proto.AttrNodeProperties))
	plain(proto.AttrComment, get(proto.AttrComment))
	plain(proto.AttrNodeOfflineByCheck, get(proto.AttrNodeOfflineByCheck))
	plain(proto.AttrNodeResvEnable, get(proto.AttrNodeResvEnable))
	plain(proto.AttrNodeSharing, get(proto.AttrNodeSharing))
	if rt != nil {
		plain(proto.AttrNodeLastState, strconv.FormatInt(rt.LastChange.Unix(), 10))
	} else {
		plain(proto.AttrNodeLastState, get(proto.AttrNodeLastState))
	}
	plain(proto.AttrNodeLastUsed, get(proto.AttrNodeLastUsed))
	return out
}

// appendAvail appends resources_available to a status, sorted by
// resource, as state.Nodes.Available would give it, without building the
// map.
func appendAvail(out []proto.Attr, n *model.Object, rt *state.Runtime) []proto.Attr {
	set := n.Resources[proto.AttrResourcesAvail]
	var reported map[string]string
	if rt != nil && rt.Reported {
		reported = rt.Avail()
	}
	first := len(out)
	for k, v := range set {
		out = append(out, proto.Attr{Name: proto.AttrResourcesAvail, Resource: k, Value: v})
	}
	for k, v := range reported {
		if _, ok := set[k]; !ok {
			out = append(out, proto.Attr{Name: proto.AttrResourcesAvail, Resource: k, Value: v})
		}
	}
	slices.SortFunc(out[first:], func(a, b proto.Attr) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// Status streams the status of the nodes req names (every node, by name,
// when none are) through frames; refusals of named nodes that do not
// exist go to errs. v must be read under the server's lock, which frames
// may let go while it waits for the reader: what changes meanwhile is
// read again.
func (v View) Status(req *proto.StatusRequest, frames *proto.StatusFrames, errs *[]proto.ObjectError) {
	want := model.WantSet(req.Attrs)
	names := req.IDs
	if len(names) == 0 {
		names = v.Nodes.Names()
	}
	withJobs := want == nil || want[proto.AttrNodeJobs]
	var jobsOn map[string][]string
	if withJobs {
		jobsOn = v.JobsByNode()
	}
	var resvsOn map[string][]string
	if v.Resvs.Len() > 0 && (want == nil || want[proto.AttrNodeResvs]) {
		resvsOn = v.ResvsByNode()
	}
	var attrs []proto.Attr
	for _, raw := range names {
		name := strings.TrimSpace(raw)
		n, ok := v.Nodes.Get(name)
		if !ok {
			// Unless named, a node is missing only when it was deleted
			// while Add waited for the peer with the lock let go.
			if len(req.IDs) > 0 {
				*errs = append(*errs, proto.ObjectError{Name: raw, Code: proto.PBSE_UNKNODE, Text: proto.PBSE_UNKNODE.Message() + name})
			}
			continue
		}
		attrs = v.Attrs(attrs[:0], n, want, jobsOn[name])
		if rs := resvsOn[name]; len(rs) > 0 {
			attrs = append(attrs, proto.Attr{Name: proto.AttrNodeResvs, Value: strings.Join(rs, ", ")})
		}
		pauses := frames.Pauses()
		if !frames.Add(name, attrs) {
			return // the peer is gone: the server's handling says why
		}
		if frames.Pauses() != pauses {
			if withJobs {
				jobsOn = v.JobsByNode() // jobs started and ended meanwhile
			}
			if resvsOn != nil {
				resvsOn = v.ResvsByNode()
			}
		}
	}
}
