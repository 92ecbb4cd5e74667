package trace

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/resc"
)

// acctJob is what the records of one job said so far. Times are Unix
// seconds, -1 until a record gives them.
type acctJob struct {
	job                       Job
	ctime, qtime, etime       int64
	start, end                int64
	ncpus, selCPUs, nodesCPUs int // requested processors, by source
	ended, deleted            bool
}

// acctRecord is one Q, S or E record's values (-1: not in the record).
type acctRecord struct {
	ctime, qtime, etime, start, end int64
	ncpus, selCPUs, nodesCPUs       int
	assigned, used                  int
	walltime, mem                   int64
	exit                            int
	hasExit                         bool
}

// ReadAccounting reads PBS accounting records (this server's and
// OpenPBS's, plain or gzip-compressed; several days' files may be
// concatenated) and builds one job per job id seen in a Q, S or E record.
// See the package documentation for which record gives what.
func ReadAccounting(r io.Reader) (*Workload, error) {
	ls, err := newLines(r)
	if err != nil {
		return nil, err
	}
	byID := map[string]int{}
	var jobs []acctJob
	names := interner{}
	var scratch []byte
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		t := bytes.TrimRight(line, " \t")
		if len(t) == 0 || t[0] == ';' {
			continue
		}
		rl, err := accounting.Split(t, time.UTC)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ls.n, err)
		}
		kind, id, body := []byte{rl.Kind}, rl.ID, rl.Body
		switch kind[0] {
		case 'Q', 'S', 'E', 'D', 'A', 'R':
		default:
			continue // L (license), A, B, ...: not about a job's run
		}
		if len(id) == 0 {
			return nil, fmt.Errorf("line %d: %c record without a job id", ls.n, kind[0])
		}
		i, seen := byID[string(id)]
		if !seen {
			if kind[0] == 'D' || kind[0] == 'A' || kind[0] == 'R' {
				continue // nothing to replay about a job never queued nor run here
			}
			i = len(jobs)
			byID[string(id)] = i
			jobs = append(jobs, acctJob{
				job:   Job{Wait: -1, Run: -1, Procs: -1, ReqProcs: -1, ReqTime: -1, ReqMem: -1, Partition: -1, Status: -1, PBSID: string(id)},
				ctime: -1, qtime: -1, etime: -1, start: -1, end: -1, ncpus: -1, selCPUs: -1, nodesCPUs: -1,
			})
		}
		a := &jobs[i]
		switch kind[0] {
		case 'D', 'A': // deleted by a request, or by the server
			if !a.ended {
				a.deleted = true
			}
			continue
		case 'R':
			a.start = -1
			continue
		}
		rec := acctRecord{ctime: -1, qtime: -1, etime: -1, start: -1, end: -1, ncpus: -1, selCPUs: -1,
			nodesCPUs: -1, assigned: -1, used: -1, walltime: -1, mem: -1}
		err = accounting.EachKV(body, &scratch, func(k, v []byte) error { return rec.set(a, names, k, v) })
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ls.n, err)
		}
		a.merge(&rec, kind[0])
	}
	if err := ls.err(); err != nil {
		return nil, err
	}
	return acctWorkload(jobs), nil
}

