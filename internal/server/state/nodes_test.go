package state

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func TestNodes(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	since := time.Unix(500, 0)
	tab := NewNodes(func() *resc.Table { return rt }, since)
	node := func(name string, avail map[string]string) *model.Object {
		o := model.NewObject(name)
		for k, v := range avail {
			o.Set(proto.AttrResourcesAvail, k, v)
		}
		return o
	}
	tab.Load([]*model.Object{node("n2", nil), node("n1", map[string]string{proto.ResNcpus: "4"})})
	if got := tab.Names(); !slices.Equal(got, []string{"n1", "n2"}) || tab.Len() != 2 {
		t.Fatalf("names %v (len %d)", got, tab.Len())
	}

	// Before its mom reports, a node has what a manager set, nothing else.
	if got := tab.Amounts("n1"); !maps.Equal(got, map[string]float64{proto.ResNcpus: 4}) {
		t.Errorf("n1 before a report: %v", got)
	}
	if got := tab.Amounts("n2"); len(got) != 0 {
		t.Errorf("n2 before a report: %v", got)
	}
	if r := tab.Runtime("n2"); r != nil {
		t.Errorf("a runtime before any report: %+v", r)
	}
	if r := tab.RuntimeOf("n2"); !r.LastSeen.Equal(since) || r.Reported {
		t.Errorf("a new runtime counts from %v (reported %v), want the server's start", r.LastSeen, r.Reported)
	}

	// A report: what the mom measured, the manager's values winning.
	st := proto.MomStatus{Ncpus: 8, Physmem: 16 << 20, Arch: "linux", Resources: map[string]string{proto.ResHost: "h1"}}
	tab.Report("n1", st)
	tab.Report("n2", st)
	cases := []struct {
		node, res string
		want      float64
	}{
		{"n1", proto.ResNcpus, 4}, // set by a manager
		{"n2", proto.ResNcpus, 8},
	}
	for _, c := range cases {
		if got := tab.Amounts(c.node)[c.res]; got != c.want {
			t.Errorf("%s %s = %v, want %v", c.node, c.res, got, c.want)
		}
	}
	if _, ok := tab.Amounts("n2")[proto.ResArch]; ok {
		t.Errorf("a string resource among the amounts")
	}
	if v, ok := tab.AvailOne("n2", proto.ResHost); !ok || v != "h1" {
		t.Errorf("AvailOne(n2, host) = %q %v", v, ok)
	}
	if got := tab.Available("n1")[proto.ResNcpus]; got != "4" {
		t.Errorf("Available(n1) ncpus %q, want the manager's 4", got)
	}

	// A manager's change replaces the node; its amounts follow.
	tab.Put(node("n2", map[string]string{proto.ResNcpus: "2"}))
	if got := tab.Amounts("n2")[proto.ResNcpus]; got != 2 {
		t.Errorf("after the manager's set, n2 ncpus %v", got)
	}
	tab.Put(node("n0", nil))
	if got := tab.Names(); !slices.Equal(got, []string{"n0", "n1", "n2"}) {
		t.Errorf("names after a create %v", got)
	}
	tab.Delete("n1")
	if got := tab.Names(); !slices.Equal(got, []string{"n0", "n2"}) || tab.Amounts("n1") != nil {
		t.Errorf("after deleting n1: names %v, amounts %v", got, tab.Amounts("n1"))
	}
	if tab.Runtime("n1") == nil {
		t.Errorf("deleting a node forgot what its mom reported")
	}

	// A reload keeps the reports; the table retyped reads them again.
	tab.Load([]*model.Object{node("n1", nil)})
	if got := tab.Amounts("n1")[proto.ResNcpus]; got != 8 {
		t.Errorf("after a reload n1 ncpus %v, want its mom's 8", got)
	}
	// A custom resource a manager set before it was defined counts once
	// the table that defines it is in place.
	tab.Put(node("n3", map[string]string{"foo": "5"}))
	if _, ok := tab.Amounts("n3")["foo"]; ok {
		t.Errorf("an undefined resource counted")
	}
	foo, err := resc.NewCustom("foo", resc.TypeLong, resc.FlagHost|resc.FlagConsumeHost)
	if err != nil {
		t.Fatal(err)
	}
	rt = resc.NewTable([]resc.Custom{foo})
	tab.Retype()
	if got := tab.Amounts("n3")["foo"]; got != 5 {
		t.Errorf("foo on n3 %v after the table changed, want 5", got)
	}
}

