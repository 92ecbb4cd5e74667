package model

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// DepType is one kind of job dependency (qsub -W depend=TYPE:...).
type DepType uint8

// Dependency types, as OpenPBS names them. The after forms make this job
// wait for others; the before forms make others wait for this one (the
// server registers the reverse, an after form, on each named job); on:N
// makes this job wait until N jobs have named it with a before form.
const (
	DepAfter DepType = iota + 1
	DepAfterOK
	DepAfterNotOK
	DepAfterAny
	DepBefore
	DepBeforeOK
	DepBeforeNotOK
	DepBeforeAny
	DepOn
)

var depNames = map[DepType]string{
	DepAfter: "after", DepAfterOK: "afterok", DepAfterNotOK: "afternotok", DepAfterAny: "afterany",
	DepBefore: "before", DepBeforeOK: "beforeok", DepBeforeNotOK: "beforenotok", DepBeforeAny: "beforeany",
	DepOn: "on",
}

var depByName = func() map[string]DepType {
	m := make(map[string]DepType, len(depNames))
	for t, n := range depNames {
		m[n] = t
	}
	return m
}()

// arrayDeps are Torque's forms on a whole array: the array's parent
// starts with its first subjob and ends with its last, with Exit_status 0
// only when every subjob exited 0, so each is the plain form on the
// array's id.
var arrayDeps = map[string]DepType{
	"afterstartarray": DepAfter, "afterokarray": DepAfterOK, "afternotokarray": DepAfterNotOK, "afteranyarray": DepAfterAny,
}

// unsupportedDeps are forms OpenPBS and Torque accept that this server
// does not have: they are refused by name rather than stored and ignored.
var unsupportedDeps = map[string]string{
	"beforestartarray": "before forms on job arrays", "beforeokarray": "before forms on job arrays",
	"beforenotokarray": "before forms on job arrays", "beforeanyarray": "before forms on job arrays",
	"synccount": "synchronised starts", "syncwith": "synchronised starts",
}

func (t DepType) String() string { return depNames[t] }

// IsAfter reports whether t makes its job wait for the jobs it names.
func (t DepType) IsAfter() bool { return t >= DepAfter && t <= DepAfterAny }

// IsBefore reports whether t makes the named jobs wait for its job.
func (t DepType) IsBefore() bool { return t >= DepBefore && t <= DepBeforeAny }

// Reverse is the after form registered on a job named by a before form.
func (t DepType) Reverse() DepType {
	if t.IsBefore() {
		return t - (DepBefore - DepAfter)
	}
	return t
}

// DepJob is one job a dependency names, by sequence number (ids of this
// server only), and whether its condition has been met. Array is set
// when it was named as an array (12[], or a Torque *array form), so that
// it is shown as it was given.
type DepJob struct {
	Seq   int64
	Met   bool
	Array bool
}

// Dependency is one TYPE:arg[:arg...] element.
type Dependency struct {
	Type  DepType
	Count int // on:N only: registrations still awaited
	Jobs  []DepJob
}

// Depends is a job's dependencies (the depend attribute), in the order
// given; nil when it has none.
type Depends []Dependency

// ParseDepend parses a depend value "type:arg[:arg...][,type:...]". An
// empty value means no dependencies.
func ParseDepend(v string) (Depends, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	var out Depends
	for _, item := range strings.Split(v, ",") {
		typ, args, _ := strings.Cut(strings.TrimSpace(item), ":")
		typ = strings.ToLower(strings.TrimSpace(typ))
		if what, ok := unsupportedDeps[typ]; ok {
			return nil, proto.Errorf(proto.PBSE_NOSUP, "(depend=%s: %s are not supported)", typ, what)
		}
		t, ok := depByName[typ]
		at, arrayForm := arrayDeps[typ]
		if arrayForm {
			t, ok = at, true
		}
		if !ok {
			return nil, proto.Errorf(proto.PBSE_BADDEPEND, "(unknown type %q in %q)", typ, v)
		}
		if args == "" {
			return nil, proto.Errorf(proto.PBSE_BADDEPEND, "(%s names no job)", typ)
		}
		d := Dependency{Type: t}
		if t == DepOn {
			n, err := strconv.Atoi(strings.TrimSpace(args))
			if err != nil || n < 0 || n > 1<<20 {
				return nil, proto.Errorf(proto.PBSE_BADDEPEND, "(on:%s: want a count)", args)
			}
			d.Count = n
			out = append(out, d)
			continue
		}
		for _, id := range strings.Split(args, ":") {
			// "12.srv@srv", as qstat -f shows it, is accepted back.
			id, _, _ = strings.Cut(id, "@")
			ref, ok := ParseJobRef(id)
			if !ok {
				return nil, proto.Errorf(proto.PBSE_BADDEPEND, "(%s:%s: %q is not a job id)", typ, args, id)
			}
			if ref.Kind == IDSubjob || ref.Kind == IDRange {
				return nil, proto.Errorf(proto.PBSE_NOSUP, "(%s:%s: a dependency names a job or a whole array, %d[], not its subjobs)", typ, args, ref.Seq)
			}
			d.Jobs = append(d.Jobs, DepJob{Seq: ref.Seq, Array: arrayForm || ref.Kind == IDArray})
		}
		out = append(out, d)
	}
	return out, nil
}

