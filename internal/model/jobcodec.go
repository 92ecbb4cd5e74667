package model

import (
	"fmt"
	"slices"

	"github.com/gopbs/gopbs/proto"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/gopbs/gopbs/internal/msgp"
	"github.com/gopbs/gopbs/resc"
)

// Jobs are stored and compared by the hundred thousand, so Job has a
// hand-written msgpack form: an array of its fields in the fixed order of
// jobFields. The list is append-only: a new field goes at the end, so a
// record written before it decodes with the field zero, and a record from
// a newer version decodes with the unknown trailing fields skipped.

// A field appends its encoding (a commit of tens of thousands of job
// starts encodes every job: msgp's appends cost a fraction of msgpack's
// encoder) and decodes it with msgpack's decoder.
type jobField struct {
	app func([]byte, *Job) []byte
	dec func(*msgpack.Decoder, *Job) error
}

func fStr(f func(*Job) *string) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendString(b, *f(j)) },
		func(d *msgpack.Decoder, j *Job) (err error) { *f(j), err = d.DecodeString(); return },
	}
}

func fI64(f func(*Job) *int64) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendInt(b, *f(j)) },
		func(d *msgpack.Decoder, j *Job) (err error) { *f(j), err = d.DecodeInt64(); return },
	}
}

func fInt(f func(*Job) *int) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendInt(b, int64(*f(j))) },
		func(d *msgpack.Decoder, j *Job) error {
			v, err := d.DecodeInt64()
			*f(j) = int(v)
			return err
		},
	}
}

func fU32(f func(*Job) *uint32) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendUint(b, uint64(*f(j))) },
		func(d *msgpack.Decoder, j *Job) error {
			v, err := d.DecodeUint32()
			*f(j) = v
			return err
		},
	}
}

func fBool(f func(*Job) *bool) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendBool(b, *f(j)) },
		func(d *msgpack.Decoder, j *Job) (err error) { *f(j), err = d.DecodeBool(); return },
	}
}

func fRes(f func(*Job) *Resources) jobField {
	return jobField{
		func(b []byte, j *Job) []byte {
			r := *f(j)
			b = msgp.AppendArrayLen(b, 2*len(r))
			for _, p := range r {
				b = msgp.AppendString(msgp.AppendString(b, p.Name), p.Value)
			}
			return b
		},
		func(d *msgpack.Decoder, j *Job) error {
			n, err := d.DecodeArrayLen()
			if err != nil {
				return err
			}
			if n <= 0 {
				*f(j) = nil
				return nil
			}
			if n%2 != 0 || n > 1<<16 {
				return fmt.Errorf("resource list of %d strings", n)
			}
			r := make(Resources, n/2)
			for i := range r {
				if r[i].Name, err = d.DecodeString(); err != nil {
					return err
				}
				if r[i].Value, err = d.DecodeString(); err != nil {
					return err
				}
			}
			*f(j) = r
			return nil
		},
	}
}

// retiredJobFields counts slots of jobFields that no Job field uses any
// more (kept so that later fields keep their places).
const retiredJobFields = 3

