package state

import (
	"iter"
	"maps"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/internal/model"
)

// entityKey is one entity in one scope: a queue, or "" for the complex.
type entityKey struct {
	queue string
	kind  entlim.Kind
	name  string
}

// EntityCount is what an entity's unfinished jobs that are not arrays
// come to in a scope: how many, how many wait in Q, and the numbers they
// ask for (Resource_List), in all and of those waiting.
type EntityCount struct {
	Jobs, Queued           int
	Amounts, QueuedAmounts map[string]float64
}

// Entities are the entities a job counts for, by kind.
func Entities(j *model.Job) [4]struct {
	Kind entlim.Kind
	Name string
} {
	return [4]struct {
		Kind entlim.Kind
		Name string
	}{{entlim.User, j.EUser}, {entlim.Group, j.EGroup}, {entlim.Project, j.Project}, {entlim.Overall, ""}}
}

// countEntities counts j (d = 1) or takes it back (d = -1) for each of
// its entities in its queue and the complex (bump: j unfinished, not a
// subjob). Its request is the one cached when it was tracked.
func (c *counters) countEntities(j *model.Job, d int) {
	if j.IsArray() {
		if d > 0 {
			c.arrays[j] = true
		} else {
			delete(c.arrays, j)
		}
		return
	}
	req, err := j.Request()
	waiting := j.State == model.StateQueued
	for _, queue := range []string{j.Queue, ""} {
		for _, e := range Entities(j) {
			k := entityKey{queue, e.Kind, e.Name}
			n := c.entity[k]
			if n == nil {
				n = &EntityCount{Amounts: map[string]float64{}, QueuedAmounts: map[string]float64{}}
				c.entity[k] = n
			}
			n.Jobs += d
			if waiting {
				n.Queued += d
			}
			if err == nil {
				for r, v := range req.Numbers {
					n.Amounts[r] += float64(d) * v
					if waiting {
						n.QueuedAmounts[r] += float64(d) * v
					}
				}
			}
			if n.Jobs == 0 {
				delete(c.entity, k)
			}
		}
	}
}

// Entity is what the unfinished jobs that are not arrays of entity
// kind/name come to in scope queue ("" the complex): the table's own
// count, to read only.
func (t *Jobs) Entity(queue string, kind entlim.Kind, name string) (*EntityCount, bool) {
	n, ok := t.counts.entity[entityKey{queue, kind, name}]
	return n, ok
}

// UnfinishedArrays are the array parents not finished, in no order: their
// subjobs count for their entities as they stand.
func (t *Jobs) UnfinishedArrays() iter.Seq[*model.Job] { return maps.Keys(t.counts.arrays) }
