package state

import (
	"slices"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
)

func TestQueues(t *testing.T) {
	t.Parallel()
	tab := NewQueues()
	tab.Load([]*model.Object{model.NewObject("workq"), model.NewObject("batch")})
	if got := tab.Names(); !slices.Equal(got, []string{"batch", "workq"}) || tab.Len() != 2 {
		t.Fatalf("names %v (len %d)", got, tab.Len())
	}
	old, _ := tab.Get("workq")
	c := old.Clone()
	c.Set("started", "", "True")
	tab.Put(c)
	if q, ok := tab.Get("workq"); !ok || q != c || old.Bool("started") {
		t.Errorf("Put did not replace the queue whole (the old copy changed: %v)", old.Bool("started"))
	}
	tab.Put(model.NewObject("R12"))
	tab.Delete("batch")
	if got := tab.Names(); !slices.Equal(got, []string{"R12", "workq"}) {
		t.Errorf("names after a create and a delete %v", got)
	}
	if _, ok := tab.Get("batch"); ok {
		t.Errorf("a deleted queue is still there")
	}
	n := 0
	for range tab.All() {
		n++
	}
	if n != 2 {
		t.Errorf("All gave %d queues, want 2", n)
	}
}