// jobFields is the stored order of Job's fields. Append only.
var jobFields = []jobField{
	fI64(func(j *Job) *int64 { return &j.Seq }),
	fStr(func(j *Job) *string { return &j.ID }),
	fStr(func(j *Job) *string { return &j.Name }),
	fStr(func(j *Job) *string { return &j.Owner }),
	fStr(func(j *Job) *string { return &j.EUser }),
	fStr(func(j *Job) *string { return &j.EGroup }),
	fU32(func(j *Job) *uint32 { return &j.UID }),
	fU32(func(j *Job) *uint32 { return &j.GID }),
	{
		func(b []byte, j *Job) []byte { return msgp.AppendUint(b, uint64(j.State)) },
		func(d *msgpack.Decoder, j *Job) error {
			v, err := d.DecodeUint8()
			j.State = JobState(v)
			return err
		},
	},
	fInt(func(j *Job) *int { return &j.Substate }),
	fBool(func(j *Job) *bool { return &j.Suspended }),
	fStr(func(j *Job) *string { return &j.Queue }),
	fStr(func(j *Job) *string { return &j.QueueType }),
	fI64(func(j *Job) *int64 { return &j.QueueRank }),
	fStr(func(j *Job) *string { return &j.Account }),
	fStr(func(j *Job) *string { return &j.Checkpoint }),
	// Once the depend text, always empty (depend was refused); kept so
	// that the fields after it keep their places. Depends is at the end.
	{
		func(b []byte, j *Job) []byte { return msgp.AppendString(b, "") },
		func(d *msgpack.Decoder, j *Job) error { _, err := d.DecodeString(); return err },
	},
	fStr(func(j *Job) *string { return &j.ErrorPath }),
	fStr(func(j *Job) *string { return &j.OutputPath }),
	fStr(func(j *Job) *string { return &j.JoinPath }),
	fStr(func(j *Job) *string { return &j.KeepFiles }),
	// exec_host and exec_vnode as text: no longer read at version 8
	// (Alloc is the truth), read into Alloc from an older record, and
	// still written, rendered from Alloc, so that an older member of a
	// replicated group, which applies the log's records whatever their
	// version, still sees where its jobs run during a rolling upgrade.
	fLegacy(func(j *Job) *string { return &j.parsed.legacyHost }, (*Job).ExecHost),
	fLegacy(func(j *Job) *string { return &j.parsed.legacyVnode }, (*Job).ExecVnode),
	fStr(func(j *Job) *string { return &j.Holds }),
	fStr(func(j *Job) *string { return &j.MailPoints }),
	fStr(func(j *Job) *string { return &j.MailUsers }),
	fInt(func(j *Job) *int { return &j.Priority }),
	fBool(func(j *Job) *bool { return &j.Rerunable }),
	fStr(func(j *Job) *string { return &j.ShellPathList }),
	fStr(func(j *Job) *string { return &j.Jobdir }),
	fStr(func(j *Job) *string { return &j.VariableList }),
	fStr(func(j *Job) *string { return &j.Comment }),
	fInt(func(j *Job) *int { return &j.RunCount }),
	fBool(func(j *Job) *bool { return &j.HasExit }),
	fInt(func(j *Job) *int { return &j.ExitStatus }),
	fInt(func(j *Job) *int { return &j.SessionID }),
	fStr(func(j *Job) *string { return &j.SubmitArgs }),
	fStr(func(j *Job) *string { return &j.UserList }),
	fStr(func(j *Job) *string { return &j.GroupList }),
	fStr(func(j *Job) *string { return &j.Project }),
	fStr(func(j *Job) *string { return &j.SubmitHost }),
	fStr(func(j *Job) *string { return &j.InitWorkDir }),
	fStr(func(j *Job) *string { return &j.Sandbox }),
	fStr(func(j *Job) *string { return &j.Stagein }),
	fStr(func(j *Job) *string { return &j.Stageout }),
	fI64(func(j *Job) *int64 { return &j.Ctime }),
	fI64(func(j *Job) *int64 { return &j.Qtime }),
	fI64(func(j *Job) *int64 { return &j.Mtime }),
	fI64(func(j *Job) *int64 { return &j.Etime }),
	fI64(func(j *Job) *int64 { return &j.Stime }),
	fI64(func(j *Job) *int64 { return &j.ExecutionTime }),
	fI64(func(j *Job) *int64 { return &j.Obittime }),
	fI64(func(j *Job) *int64 { return &j.HoldUntil }),
	fI64(func(j *Job) *int64 { return &j.HistoryTime }),
	fRes(func(j *Job) *Resources { return &j.ResourceList }),
	fRes(func(j *Job) *Resources { return &j.ResourcesUsed }),
	fRes(func(j *Job) *Resources { return &j.Extra }),
	{
		func(b []byte, j *Job) []byte { return msgp.AppendUint(b, j.Version) },
		func(d *msgpack.Decoder, j *Job) (err error) { j.Version, err = d.DecodeUint64(); return },
	},
	fRes(func(j *Job) *Resources { return &j.Estimated }),
	fStr(func(j *Job) *string { return &j.StageNode }),
	fInt(func(j *Job) *int { return &j.StagePhase }),
	fDepends,
	fArray,
	fBool(func(j *Job) *bool { return &j.IsSubjob }),
	fInt(func(j *Job) *int { return &j.Index }),
	fBool(func(j *Job) *bool { return &j.Purge }),
	fStr(func(j *Job) *string { return &j.Umask }),
	fStr(func(j *Job) *string { return &j.JobArgs }),
	fStr(func(j *Job) *string { return &j.RemoveFiles }),
	fBool(func(j *Job) *bool { return &j.Block }),
	fStr(func(j *Job) *string { return &j.JobType }),
	fBool(func(j *Job) *bool { return &j.HasKillDelay }),
	fI64(func(j *Job) *int64 { return &j.KillDelay }),
	fStr(func(j *Job) *string { return &j.DeleteAskedBy }),
	fInteractive,
	fStr(func(j *Job) *string { return &j.ExecGPUs }),
	fStr(func(j *Job) *string { return &j.ResizeSignal }),
	{
		// [nodes, give back], or (stores before version 7) its text form.
		func(b []byte, j *Job) []byte {
			r := j.Releasing
			b = msgp.AppendArrayLen(b, 2)
			b = msgp.AppendArrayLen(b, len(r.Nodes))
			for _, n := range r.Nodes {
				b = msgp.AppendString(b, n)
			}
			return msgp.AppendBool(b, r.GiveBack)
		},
		func(d *msgpack.Decoder, j *Job) error {
			c, err := d.PeekCode()
			if err != nil {
				return err
			}
			if msgpcode.IsString(c) {
				text, err := d.DecodeString()
				j.Releasing = parseRelease(text)
				return err
			}
			if n, err := d.DecodeArrayLen(); err != nil || n != 2 {
				return fmt.Errorf("Releasing: want [nodes, give back], got %d items (%v)", n, err)
			}
			n, err := d.DecodeArrayLen()
			if err != nil {
				return err
			}
			var r Release
			for range max(n, 0) {
				node, err := d.DecodeString()
				if err != nil {
					return err
				}
				r.Nodes = append(r.Nodes, node)
			}
			r.GiveBack, err = d.DecodeBool()
			j.Releasing = r
			return err
		},
	},
	fAccrual,
	fBool(func(j *Job) *bool { return &j.LimitBlocked }),
	fAlloc,
}

