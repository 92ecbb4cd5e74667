package acctsum

import (
	"cmp"
	"maps"
	"slices"
)

// Sum is the usage of a set of ended jobs. (Encoded as an array in
// qacct's cache.)
type Sum struct {
	_msgpack struct{} `msgpack:",as_array"`

	Jobs, Failed int64 // failed: a nonzero exit status
	Wall, Cput   int64 // seconds
	// CPUHeld is ncpus × walltime, in cpu-seconds: what the jobs kept
	// from others.
	CPUHeld int64
	MemPeak int64 // the largest job's peak, bytes
	// The efficiencies' parts, over the jobs that have both.
	CPUUsed, CPUHeldKnown int64
	MemUsed, MemReq       int64
	WallUsed, WallReq     int64
}

// Add counts j.
func (s *Sum) Add(j Job) {
	s.Jobs++
	if j.Exit != 0 {
		s.Failed++
	}
	wall := max(j.Wall, 0)
	s.Wall += wall
	s.Cput += max(j.Cput, 0)
	s.CPUHeld += j.Ncpus * wall
	s.MemPeak = max(s.MemPeak, j.Mem)
	if j.Cput >= 0 && j.Wall > 0 && j.Ncpus > 0 {
		s.CPUUsed += j.Cput
		s.CPUHeldKnown += j.Ncpus * j.Wall
	}
	if j.Mem >= 0 && j.ReqMem > 0 {
		s.MemUsed += j.Mem
		s.MemReq += j.ReqMem
	}
	if j.Wall >= 0 && j.ReqWall > 0 {
		s.WallUsed += j.Wall
		s.WallReq += j.ReqWall
	}
}

// Merge adds o's jobs.
func (s *Sum) Merge(o Sum) {
	s.Jobs += o.Jobs
	s.Failed += o.Failed
	s.Wall += o.Wall
	s.Cput += o.Cput
	s.CPUHeld += o.CPUHeld
	s.MemPeak = max(s.MemPeak, o.MemPeak)
	s.CPUUsed += o.CPUUsed
	s.CPUHeldKnown += o.CPUHeldKnown
	s.MemUsed += o.MemUsed
	s.MemReq += o.MemReq
	s.WallUsed += o.WallUsed
	s.WallReq += o.WallReq
}

// Efficiency is the sum's, each part -1 when no job gave it.
func (s Sum) Efficiency() Efficiency {
	e := Efficiency{CPU: -1, Mem: -1, Wall: -1}
	if s.CPUHeldKnown > 0 {
		e.CPU = float64(s.CPUUsed) / float64(s.CPUHeldKnown)
	}
	if s.MemReq > 0 {
		e.Mem = float64(s.MemUsed) / float64(s.MemReq)
	}
	if s.WallReq > 0 {
		e.Wall = float64(s.WallUsed) / float64(s.WallReq)
	}
	return e
}

// Sums are usages by Key: a day's in qacct's cache, a report's after
// grouping.
type Sums map[Key]*Sum

// Add counts j under its key.
func (ss Sums) Add(j Job) { ss.at(j.Key).Add(j) }

func (ss Sums) at(k Key) *Sum {
	s := ss[k]
	if s == nil {
		s = &Sum{}
		ss[k] = s
	}
	return s
}

// Dim is one dimension a report groups by.
type Dim int

// Dimensions, in the order qacct's columns show them.
const (
	ByOwner Dim = iota
	ByGroup
	ByProject
	ByAccount
	ByQueue
	ByHost
)

// Of is k's value in d.
func (d Dim) Of(k Key) string {
	switch d {
	case ByOwner:
		return k.Owner
	case ByGroup:
		return k.Group
	case ByProject:
		return k.Project
	case ByAccount:
		return k.Account
	case ByQueue:
		return k.Queue
	}
	return k.Host
}

// Filter keeps the keys whose value in a dimension is the one asked.
type Filter map[Dim]string

// Keeps reports whether k passes f.
func (f Filter) Keeps(k Key) bool {
	for d, want := range f {
		if d.Of(k) != want {
			return false
		}
	}
	return true
}

// Row is one line of a report: the values of its dimensions and the sum.
type Row struct {
	Values []string
	Sum    Sum
}

// Group merges ss into rows by the values of dims (one row of all when
// dims is empty), keeping what f passes, ordered by those values.
func (ss Sums) Group(dims []Dim, f Filter) []Row {
	byVals := map[string]*Row{}
	for _, k := range slices.SortedFunc(maps.Keys(ss), compareKeys) {
		if !f.Keeps(k) {
			continue
		}
		vals := make([]string, len(dims))
		for i, d := range dims {
			vals[i] = d.Of(k)
		}
		id := joinNUL(vals)
		r := byVals[id]
		if r == nil {
			r = &Row{Values: vals}
			byVals[id] = r
		}
		r.Sum.Merge(*ss[k])
	}
	rows := make([]Row, 0, len(byVals))
	for _, r := range byVals {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b Row) int { return slices.Compare(a.Values, b.Values) })
	return rows
}

// Merge adds o's sums into ss.
func (ss Sums) Merge(o Sums) {
	for k, s := range o {
		ss.at(k).Merge(*s)
	}
}

func joinNUL(vals []string) string {
	n := 0
	for _, v := range vals {
		n += len(v) + 1
	}
	b := make([]byte, 0, n)
	for _, v := range vals {
		b = append(append(b, v...), 0)
	}
	return string(b)
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Project, b.Project),
		cmp.Compare(a.Account, b.Account), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Host, b.Host))
}

// Dims are every dimension, in order.
var Dims = []Dim{ByOwner, ByGroup, ByProject, ByAccount, ByQueue, ByHost}

// set is k with its value in d replaced by v.
func (d Dim) set(k Key, v string) Key {
	switch d {
	case ByOwner:
		k.Owner = v
	case ByGroup:
		k.Group = v
	case ByProject:
		k.Project = v
	case ByAccount:
		k.Account = v
	case ByQueue:
		k.Queue = v
	default:
		k.Host = v
	}
	return k
}

// Only is ss summed by d alone: the other values of every key blank.
func (ss Sums) Only(d Dim) Sums {
	out := Sums{}
	for k, s := range ss {
		out.at(d.set(Key{}, d.Of(k))).Merge(*s)
	}
	return out
}

// Without is ss summed with d's value blank in every key.
func (ss Sums) Without(d Dim) Sums {
	out := Sums{}
	for k, s := range ss {
		out.at(d.set(k, "")).Merge(*s)
	}
	return out
}
