package qacct

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/acctlog"
	"github.com/gopbs/gopbs/internal/acctsum"
	"github.com/gopbs/gopbs/resc"
)

// dimNames are the columns of the grouping dimensions.
var dimNames = map[acctsum.Dim]string{
	acctsum.ByOwner: "owner", acctsum.ByGroup: "group", acctsum.ByProject: "project",
	acctsum.ByAccount: "account", acctsum.ByQueue: "queue", acctsum.ByHost: "host",
}

// report prints the usage summed over sums, grouped as o asks.
func report(o options, sums []*acctlog.Summary, stdout, stderr io.Writer) int {
	damaged := warnDamage(sums, stderr)
	all := acctsum.Sums{}
	var records int64
	need := o.need()
	for _, s := range sums {
		v, _ := s.View(need) // Summarize made sure one answers
		all.Merge(v)
		records += s.Records
	}
	rows := all.Group(o.dims, o.filter)
	switch o.format {
	case "json":
		return reportJSON(o, rows, records, damaged, int64(len(sums)), stdout)
	case "csv":
		return reportCSV(o, rows, stdout)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, d := range o.dims {
		head = append(head, strings.ToUpper(dimNames[d]))
	}
	if len(o.dims) == 0 {
		head = []string{"TOTAL"}
	}
	head = append(head, "JOBS", "FAILED", "WALL_HOURS", "CPU_HOURS", "CPU_HELD_HOURS", "MEM_PEAK", "CPU_EFF", "MEM_EFF", "WALL_USE")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		vals := r.Values
		if len(o.dims) == 0 {
			vals = []string{"all"}
		}
		e := r.Sum.Efficiency()
		cells := append(append([]string{}, blankAsDash(vals)...), strconv.FormatInt(r.Sum.Jobs, 10), strconv.FormatInt(r.Sum.Failed, 10),
			hours(r.Sum.Wall), hours(r.Sum.Cput), hours(r.Sum.CPUHeld), size(r.Sum.MemPeak), percent(e.CPU), percent(e.Mem), percent(e.Wall))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	return 0
}

func blankAsDash(vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v
		if v == "" {
			out[i] = "-"
		}
	}
	return out
}

func hours(secs int64) string { return strconv.FormatFloat(float64(secs)/3600, 'f', 2, 64) }

func size(b int64) string {
	if b <= 0 {
		return "-"
	}
	return resc.FormatKB(b)
}

func percent(f float64) string {
	if f < 0 {
		return "-"
	}
	return acctsum.Percent(f)
}

// jsonRow is one row of --json: the dimensions' values by name, the
// sums in seconds and bytes, the efficiencies as fractions (null when
// unknown).
type jsonRow struct {
	Group         map[string]string `json:"group"`
	Jobs          int64             `json:"jobs"`
	Failed        int64             `json:"failed"`
	WallSeconds   int64             `json:"wall_seconds"`
	CPUSeconds    int64             `json:"cpu_seconds"`
	CPUHeldSecs   int64             `json:"cpu_held_seconds"`
	MemPeakBytes  int64             `json:"mem_peak_bytes"`
	CPUEfficiency *float64          `json:"cpu_efficiency"`
	MemEfficiency *float64          `json:"mem_efficiency"`
	WallUse       *float64          `json:"wall_use"`
}

func fraction(f float64) *float64 {
	if f < 0 {
		return nil
	}
	return &f
}

func toJSONRow(o options, r acctsum.Row) jsonRow {
	g := map[string]string{}
	for i, d := range o.dims {
		g[dimNames[d]] = r.Values[i]
	}
	e := r.Sum.Efficiency()
	return jsonRow{Group: g, Jobs: r.Sum.Jobs, Failed: r.Sum.Failed, WallSeconds: r.Sum.Wall, CPUSeconds: r.Sum.Cput,
		CPUHeldSecs: r.Sum.CPUHeld, MemPeakBytes: max(r.Sum.MemPeak, 0), CPUEfficiency: fraction(e.CPU), MemEfficiency: fraction(e.Mem), WallUse: fraction(e.Wall)}
}