// fLegacy is a text field of older versions: written as render makes it,
// read where an older record has it.
func fLegacy(f func(*Job) *string, render func(*Job) string) jobField {
	return jobField{
		func(b []byte, j *Job) []byte { return msgp.AppendString(b, render(j)) },
		func(d *msgpack.Decoder, j *Job) (err error) { *f(j), err = d.DecodeString(); return },
	}
}

// fAlloc is the allocation (storage version 8): an array of chunks, each
// [vnode, host, ncpus, [name, value, name, value...]].
var fAlloc = jobField{
	func(b []byte, j *Job) []byte {
		b = msgp.AppendArrayLen(b, len(j.Alloc))
		for _, h := range j.Alloc {
			b = msgp.AppendArrayLen(b, 4)
			b = msgp.AppendString(b, h.Vnode)
			b = msgp.AppendString(b, h.Host)
			b = msgp.AppendInt(b, h.Ncpus)
			b = msgp.AppendArrayLen(b, 2*len(h.Resources))
			for _, p := range h.Resources {
				b = msgp.AppendString(b, p.Name)
				b = msgp.AppendString(b, p.Value)
			}
		}
		return b
	},
	func(d *msgpack.Decoder, j *Job) error {
		n, err := d.DecodeArrayLen()
		if err != nil || n <= 0 {
			return err
		}
		a := make(resc.Alloc, 0, min(n, 1<<10))
		for range n {
			fields, err := d.DecodeArrayLen()
			if err != nil || fields < 4 {
				return fmt.Errorf("Alloc: want [vnode, host, ncpus, resources], got %d items (%v)", fields, err)
			}
			var h resc.Held
			if h.Vnode, err = d.DecodeString(); err != nil {
				return err
			}
			if h.Host, err = d.DecodeString(); err != nil {
				return err
			}
			if h.Ncpus, err = d.DecodeInt64(); err != nil {
				return err
			}
			m, err := d.DecodeArrayLen()
			if err != nil || m%2 != 0 {
				return fmt.Errorf("Alloc: resources of %s: want name, value pairs, got %d items (%v)", h.Vnode, m, err)
			}
			for i := 0; i < m; i += 2 {
				var p resc.Pair
				if p.Name, err = d.DecodeString(); err != nil {
					return err
				}
				if p.Value, err = d.DecodeString(); err != nil {
					return err
				}
				h.Resources = append(h.Resources, p)
			}
			for range fields - 4 { // a newer version's
				if err := d.Skip(); err != nil {
					return err
				}
			}
			a = append(a, h)
		}
		j.Alloc = a
		return nil
	},
}

