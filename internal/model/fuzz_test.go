package model

import (
	"bytes"
	"math/big"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/msgp"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// sampleJob is a job as the server stores it, for seeds.
func sampleJob() *Job {
	return &Job{
		Seq: 7, ID: "7.srv", Name: "my job", Owner: "alice@n1", EUser: "alice", EGroup: "users",
		UID: 1000, GID: 100, State: StateRunning, Substate: 42, Queue: "workq", QueueType: "Execution",
		QueueRank: 12, Holds: "uo", JoinPath: "oe", KeepFiles: "n", Alloc: resc.ParseAlloc("n1/0*2", "(n1:ncpus=2)"),
		Priority: -5, Rerunable: true, VariableList: "PBS_O_HOST=n1,A=b\\,c",
		Comment: "Job run at Mon", RunCount: 2, HasExit: true, ExitStatus: -11, SessionID: 4242,
		Ctime: 1700000000, Qtime: 1700000001, Stime: 1700000005, ExecutionTime: -1, HoldUntil: 1 << 40,
		ResourceList:  Resources{{Name: "ncpus", Value: "2"}, {Name: "walltime", Value: "01:00:00"}},
		ResourcesUsed: Resources{{Name: "cput", Value: "00:00:01"}},
		Umask:         "022", JobArgs: "a b", RemoveFiles: "oe", Block: true,
		Extra:   Resources{{Name: "tolerate_node_failures", Value: "none"}},
		Version: 1<<64 - 1,
	}
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// FuzzJobRecord decodes arbitrary bytes as a stored job record, as the
// store's Load does. A record either fails with a non-empty error or gives
// a job that re-encodes and decodes to the same job, with the same bytes,
// and that a newer version's record (extra trailing fields) of it also
// decodes to. Decoding allocates at most a few MB beyond the record's
// size: the codec caps a resource list at 65536 strings and the msgpack
// library reads a string of a hostile length in 1 MB steps. (A fresh
// decoder is used for that measure: msgpack.Unmarshal's pooled decoders
// keep their read buffer, which a hostile length grows from one call to
// the next; Load stops at the first bad record, so that cannot build up.)
func FuzzJobRecord(f *testing.F) {
	rec, err := msgpack.Marshal(sampleJob())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rec)
	f.Add(rec[:len(rec)/2])
	if arr, err := msgpack.Marshal(sampleArray()); err == nil {
		f.Add(arr)
	}
	old, _ := msgpack.Marshal(&Job{Seq: 1, ID: "1.s"})
	f.Add(append([]byte{0x93}, old[3:6]...)) // a record of an older version: 3 fields
	f.Add([]byte{0xc0})
	f.Add([]byte{0x9f, 0x01, 0xa0})
	f.Add([]byte{0xdc, 0x00, 0x40, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("\xdc000\xc60002")) // a job id of 808 MB
	f.Fuzz(func(t *testing.T, record []byte) {
		var fresh Job
		before := totalAlloc()
		msgpack.NewDecoder(bytes.NewReader(record)).Decode(&fresh)
		if got := totalAlloc() - before; got > 6<<20+64*uint64(len(record)) {
			t.Fatalf("decoding a %d-byte record allocated %d bytes", len(record), got)
		}
		var j Job
		err := msgpack.Unmarshal(record, &j)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		enc, err := msgpack.Marshal(&j)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", j, err)
		}
		var back Job
		if err := msgpack.Unmarshal(enc, &back); err != nil {
			t.Fatalf("re-encoded job does not decode: %v\n% x", err, enc)
		}
		if !reflect.DeepEqual(back, j) {
			t.Fatalf("job changed over a round trip:\nfirst  %+v\nsecond %+v", j, back)
		}
		if again, _ := msgpack.Marshal(&back); !bytes.Equal(again, enc) {
			t.Fatalf("encoding not stable:\n% x\n% x", enc, again)
		}

		// The same job as a newer version would store it: two more fields.
		var b bytes.Buffer
		rec := msgp.AppendArrayLen(nil, len(jobFields)+2)
		for i := range jobFields {
			rec = jobFields[i].app(rec, &j)
		}
		b.Write(rec)
		e := msgpack.NewEncoder(&b)
		e.EncodeString(j.Name)
		e.Encode(map[string][]int{"x": {1, 2}})
		var newer Job
		if err := msgpack.Unmarshal(b.Bytes(), &newer); err != nil {
			t.Fatalf("record with extra fields does not decode: %v", err)
		}
		if !reflect.DeepEqual(newer, j) {
			t.Fatalf("extra fields changed the job:\nwant %+v\ngot  %+v", j, newer)
		}
	})
}

// FuzzObjectRecord decodes arbitrary bytes as a stored server, queue or
// node record: an error, or an object that re-encodes and decodes to the
// same object.
func FuzzObjectRecord(f *testing.F) {
	for _, o := range []*Object{DefaultServer("srv", "root@n1"), DefaultQueue(), NewObject("n1"), {Name: "nil maps"}} {
		b, err := msgpack.Marshal(o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa5, 'A', 't', 't', 'r', 's', 0x81, 0xa0, 0xc0})
	f.Add([]byte{0x82, 0xa1, 'X', 0x92, 0x01, 0x90, 0xa4, 'N', 'a', 'm', 'e', 0xa1, 'q'})
	f.Fuzz(func(t *testing.T, record []byte) {
		var o Object
		if err := msgpack.Unmarshal(record, &o); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		var b bytes.Buffer
		e := msgpack.NewEncoder(&b)
		e.SetSortMapKeys(true)
		if err := e.Encode(&o); err != nil {
			t.Fatalf("re-encode %+v: %v", o, err)
		}
		var back Object
		if err := msgpack.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("re-encoded object does not decode: %v", err)
		}
		if !reflect.DeepEqual(back, o) {
			t.Fatalf("object changed over a round trip:\nfirst  %+v\nsecond %+v", o, back)
		}
	})
}

