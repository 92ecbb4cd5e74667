package resvs

import (
	"strings"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/resvspec"
	"github.com/gopbs/gopbs/proto"
)

// CheckNodes verifies the placements nodes (one per occurrence) a
// scheduler confirms r with: known nodes, each occurrence's amounts within
// what the node has, with the other reservations that hold it at the same
// time. The scheduler chose them; the server only refuses what cannot
// be.
func (v View) CheckNodes(r *model.Resv, nodes []string) error {
	for i, spec := range nodes {
		want, err := resvspec.Amounts(v.Table, spec)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "(%q: %v)", spec, err)
		}
		from, to := r.Occ[i].Start, r.Occ[i].Start+r.Duration
		for node, amt := range want {
			if _, ok := v.Nodes.Get(node); !ok {
				return proto.Errorf(proto.PBSE_UNKNODE, "%s", node)
			}
			avail := v.Nodes.Available(node)
			held := map[string]float64{}
			var with []string
			for o := range v.Resvs.All() {
				if o.Seq == r.Seq || o.State == proto.ResvUnconfirmed || o.State == proto.ResvBeingDeleted {
					continue
				}
				for _, oc := range o.Occ {
					if oc.Start < to && from < oc.Start+o.Duration {
						other, _ := resvspec.Amounts(v.Table, oc.Nodes)
						if m, ok := other[node]; ok {
							with = append(with, o.ID(v.ServerName))
							for k, x := range m {
								held[k] += x
							}
						}
					}
				}
			}
			for k, x := range amt {
				have, ok := v.Table.Number(k, avail[k])
				if !ok {
					continue
				}
				if held[k]+x > have {
					return proto.Errorf(proto.PBSE_resvFail, "(node %s has %s of %s: it overlaps %s)", node, v.Table.Format(k, have), k, strings.Join(with, ", "))
				}
			}
		}
	}
	return nil
}

// Status answers pbs_rstat: the reservations req names (every one, in
// order, when none are), their attributes limited to those asked for;
// privileged callers (operators, managers) see every attribute.
func (v View) Status(req *proto.StatusRequest, privileged bool) *proto.StatusReply {
	out := &proto.StatusReply{}
	add := func(r *model.Resv) {
		st := r.Status(v.ServerName, privileged)
		if len(req.Attrs) > 0 {
			st.Attrs = filterAttrs(st.Attrs, req.Attrs)
		}
		out.Objects = append(out.Objects, st)
	}
	if len(req.IDs) == 0 {
		for r := range v.Resvs.All() {
			add(r)
		}
		return out
	}
	for _, id := range req.IDs {
		r, err := v.Resvs.Lookup(id)
		if err != nil {
			out.Errors = append(out.Errors, proto.ObjectErrorOf(id, err))
			continue
		}
		add(r)
	}
	return out
}

// filterAttrs keeps the attributes asked for, by name or full name
// (Resource_List.ncpus).
func filterAttrs(attrs []proto.Attr, want []string) []proto.Attr {
	var out []proto.Attr
	for _, a := range attrs {
		for _, w := range want {
			if w == a.Name || w == a.FullName() {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
