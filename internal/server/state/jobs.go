package state

import (
	"sort"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Watcher is told of every change of a job in the table, so that what is
// derived from a job outside it (the server's eligible time, its event
// stream) is kept in the same step.
type Watcher interface {
	// Leaving is called before j changes or is removed.
	Leaving(j *model.Job)
	// Entered is called after j changed or was inserted, before it is
	// counted: it may still set what the counters do not read.
	Entered(j *model.Job)
	// Removed is called once j is out of the table.
	Removed(j *model.Job)
}

// Config is what the table needs from the server.
type Config struct {
	// Table is the resource table a job's request is read as (the
	// server's current one).
	Table func() *resc.Table
	// HostNodes lists every node on the hosts of nodes, for
	// place=exclhost.
	HostNodes func(nodes []string) []string
	// Now is the server's clock, in Unix seconds: a job's mtime.
	Now func() int64
	// Watch is told of every change (nil: nobody).
	Watch Watcher
}

// Jobs is the job table. The zero value is not usable: call New.
type Jobs struct {
	cfg   Config
	byKey map[model.JobKey]*model.Job
	// list is every job of byKey in listLess order (queue_rank, then
	// key), each array's parent before its subjobs.
	list []*model.Job
	// ended keeps what is left of an array's finished subjobs, by parent
	// and index.
	ended  map[int64]map[int]*model.SubjobEnd
	counts counters
	held   holdings
	deps   dependants
}

// New makes an empty table.
func New(cfg Config) *Jobs {
	if cfg.Watch == nil {
		cfg.Watch = nobody{}
	}
	t := &Jobs{cfg: cfg}
	t.Load(nil, nil, nil)
	return t
}

type nobody struct{}

func (nobody) Leaving(*model.Job) {}
func (nobody) Entered(*model.Job) {}
func (nobody) Removed(*model.Job) {}

// Load replaces the table with the jobs and subjobs of a store snapshot
// and the ends of finished subjobs by array: each array's queued indices
// are rebuilt from its indices less those deleted, finished or with a
// record of their own (the store checked that every subjob and end has
// its parent).
func (t *Jobs) Load(jobs, subjobs []*model.Job, ends map[int64][]*model.SubjobEnd) {
	t.byKey = make(map[model.JobKey]*model.Job, len(jobs)+len(subjobs))
	t.list = make([]*model.Job, 0, len(jobs)+len(subjobs))
	t.ended = map[int64]map[int]*model.SubjobEnd{}
	t.counts.reset()
	t.held.reset()
	t.deps = dependants{}
	for _, j := range jobs {
		t.load(j)
	}
	for _, j := range jobs {
		if a := j.Array; a != nil {
			a.Queued = a.Indices.Clone()
			a.Deleted.Each(func(i int) bool {
				a.Queued = a.Queued.Remove(i)
				a.Expired++
				return true
			})
		}
	}
	for seq, es := range ends {
		p, _ := t.Top(seq)
		m := make(map[int]*model.SubjobEnd, len(es))
		for _, e := range es {
			m[e.Index] = e
			p.Array.Queued = p.Array.Queued.Remove(e.Index)
			p.Array.Expired++
		}
		t.ended[seq] = m
	}
	for _, j := range subjobs {
		p, _ := t.Top(j.Seq)
		p.Array.Queued = p.Array.Queued.Remove(j.Index)
		t.load(j)
	}
	for _, j := range t.list {
		t.settleRank(j)
	}
	sort.Slice(t.list, func(a, b int) bool { return listLess(t.list[a], t.list[b]) })
}

// load adds a stored job as it is, the list sorted afterwards.
func (t *Jobs) load(j *model.Job) {
	j.ShareStrings()
	t.byKey[j.Key()] = j
	t.list = append(t.list, j)
	t.track(j)
}

// Len is how many jobs the table holds.
func (t *Jobs) Len() int { return len(t.byKey) }

// Get is the job of key k.
func (t *Jobs) Get(k model.JobKey) (*model.Job, bool) {
	j, ok := t.byKey[k]
	return j, ok
}

// Top is job or array seq.
func (t *Jobs) Top(seq int64) (*model.Job, bool) { return t.Get(model.TopKey(seq)) }

// Holds reports whether j itself (not a copy of it) is in the table.
func (t *Jobs) Holds(j *model.Job) bool { return t.byKey[j.Key()] == j }

// Lookup resolves an id naming one job: a job, an array (its parent), or
// a subjob that is a job of its own; anything else is PBSE_UNKJOBID.
func (t *Jobs) Lookup(id string) (*model.Job, error) {
	ref, ok := model.ParseJobRef(id)
	if !ok || ref.Kind == model.IDRange {
		return nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	key := model.TopKey(ref.Seq)
	if ref.Kind == model.IDSubjob {
		key.Index = ref.Indices[0].Lo
	}
	j, ok := t.byKey[key]
	if !ok || ref.Kind == model.IDArray && !j.IsArray() {
		return nil, proto.NewError(proto.PBSE_UNKJOBID)
	}
	return j, nil
}

// List is every job in listing order (queue_rank, then key, an array's
// parent before its subjobs): the order of listings and so of the
// scheduler. It is the table's own: read it, never change it, and take it
// again after a change of the table (ranging over it while jobs are
// removed sees each job that was there when the range began).
func (t *Jobs) List() []*model.Job { return t.list }

// LiveSubjobs are array p's subjobs that are jobs of their own, by index.
func (t *Jobs) LiveSubjobs(p *model.Job) []*model.Job {
	i := t.at(p)
	var out []*model.Job
	for i++; i < len(t.list) && t.list[i].Seq == p.Seq && t.list[i].IsSubjob; i++ {
		out = append(out, t.list[i])
	}
	return out
}

// Insert adds a new job, array or subjob.
func (t *Jobs) Insert(j *model.Job) {
	j.ShareStrings()
	t.settleRank(j)
	t.byKey[j.Key()] = j
	t.place(j)
	t.track(j)
}

// Remove takes j out of the table (an array with its subjobs' ends).
func (t *Jobs) Remove(j *model.Job) {
	t.untrack(j)
	delete(t.byKey, j.Key())
	if j.IsArray() {
		delete(t.ended, j.Seq)
	}
	t.unplace(j)
	t.cfg.Watch.Removed(j)
}

// Update is the update path of a job in the table: change runs between
// j's leaving every index and its coming back, and j takes the clock as
// its mtime. The caller saves j.
func (t *Jobs) Update(j *model.Job, change func()) {
	t.untrack(j)
	change()
	j.Mtime = t.cfg.Now()
	t.track(j)
}

// Recount is Update for a change that is not one of the job's record (a
// phase its mom reports, the resource table retyped, a copy put in its
// place that carries its own mtime), or no change at all while the job is
// out of the counts (a queue's limits checked without it): j keeps its
// mtime.
func (t *Jobs) Recount(j *model.Job, change func()) {
	t.untrack(j)
	change()
	t.track(j)
}

// Transit is Update for a change that is a transition of j: change
// returns the transition's hooks, which Transit returns for the caller to
// run in the commit that saves j.
func (t *Jobs) Transit(j *model.Job, change func() model.Hooks) model.Hooks {
	var h model.Hooks
	t.Update(j, func() { h = change() })
	return h
}

// Reorder runs change, which may change the queue_rank of the jobs
// given, and puts them back in their places in the listing order. The
// caller saves them.
func (t *Jobs) Reorder(change func(), jobs ...*model.Job) {
	for _, j := range jobs {
		t.unplace(j)
	}
	change()
	for _, j := range jobs {
		t.place(j)
	}
}

// Touch marks j changed, for incremental status fetches, without any
// count changing (a comment, a mom's report).
func (t *Jobs) Touch(j *model.Job) { t.counts.touch(j) }

// Version is the version of the table's last change; it only grows
// while the server runs.
func (t *Jobs) Version() uint64 { return t.counts.version }

// track counts j in the table's indices and, for a subjob, in its
// array's; untrack takes it out. Every change of a job in the table
// happens between the two.
func (t *Jobs) track(j *model.Job) {
	j.CacheRequest(t.cfg.Table()) // every change of a job ends here: its list is parsed once per change
	t.cfg.Watch.Entered(j)
	t.counts.add(j)
	t.hold(j, 1)
	t.arrayCount(j, 1)
	t.deps.depend(j, true)
}

func (t *Jobs) untrack(j *model.Job) {
	t.cfg.Watch.Leaving(j)
	t.counts.remove(j)
	t.hold(j, -1)
	t.arrayCount(j, -1)
	t.deps.depend(j, false)
}
