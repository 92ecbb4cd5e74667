package proto

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// bodyTypes lists every body a daemon or command decodes from the wire:
// requests the server, a mom or a scheduler reads, and the replies
// commands and daemons read back. The first byte of a FuzzDecodeBody input
// picks one, so the order is part of the seed corpus: append only.
var bodyTypes = []func() any{
	func() any { return new(Hello) },
	func() any { return new(HelloReply) },
	func() any { return new(SubmitRequest) },
	func() any { return new(SubmitReply) },
	func() any { return new(StatusRequest) },
	func() any { return new(StatusReply) },
	func() any { return new(JobRequest) },
	func() any { return new(AlterRequest) },
	func() any { return new(SelectRequest) },
	func() any { return new(SelectReply) },
	func() any { return new(ManagerRequest) },
	func() any { return new(WhoAmIReply) },
	func() any { return new(ShutdownRequest) },
	func() any { return new(MomStatus) },
	func() any { return new(MomStatusReply) },
	func() any { return new(JobObit) },
	func() any { return new(MomJob) },
	func() any { return new(MomSignal) },
	func() any { return new(MomJobs) },
	func() any { return new(MomJobsReply) },
	func() any { return new(SchedCommand) },
	func() any { return new(RunJobsRequest) },
	func() any { return new(RunJobsReply) },
	func() any { return new(AlterJobsRequest) },
	func() any { return new(AlterJobsReply) },
	func() any { return new(StageInDone) },
	func() any { return new(FileRequest) },
	func() any { return new(FileChunk) },
	func() any { return new(SubscribeRequest) },
	func() any { return new(SubscribeReply) },
	func() any { return new(EventFrame) },
	func() any { return new(ResvSubmitRequest) },
	func() any { return new(ResvSubmitReply) },
	func() any { return new(ResvRequest) },
	func() any { return new(ResvAlterRequest) },
	func() any { return new(ResvConfirm) },
	func() any { return new(PreemptJobsRequest) },
	func() any { return new(PreemptJobsReply) },
}

