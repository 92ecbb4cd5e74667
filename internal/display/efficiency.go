package display

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// efficiencyLines are a finished job's efficiencies for its -f listing,
// as Slurm's seff shows them and qacct -j does (internal/acctsum): cpu
// time over ncpus × walltime, memory peak over the memory requested,
// walltime over the walltime requested. A part the job's attributes do
// not give is left out; a job not finished has none.
func efficiencyLines(attrs []proto.Attr) []proto.Attr {
	j := acctsum.Job{Wall: -1, Cput: -1, Mem: -1}
	finished := false
	var usedCPUs, reqCPUs int64
	for _, a := range attrs {
		switch a.FullName() {
		case "job_state":
			finished = a.Value == "F"
		case "resources_used.walltime":
			j.Wall, _ = orMinus(resc.ParseDuration(a.Value))
		case "resources_used.cput":
			j.Cput, _ = orMinus(resc.ParseDuration(a.Value))
		case "resources_used.mem":
			j.Mem, _ = orMinus(resc.ParseSize(a.Value))
		case "resources_used.ncpus":
			usedCPUs, _ = strconv.ParseInt(a.Value, 10, 64)
		case "Resource_List.ncpus":
			reqCPUs, _ = strconv.ParseInt(a.Value, 10, 64)
		case "Resource_List.mem":
			j.ReqMem, _ = resc.ParseSize(a.Value)
		case "Resource_List.walltime":
			j.ReqWall, _ = resc.ParseDuration(a.Value)
		}
	}
	if !finished {
		return nil
	}
	j.Ncpus = max(reqCPUs, usedCPUs, 0)
	e := j.Efficiency()
	var out []proto.Attr
	for _, p := range []struct {
		name string
		v    float64
	}{{"cpu", e.CPU}, {"mem", e.Mem}, {"walltime", e.Wall}} {
		if p.v >= 0 {
			out = append(out, proto.Attr{Name: "efficiency", Resource: p.name, Value: strconv.FormatFloat(100*p.v, 'f', 1, 64) + "%"})
		}
	}
	return out
}

// orMinus is v, or -1 when err.
func orMinus(v int64, err error) (int64, error) {
	if err != nil {
		return -1, err
	}
	return v, nil
}