// objectDefs is every attribute definition of the server, queue and node
// tables, with its table.
var objectDefs = func() (out []struct {
	table *DefTable
	def   Def
}) {
	for _, t := range []*DefTable{ServerDefs, QueueDefs, NodeDefs} {
		for _, d := range t.Defs {
			out = append(out, struct {
				table *DefTable
				def   Def
			}{t, d})
		}
	}
	return out
}()

// checkCanonical fails unless value is what Canonical makes of itself: the
// form stored values must have.
func checkCanonical(t *testing.T, d Def, resource, value, what string) {
	t.Helper()
	full := (&proto.Attr{Name: d.Name, Resource: resource}).FullName()
	again, err := d.Canonical(resource, value)
	if err != nil {
		t.Fatalf("%s: %s = %q is refused when given again: %v", what, full, value, err)
	}
	if again != value {
		t.Fatalf("%s: %s = %q is not canonical: it becomes %q", what, full, value, again)
	}
}

// FuzzObjectAttrs checks how qmgr values are validated: Def.Canonical of
// any value either fails with a PBSE error that has a message, or returns
// a fixed point; and after DefTable.Apply (=, +=, -=, unset) succeeds,
// every value stored on the object is canonical for its attribute.
func FuzzObjectAttrs(f *testing.F) {
	index := func(name string) uint16 {
		for i, od := range objectDefs {
			if od.def.Name == name {
				return uint16(i)
			}
		}
		f.Fatalf("no attribute %s", name)
		return 0
	}
	for _, s := range []struct {
		attr, resource, first string
		op                    uint8
		second                string
	}{
		{proto.AttrScheduling, "", "t", uint8(proto.OpSet), "False"},
		{proto.AttrSchedulerIteration, "", "600", uint8(proto.OpDecr), "10"},
		{proto.AttrMaxRunning, "", "10", uint8(proto.OpIncr), " 5"},
		// -= and += once bypassed the attribute's check and overflowed.
		{proto.AttrSchedulerIteration, "", "600", uint8(proto.OpDecr), "600"},
		{proto.AttrMaxUserQueuable, "", "", uint8(proto.OpDecr), "1"},
		{proto.AttrMaxRunning, "", "9223372036854775807", uint8(proto.OpIncr), "1"},
		{proto.AttrLogEvents, "", "-9223372036854775808", uint8(proto.OpDecr), "1"},
		{proto.AttrLogEvents, "", "1", uint8(proto.OpDecr), "-9223372036854775808"},
		{proto.AttrResourcesAvail, "mem", "8388607tb", uint8(proto.OpIncr), "8388607tb"},
		{proto.AttrResourcesMax, "walltime", "2562047788015215:00:00", uint8(proto.OpIncr), "1:00:00"},
		{proto.AttrManagers, "", "root@n1, alice@*", uint8(proto.OpDecr), "root@n1"},
		{proto.AttrResourcesAvail, "mem", "1GB", uint8(proto.OpIncr), "512mb"},
		{proto.AttrResourcesDefault, "walltime", "1:00", uint8(proto.OpDecr), "2:00:00"},
		{proto.AttrJobHistoryDuration, "", "336:00:00", uint8(proto.OpSet), "59.5"},
		{proto.AttrJobscriptMaxSize, "", "100mb", uint8(proto.OpSet), "2w"},
		{proto.AttrQueueTypeQ, "", "e", uint8(proto.OpSet), "ROUTE"},
		{proto.AttrNodePort, "", "15002", uint8(proto.OpIncr), "70000"},
		{proto.AttrNodeState, "", "offline", uint8(proto.OpUnset), ""},
		{proto.AttrNodeLastState, "", "1700000000", uint8(proto.OpSet), "-1"},
		{proto.AttrComment, "", "a comment", uint8(proto.OpSet), "two\nlines"},
	} {
		f.Add(index(s.attr), s.resource, s.first, s.op, s.second)
	}
	f.Fuzz(func(t *testing.T, which uint16, resource, first string, op uint8, second string) {
		od := objectDefs[int(which)%len(objectDefs)]
		d := od.def
		for _, v := range []string{first, second} {
			out, err := d.Canonical(resource, v)
			if err != nil {
				if err.Error() == "" || proto.CodeOf(err) == proto.PBSE_SYSTEM {
					t.Fatalf("Canonical(%s.%s = %q): error %q without a PBSE code or text", d.Name, resource, v, err)
				}
				continue
			}
			checkCanonical(t, d, resource, out, "Canonical("+strconv.Quote(v)+")")
		}

		o := NewObject("obj")
		ops := []proto.Attr{
			{Name: d.Name, Resource: resource, Value: first, Op: proto.OpSet},
			{Name: d.Name, Resource: resource, Value: second, Op: proto.Op(op % 4)},
		}
		for _, a := range ops {
			prev, _ := o.Get(a.Name)
			if err := od.table.Apply(o, a); err != nil {
				if err.Error() == "" || proto.CodeOf(err) == proto.PBSE_SYSTEM {
					t.Fatalf("Apply(%+v): error %q without a PBSE code or text", a, err)
				}
				continue
			}
			what := "after " + strconv.Quote(a.FullName()) + " op " + strconv.Itoa(int(a.Op)) + " " + strconv.Quote(a.Value)
			if d.Kind == KindLong && (a.Op == proto.OpIncr || a.Op == proto.OpDecr) {
				// Integer += and -= are exact or refused.
				x, _ := new(big.Int).SetString(orZero(nil, d.Name, prev), 10)
				canon, _ := d.Canonical("", a.Value)
				y, _ := new(big.Int).SetString(canon, 10)
				if a.Op == proto.OpDecr {
					y.Neg(y)
				}
				if got, _ := o.Get(a.Name); got != x.Add(x, y).String() {
					t.Fatalf("%s: %q, want %s", what, got, x)
				}
			}
			for name, v := range o.Attrs {
				cd, _ := od.table.Lookup(name)
				checkCanonical(t, cd, "", v, what)
			}
			for name, m := range o.Resources {
				cd, _ := od.table.Lookup(name)
				for r, v := range m {
					checkCanonical(t, cd, r, v, what)
				}
			}
		}
	})
}

