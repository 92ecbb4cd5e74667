package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Job arrays (qsub -J, qsub -t). An array is one parent job holding the
// template every subjob is made from and the set of indices still queued;
// a subjob becomes a Job of its own only when something happens to it
// alone (it starts, it is held, altered or deleted on its own), and what
// is left of it once it has finished is a SubjobEnd. So an array of
// 100,000 subjobs costs what one job costs until its subjobs start.

// MaxArrayIndex bounds an index (OpenPBS keeps them in an int).
const MaxArrayIndex = 1<<31 - 1

// DefaultMaxArraySize is max_array_size when the server sets none
// (OpenPBS's default).
const DefaultMaxArraySize = 10000

// IndexRange is the indices Lo, Lo+Step, ... up to Hi (Hi is the last
// one: Lo + k*Step).
type IndexRange struct {
	Lo, Hi, Step int
}

// count is how many indices r holds.
func (r IndexRange) count() int { return (r.Hi-r.Lo)/r.Step + 1 }

func (r IndexRange) contains(i int) bool {
	return i >= r.Lo && i <= r.Hi && (i-r.Lo)%r.Step == 0
}

func (r IndexRange) String() string {
	switch {
	case r.Lo == r.Hi:
		return strconv.Itoa(r.Lo)
	case r.Step == 1:
		return strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi)
	}
	return strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi) + ":" + strconv.Itoa(r.Step)
}

// IndexSet is a set of array indices as ranges in increasing order whose
// spans do not overlap. The zero value is empty. Its methods that change
// it return the new set (the old slice may be reused).
type IndexSet []IndexRange

// Count is the number of indices.
func (s IndexSet) Count() int {
	n := 0
	for _, r := range s {
		n += r.count()
	}
	return n
}

// Empty reports whether s holds no index.
func (s IndexSet) Empty() bool { return len(s) == 0 }

// find returns the position of the range whose span may hold i: the last
// range with Lo <= i, or -1.
func (s IndexSet) find(i int) int {
	return sort.Search(len(s), func(k int) bool { return s[k].Lo > i }) - 1
}

// Contains reports whether i is in s.
func (s IndexSet) Contains(i int) bool {
	k := s.find(i)
	return k >= 0 && s[k].contains(i)
}

// Clone copies s.
func (s IndexSet) Clone() IndexSet { return append(IndexSet(nil), s...) }

// First is the smallest index; ok is false when s is empty.
func (s IndexSet) First() (int, bool) {
	if len(s) == 0 {
		return 0, false
	}
	return s[0].Lo, true
}

// Each calls f on every index in increasing order until f returns false.
func (s IndexSet) Each(f func(i int) bool) {
	for _, r := range s {
		for i := r.Lo; i <= r.Hi; i += r.Step {
			if !f(i) {
				return
			}
		}
	}
}

// Remove returns s without i.
func (s IndexSet) Remove(i int) IndexSet {
	k := s.find(i)
	if k < 0 || !s[k].contains(i) {
		return s
	}
	r := s[k]
	var parts []IndexRange
	if i > r.Lo {
		parts = append(parts, normal(r.Lo, i-r.Step, r.Step))
	}
	if i < r.Hi {
		parts = append(parts, normal(i+r.Step, r.Hi, r.Step))
	}
	out := make(IndexSet, 0, len(s)+1)
	out = append(out, s[:k]...)
	out = append(out, parts...)
	return append(out, s[k+1:]...)
}

// Add returns s with i, joined to a neighbouring range when it continues
// it.
func (s IndexSet) Add(i int) IndexSet {
	if s.Contains(i) {
		return s
	}
	k := s.find(i) // the last range starting at or below i, or -1
	out := make(IndexSet, 0, len(s)+2)
	if k >= 0 {
		out = append(out, s[:k]...)
		if r := s[k]; i < r.Hi {
			// Inside the range's span, off its step: split it around i.
			below := normal(r.Lo, i-1, r.Step)
			out = append(out, below, IndexRange{Lo: i, Hi: i, Step: 1}, normal(below.Hi+r.Step, r.Hi, r.Step))
			return append(out, s[k+1:]...)
		}
		out = append(out, s[k])
	}
	out = append(out, IndexRange{Lo: i, Hi: i, Step: 1})
	return append(out, s[k+1:]...).merged()
}

