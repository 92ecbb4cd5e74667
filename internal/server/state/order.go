package state

import (
	"sort"

	"github.com/gopbs/gopbs/internal/model"
)

// keyLess orders job keys: by sequence number, an array's parent (index
// NoIndex) before its subjobs.
func keyLess(a, b model.JobKey) bool {
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Index < b.Index
}

// listLess orders the list: by queue_rank, which is the sequence number
// until qorder swaps two jobs' ranks, then by key. A subjob has its
// parent's rank (qorder keeps them so), so it follows its parent.
// Listings, and so the scheduler's order, are in this order.
func listLess(a, b *model.Job) bool {
	if a.QueueRank != b.QueueRank {
		return a.QueueRank < b.QueueRank
	}
	return keyLess(a.Key(), b.Key())
}

// settleRank gives a subjob the rank listLess needs, its parent's: its
// record may predate a qorder of its array. A job's own rank is
// admission's (its sequence number), or what qorder gave it; 0 is a rank
// like any other (job 0's).
func (t *Jobs) settleRank(j *model.Job) {
	if !j.IsSubjob {
		return
	}
	if p, ok := t.Top(j.Seq); ok {
		j.QueueRank = p.QueueRank
	}
}

// After is the index in List of the first job that follows j.
func (t *Jobs) After(j *model.Job) int {
	return sort.Search(len(t.list), func(i int) bool { return listLess(j, t.list[i]) })
}

// at is the index in the list where j is or would go.
func (t *Jobs) at(j *model.Job) int {
	return sort.Search(len(t.list), func(i int) bool { return !listLess(t.list[i], j) })
}

// place puts j in its place in the list.
func (t *Jobs) place(j *model.Job) {
	n := len(t.list)
	if n == 0 || listLess(t.list[n-1], j) {
		t.list = append(t.list, j)
		return
	}
	i := t.at(j)
	t.list = append(t.list, nil)
	copy(t.list[i+1:], t.list[i:])
	t.list[i] = j
}

// unplace takes j out of the list.
func (t *Jobs) unplace(j *model.Job) {
	i := t.at(j)
	if i < len(t.list) && t.list[i] == j {
		t.list = append(t.list[:i], t.list[i+1:]...)
	}
}