// fAccrual stores Accrual as [type, eligible, since].
var fAccrual = jobField{
	func(b []byte, j *Job) []byte {
		b = msgp.AppendArrayLen(b, 3)
		b = msgp.AppendUint(b, uint64(j.Accrual.Type))
		b = msgp.AppendInt(b, j.Accrual.Eligible)
		return msgp.AppendInt(b, j.Accrual.Since)
	},
	func(d *msgpack.Decoder, j *Job) error {
		n, err := d.DecodeArrayLen()
		if err != nil {
			return err
		}
		if n != 3 {
			return fmt.Errorf("accrual of %d fields", n)
		}
		t, err := d.DecodeUint8()
		if err != nil {
			return err
		}
		a := Accrual{Type: AccrueType(t)}
		if a.Eligible, err = d.DecodeInt64(); err != nil {
			return err
		}
		if a.Since, err = d.DecodeInt64(); err != nil {
			return err
		}
		j.Accrual = a
		return nil
	},
}

// fInteractive stores Interactive as [port, cookie], nil for a batch
// job; the host is the submission host's, filled in at each start.
var fInteractive = jobField{
	func(b []byte, j *Job) []byte {
		if j.Interactive == nil {
			return msgp.AppendNil(b)
		}
		b = msgp.AppendArrayLen(b, 2)
		b = msgp.AppendInt(b, int64(j.Interactive.Port))
		return msgp.AppendBytes(b, j.Interactive.Cookie)
	},
	func(d *msgpack.Decoder, j *Job) error {
		n, err := d.DecodeArrayLen()
		if err != nil || n < 0 {
			j.Interactive = nil
			return err
		}
		if n != 2 {
			return fmt.Errorf("interactive of %d fields", n)
		}
		s := &proto.InteractiveSession{}
		if s.Port, err = d.DecodeInt(); err != nil {
			return err
		}
		if s.Cookie, err = d.DecodeBytes(); err != nil {
			return err
		}
		j.Interactive = s
		return nil
	},
}

// fArray stores a parent's Array as [indices, max_run, deleted] with
// each index set as [lo, hi, step, ...]; nil for a job that is not an
// array. The rest of Array is rebuilt from the subjobs' records at load.
var fArray = jobField{
	func(b []byte, j *Job) []byte {
		if j.Array == nil {
			return msgp.AppendNil(b)
		}
		b = msgp.AppendArrayLen(b, 3)
		b = appendIndexSet(b, j.Array.Indices)
		b = msgp.AppendInt(b, int64(j.Array.MaxRun))
		return appendIndexSet(b, j.Array.Deleted)
	},
	func(d *msgpack.Decoder, j *Job) error {
		n, err := d.DecodeArrayLen()
		if err != nil || n < 0 {
			j.Array = nil
			return err
		}
		if n != 3 {
			return fmt.Errorf("array of %d fields", n)
		}
		a := &Array{}
		if a.Indices, err = decodeIndexSet(d); err != nil {
			return err
		}
		if a.MaxRun, err = d.DecodeInt(); err != nil {
			return err
		}
		if a.Deleted, err = decodeIndexSet(d); err != nil {
			return err
		}
		a.Queued = a.Indices.Clone()
		j.Array = a
		return nil
	},
}

func appendIndexSet(b []byte, set IndexSet) []byte {
	b = msgp.AppendArrayLen(b, 3*len(set))
	for _, r := range set {
		b = msgp.AppendInt(msgp.AppendInt(msgp.AppendInt(b, int64(r.Lo)), int64(r.Hi)), int64(r.Step))
	}
	return b
}

// decodeIndexSet reads a set, checking that it is one the server made:
// ranges in increasing order, each Hi on its step.
func decodeIndexSet(d *msgpack.Decoder) (IndexSet, error) {
	m, err := d.DecodeArrayLen()
	if err != nil || m <= 0 {
		return nil, err
	}
	if m%3 != 0 || m > 3<<20 {
		return nil, fmt.Errorf("array index list of %d numbers", m)
	}
	set := make(IndexSet, m/3)
	for k := range set {
		r := &set[k]
		for _, f := range []*int{&r.Lo, &r.Hi, &r.Step} {
			if *f, err = d.DecodeInt(); err != nil {
				return nil, err
			}
		}
		if r.Step < 1 || r.Lo < 0 || r.Hi < r.Lo || (r.Hi-r.Lo)%r.Step != 0 || k > 0 && r.Lo <= set[k-1].Hi {
			return nil, fmt.Errorf("array index range %d-%d:%d is not valid", r.Lo, r.Hi, r.Step)
		}
	}
	return set, nil
}