// bodySamples are realistic bodies, one per entry of bodyTypes, for seeds.
func bodySamples() []any {
	attrs := []Attr{
		{Name: AttrResourceList, Resource: "ncpus", Value: "2"},
		{Name: AttrJobName, Value: "my job"},
		{Name: AttrHoldTypes, Value: "u", Op: OpIncr},
	}
	used := Usage{CPUSecs: 12, MemBytes: 1 << 20, VmemBytes: 2 << 20, WallSecs: 30, CPUPercent: 40}
	job := MomJob{
		JobID: "7.srv", RunCount: 1, Name: "STDIN", Owner: "alice@n1", EUser: "alice", EGroup: "users",
		Queue: "workq", Script: []byte("#!/bin/sh\necho hi\n"), VariableList: "PBS_O_HOST=n1,A=b\\,c",
		OutputPath: "n1:/home/alice/STDIN.o7", ErrorPath: "n1:/home/alice/STDIN.e7", JoinPath: "n",
		KeepFiles: "n", ExecHost: "n1/0*2", ExecVnode: "(n1:ncpus=2)", NodeFile: []string{"n1", "n1"},
		Ncpus: 2, OMPThreads: 2, Walltime: 3600, KillDelay: 10,
		Resources: map[string]string{"ncpus": "2", "walltime": "01:00:00"},
		StageIn:   []StageFile{{Local: "in.dat", Host: "n2", Remote: "/data/in.dat", Node: "n2", Addr: "n2:15002", Token: []byte{1, 2}}},
		StageOut:  []StageFile{{Local: "out.dat", Host: "n1", Remote: "/data/out.dat", Here: true}},
	}
	errs := []ObjectError{{Name: "7.srv", Code: PBSE_UNKJOBID, Text: "Unknown Job Id 7.srv"}, {Name: "8.srv"}}
	return []any{
		&Hello{Version: ProtocolVersion, Role: RoleMom, Name: "n1", Nonce: bytes.Repeat([]byte{1}, NonceSize)},
		&HelloReply{Version: ProtocolVersion, ServerName: "srv", Nonce: bytes.Repeat([]byte{2}, NonceSize)},
		&SubmitRequest{Queue: "workq", Attrs: attrs, Script: []byte("#!/bin/sh\n#PBS -l ncpus=2\nsleep 1\n")},
		&SubmitReply{JobID: "7.srv"},
		&StatusRequest{IDs: []string{"7.srv", "workq", "@srv"}, Attrs: []string{"job_state", "Resource_List.ncpus"}, History: true, Since: 41, Epoch: "e1"},
		&StatusReply{Objects: []Status{{Name: "7.srv", Attrs: attrs}, {Name: "8.srv"}}, Errors: errs, Version: 42, Epoch: "e1", Live: []string{"7.srv", "8.srv"}},
		&JobRequest{JobID: "7.srv", Extra: "force"},
		&AlterRequest{JobID: "7.srv", Attrs: attrs},
		&SelectRequest{Criteria: []Attr{{Name: AttrJobState, Value: "Q", Op: OpEQ}, {Name: AttrResourceList, Resource: "mem", Value: "1gb", Op: OpGE}}, History: true},
		&SelectReply{IDs: []string{"7.srv", "9.srv"}},
		&ManagerRequest{Command: MgrSet, Object: ObjQueue, Name: "workq", Attrs: []Attr{{Name: "max_running", Value: "4"}, {Name: "acl_users", Value: "bob", Op: OpIncr}}},
		&WhoAmIReply{User: "alice", Host: "n1", Manager: true, ServerName: "srv"},
		&ShutdownRequest{Manner: ShutQuick, Scheduler: true, Moms: true},
		&MomStatus{
			Node: "n1", Version: "1.0", Port: 15002, Arch: "linux", Ncpus: 8, Physmem: 16 << 30, Loadave: 0.5,
			IdealLoad: -1, MaxLoad: 7.5, Resources: map[string]string{"scratch": "100gb", "arch": "x86_64"},
			Jobs:       []MomJobState{{JobID: "7.srv", RunCount: 1, SessionID: 4242, Used: used}, {JobID: "6.srv", Exited: true, Phase: PhaseStageOut}},
			Vnodes:     []VnodeStatus{{Name: "n1v0", Ncpus: 4, Physmem: 8 << 30, Resources: map[string]string{"ngpus": "1"}}},
			RemoteCopy: true, Staging: []string{"9.srv"}, Health: "ERROR: /scratch is full",
		},
		&MomStatusReply{Interval: 45, Kill: []string{"5.srv"}},
		&JobObit{JobID: "7.srv", RunCount: 1, ExitStatus: 271, Used: used, Start: 1700000000, End: 1700000030, Comment: "walltime exceeded", SessionID: 4242, StageOutSpool: "/var/spool/pbs/undelivered/7.srv", ByNode: []NodeUsage{{Node: "n1", Used: used}, {Node: "n2", Used: used}}},
		&job,
		&MomSignal{JobID: "7.srv", Signal: "SIGUSR1", KillDelay: 10},
		&MomJobs{Jobs: []MomJob{job, {JobID: "8.srv", Name: "b"}}},
		&MomJobsReply{Results: errs},
		&SchedCommand{Cmd: SchedNew},
		&RunJobsRequest{Runs: []RunSpec{{JobID: "7.srv", Nodes: "n1+n2", Comment: "Job run at ..."}, {JobID: "8.srv"}}},
		&RunJobsReply{Results: errs},
		&AlterJobsRequest{Alters: []AlterRequest{{JobID: "7.srv", Attrs: []Attr{{Name: AttrComment, Value: "Not Running: no free nodes"}}}}},
		&AlterJobsReply{Results: errs[:1]},
		&StageInDone{JobID: "7.srv", Comment: "stage-in of in.dat@n2:/data/in.dat failed: no such file"},
		&FileRequest{JobID: "7.srv", User: "alice", Group: "users", Path: "/data/-odd \"q\" name", Token: bytes.Repeat([]byte{3}, 32)},
		&FileChunk{Data: []byte("part of a file"), Mode: 0o644},
		&SubscribeRequest{JobIDs: []string{"7.srv", "8[].srv"}, Owner: "alice", Queue: "workq", Resume: true, After: 41, Buffer: 100},
		&SubscribeReply{Last: 42, Heartbeat: 30},
		&EventFrame{Events: []JobEvent{{Seq: 42, Time: 1700000000123, JobID: "7.srv", Owner: "alice", Queue: "workq", State: "F", Substate: "92", ExitStatus: new(int), Comment: "done"}, {Seq: 43, JobID: "8[1].srv", State: "R"}}},
		&ResvSubmitRequest{Attrs: []Attr{{Name: AttrResvStart, Value: "1700000000"}, {Name: AttrResvRrule, Value: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10"}}, Hosts: []string{"n1", "n2"}},
		&ResvSubmitReply{ID: "R12.srv", State: ResvUnconfirmed},
		&ResvRequest{ID: "R12.srv"},
		&ResvAlterRequest{ID: "S13.srv", Attrs: []Attr{{Name: AttrResvEnd, Value: "1700003600"}, {Name: AttrAuthUsers, Value: "alice,bob"}}},
		&ResvConfirm{ID: "S13.srv", Nodes: []string{"(n1:ncpus=2)+(n2:ncpus=2)", "(n3:ncpus=4)"}, Reason: "node n2 is down"},
		&PreemptJobsRequest{Jobs: []PreemptSpec{{JobID: "7.srv", Methods: "SCR", For: "9.srv"}, {JobID: "8.srv", Methods: "R"}}},
		&PreemptJobsReply{Results: []PreemptResult{{JobID: "7.srv", Method: PreemptSuspend}, {JobID: "8.srv", Code: PBSE_NORERUN, Text: "job is not rerunnable"}}},
	}
}

// encodeWire encodes v as Conn.Send does (compact ints), with map keys
// sorted so that equal values give equal bytes.
func encodeWire(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b.Bytes()
}

// envelopeAround returns the payload of a frame whose body is the given raw
// bytes, with a header as Conn.Send writes it.
func envelopeAround(t testing.TB, typ MsgType, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.EncodeArrayLen(envelopeFields)
	enc.EncodeUint(uint64(typ))
	enc.EncodeUint(1)
	enc.EncodeInt(0)
	enc.EncodeString("")
	enc.EncodeBool(false)
	enc.EncodeNil()
	return append(b.Bytes(), body...)
}

func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// maxDecodeAlloc bounds what decoding an n-byte payload may allocate: the
// largest body element (MomJob) for every byte, plus a constant. A decoder
// that believes a length prefix instead of the bytes present exceeds it by
// orders of magnitude.
func maxDecodeAlloc(n int) uint64 { return 256<<10 + 1024*uint64(n) }

// FuzzDecodeBody decodes arbitrary bytes, as the body of a frame, into the
// body type picked by the first byte, through the path every daemon uses
// (the envelope decoder, then DecodeBody). It checks that decoding
// allocates in proportion to the input, that a failure is a non-empty
// ErrMalformed, and that an accepted body re-sent through Conn.Send and
// Conn.Recv decodes to the same value (equal canonical encodings).
func FuzzDecodeBody(f *testing.F) {
	for i, v := range bodySamples() {
		if reflect.TypeOf(v) != reflect.TypeOf(bodyTypes[i]()) {
			f.Fatalf("bodySamples[%d] is %T, bodyTypes[%d] is %T", i, v, i, bodyTypes[i]())
		}
		f.Add(append([]byte{byte(i)}, encodeWire(f, v)...))
	}
	// Hostile or odd shapes: empty containers, a struct as an array, a
	// status with an attribute of too few fields, unknown map keys.
	f.Add([]byte{5, 0x81, 0xa7, 'O', 'b', 'j', 'e', 'c', 't', 's', 0x91, 0x92, 0xa1, 'x', 0x91, 0x93, 0xa0, 0xa0, 0xa0})
	f.Add([]byte{2, 0x93, 0xa1, 'q', 0x90, 0xc4, 0x00})
	f.Add([]byte{13, 0x82, 0xa4, 'N', 'o', 'd', 'e', 0xa1, 'n', 0xa3, 'z', 'z', 'z', 0x80})
	f.Add([]byte{12, 0x93, 0x03, 0xc3, 0xc2})
	// Lengths the bytes cannot hold, and deep nesting. Before frames were
	// shape-checked, the first (a 12-byte body) made the decoder allocate
	// 1.8 GB: the msgpack library sizes a slice of structs from its
	// declared length, and a length near 4G exhausts memory.
	f.Add([]byte{2, 0x81, 0xa5, 'A', 't', 't', 'r', 's', 0xdd, 0x01, 0x00, 0x00, 0x00})
	f.Add([]byte{5, 0x81, 0xa7, 'O', 'b', 'j', 'e', 'c', 't', 's', 0x91, 0x92, 0xa0, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{13, 0x81, 0xa9, 'R', 'e', 's', 'o', 'u', 'r', 'c', 'e', 's', 0xdf, 0x00, 0x10, 0x00, 0x00})
	f.Add([]byte("0\x83\xdb0000"))
	f.Add(append(append([]byte{18, 0x81, 0xa4, 'J', 'o', 'b', 's'}, bytes.Repeat([]byte{0x91}, 200)...), 0xc0))

	var wire bytes.Buffer
	in := NewConn(nopConn{&bytes.Buffer{}}, 0)
	send, recv := NewConn(nopConn{&wire}, 0), NewConn(nopConn{&wire}, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		pick := bodyTypes[int(data[0])%len(bodyTypes)]
		payload := envelopeAround(t, MsgSubmit, data[1:])

		v := pick()
		before := allocated()
		_, body, err := in.decodeEnvelope(payload)
		if err == nil {
			err = DecodeBody(body, v)
		}
		if got, limit := allocated()-before, maxDecodeAlloc(len(payload)); got > limit {
			t.Fatalf("decoding %d bytes into %T allocated %d bytes (limit %d)", len(payload), v, got, limit)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) || err.Error() == "" {
				t.Fatalf("decode %T: error %q does not wrap ErrMalformed", v, err)
			}
			return
		}

		// An accepted body survives a trip over the wire unchanged.
		canon := encodeWire(t, v)
		wire.Reset()
		if err := send.Send(Header{Type: MsgReply, Seq: 9}, v); err != nil {
			t.Fatalf("re-send %T %+v: %v", v, v, err)
		}
		h, raw, err := recv.Recv()
		if err != nil {
			t.Fatalf("re-sent %T does not decode: %v\nbody % x", v, err, canon)
		}
		if h.Type != MsgReply || h.Seq != 9 {
			t.Fatalf("re-sent header = %+v", h)
		}
		w := pick()
		if err := DecodeBody(raw, w); err != nil {
			t.Fatalf("re-encoded %T does not decode: %v\nbody % x", v, err, canon)
		}
		if again := encodeWire(t, w); !bytes.Equal(again, canon) {
			t.Fatalf("%T changed over a round trip:\nfirst  %+v\nsecond %+v", v, v, w)
		}
	})
}

// attrPlain and statusPlain have the layout the struct tags of Attr and
// Status describe, without the hand-written codecs: what a peer using
// reflection would send and expect.
type attrPlain struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Resource string
	Value    string
	Op       uint8
}

type statusPlain struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Attrs    []attrPlain
}