// set reads one key=value of a record. Strings go straight to the job
// (last record wins), numbers to the record.
func (rec *acctRecord) set(a *acctJob, names interner, k, v []byte) error {
	num := func(dst *int64) error {
		n, ok := parseInt(v)
		if !ok || n < 0 {
			return fmt.Errorf("%s=%q: not a number of seconds", k, v)
		}
		*dst = n
		return nil
	}
	count := func(dst *int) error {
		n, ok := parseInt(v)
		if !ok || n < 0 || !fitsInt(n) {
			return fmt.Errorf("%s=%q: not a count", k, v)
		}
		*dst = int(n)
		return nil
	}
	cpus := func(dst *int, sel resc.Select, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		n, err := strconv.ParseInt(sel.Totals()["ncpus"], 10, 64)
		if err != nil || !fitsInt(n) {
			return fmt.Errorf("%s=%q: ncpus total out of range", k, v)
		}
		*dst = int(n)
		return nil
	}
	switch string(k) {
	case "user":
		a.job.User = names.get(v)
	case "group":
		a.job.Group = names.get(v)
	case "queue":
		a.job.Queue = names.get(v)
	case "ctime":
		return num(&rec.ctime)
	case "qtime":
		return num(&rec.qtime)
	case "etime":
		return num(&rec.etime)
	case "start":
		return num(&rec.start)
	case "end":
		return num(&rec.end)
	case "Exit_status":
		n, ok := parseInt(v)
		if !ok || !fitsInt(n) {
			return fmt.Errorf("Exit_status=%q: not an integer", v)
		}
		rec.exit, rec.hasExit = int(n), true
	case "Resource_List.ncpus":
		return count(&rec.ncpus)
	case "resource_assigned.ncpus":
		return count(&rec.assigned)
	case "resources_used.ncpus":
		return count(&rec.used)
	case "Resource_List.select":
		a.job.Select = names.get(v)
		sel, err := resc.ParseSelect(string(v))
		return cpus(&rec.selCPUs, sel, err)
	case "Resource_List.nodes":
		a.job.NodeSpec = names.get(v)
		sel, err := resc.ParseNodes(string(v))
		return cpus(&rec.nodesCPUs, sel, err)
	case "Resource_List.walltime":
		d, err := resc.ParseDuration(string(v))
		if err != nil {
			return fmt.Errorf("Resource_List.walltime: %w", err)
		}
		rec.walltime = d
	case "Resource_List.mem":
		b, err := resc.ParseSize(string(v))
		if err != nil {
			return fmt.Errorf("Resource_List.mem: %w", err)
		}
		rec.mem = b
	}
	return nil
}

// merge folds one Q, S or E record into the job.
func (a *acctJob) merge(rec *acctRecord, kind byte) {
	set := func(dst *int64, v int64) {
		if v >= 0 {
			*dst = v
		}
	}
	seti := func(dst *int, v int) {
		if v >= 0 {
			*dst = v
		}
	}
	set(&a.ctime, rec.ctime)
	set(&a.qtime, rec.qtime)
	set(&a.etime, rec.etime)
	set(&a.job.ReqTime, rec.walltime)
	set(&a.job.ReqMem, rec.mem)
	seti(&a.ncpus, rec.ncpus)
	seti(&a.selCPUs, rec.selCPUs)
	seti(&a.nodesCPUs, rec.nodesCPUs)
	seti(&a.job.Procs, rec.used)
	seti(&a.job.Procs, rec.assigned)
	if kind == 'S' || kind == 'E' {
		set(&a.start, rec.start)
	}
	if kind == 'E' {
		a.ended = true
		set(&a.end, rec.end)
		if rec.hasExit {
			a.job.ExitStatus = rec.exit
		}
	}
}

// acctWorkload turns the jobs the records built into a workload: times
// relative to the earliest submit, sorted by submit, numbered from 1.
func acctWorkload(as []acctJob) *Workload {
	w := &Workload{Jobs: make([]Job, len(as))}
	base := int64(-1)
	for i := range as {
		a := &as[i]
		j := &a.job
		j.Submit = a.ctime
		if j.Submit < 0 {
			j.Submit = a.qtime
		}
		if j.Submit < 0 {
			j.Submit = a.etime
		}
		if j.Submit >= 0 && (base < 0 || j.Submit < base) {
			base = j.Submit
		}
		for _, n := range []int{a.ncpus, a.selCPUs, a.nodesCPUs} {
			if n >= 0 {
				j.ReqProcs = n
				break
			}
		}
		if a.start >= 0 && j.Submit >= 0 {
			j.Wait = a.start - j.Submit
		}
		if a.ended && a.start >= 0 && a.end >= 0 {
			j.Run = a.end - a.start
		}
		switch {
		case a.deleted:
			j.Status = 5
		case a.ended && j.ExitStatus == 0:
			j.Status = 1
		case a.ended:
			j.Status = 0
		}
		w.Jobs[i] = *j
	}
	if base >= 0 {
		w.UnixStartTime = base
		for i := range w.Jobs {
			if w.Jobs[i].Submit >= 0 {
				w.Jobs[i].Submit -= base
			}
		}
	}
	slices.SortStableFunc(w.Jobs, bySubmit)
	for i := range w.Jobs {
		w.Jobs[i].ID = int64(i + 1)
	}
	return w
}