// Whether a node takes work, its host for exclhost and the mom that runs
// its jobs, from its attributes and its mom's reports.
func TestNodeUpHostMom(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	tab := NewNodes(func() *resc.Table { return rt }, time.Unix(500, 0))
	a, v := model.NewObject("a"), model.NewObject("a[0]")
	v.Set(proto.AttrResourcesAvail, proto.ResHost, "a")
	off := model.NewObject("off")
	off.Set(proto.AttrNodeState, "", model.NodeOffline)
	tab.Load([]*model.Object{a, v, off, model.NewObject("silent")})
	tab.Report("a", proto.MomStatus{Node: "a", Ncpus: 2})
	tab.Report("off", proto.MomStatus{Node: "off", Ncpus: 2})
	tab.RuntimeOf("a[0]").Owner = "a"
	tab.RuntimeOf("a[0]").Reported = true
	for name, want := range map[string]bool{"a": true, "a[0]": true, "off": false, "silent": false, "unknown": false} {
		if got := tab.Up(name); got != want {
			t.Errorf("Up(%s) = %v, want %v", name, got, want)
		}
	}
	if tab.Host("a[0]") != "a" || tab.Host("a") != "a" || tab.Host("unknown") != "unknown" {
		t.Errorf("hosts: a[0] %q, a %q", tab.Host("a[0]"), tab.Host("a"))
	}
	if got := tab.HostNodes([]string{"a[0]"}); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"a", "a[0]"}) {
		t.Errorf("nodes on a[0]'s host: %v", got)
	}
	if tab.MomOf("a[0]") != "a" || tab.MomOf("silent") != "silent" {
		t.Errorf("moms: a[0] %q, silent %q", tab.MomOf("a[0]"), tab.MomOf("silent"))
	}
}

// A mom's report of its vnodes: those on its mom recorded with its
// lease, one on another mom ignored, and one it no longer reports stale.
func TestReportVnodes(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	tab := NewNodes(func() *resc.Table { return rt }, time.Unix(500, 0))
	tab.Load([]*model.Object{model.NewNode("m", "m", "15002", "m"), model.NewNode("m[0]", "m", "15002", "m"),
		model.NewNode("m[1]", "m", "15002", "m"), model.NewNode("x", "x", "15002", "x")})
	now := time.Unix(600, 0)
	tab.Report("m", proto.MomStatus{Node: "m", Ncpus: 2})
	tab.RuntimeOf("m").LeaseEnd = now.Add(time.Minute)
	st := &proto.MomStatus{Node: "m", Vnodes: []proto.VnodeStatus{{Name: "m[0]", Ncpus: 4}, {Name: "m[1]", Ncpus: 4}, {Name: "x", Ncpus: 1}}}
	recorded, stale := tab.ReportVnodes(st, now)
	if !slices.Equal(recorded, []string{"m[0]", "m[1]"}) || len(stale) != 0 {
		t.Fatalf("recorded %v, stale %v", recorded, stale)
	}
	if r := tab.Runtime("m[0]"); r == nil || r.Owner != "m" || !r.LeaseEnd.Equal(now.Add(time.Minute)) || tab.Amounts("m[0]")[proto.ResNcpus] != 4 || tab.MomOf("m[0]") != "m" {
		t.Errorf("m[0] after its mom's report: %+v, amounts %v", r, tab.Amounts("m[0]"))
	}
	if tab.Runtime("x") != nil && tab.Runtime("x").Owner != "" {
		t.Error("m spoke for x, a node on another mom")
	}
	later := now.Add(time.Minute)
	_, stale = tab.ReportVnodes(&proto.MomStatus{Node: "m", Vnodes: []proto.VnodeStatus{{Name: "m[0]", Ncpus: 4}}}, later)
	if !slices.Equal(stale, []string{"m[1]"}) || !tab.Runtime("m[1]").Stale || tab.Up("m[1]") {
		t.Errorf("m[1] no longer reported: stale %v, %+v", stale, tab.Runtime("m[1]"))
	}
	if _, stale = tab.ReportVnodes(&proto.MomStatus{Node: "m", Vnodes: []proto.VnodeStatus{{Name: "m[0]", Ncpus: 4}}}, later); len(stale) != 0 {
		t.Errorf("stale again: %v", stale)
	}
}
