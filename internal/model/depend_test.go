package model

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/proto"
)

func TestParseDepend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Depends
		out  string // Format("srv"); "" means in is refused
		code proto.Code
	}{
		{"", nil, "", 0},
		{"afterok:12", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12}}}}, "afterok:12.srv@srv", 0},
		{"afterok:12.srv:13.other.domain", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12}, {Seq: 13}}}}, "afterok:12.srv@srv:13.srv@srv", 0},
		{"after:1,afternotok:2,afterany:3.srv@srv", Depends{{Type: DepAfter, Jobs: []DepJob{{Seq: 1}}}, {Type: DepAfterNotOK, Jobs: []DepJob{{Seq: 2}}}, {Type: DepAfterAny, Jobs: []DepJob{{Seq: 3}}}},
			"after:1.srv@srv,afternotok:2.srv@srv,afterany:3.srv@srv", 0},
		{"before:4,beforeok:5,beforenotok:6,beforeany:7", Depends{{Type: DepBefore, Jobs: []DepJob{{Seq: 4}}}, {Type: DepBeforeOK, Jobs: []DepJob{{Seq: 5}}}, {Type: DepBeforeNotOK, Jobs: []DepJob{{Seq: 6}}}, {Type: DepBeforeAny, Jobs: []DepJob{{Seq: 7}}}},
			"before:4.srv@srv,beforeok:5.srv@srv,beforenotok:6.srv@srv,beforeany:7.srv@srv", 0},
		{"on:2", Depends{{Type: DepOn, Count: 2}}, "on:2", 0},
		{"AfterOK:1", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 1}}}}, "afterok:1.srv@srv", 0},
		{"afterok:", nil, "", proto.PBSE_BADDEPEND},
		{"afterok", nil, "", proto.PBSE_BADDEPEND},
		{"afterok:x1", nil, "", proto.PBSE_BADDEPEND},
		{"afterok:1::2", nil, "", proto.PBSE_BADDEPEND},
		{"later:1", nil, "", proto.PBSE_BADDEPEND},
		{"on:x", nil, "", proto.PBSE_BADDEPEND},
		{"on:-1", nil, "", proto.PBSE_BADDEPEND},
		{"afterok:12[].srv", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12, Array: true}}}}, "afterok:12[].srv@srv", 0},
		{"afterokarray:12[]", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12, Array: true}}}}, "afterok:12[].srv@srv", 0},
		{"afterokarray:12", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12, Array: true}}}}, "afterok:12[].srv@srv", 0},
		{"afterok:12[].srv:13.srv", Depends{{Type: DepAfterOK, Jobs: []DepJob{{Seq: 12, Array: true}, {Seq: 13}}}}, "afterok:12[].srv@srv:13.srv@srv", 0},
		{"afteranyarray:12[].srv", Depends{{Type: DepAfterAny, Jobs: []DepJob{{Seq: 12, Array: true}}}}, "afterany:12[].srv@srv", 0},
		{"afterok:12[3].srv", nil, "", proto.PBSE_NOSUP},
		{"afterok:12[1-3]", nil, "", proto.PBSE_NOSUP},
		{"beforeokarray:12[]", nil, "", proto.PBSE_NOSUP},
		{"syncwith:3", nil, "", proto.PBSE_NOSUP},
		{"synccount:3", nil, "", proto.PBSE_NOSUP},
	} {
		got, err := ParseDepend(tc.in)
		if tc.code != 0 {
			if proto.CodeOf(err) != tc.code {
				t.Errorf("ParseDepend(%q) = %v, %v; want code %d", tc.in, got, err, tc.code)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseDepend(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if f := got.Format("srv"); f != tc.out {
			t.Errorf("Format(%q) = %q, want %q", tc.in, f, tc.out)
		}
	}
	// The forms refused are named in the refusal.
	if _, err := ParseDepend("beforeokarray:12[]"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("beforeokarray")) {
		t.Errorf("beforeokarray refusal: %v", err)
	}
}

func FuzzParseDepend(f *testing.F) {
	for _, s := range []string{"afterok:1:2", "before:3,on:2", "afterany:4.srv@srv", "on:", "afterokarray:1[]", ":::,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDepend(s)
		if err != nil {
			return
		}
		// What parses formats to text that parses to the same.
		again, err := ParseDepend(d.Format("srv"))
		if err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("%q -> %q -> %+v, %v", s, d.Format("srv"), again, err)
		}
	})
}

