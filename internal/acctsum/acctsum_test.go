package acctsum

import (
	"strings"
	"testing"
)

const eRecord = `user=alice group=users project=_pbs_project_default jobname=STDIN queue=workq ctime=1734800289 qtime=1734800289 etime=1734800289 start=1734800289 exec_host=n1/0*2+n2/0*2 exec_vnode=(n1:ncpus=2)+(n2:ncpus=2) Resource_List.mem=2gb Resource_List.ncpus=4 Resource_List.walltime=01:00:00 session=19 end=1734802095 Exit_status=0 resources_used.cput=01:00:00 resources_used.mem=512mb resources_used.ncpus=4 resources_used.walltime=00:30:00 run_count=1`

// An E record read into a job, and what is wrong with a damaged one
// named.
func TestRead(t *testing.T) {
	t.Parallel()
	var scratch []byte
	j, err := Read([]byte("7.s"), 1734802095, []byte(eRecord), &scratch)
	if err != nil {
		t.Fatal(err)
	}
	want := Job{ID: "7.s", Key: Key{Owner: "alice", Group: "users", Project: "_pbs_project_default", Queue: "workq", Host: "n1"},
		End: 1734802095, Start: 1734800289, Ncpus: 4, Nodes: 2, Wall: 1800, Cput: 3600, Mem: 512 << 20, ReqMem: 2 << 30, ReqWall: 3600, Exit: 0}
	if j != want {
		t.Fatalf("Read:\n%+v\nwant\n%+v", j, want)
	}
	e := j.Efficiency()
	if e.CPU != 0.5 || e.Mem != 0.25 || e.Wall != 0.5 {
		t.Errorf("efficiency %+v, want cpu 0.5 (1 h of 4 cpus × 30 min), mem 0.25, wall 0.5", e)
	}
	bad := []struct{ body, want string }{
		{"user=a resources_used.walltime=ten", `resources_used.walltime="ten"`},
		{"user=a resources_used.mem=12zz", `resources_used.mem="12zz"`},
		{"user=a Exit_status=x", `Exit_status="x"`},
		{"group=g", "no user="},
		{`user="a`, "unterminated quoted value"},
		{"user=a start=yesterday", `start="yesterday"`},
	}
	for _, b := range bad {
		if _, err := Read([]byte("1.s"), 0, []byte(b.body), &scratch); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want %q", b.body, err, b.want)
		}
	}
	// Unknown parts: efficiency -1, never a division by zero.
	j, _ = Read([]byte("2.s"), 0, []byte("user=b Exit_status=1"), &scratch)
	if e := j.Efficiency(); e != (Efficiency{-1, -1, -1}) || j.Ncpus != 0 {
		t.Errorf("a record without usage: %+v %+v", j, e)
	}
}

// Sums by key, grouped and filtered as qacct's options ask.
func TestGroup(t *testing.T) {
	t.Parallel()
	jobs := []Job{
		{Key: Key{Owner: "alice", Group: "g1", Queue: "workq", Host: "n1"}, Ncpus: 2, Wall: 100, Cput: 150, Mem: 10, ReqMem: 20, ReqWall: 200, Exit: 0},
		{Key: Key{Owner: "alice", Group: "g1", Queue: "long", Host: "n2"}, Ncpus: 1, Wall: 50, Cput: 50, Mem: 30, Exit: 1},
		{Key: Key{Owner: "bob", Group: "g1", Queue: "workq", Host: "n1"}, Ncpus: 4, Wall: 10, Cput: -1, Mem: -1, Exit: 0},
	}
	ss := Sums{}
	for _, j := range jobs {
		ss.Add(j)
	}
	all := ss.Group(nil, nil)
	if len(all) != 1 || all[0].Sum.Jobs != 3 || all[0].Sum.Failed != 1 || all[0].Sum.Wall != 160 || all[0].Sum.Cput != 200 ||
		all[0].Sum.CPUHeld != 2*100+50+40 || all[0].Sum.MemPeak != 30 {
		t.Fatalf("the total: %+v", all)
	}
	// cpu: (150+50)/(200+50), bob's unknown cput left out; mem: 10/20; wall: 100/200.
	if e := all[0].Sum.Efficiency(); e.CPU != 0.8 || e.Mem != 0.5 || e.Wall != 0.5 {
		t.Errorf("the total's efficiency %+v", e)
	}
	byOwner := ss.Group([]Dim{ByOwner}, nil)
	if len(byOwner) != 2 || byOwner[0].Values[0] != "alice" || byOwner[0].Sum.Jobs != 2 || byOwner[1].Values[0] != "bob" {
		t.Errorf("by owner: %+v", byOwner)
	}
	q := ss.Group([]Dim{ByOwner, ByQueue}, Filter{ByHost: "n1"})
	if len(q) != 2 || q[0].Values[1] != "workq" || q[0].Sum.Jobs != 1 || q[1].Values[0] != "bob" {
		t.Errorf("by owner and queue on n1: %+v", q)
	}
	if none := ss.Group([]Dim{ByOwner}, Filter{ByOwner: "carol"}); len(none) != 0 {
		t.Errorf("carol's: %+v", none)
	}
	other := Sums{}
	other.Add(jobs[0])
	ss.Merge(other)
	if got := ss.Group([]Dim{ByOwner}, Filter{ByOwner: "alice"}); got[0].Sum.Jobs != 3 {
		t.Errorf("after Merge: %+v", got)
	}
}