// fDepends stores Depends as [type, count, [seq, met, seq, met, ...]]
// per dependency, and a fourth item, [array, array, ...] (one per job),
// when any job of it was named as an array (storage version 3; records
// without it read as before).
var fDepends = jobField{
	func(b []byte, j *Job) []byte {
		b = msgp.AppendArrayLen(b, len(j.Depends))
		for _, d := range j.Depends {
			arrays := slices.ContainsFunc(d.Jobs, func(p DepJob) bool { return p.Array })
			if arrays {
				b = msgp.AppendArrayLen(b, 4)
			} else {
				b = msgp.AppendArrayLen(b, 3)
			}
			b = msgp.AppendUint(b, uint64(d.Type))
			b = msgp.AppendInt(b, int64(d.Count))
			b = msgp.AppendArrayLen(b, 2*len(d.Jobs))
			for _, p := range d.Jobs {
				b = msgp.AppendBool(msgp.AppendInt(b, p.Seq), p.Met)
			}
			if arrays {
				b = msgp.AppendArrayLen(b, len(d.Jobs))
				for _, p := range d.Jobs {
					b = msgp.AppendBool(b, p.Array)
				}
			}
		}
		return b
	},
	func(d *msgpack.Decoder, j *Job) error {
		n, err := d.DecodeArrayLen()
		if err != nil || n <= 0 {
			j.Depends = nil
			return err
		}
		if n > 1<<16 {
			return fmt.Errorf("depend list of %d entries", n)
		}
		j.Depends = make(Depends, n)
		for i := range j.Depends {
			dep := &j.Depends[i]
			fields, err := d.DecodeArrayLen()
			if err != nil || fields != 3 && fields != 4 {
				return fmt.Errorf("dependency %d: %d fields, %v", i, fields, err)
			}
			t, err := d.DecodeUint8()
			if err != nil {
				return err
			}
			dep.Type = DepType(t)
			if dep.Count, err = d.DecodeInt(); err != nil {
				return err
			}
			m, err := d.DecodeArrayLen()
			if err != nil {
				return err
			}
			if m%2 != 0 || m > 1<<20 {
				return fmt.Errorf("dependency %d: job list of %d items", i, m)
			}
			if m > 0 {
				dep.Jobs = make([]DepJob, m/2)
			}
			for k := range dep.Jobs {
				if dep.Jobs[k].Seq, err = d.DecodeInt64(); err != nil {
					return err
				}
				if dep.Jobs[k].Met, err = d.DecodeBool(); err != nil {
					return err
				}
			}
			if fields == 4 {
				if a, err := d.DecodeArrayLen(); err != nil || a != len(dep.Jobs) {
					return fmt.Errorf("dependency %d: %d array marks for %d jobs, %v", i, a, len(dep.Jobs), err)
				}
				for k := range dep.Jobs {
					if dep.Jobs[k].Array, err = d.DecodeBool(); err != nil {
						return err
					}
				}
			}
		}
		return nil
	},
}

var (
	_ msgpack.CustomEncoder = (*Job)(nil)
	_ msgpack.CustomDecoder = (*Job)(nil)
)

// EncodeMsgpack writes the job as the array of jobFields.
func (j *Job) EncodeMsgpack(e *msgpack.Encoder) error {
	_, err := e.Writer().Write(j.AppendMsgpack(nil))
	return err
}

// AppendMsgpack appends the job's record, the array of jobFields.
func (j *Job) AppendMsgpack(b []byte) []byte {
	b = msgp.AppendArrayLen(b, len(jobFields))
	for i := range jobFields {
		b = jobFields[i].app(b, j)
	}
	return b
}

// DecodeMsgpack reads a job written by this or another version.
func (j *Job) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("job record is nil")
	}
	for i := 0; i < n; i++ {
		if i < len(jobFields) {
			if err := jobFields[i].dec(d, j); err != nil {
				return fmt.Errorf("job field %d: %w", i, err)
			}
			continue
		}
		if err := d.Skip(); err != nil {
			return err
		}
	}
	migrateExtra(j)
	if d := &j.parsed; d.legacyHost != "" || d.legacyVnode != "" {
		if j.Alloc == nil {
			j.Alloc = resc.ParseAlloc(d.legacyHost, d.legacyVnode)
		}
		d.legacyHost, d.legacyVnode = "", ""
	}
	return nil
}

// migrateExtra moves attributes that earlier versions kept in Extra
// without acting on them into the fields that now carry them, so that a
// job submitted before the upgrade gets its umask, arguments and file
// removal. A value those checks refuse is dropped.
func migrateExtra(j *Job) {
	for _, name := range []string{proto.AttrUmask, proto.AttrJobArguments, proto.AttrRemoveFiles, proto.AttrBlock} {
		v, ok := j.Extra.Get(name)
		if !ok {
			continue
		}
		j.Extra = j.Extra.Delete(name)
		jobAttrs[jobAttrIndex[name]].set(j, "", v)
	}
}