func TestJudge(t *testing.T) {
	t.Parallel()
	queued := &Job{State: StateQueued}
	running := &Job{State: StateRunning, Stime: 5}
	ok := &Job{State: StateFinished, Stime: 5, HasExit: true, ExitStatus: 0}
	failed := &Job{State: StateFinished, Stime: 5, HasExit: true, ExitStatus: 1}
	deletedQueued := &Job{State: StateFinished, HasExit: true, ExitStatus: 271}
	for _, tc := range []struct {
		t      DepType
		parent *Job
		want   DepVerdict
	}{
		{DepAfter, queued, DepPending}, {DepAfter, running, DepMet}, {DepAfter, ok, DepMet}, {DepAfter, deletedQueued, DepNever},
		{DepAfterOK, queued, DepPending}, {DepAfterOK, running, DepPending}, {DepAfterOK, ok, DepMet}, {DepAfterOK, failed, DepNever}, {DepAfterOK, deletedQueued, DepNever},
		{DepAfterNotOK, running, DepPending}, {DepAfterNotOK, ok, DepNever}, {DepAfterNotOK, failed, DepMet}, {DepAfterNotOK, deletedQueued, DepMet},
		{DepAfterAny, running, DepPending}, {DepAfterAny, ok, DepMet}, {DepAfterAny, failed, DepMet}, {DepAfterAny, deletedQueued, DepMet},
	} {
		if got := Judge(tc.t, tc.parent); got != tc.want {
			t.Errorf("Judge(%s, %+v) = %d, want %d", tc.t, tc.parent, got, tc.want)
		}
	}
}

func TestDependsHoldAndRegister(t *testing.T) {
	t.Parallel()
	j := &Job{Seq: 10, State: StateTransit}
	j.Depends, _ = ParseDepend("on:1")
	j.Settle(100)
	if j.State != StateHeld || j.Substate != SubDepHold || j.Etime != 0 {
		t.Fatalf("on:1: %c %d etime %d", j.State, j.Substate, j.Etime)
	}
	if v, _ := JobAttrValue(j, proto.AttrHoldTypes, ""); v != "s" {
		t.Fatalf("Hold_Types of a job held for dependencies = %q, want s", v)
	}
	j.Register(DepBeforeOK, 11) // job 11 said beforeok:10
	if got := j.Depends.Format("srv"); got != "on:0,afterok:11.srv@srv" {
		t.Fatalf("after registration: %s", got)
	}
	if h := j.Settle(101); h.Eligible || j.State != StateHeld {
		t.Fatalf("still waits for 11: %c %+v", j.State, h)
	}
	parent := &Job{Seq: 11, State: StateFinished, HasExit: true, Stime: 1}
	if changed, never := j.Resolve(parent); !changed || never {
		t.Fatalf("Resolve: %v %v", changed, never)
	}
	if h := j.Settle(102); !h.Eligible || j.State != StateQueued || j.Substate != SubQueued || j.Etime != 102 {
		t.Fatalf("released: %c %d etime %d %+v", j.State, j.Substate, j.Etime, h)
	}
	// A user hold with met dependencies is an ordinary hold.
	j.Holds = "u"
	j.Settle(103)
	if j.Substate != SubHeld || j.Etime != 0 {
		t.Fatalf("user hold: %d etime %d", j.Substate, j.Etime)
	}
}

func TestTransitions(t *testing.T) {
	t.Parallel()
	j := &Job{State: StateTransit}
	if h := j.Settle(10); !h.Eligible || j.State != StateQueued || j.Etime != 10 {
		t.Fatalf("submit: %c %+v etime %d", j.State, h, j.Etime)
	}
	if h := j.Settle(11); h.Eligible || j.Etime != 10 {
		t.Fatalf("settling a queued job again: %+v etime %d", h, j.Etime)
	}
	if h := j.Start(SubRunning, 12); !h.Began || j.State != StateRunning || j.RunCount != 1 || j.Stime != 12 {
		t.Fatalf("start: %+v %+v", h, j)
	}
	if h := j.Requeue("node down", 13); !h.Eligible || j.State != StateQueued || j.Etime != 13 || j.Comment != "node down" {
		t.Fatalf("requeue: %+v %+v", h, j)
	}
	j.ExecutionTime = 100
	if h := j.Settle(14); h.Eligible || j.State != StateWaiting || j.Etime != 0 {
		t.Fatalf("wait: %+v %+v", h, j)
	}
	if h := j.End(SubTerminated, 271, "deleted", 15); !h.Ended || !j.Finished() || j.ExitStatus != 271 || j.HistoryTime != 15 {
		t.Fatalf("end: %+v %+v", h, j)
	}
}

func TestDependsCodec(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"afterok:1:2,on:3,beforeany:7", "afterok:1:2[],afterany:5[],after:6"} {
		j := &Job{Seq: 3, ID: "3.srv"}
		j.Depends, _ = ParseDepend(v)
		j.Depends[0].Jobs[1].Met = true
		data, err := msgpack.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var got Job
		if err := msgpack.Unmarshal(data, &got); err != nil || !reflect.DeepEqual(got.Depends, j.Depends) {
			t.Fatalf("round trip of %s: %+v, %v", v, got.Depends, err)
		}
	}
}