// FuzzRead: any body is read or refused with a reason, never a panic, and
// a job read has its owner.
func FuzzRead(f *testing.F) {
	f.Add([]byte(eRecord))
	f.Add([]byte(`user="a b" exec_host=+/ Resource_List.ncpus=-3`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var scratch []byte
		j, err := Read([]byte("1.s"), 0, body, &scratch)
		if err == nil && j.Key.Owner == "" {
			t.Fatalf("a job without an owner from %q", body)
		}
		_ = j.Efficiency()
	})
}

// Only and Without: the sums a cache keeps, summed as a report would.
func TestOnlyWithout(t *testing.T) {
	t.Parallel()
	ss := Sums{}
	ss.Add(Job{Key: Key{Owner: "a", Queue: "q1", Host: "n1"}, Wall: 1})
	ss.Add(Job{Key: Key{Owner: "a", Queue: "q1", Host: "n2"}, Wall: 2})
	ss.Add(Job{Key: Key{Owner: "b", Queue: "q2", Host: "n1"}, Wall: 4})
	if by := ss.Only(ByHost); len(by) != 2 || by[Key{Host: "n1"}].Wall != 5 || by[Key{Host: "n2"}].Wall != 2 {
		t.Errorf("Only(ByHost): %v", by)
	}
	w := ss.Without(ByHost)
	if len(w) != 2 || w[Key{Owner: "a", Queue: "q1"}].Jobs != 2 {
		t.Errorf("Without(ByHost): %v", w)
	}
	for _, d := range Dims {
		if got, want := ss.Only(d).Group([]Dim{d}, nil), ss.Group([]Dim{d}, nil); len(got) != len(want) {
			t.Errorf("Only(%d) groups as %v, want %v", d, got, want)
		}
	}
}

// An n record: one node's part of a multi-node job.
func TestReadNode(t *testing.T) {
	t.Parallel()
	var scratch []byte
	n, err := ReadNode([]byte("node=n2 ncpus=2 resources_used.cput=00:01:00 resources_used.mem=10kb resources_used.walltime=00:01:00"), &scratch)
	if err != nil || n != (Node{Node: "n2", Ncpus: 2, Cput: 60, Mem: 10 << 10}) || n.CPUEfficiency(60) != 0.5 {
		t.Fatalf("%+v %v", n, err)
	}
	if _, err := ReadNode([]byte("ncpus=1"), &scratch); err == nil || !strings.Contains(err.Error(), "no node=") {
		t.Errorf("without node=: %v", err)
	}
	if _, err := ReadNode([]byte("node=a resources_used.cput=x"), &scratch); err == nil {
		t.Errorf("a bad cput read")
	}
	if (Node{Node: "a", Cput: 5}).CPUEfficiency(10) != -1 {
		t.Errorf("no cpus: an efficiency")
	}
}
