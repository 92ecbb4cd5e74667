package display

import (
	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/proto"
)

// efficiencyLines are a finished job's efficiencies for its -f listing,
// as Slurm's seff shows them and qacct -j does (internal/acctsum): cpu
// time over ncpus × walltime, memory peak over the memory requested,
// walltime over the walltime requested. A part the job's attributes do
// not give is left out; a job not finished has none.
func efficiencyLines(attrs []proto.Attr) []proto.Attr {
	finished := false
	used, req := map[string]string{}, map[string]string{}
	for _, a := range attrs {
		switch a.Name {
		case "job_state":
			finished = a.Value == "F"
		case "resources_used":
			used[a.Resource] = a.Value
		case "Resource_List":
			req[a.Resource] = a.Value
		}
	}
	if !finished {
		return nil
	}
	lookup := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	var out []proto.Attr
	for _, l := range acctsum.FromResources(lookup(used), lookup(req)).Efficiency().Lines() {
		out = append(out, proto.Attr{Name: "efficiency", Resource: l[0], Value: l[1]})
	}
	return out
}
