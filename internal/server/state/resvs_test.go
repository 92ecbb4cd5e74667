package state

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func TestResvs(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	tab := NewResvs(func() *resc.Table { return rt })
	mk := func(seq int64, nodes string) *model.Resv {
		return &model.Resv{Seq: seq, Kind: model.ResvAdvance, Occ: []model.ResvOcc{{Start: 10, Nodes: nodes}}}
	}
	r1, r2 := mk(3, "(n1:ncpus=2)+(n2:ncpus=1)"), mk(1, "(n1:ncpus=1)")
	tab.Load([]*model.Resv{r1})
	tab.Insert(r2)
	var seqs []int64
	for r := range tab.All() {
		seqs = append(seqs, r.Seq)
	}
	if !slices.Equal(seqs, []int64{1, 3}) || tab.Len() != 2 {
		t.Fatalf("All gives %v (len %d), want 1, 3", seqs, tab.Len())
	}

	held, err := tab.Held(r1)
	if err != nil || held["n1"][proto.ResNcpus] != 2 || held["n2"][proto.ResNcpus] != 1 {
		t.Fatalf("Held(3) = %v, %v", held, err)
	}
	held["n1"][proto.ResNcpus] = 99 // a copy: the table's own stays
	if again, _ := tab.Held(r1); again["n1"][proto.ResNcpus] != 2 {
		t.Errorf("a caller's change reached the table: %v", again)
	}
	r1.Occ[0].Nodes = "(n3:ncpus=4)" // its nodes changed: read again
	if again, _ := tab.Held(r1); again["n3"][proto.ResNcpus] != 4 || again["n1"] != nil {
		t.Errorf("after its nodes changed Held gives %v", again)
	}
	r2.Occ[0].Nodes = "(n1:ncpus=junk)"
	if _, err := tab.Held(r2); err == nil {
		t.Errorf("nodes that do not read gave no error")
	}

	// Denials outlive a reload, and go once kept long enough.
	at := time.Unix(1000, 0)
	tab.Deny("R7.srv", "no room", at)
	tab.AskRetry(3, 50)
	tab.Load([]*model.Resv{r1})
	if _, err := tab.Lookup("R7.srv"); proto.CodeOf(err) != proto.PBSE_UNKRESVID || !strings.Contains(err.Error(), "R7.srv (denied: no room)") {
		t.Errorf("the denial went with the reload: %v", err)
	}
	if tab.RetryAsked(3) != 0 {
		t.Errorf("a retry asked before the reload is still remembered")
	}
	if tab.Stale(at.Add(time.Minute), time.Hour) {
		t.Errorf("a denial a minute old is stale after an hour's keep")
	}
	if !tab.Stale(at.Add(2*time.Hour), time.Hour) {
		t.Errorf("a denial two hours old is not stale")
	}
	tab.ForgetDenials(at.Add(2*time.Hour), time.Hour)
	if _, err := tab.Lookup("R7.srv"); proto.CodeOf(err) != proto.PBSE_UNKRESVID || strings.Contains(err.Error(), "denied") {
		t.Errorf("ForgetDenials kept it: %v", err)
	}
	tab.Remove(3)
	if _, ok := tab.Get(3); ok || tab.Len() != 0 {
		t.Errorf("Remove left it")
	}
}