// merged joins neighbouring ranges where one continues the other.
func (s IndexSet) merged() IndexSet {
	out := s[:0]
	for _, r := range s {
		if n := len(out); n > 0 {
			if j, ok := join(out[n-1], r); ok {
				out[n-1] = j
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// join returns a and b as one range when b continues a.
func join(a, b IndexRange) (IndexRange, bool) {
	single := func(r IndexRange) bool { return r.Lo == r.Hi }
	switch {
	case single(a) && single(b):
		if b.Lo-a.Hi == 1 {
			return IndexRange{Lo: a.Lo, Hi: b.Hi, Step: 1}, true
		}
	case single(b):
		if b.Lo == a.Hi+a.Step {
			return IndexRange{Lo: a.Lo, Hi: b.Hi, Step: a.Step}, true
		}
	case single(a):
		if b.Lo-a.Lo == b.Step {
			return IndexRange{Lo: a.Lo, Hi: b.Hi, Step: b.Step}, true
		}
	case a.Step == b.Step && b.Lo == a.Hi+a.Step:
		return IndexRange{Lo: a.Lo, Hi: b.Hi, Step: a.Step}, true
	}
	return IndexRange{}, false
}

// normal builds the range from lo by step whose last index is at most hi.
func normal(lo, hi, step int) IndexRange {
	hi = lo + (hi-lo)/step*step
	if lo == hi {
		step = 1
	}
	return IndexRange{Lo: lo, Hi: hi, Step: step}
}

// String renders s as qstat shows array_indices_remaining: "1-10:2,15";
// "-" when empty, as OpenPBS prints it.
func (s IndexSet) String() string {
	if len(s) == 0 {
		return "-"
	}
	parts := make([]string, len(s))
	for k, r := range s {
		parts[k] = r.String()
	}
	return strings.Join(parts, ",")
}

// ParseIndexSet reads a list of indices and ranges, "1-10:2,15,20-30":
// each item an index, lo-hi or lo-hi:step, in any order, none repeating
// another.
func ParseIndexSet(text string) (IndexSet, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no index given")
	}
	var s IndexSet
	for _, item := range strings.Split(text, ",") {
		r, err := parseRange(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		s = append(s, r)
	}
	sort.Slice(s, func(a, b int) bool { return s[a].Lo < s[b].Lo })
	for k := 1; k < len(s); k++ {
		if s[k].Lo <= s[k-1].Hi {
			return nil, fmt.Errorf("%s and %s overlap", s[k-1], s[k])
		}
	}
	return s, nil
}

func parseRange(item string) (IndexRange, error) {
	num := func(v string) (int, error) {
		if v == "" || len(v) > 10 || strings.TrimLeft(v, "0123456789") != "" {
			return 0, fmt.Errorf("%q is not an index (a whole number from 0)", v)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n > MaxArrayIndex {
			return 0, fmt.Errorf("index %s is too large", v)
		}
		return n, nil
	}
	span, stepText, stepped := strings.Cut(item, ":")
	loText, hiText, isRange := strings.Cut(span, "-")
	lo, err := num(loText)
	if err != nil {
		return IndexRange{}, err
	}
	if !isRange {
		if stepped {
			return IndexRange{}, fmt.Errorf("%q: a step needs a range (lo-hi:step)", item)
		}
		return IndexRange{Lo: lo, Hi: lo, Step: 1}, nil
	}
	hi, err := num(hiText)
	if err != nil {
		return IndexRange{}, err
	}
	step := 1
	if stepped {
		if step, err = num(stepText); err != nil || step == 0 {
			return IndexRange{}, fmt.Errorf("%q: the step must be a whole number from 1", item)
		}
	}
	if hi < lo {
		return IndexRange{}, fmt.Errorf("%q: the range ends before it starts", item)
	}
	return normal(lo, hi, step), nil
}

// ArraySpec is a parsed array request: the indices and the most subjobs
// that may run at once (0: no limit).
type ArraySpec struct {
	Indices IndexSet
	MaxRun  int
}

// ParseArraySpec reads qsub's -J (OpenPBS: "x-y[:z][%n]") or -t (Torque:
// "1-10,15%5") value. The count is checked against max_array_size by the
// server.
func ParseArraySpec(text string) (ArraySpec, error) {
	spec, maxText, limited := strings.Cut(strings.TrimSpace(text), "%")
	set, err := ParseIndexSet(spec)
	if err != nil {
		return ArraySpec{}, proto.Errorf(proto.PBSE_BADATVAL, "array request %q: %v", text, err)
	}
	out := ArraySpec{Indices: set}
	if limited {
		n, err := strconv.Atoi(maxText)
		if err != nil || n < 1 {
			return ArraySpec{}, proto.Errorf(proto.PBSE_BADATVAL, "array request %q: the limit after %% must be a whole number from 1", text)
		}
		out.MaxRun = n
	}
	return out, nil
}

// Array is what a job array's parent holds beyond a job's attributes.
// Indices and MaxRun are stored with the parent; the rest is rebuilt from
// the subjobs' records when the server loads.
type Array struct {
	// Indices are the indices submitted (array_indices_submitted).
	Indices IndexSet
	// MaxRun is max_run_subjobs: how many subjobs may run at once (0: no
	// limit). The scheduler enforces it.
	MaxRun int
	// Deleted are the subjobs deleted while they waited in Queued: they
	// have no record of their own (an array of 100,000 deleted at once
	// is one change of its parent).
	Deleted IndexSet
	// Queued are the indices of subjobs waiting to run, those made into
	// jobs of their own (held, requeued) included: array_indices_remaining.
	Queued IndexSet
	// Running, Exiting and Expired count the other subjobs by state.
	Running, Exiting, Expired int
}

// Clone copies a.
func (a *Array) Clone() *Array {
	if a == nil {
		return nil
	}
	c := *a
	c.Indices = a.Indices.Clone()
	c.Queued = a.Queued.Clone()
	c.Deleted = a.Deleted.Clone()
	return &c
}

// StateCount renders array_state_count as OpenPBS does.
func (a *Array) StateCount() string {
	return fmt.Sprintf("Queued:%d Running:%d Exiting:%d Expired:%d ", a.Queued.Count(), a.Running, a.Exiting, a.Expired)
}

// Done reports whether every subjob has finished.
func (a *Array) Done() bool {
	return a.Queued.Empty() && a.Running == 0 && a.Exiting == 0
}

// IsArray reports whether j is a job array's parent.
func (j *Job) IsArray() bool { return j.Array != nil }

// JobKey names a job in the server: a job or an array's parent by its
// sequence number (Index NoIndex), a subjob by its parent's number and
// its index.
type JobKey struct {
	Seq   int64
	Index int
}

// NoIndex is the Index of a key that is not a subjob's.
const NoIndex = -1

// TopKey is the key of job or array seq.
func TopKey(seq int64) JobKey { return JobKey{Seq: seq, Index: NoIndex} }

// Key is j's key.
func (j *Job) Key() JobKey {
	if j.IsSubjob {
		return JobKey{Seq: j.Seq, Index: j.Index}
	}
	return TopKey(j.Seq)
}

// IDKind is what a job id names.
type IDKind uint8

// Kinds of job id.
const (
	IDJob    IDKind = iota // "123.srv": a job, or an array named without []
	IDArray                // "123[].srv": an array
	IDSubjob               // "123[4].srv": one subjob
	IDRange                // "123[1-5].srv", "123[1,3]": several subjobs
)

// JobRef is a parsed job id.
type JobRef struct {
	Seq  int64
	Kind IDKind
	// Indices are the subjobs named (IDSubjob, IDRange).
	Indices IndexSet
}

// NamesSubjobs reports whether r names subjobs (not a job or a whole
// array).
func (r JobRef) NamesSubjobs() bool { return r.Kind == IDSubjob || r.Kind == IDRange }

// IndicesOf are the indices of r that array p has, in order; none when r
// names the whole array.
func (r JobRef) IndicesOf(p *Job) []int {
	var out []int
	r.Indices.Each(func(i int) bool {
		if p.Array.Indices.Contains(i) {
			out = append(out, i)
		}
		return true
	})
	return out
}

// ParseJobRef reads any accepted job id form: "123", "123.server",
// "123[]", "123[4].server", "123[1-10:2].server", with surrounding blanks.
func ParseJobRef(id string) (JobRef, bool) {
	s := strings.TrimSpace(id)
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 || end > 18 {
		return JobRef{}, false
	}
	seq, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return JobRef{}, false
	}
	ref := JobRef{Seq: seq, Kind: IDJob}
	rest := s[end:]
	if strings.HasPrefix(rest, "[") {
		close := strings.IndexByte(rest, ']')
		if close < 0 {
			return JobRef{}, false
		}
		inside := rest[1:close]
		rest = rest[close+1:]
		if inside == "" {
			ref.Kind = IDArray
		} else {
			set, err := ParseIndexSet(inside)
			if err != nil {
				return JobRef{}, false
			}
			ref.Indices = set
			ref.Kind = IDRange
			if len(set) == 1 && set[0].Lo == set[0].Hi {
				ref.Kind = IDSubjob
			}
		}
	}
	if rest != "" && rest[0] != '.' {
		return JobRef{}, false
	}
	return ref, true
}

// FormatArrayID builds "<seq>[].<server>".
func FormatArrayID(seq int64, server string) string {
	return strconv.FormatInt(seq, 10) + "[]." + server
}

// FormatSubjobID builds "<seq>[<index>].<server>".
func FormatSubjobID(seq int64, index int, server string) string {
	return strconv.FormatInt(seq, 10) + "[" + strconv.Itoa(index) + "]." + server
}

// ArrayIndexTag in an output, error or staging path is replaced by the
// subjob's index (OpenPBS's spelling).
const ArrayIndexTag = "^array_index^"

// SubjobEnd is what is kept of a finished subjob; the rest is its
// parent's. Its allocation is kept as the exec_host and exec_vnode it
// showed (history, read back with resc.ParseAlloc when shown): the
// record's fixed array form has no room for a typed one.
type SubjobEnd struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Index     int
	Substate  int
	HasExit   bool
	Exit      int
	RunCount  int
	Stime     int64
	End       int64
	ExecHost  string
	ExecVnode string
	Comment   string
	Used      Resources
}

// EndOf keeps what a finished subjob's record needs.
func EndOf(j *Job) *SubjobEnd {
	return &SubjobEnd{
		Index: j.Index, Substate: j.Substate, HasExit: j.HasExit, Exit: j.ExitStatus, RunCount: j.RunCount,
		Stime: j.Stime, End: j.Obittime, ExecHost: j.ExecHost(), ExecVnode: j.ExecVnode(), Comment: j.Comment,
		Used: j.ResourcesUsed,
	}
}

// Subjob makes subjob index of parent j as a job of its own, for the
// server to keep (it starts, or is held or changed alone) or to show. It
// is queued, held or waiting as its parent's holds and times say.
func (j *Job) Subjob(index int, server string, now int64) *Job {
	c := j.Clone()
	c.Array = nil
	c.IsSubjob, c.Index = true, index
	c.ID = FormatSubjobID(j.Seq, index, server)
	c.Depends = nil // the parent waits for them; a subjob exists once they are met
	if j.Depends.Waiting() {
		c.Holds = AddHolds(c.Holds, string(HoldSystem))
	}
	idx := strconv.Itoa(index)
	for _, p := range []*string{&c.OutputPath, &c.ErrorPath, &c.Stagein, &c.Stageout} {
		*p = strings.ReplaceAll(*p, ArrayIndexTag, idx)
	}
	c.State, c.Substate = StateTransit, SubTransit
	c.Suspended = false
	c.Alloc, c.Stime, c.RunCount = nil, 0, 0
	c.HasExit, c.ExitStatus, c.SessionID = false, 0, 0
	c.Comment = ""
	c.ResourcesUsed, c.Estimated = nil, nil
	c.HistoryTime, c.Obittime = 0, 0
	c.Settle(now)
	return c
}

// EndedSubjob shows finished subjob e of parent j (state X).
func (j *Job) EndedSubjob(e *SubjobEnd, server string) *Job {
	c := j.Subjob(e.Index, server, j.Qtime)
	c.State, c.Substate = StateExpired, e.Substate
	c.HasExit, c.ExitStatus, c.RunCount = e.HasExit, e.Exit, e.RunCount
	c.Stime, c.Obittime, c.HistoryTime = e.Stime, e.End, e.End
	c.Alloc, c.Comment = resc.ParseAlloc(e.ExecHost, e.ExecVnode), e.Comment
	c.ResourcesUsed = e.Used
	c.Holds = j.Holds
	return c
}

// DeletedEnd is what a subjob deleted while it waited queued shows.
func DeletedEnd(index int, when int64) *SubjobEnd {
	return &SubjobEnd{Index: index, Substate: SubTerminated, HasExit: true, Exit: ExitDeleted, End: when}
}

// ExitDeleted is the Exit_status of a job deleted before it ran: 256 +
// SIGTERM, as for a running job killed by qdel, so that workflow tools
// that wait for an exit status see a failure.
const ExitDeleted = 271

// ArrayExit is a finished array's Exit_status, as OpenPBS sets it: 0 when
// every subjob that ran exited 0, 1 when one exited otherwise, 2 when one
// could not run (a negative status); subjobs deleted before they ran do
// not count.
func ArrayExit(ends []*SubjobEnd) int {
	worst := 0
	for _, e := range ends {
		switch {
		case !e.HasExit || e.RunCount == 0:
		case e.Exit < 0:
			return 2
		case e.Exit > 0:
			worst = 1
		}
	}
	return worst
}
