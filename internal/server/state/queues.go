package state

import (
	"iter"
	"maps"
	"slices"

	"github.com/gopbs/gopbs/internal/model"
)

// Queues is the queue table: each queue's attributes, a model.Object
// replaced whole on a change (readers may keep the one they got), a
// reservation's queue among them.
type Queues struct {
	byName map[string]*model.Object
}

// NewQueues makes an empty table.
func NewQueues() *Queues { return &Queues{byName: map[string]*model.Object{}} }

// Load replaces the queues with those of a store snapshot.
func (t *Queues) Load(qs []*model.Object) {
	t.byName = make(map[string]*model.Object, len(qs))
	for _, q := range qs {
		t.byName[q.Name] = q
	}
}

// Len is how many queues there are.
func (t *Queues) Len() int { return len(t.byName) }

// Get is queue name's attributes.
func (t *Queues) Get(name string) (*model.Object, bool) {
	q, ok := t.byName[name]
	return q, ok
}

// Put adds queue q or replaces the queue of its name with it.
func (t *Queues) Put(q *model.Object) { t.byName[q.Name] = q }

// Delete takes queue name out.
func (t *Queues) Delete(name string) { delete(t.byName, name) }

// All is every queue, in no order.
func (t *Queues) All() iter.Seq2[string, *model.Object] { return maps.All(t.byName) }

// Names is every queue name in order (a new slice).
func (t *Queues) Names() []string { return slices.Sorted(maps.Keys(t.byName)) }