// Format renders the dependencies as OpenPBS's qstat -f does:
// "afterok:12.srv@srv:13.srv@srv,on:2". server is this server's name.
func (d Depends) Format(server string) string {
	var b strings.Builder
	for i, dep := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(dep.Type.String())
		if dep.Type == DepOn {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(dep.Count))
			continue
		}
		for _, p := range dep.Jobs {
			b.WriteByte(':')
			id := FormatJobID(p.Seq, server)
			if p.Array {
				id = FormatArrayID(p.Seq, server)
			}
			b.WriteString(id)
			b.WriteByte('@')
			b.WriteString(server)
		}
	}
	return b.String()
}

// Waiting reports whether the dependencies still hold their job: an
// after form with a job not yet met, or an on count not yet reached.
func (d Depends) Waiting() bool {
	for _, dep := range d {
		if dep.Type == DepOn && dep.Count > 0 {
			return true
		}
		if dep.Type.IsAfter() {
			for _, p := range dep.Jobs {
				if !p.Met {
					return true
				}
			}
		}
	}
	return false
}

// HasBefore reports whether any element is a before form.
func (d Depends) HasBefore() bool {
	for _, dep := range d {
		if dep.Type.IsBefore() {
			return true
		}
	}
	return false
}

// Clone returns a deep copy.
func (d Depends) Clone() Depends {
	if d == nil {
		return nil
	}
	out := make(Depends, len(d))
	for i, dep := range d {
		out[i] = dep
		out[i].Jobs = append([]DepJob(nil), dep.Jobs...)
	}
	return out
}

// DepVerdict is what a parent's state means for one dependency on it.
type DepVerdict uint8

// Verdicts.
const (
	DepPending DepVerdict = iota // not decided yet
	DepMet                       // the condition holds
	DepNever                     // the condition can never hold
)

// Judge says what parent's state means for a dependency of after form t
// on it. A job deleted before it ran never began (after can never be
// met); qdel counts as a failure, as in OpenPBS (its Exit_status is not 0).
func Judge(t DepType, parent *Job) DepVerdict {
	began := parent.Active() || parent.Stime != 0
	if !parent.Finished() {
		if t == DepAfter && began {
			return DepMet
		}
		return DepPending
	}
	ok := parent.HasExit && parent.ExitStatus == 0
	switch t {
	case DepAfter:
		if began {
			return DepMet
		}
	case DepAfterOK:
		if ok {
			return DepMet
		}
	case DepAfterNotOK:
		if !ok {
			return DepMet
		}
	case DepAfterAny:
		return DepMet
	}
	return DepNever
}

// Resolve applies parent's state to every after form of j that names it:
// met entries are marked, and never reports a condition that cannot hold
// any more (j must then be deleted).
func (j *Job) Resolve(parent *Job) (changed, never bool) {
	for i := range j.Depends {
		dep := &j.Depends[i]
		if !dep.Type.IsAfter() {
			continue
		}
		for k := range dep.Jobs {
			p := &dep.Jobs[k]
			if p.Seq != parent.Seq || p.Met {
				continue
			}
			switch Judge(dep.Type, parent) {
			case DepMet:
				p.Met, changed = true, true
			case DepNever:
				never = true
			}
		}
	}
	return changed, never
}

// ReleaseDepends marks every dependency of j met (a manager's qrls -h s),
// so that it waits for no job any more.
func (j *Job) ReleaseDepends() {
	for i := range j.Depends {
		dep := &j.Depends[i]
		if dep.Type == DepOn {
			dep.Count = 0
		}
		if dep.Type.IsAfter() {
			for k := range dep.Jobs {
				dep.Jobs[k].Met = true
			}
		}
	}
}

// Register records on j that child named it with before form t: j gets
// the reverse after form on child, and its on count, if any, drops.
func (j *Job) Register(t DepType, child int64) {
	rt := t.Reverse()
	for i := range j.Depends {
		if j.Depends[i].Type == DepOn && j.Depends[i].Count > 0 {
			j.Depends[i].Count--
			break
		}
	}
	for i := range j.Depends {
		if j.Depends[i].Type == rt {
			j.Depends[i].Jobs = append(j.Depends[i].Jobs, DepJob{Seq: child})
			return
		}
	}
	j.Depends = append(j.Depends, Dependency{Type: rt, Jobs: []DepJob{{Seq: child}}})
}

// Parents lists the jobs j still waits for (unmet after forms).
func (j *Job) Parents() []int64 {
	var out []int64
	for _, dep := range j.Depends {
		if !dep.Type.IsAfter() {
			continue
		}
		for _, p := range dep.Jobs {
			if !p.Met {
				out = append(out, p.Seq)
			}
		}
	}
	return out
}