// attrNext and statusNext are what a newer peer might send: the same
// fields with one more appended.
type attrNext struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Resource string
	Value    string
	Op       uint8
	Flags    []string
}

type statusNext struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Attrs    []attrNext
	Alloc    []heldNext
	Version  uint64
}

// heldNext is a chunk of an allocation as a newer peer may write it: a
// field more, and resource values with one more each.
type heldNext struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Vnode     string
	Host      string
	Ncpus     int64
	Resources []resourceNext
	Socket    int
}

type resourceNext struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Value    string
	Unit     string
}

// statusAllocPlain is Status as reflection writes it with its third field.
type statusAllocPlain struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Attrs    []attrPlain
	Alloc    []Held
}

func marshal(t *testing.T, v any, compact bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	enc.UseCompactInts(compact)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b.Bytes()
}

func unmarshal(t *testing.T, b []byte, v any, what string) {
	t.Helper()
	if err := DecodeBody(b, v); err != nil {
		t.Fatalf("%s: decode into %T: %v\nbytes % x", what, v, err, b)
	}
}

// FuzzAttrStatusCodec checks the hand-written codecs of Attr and Status:
// they round-trip any values, write what a reflection-based peer reads,
// read what such a peer writes (with or without compact integers), and
// skip fields a newer peer appends.
func FuzzAttrStatusCodec(f *testing.F) {
	f.Add("7.srv", "Resource_List", "ncpus", "2", uint8(OpSet), uint8(3))
	f.Add("workq", "acl_users", "", "alice,bob", uint8(OpIncr), uint8(1))
	f.Add("", "", "", "", uint8(255), uint8(0))
	f.Add("n1", "resources_available", "mem", "16gb\x00é\xff", uint8(OpLT), uint8(200))
	f.Fuzz(func(t *testing.T, obj, name, resource, value string, op, count uint8) {
		st := Status{Name: obj}
		for i := range int(count % 8) {
			// Vary the fields so each attribute differs.
			a := Attr{Name: name, Resource: resource, Value: value, Op: Op(op + uint8(i))}
			switch i % 3 {
			case 1:
				a.Name, a.Value = value, name
			case 2:
				a.Resource = fmt.Sprint(i)
			}
			st.Attrs = append(st.Attrs, a)
		}
		plain := statusPlain{Name: st.Name}
		next := statusNext{Name: st.Name, Version: uint64(count) << 40}
		for _, a := range st.Attrs {
			plain.Attrs = append(plain.Attrs, attrPlain{Name: a.Name, Resource: a.Resource, Value: a.Value, Op: uint8(a.Op)})
			next.Attrs = append(next.Attrs, attrNext{Name: a.Name, Resource: a.Resource, Value: a.Value, Op: uint8(a.Op), Flags: []string{value, "x"}})
		}

		for _, compact := range []bool{false, true} {
			enc := marshal(t, &st, compact)
			var back Status
			unmarshal(t, enc, &back, "hand-written")
			if !reflect.DeepEqual(back, st) {
				t.Fatalf("Status round trip:\nwant %+v\ngot  %+v", st, back)
			}
			var asPlain statusPlain
			unmarshal(t, enc, &asPlain, "hand-written read by reflection")
			if len(asPlain.Attrs) == 0 {
				asPlain.Attrs = nil // reflection reads an empty array as an empty slice
			}
			if !reflect.DeepEqual(asPlain, plain) {
				t.Fatalf("reflection reads the hand-written Status as %+v, want %+v", asPlain, plain)
			}
			for what, v := range map[string]any{"reflection": &plain, "newer peer": &next} {
				var got Status
				unmarshal(t, marshal(t, v, compact), &got, what)
				if !reflect.DeepEqual(got, st) {
					t.Fatalf("Status written by a %s peer reads as %+v, want %+v", what, got, st)
				}
			}
			for i, a := range st.Attrs {
				var got Attr
				unmarshal(t, marshal(t, &a, compact), &got, "hand-written Attr")
				if got != a {
					t.Fatalf("Attr round trip: %+v -> %+v", a, got)
				}
				got = Attr{}
				unmarshal(t, marshal(t, &next.Attrs[i], compact), &got, "newer Attr")
				if got != a {
					t.Fatalf("Attr from a newer peer: %+v -> %+v", next.Attrs[i], got)
				}
			}
		}

		// With an allocation: the third field, as reflection and a newer
		// peer write and read it.
		alloc := Status{Name: obj, Attrs: st.Attrs}
		withPlain := statusAllocPlain{Name: obj, Attrs: plain.Attrs}
		withNext := statusNext{Name: obj, Attrs: next.Attrs, Version: 1}
		for i := range int(count%4) + 1 {
			h := Held{Vnode: name, Host: resource, Ncpus: int64(count) - int64(i)*100, Resources: []ResourceValue{{Name: resource, Value: value}}}
			alloc.Alloc = append(alloc.Alloc, h)
			withNext.Alloc = append(withNext.Alloc, heldNext{Vnode: h.Vnode, Host: h.Host, Ncpus: h.Ncpus,
				Resources: []resourceNext{{Name: resource, Value: value, Unit: "kb"}}, Socket: i})
		}
		withPlain.Alloc = alloc.Alloc
		for _, compact := range []bool{false, true} {
			var back Status
			unmarshal(t, marshal(t, &alloc, compact), &back, "hand-written with an allocation")
			if !reflect.DeepEqual(back, alloc) {
				t.Fatalf("Status with an allocation round trip:\nwant %+v\ngot  %+v", alloc, back)
			}
			var asPlain statusAllocPlain
			unmarshal(t, marshal(t, &alloc, compact), &asPlain, "hand-written with an allocation read by reflection")
			if len(asPlain.Attrs) == 0 {
				asPlain.Attrs = withPlain.Attrs
			}
			if !reflect.DeepEqual(asPlain.Alloc, alloc.Alloc) {
				t.Fatalf("reflection reads the allocation as %+v, want %+v", asPlain.Alloc, alloc.Alloc)
			}
			for what, v := range map[string]any{"reflection": &withPlain, "newer peer": &withNext} {
				var got Status
				unmarshal(t, marshal(t, v, compact), &got, what+" with an allocation")
				if len(got.Attrs) == 0 {
					got.Attrs = alloc.Attrs
				}
				if !reflect.DeepEqual(got.Alloc, alloc.Alloc) || got.Name != alloc.Name {
					t.Fatalf("Status with an allocation written by a %s peer reads as %+v, want %+v", what, got, alloc)
				}
			}
		}
	})
}

// Fewer fields than the codecs need is an error, not a zero value. (A
// msgpack nil reads as the zero value before a custom decoder runs.)
func TestAttrStatusTooFewFields(t *testing.T) {
	t.Parallel()
	for _, short := range [][]byte{{0x93, 0xa0, 0xa0, 0xa0}, {0x91, 0xa0}, {0x90}} {
		var a Attr
		var s Status
		if DecodeBody(short, &a) == nil || DecodeBody(short, &s) == nil {
			t.Errorf("% x decoded as an Attr or a Status", short)
		}
	}
}
