package acctsum

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/resc"
)

// Job is what qacct uses of one ended job's E record. Times are Unix
// seconds, amounts bytes and seconds; -1 (or 0 for the requests) where
// the record does not say.
type Job struct {
	ID  string
	Key Key
	// End is the record's time; Start the job's start.
	End, Start int64
	Ncpus      int64
	Nodes      int
	Wall, Cput int64 // resources_used.walltime and cput
	Mem        int64 // resources_used.mem, the peak
	ReqMem     int64 // Resource_List.mem
	ReqWall    int64 // Resource_List.walltime
	Exit       int
}

// Key is what usage is summed by. (Encoded as an array in qacct's cache.)
type Key struct {
	_msgpack struct{} `msgpack:",as_array"`

	Owner, Group, Project, Account, Queue, Host string
}

// Read reads an E record's body into a job (end is the record's time).
// A value that does not parse is an error naming it: a damaged record is
// skipped and counted, never summed wrong.
func Read(id []byte, end int64, body []byte, scratch *[]byte) (Job, error) {
	j := Job{ID: string(id), End: end, Start: -1, Wall: -1, Cput: -1, Mem: -1, Exit: -1}
	usedCPUs, reqCPUs := int64(-1), int64(-1)
	err := accounting.EachKV(body, scratch, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "user":
			j.Key.Owner = string(v)
		case "group":
			j.Key.Group = string(v)
		case "project":
			j.Key.Project = string(v)
		case "account":
			j.Key.Account = string(v)
		case "queue":
			j.Key.Queue = string(v)
		case "exec_host":
			j.Key.Host, j.Nodes = hostsOf(string(v))
		case "start":
			j.Start, err = seconds(v)
		case "Exit_status":
			var n int64
			n, err = strconv.ParseInt(string(v), 10, 32)
			j.Exit = int(n)
		case "resources_used.walltime":
			j.Wall, err = resc.ParseDuration(string(v))
		case "resources_used.cput":
			j.Cput, err = resc.ParseDuration(string(v))
		case "resources_used.mem":
			j.Mem, err = resc.ParseSize(string(v))
		case "resources_used.ncpus":
			usedCPUs, err = strconv.ParseInt(string(v), 10, 64)
		case "Resource_List.ncpus":
			reqCPUs, err = strconv.ParseInt(string(v), 10, 64)
		case "Resource_List.mem":
			j.ReqMem, err = resc.ParseSize(string(v))
		case "Resource_List.walltime":
			j.ReqWall, err = resc.ParseDuration(string(v))
		}
		if err != nil {
			return fmt.Errorf("%s=%q: %w", k, v, err)
		}
		return nil
	})
	if err != nil {
		return Job{}, err
	}
	if j.Key.Owner == "" {
		return Job{}, fmt.Errorf("no user= in the record")
	}
	// The cpus the job held: its request (what it kept from others),
	// else what the mom counted.
	j.Ncpus = max(reqCPUs, usedCPUs, 0)
	return j, nil
}

// seconds reads a Unix time.
func seconds(v []byte) (int64, error) { return strconv.ParseInt(string(v), 10, 64) }

// hostsOf is exec_host's first host (the mother superior's) and how many
// hosts it names.
func hostsOf(execHost string) (string, int) {
	first := ""
	seen := map[string]bool{}
	for _, part := range strings.Split(execHost, "+") {
		h, _, _ := strings.Cut(part, "/")
		if h == "" {
			continue
		}
		if first == "" {
			first = h
		}
		seen[h] = true
	}
	return first, len(seen)
}

// Efficiency is one job's (or a sum's) use of what it held, each -1 when
// the parts are unknown: cpu time over ncpus × walltime, peak memory over
// the memory requested, walltime over the walltime requested.
type Efficiency struct{ CPU, Mem, Wall float64 }

// Efficiency is j's.
func (j Job) Efficiency() Efficiency {
	e := Efficiency{CPU: -1, Mem: -1, Wall: -1}
	if j.Cput >= 0 && j.Wall > 0 && j.Ncpus > 0 {
		e.CPU = float64(j.Cput) / float64(j.Ncpus*j.Wall)
	}
	if j.Mem >= 0 && j.ReqMem > 0 {
		e.Mem = float64(j.Mem) / float64(j.ReqMem)
	}
	if j.Wall >= 0 && j.ReqWall > 0 {
		e.Wall = float64(j.Wall) / float64(j.ReqWall)
	}
	return e
}

// FromResources is a job as its resources_used (used) and Resource_List
// (req) give it, for its efficiency: what qstat -x -f and the end mail
// show. A value that does not parse counts as unknown.
func FromResources(used, req func(name string) (string, bool)) Job {
	j := Job{Wall: -1, Cput: -1, Mem: -1, Exit: -1}
	dur := func(get func(string) (string, bool), name string) int64 {
		v, ok := get(name)
		if !ok {
			return -1
		}
		n, err := resc.ParseDuration(v)
		if err != nil {
			return -1
		}
		return n
	}
	size := func(get func(string) (string, bool), name string) int64 {
		v, ok := get(name)
		if !ok {
			return -1
		}
		n, err := resc.ParseSize(v)
		if err != nil {
			return -1
		}
		return n
	}
	count := func(get func(string) (string, bool), name string) int64 {
		v, _ := get(name)
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	j.Wall, j.Cput, j.Mem = dur(used, "walltime"), dur(used, "cput"), size(used, "mem")
	j.ReqWall, j.ReqMem = max(dur(req, "walltime"), 0), max(size(req, "mem"), 0)
	j.Ncpus = max(count(req, "ncpus"), count(used, "ncpus"), 0)
	return j
}

// Lines are e's parts as "cpu 91.7%"-style pairs (name, percent), the
// unknown ones left out, in the order cpu, mem, walltime.
func (e Efficiency) Lines() [][2]string {
	var out [][2]string
	for _, p := range []struct {
		name string
		v    float64
	}{{"cpu", e.CPU}, {"mem", e.Mem}, {"walltime", e.Wall}} {
		if p.v >= 0 {
			out = append(out, [2]string{p.name, Percent(p.v)})
		}
	}
	return out
}

// Node is what a multi-node job used on one of its nodes (an n record).
type Node struct {
	Node  string
	Ncpus int64
	Cput  int64 // -1 unknown
	Mem   int64 // -1 unknown
}

// ReadNode reads an n record's body.
func ReadNode(body []byte, scratch *[]byte) (Node, error) {
	n := Node{Cput: -1, Mem: -1}
	err := accounting.EachKV(body, scratch, func(k, v []byte) error {
		var err error
		switch string(k) {
		case "node":
			n.Node = string(v)
		case "ncpus":
			n.Ncpus, err = strconv.ParseInt(string(v), 10, 64)
		case "resources_used.cput":
			n.Cput, err = resc.ParseDuration(string(v))
		case "resources_used.mem":
			n.Mem, err = resc.ParseSize(string(v))
		}
		if err != nil {
			return fmt.Errorf("%s=%q: %w", k, v, err)
		}
		return nil
	})
	if err == nil && n.Node == "" {
		err = fmt.Errorf("no node= in the record")
	}
	return n, err
}

// CPUEfficiency is the node's cpu time over its cpus × the job's
// walltime, -1 when a part is unknown.
func (n Node) CPUEfficiency(wall int64) float64 {
	if n.Cput < 0 || n.Ncpus <= 0 || wall <= 0 {
		return -1
	}
	return float64(n.Cput) / float64(n.Ncpus*wall)
}

// Percent renders a fraction as qacct, qstat and the mail show it
// ("91.7%").
func Percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