func reportJSON(o options, rows []acctsum.Row, records, damaged, files int64, w io.Writer) int {
	out := struct {
		Rows    []jsonRow `json:"rows"`
		Files   int64     `json:"files"`
		Records int64     `json:"records"`
		Damaged int64     `json:"damaged_lines"`
	}{Rows: []jsonRow{}, Files: files, Records: records, Damaged: damaged}
	for _, r := range rows {
		out.Rows = append(out.Rows, toJSONRow(o, r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if enc.Encode(out) != nil {
		return 1
	}
	return 0
}

func reportCSV(o options, rows []acctsum.Row, w io.Writer) int {
	cw := csv.NewWriter(w)
	var head []string
	for _, d := range o.dims {
		head = append(head, dimNames[d])
	}
	head = append(head, "jobs", "failed", "wall_seconds", "cpu_seconds", "cpu_held_seconds", "mem_peak_bytes", "cpu_efficiency", "mem_efficiency", "wall_use")
	cw.Write(head)
	frac := func(f float64) string {
		if f < 0 {
			return ""
		}
		return strconv.FormatFloat(f, 'f', 4, 64)
	}
	for _, r := range rows {
		e := r.Sum.Efficiency()
		n := strconv.FormatInt
		cw.Write(append(append([]string{}, r.Values...), n(r.Sum.Jobs, 10), n(r.Sum.Failed, 10), n(r.Sum.Wall, 10), n(r.Sum.Cput, 10),
			n(r.Sum.CPUHeld, 10), n(max(r.Sum.MemPeak, 0), 10), frac(e.CPU), frac(e.Mem), frac(e.Wall)))
	}
	cw.Flush()
	if cw.Error() != nil {
		return 1
	}
	return 0
}

// showJob prints every record of the job o.job names, found in the files
// whose job numbers cover it, and each ended job's efficiency.
func showJob(o options, files []acctlog.DayFile, dir string, loc *time.Location, stdout, stderr io.Writer) int {
	q, err := acctlog.ParseJobQuery(o.job)
	if err != nil {
		fmt.Fprintf(stderr, "qacct: %v\n", err)
		return 2
	}
	order, byID, sums := acctlog.FindJob(files, dir, q, loc)
	warnDamage(sums, stderr)
	if len(order) == 0 {
		fmt.Fprintf(stderr, "qacct: job %s not found in the accounting logs\n", o.job)
		return 1
	}
	if o.format == "json" {
		return showJobJSON(order, byID, stdout)
	}
	for _, id := range order {
		jr := byID[id]
		fmt.Fprintln(stdout, strings.Repeat("=", 62))
		fmt.Fprintf(stdout, "%-16s%s\n", "jobid", id)
		for _, l := range jr.Lines {
			fmt.Fprintf(stdout, "%-16s%s %s\n", "record "+string(l.Kind), l.At.Format("01/02/2006 15:04:05"), strings.TrimSpace(string(l.Body)))
		}
		for _, j := range jr.Ends {
			printEnded(stdout, j)
		}
		for _, n := range lastNodes(jr) {
			fmt.Fprintf(stdout, "%-16s%s: ncpus %d, cpu_time %s, mem_peak %s, cpu_efficiency %s\n", "node", n.Node, n.Ncpus,
				ofRequested(n.Cput, 0, resc.FormatDuration), ofRequested(n.Mem, 0, resc.FormatKB), percent(n.CPUEfficiency(lastWall(jr))))
		}
	}
	return 0
}

// lastNodes are the n records after the job's last E record: its last
// run's usage on each of its nodes.
func lastNodes(jr *acctlog.JobRecords) []acctsum.Node {
	var out []acctsum.Node
	var scratch []byte
	for _, l := range jr.Lines {
		switch l.Kind {
		case accounting.Ended:
			out = out[:0]
		case accounting.NodeUsage:
			if n, err := acctsum.ReadNode(l.Body, &scratch); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// lastWall is the walltime of the job's last run, -1 unknown.
func lastWall(jr *acctlog.JobRecords) int64 {
	if n := len(jr.Ends); n > 0 {
		return jr.Ends[n-1].Wall
	}
	return -1
}

// printEnded is an ended job's usage and efficiency, as seff shows it.
func printEnded(w io.Writer, j acctsum.Job) {
	e := j.Efficiency()
	line := func(k, v string) { fmt.Fprintf(w, "%-16s%s\n", k, v) }
	line("owner", j.Key.Owner)
	line("group", j.Key.Group)
	line("queue", j.Key.Queue)
	line("host", fmt.Sprintf("%s (%d node(s))", j.Key.Host, j.Nodes))
	line("exit_status", strconv.Itoa(j.Exit))
	line("ncpus", strconv.FormatInt(j.Ncpus, 10))
	line("walltime", ofRequested(j.Wall, j.ReqWall, resc.FormatDuration))
	line("cpu_time", ofRequested(j.Cput, 0, resc.FormatDuration))
	mem := ofRequested(j.Mem, j.ReqMem, resc.FormatKB)
	line("mem_peak", mem)
	line("cpu_efficiency", percent(e.CPU))
	line("mem_efficiency", percent(e.Mem))
	line("wall_use", percent(e.Wall))
}

// ofRequested is a usage (- when unknown) and what was requested of it
// when known.
func ofRequested(used, req int64, format func(int64) string) string {
	if used < 0 {
		return "-"
	}
	if req > 0 {
		return format(used) + " of " + format(req) + " requested"
	}
	return format(used)
}

func showJobJSON(order []string, byID map[string]*acctlog.JobRecords, w io.Writer) int {
	type rec struct {
		Type string `json:"type"`
		Time int64  `json:"time"`
		Body string `json:"body"`
	}
	type node struct {
		Node          string   `json:"node"`
		Ncpus         int64    `json:"ncpus"`
		CPUSeconds    *int64   `json:"cpu_seconds"`
		MemPeakBytes  *int64   `json:"mem_peak_bytes"`
		CPUEfficiency *float64 `json:"cpu_efficiency"`
	}
	type job struct {
		ID            string   `json:"id"`
		Records       []rec    `json:"records"`
		Owner         string   `json:"owner,omitempty"`
		ExitStatus    *int     `json:"exit_status,omitempty"`
		Ncpus         int64    `json:"ncpus,omitempty"`
		WallSeconds   *int64   `json:"wall_seconds,omitempty"`
		CPUSeconds    *int64   `json:"cpu_seconds,omitempty"`
		MemPeakBytes  *int64   `json:"mem_peak_bytes,omitempty"`
		CPUEfficiency *float64 `json:"cpu_efficiency"`
		MemEfficiency *float64 `json:"mem_efficiency"`
		WallUse       *float64 `json:"wall_use"`
		Nodes         []node   `json:"nodes,omitempty"`
	}
	nonNeg := func(v int64) *int64 {
		if v < 0 {
			return nil
		}
		return &v
	}
	var out []job
	for _, id := range order {
		jr := byID[id]
		j := job{ID: id}
		for _, l := range jr.Lines {
			j.Records = append(j.Records, rec{Type: string(l.Kind), Time: l.At.Unix(), Body: strings.TrimSpace(string(l.Body))})
		}
		if n := len(jr.Ends); n > 0 {
			e := jr.Ends[n-1]
			eff := e.Efficiency()
			exit := e.Exit
			j.Owner, j.ExitStatus, j.Ncpus = e.Key.Owner, &exit, e.Ncpus
			j.WallSeconds, j.CPUSeconds, j.MemPeakBytes = nonNeg(e.Wall), nonNeg(e.Cput), nonNeg(e.Mem)
			j.CPUEfficiency, j.MemEfficiency, j.WallUse = fraction(eff.CPU), fraction(eff.Mem), fraction(eff.Wall)
		}
		for _, n := range lastNodes(jr) {
			j.Nodes = append(j.Nodes, node{Node: n.Node, Ncpus: n.Ncpus, CPUSeconds: nonNeg(n.Cput), MemPeakBytes: nonNeg(n.Mem), CPUEfficiency: fraction(n.CPUEfficiency(lastWall(jr)))})
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if enc.Encode(out) != nil {
		return 1
	}
	return 0
}