// jobAttrNames is every job attribute a client may name.
var jobAttrNames = func() []string {
	var out []string
	for _, a := range jobAttrs {
		out = append(out, a.name)
	}
	for name := range passThrough {
		out = append(out, name)
	}
	// A fixed order, so that seeds mean the same attribute every run.
	sort.Strings(out)
	return out
}()

// FuzzJobAttrs checks how qsub and qalter values are validated: SetJobAttr
// either refuses a value with a PBSE error that has a message, or stores
// it so that the value qstat then shows, given again, is accepted and
// shown unchanged.
func FuzzJobAttrs(f *testing.F) {
	index := func(name string) uint16 {
		for i, n := range jobAttrNames {
			if n == name {
				return uint16(i)
			}
		}
		f.Fatalf("no job attribute %s", name)
		return 0
	}
	for _, s := range []struct{ attr, resource, value string }{
		{proto.AttrJobName, "", "my job"},
		{proto.AttrHoldTypes, "", "sou"},
		{proto.AttrPriority, "", " -1024"},
		{proto.AttrRerunable, "", "n"},
		{proto.AttrResourceList, "walltime", "90:00"},
		{proto.AttrResourceList, "select", "2:ncpus=1:mem=1GB"},
		{proto.AttrVariableList, "", "A=1,B=x\\,y,C"},
		{proto.AttrExecutionTime, "", "1700000000"},
		{proto.AttrMailPoints, "", "abe"},
		{proto.AttrJoinPath, "", "oe"},
		{proto.AttrInitWorkDir, "", "/home/alice"},
		{proto.AttrUmask, "", "022"},
	} {
		f.Add(index(s.attr), s.resource, s.value, uint8(proto.OpSet))
	}
	f.Add(index(proto.AttrVariableList), "", "A=1,B=2", uint8(proto.OpIncr))
	f.Fuzz(func(t *testing.T, which uint16, resource, value string, op uint8) {
		name := jobAttrNames[int(which)%len(jobAttrNames)]
		priv := Privilege{Owner: true, Operator: true, Manager: true}
		a := proto.Attr{Name: name, Resource: resource, Value: value, Op: proto.Op(op % 4)}
		j := &Job{VariableList: "PBS_O_HOST=n1"}
		if err := SetJobAttr(nil, j, a, priv, AtSubmit); err != nil {
			if err.Error() == "" || proto.CodeOf(err) == proto.PBSE_SYSTEM {
				t.Fatalf("SetJobAttr(nil, %+v): error %q without a PBSE code or text", a, err)
			}
			return
		}
		shown, ok := JobAttrValue(j, name, resource)
		if !ok {
			return // unset, or a zero value qstat does not show
		}
		k := &Job{}
		again := proto.Attr{Name: name, Resource: resource, Value: shown}
		if err := SetJobAttr(nil, k, again, priv, AtSubmit); err != nil {
			t.Fatalf("%s = %q (from %q) is refused when given again: %v", a.FullName(), shown, value, err)
		}
		if got, _ := JobAttrValue(k, name, resource); got != shown {
			t.Fatalf("%s: %q shows as %q, which shows as %q when given again", a.FullName(), value, shown, got)
		}
		if a.Resource != "" {
			if _, err := resc.Canonical(resource, shown); err != nil {
				t.Fatalf("%s = %q is not a valid %s value: %v", a.FullName(), shown, resource, err)
			}
		}
	})
}
