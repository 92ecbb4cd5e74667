package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/msgp"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func TestOpenFreshAndReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, fresh, err := Open(dir, Options{})
	if err != nil || !fresh {
		t.Fatalf("Open = %v, fresh %v", err, fresh)
	}
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.PutQueue(model.DefaultQueue())
	j := &model.Job{Seq: 7, ID: "7.srv", Name: "STDIN", State: model.StateQueued}
	b.PutJob(j)
	b.PutScript(7, []byte("#!/bin/sh\necho hi\n"))
	b.SetNextSeq(8)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st, fresh, err = Open(dir, Options{})
	if err != nil || fresh {
		t.Fatalf("reopen = %v, fresh %v", err, fresh)
	}
	defer st.Close()
	snap, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if snap.NextSeq != 8 || len(snap.Jobs) != 1 || snap.Jobs[0].ID != "7.srv" || len(snap.Queues) != 1 || snap.Server == nil {
		t.Fatalf("snapshot = %+v", snap)
	}
	script, err := st.Script(7)
	if err != nil || string(script) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("script = %q, %v", script, err)
	}
}

func TestOpenRefusesDamage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"garbage", []byte(strings.Repeat("not a database ", 1000)), "cannot be opened"},
		{"truncated", []byte{0, 1, 2}, "cannot be opened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			os.WriteFile(path, tt.content, 0o600)
			_, _, err := Open(dir, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open = %v, want error naming %s and %q", err, path, tt.want)
			}
			got, _ := os.ReadFile(path)
			if string(got) != string(tt.content) {
				t.Fatal("damaged store was modified")
			}
		})
	}
}

func TestCommitterGroupsAndFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fail := false
	st, _, err := Open(dir, Options{BeforeCommit: func() error {
		if fail {
			return errors.New("disk on fire")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	rolledBack := 0
	c := NewCommitter(st, &mu, func(error) { rolledBack++ })
	defer c.Close()

	var wg sync.WaitGroup
	for i := int64(1); i <= 200; i++ {
		wg.Add(1)
		go func(seq int64) {
			defer wg.Done()
			err := c.Do(func(b *Batch) error {
				b.PutJob(&model.Job{Seq: seq})
				b.SetNextSeq(1000)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	snap, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Jobs) != 200 {
		t.Fatalf("after 200 commits: %d jobs", len(snap.Jobs))
	}

	// A mutation's own error is returned and writes nothing.
	myErr := proto.NewError(proto.PBSE_PERM)
	if err := c.Do(func(b *Batch) error { return myErr }); err != myErr {
		t.Fatalf("Do = %v, want %v", err, myErr)
	}

	fail = true
	err = c.Do(func(b *Batch) error { b.PutJob(&model.Job{Seq: 500}); return nil })
	if proto.CodeOf(err) != proto.PBSE_SAVE_ERR || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failed commit returned %v", err)
	}
	if rolledBack != 1 {
		t.Fatalf("rollback ran %d times", rolledBack)
	}
	fail = false
	snap, _ = st.Load()
	for _, j := range snap.Jobs {
		if j.Seq == 500 {
			t.Fatal("job of a failed commit is in the store")
		}
	}
}

// A record nesting millions of arrays (a damaged or forged store) is an
// error naming the record, not a fatal stack overflow.
func TestDeepRecordRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	deep := append(bytes.Repeat([]byte{0x91}, 4<<20), 0xc0)
	if err := st.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQueues).Put([]byte("q"), deep)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "queues") {
		t.Fatalf("Load of a deep record: %v", err)
	}
	st.Close()
}

// TestSubjobRecords stores an array, a running subjob and a finished one,
// reloads them, and deletes the array with all its records; a version 1
// store opens as version 2.
func TestSubjobRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := model.ParseArraySpec("1-5")
	parent := &model.Job{Seq: 3, ID: "3[].srv", State: model.StateBegun, Array: &model.Array{Indices: spec.Indices}}
	other := &model.Job{Seq: 4, ID: "4.srv", State: model.StateQueued}
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.PutJob(parent)
	b.PutScript(3, []byte("script"))
	b.PutJob(other)
	b.PutScript(4, []byte("other"))
	b.SetNextSeq(5)
	running := parent.Subjob(2, "srv", 1)
	running.State = model.StateRunning
	b.PutSubjob(running)
	b.PutSubjob(parent.Subjob(4, "srv", 1))
	b.EndSubjob(3, &model.SubjobEnd{Index: 4, HasExit: true, Exit: 1, RunCount: 1})
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Subjobs) != 1 || snap.Subjobs[0].ID != "3[2].srv" || snap.Subjobs[0].State != model.StateRunning {
		t.Fatalf("subjobs %+v: want 3[2] running only (4's record was replaced by its end)", snap.Subjobs)
	}
	if e := snap.Ends[3]; len(e) != 1 || e[0].Index != 4 || e[0].Exit != 1 {
		t.Fatalf("ends %+v", snap.Ends)
	}
	if len(snap.Jobs) != 2 || snap.Jobs[0].Array == nil || snap.Jobs[0].Array.Indices.String() != "1-5" {
		t.Fatalf("jobs %+v", snap.Jobs)
	}
	b = &Batch{}
	b.DeleteJob(3)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	if snap, err = st.Load(); err != nil || len(snap.Jobs) != 1 || len(snap.Subjobs) != 0 || len(snap.Ends) != 0 {
		t.Fatalf("after deleting the array: %+v, %v", snap, err)
	}
	if s, err := st.Script(4); err != nil || string(s) != "other" {
		t.Fatalf("the next job's script: %q, %v", s, err)
	}
	// Older stores: versions 1 and 2 are upgraded when opened; a newer
	// one is refused.
	for _, old := range []string{"1", "2"} {
		st.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte(old)) })
		st.Close()
		st, _, err = Open(dir, Options{})
		if err != nil {
			t.Fatalf("a version %s store: %v", old, err)
		}
		st.db.View(func(tx *bolt.Tx) error {
			if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != strconv.Itoa(StorageVersion) {
				t.Errorf("version after opening a version %s store: %q", old, v)
			}
			return nil
		})
	}
	st.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte("99")) })
	st.Close()
	if st, _, err = Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("a version 99 store opened: %v", err)
		if st != nil {
			st.Close()
		}
	}
}

// TestEvents keeps published changes with the commit, reads back the last
// n in order, forgets deleted ones, and upgrades a version 3 store (no
// events bucket) in place.
func TestEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exit := 3
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	for seq := uint64(1); seq <= 5; seq++ {
		b.PutEvent(&proto.JobEvent{Seq: seq, JobID: "1.srv", State: "R"})
	}
	b.PutEvent(&proto.JobEvent{Seq: 6, JobID: "1.srv", State: "F", ExitStatus: &exit})
	b.DeleteEvent(1)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(3)
	if err != nil || len(evs) != 3 || evs[0].Seq != 4 || evs[2].Seq != 6 || evs[2].ExitStatus == nil || *evs[2].ExitStatus != 3 {
		t.Fatalf("last 3 events: %+v, %v", evs, err)
	}
	if evs, _ := st.Events(100); len(evs) != 5 || evs[0].Seq != 2 {
		t.Fatalf("all kept events: %+v", evs)
	}
	// A version 3 store has no events bucket: it opens, upgraded.
	st.db.Update(func(tx *bolt.Tx) error {
		tx.DeleteBucket(bucketEvents)
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("3"))
	})
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 3 store: %v", err)
	}
	defer st.Close()
	if evs, err := st.Events(10); err != nil || len(evs) != 0 {
		t.Fatalf("events of an upgraded store: %+v, %v", evs, err)
	}
}

// TestResvs keeps reservations across a reopen, deletes them, refuses
// one at or above the next sequence number, and upgrades a version 4
// store (no reservations bucket) in place.
func TestResvs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.SetNextSeq(10)
	b.PutResv(&model.Resv{Seq: 3, Kind: model.ResvStanding, Owner: "alice@h", Duration: 3600,
		Occ: []model.ResvOcc{{Start: 100, Nodes: "(n1:ncpus=2)"}, {Start: 200}}, Count: 2, Rrule: "FREQ=DAILY;COUNT=2", TZ: "UTC"})
	b.PutResv(&model.Resv{Seq: 4, Kind: model.ResvAdvance})
	b.DeleteResv(4)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Load()
	if err != nil || len(snap.Resvs) != 1 || snap.Resvs[0].Occ[1].Start != 200 || snap.Resvs[0].Nodes() != "(n1:ncpus=2)" {
		t.Fatalf("reservations read back: %+v, %v", snap, err)
	}
	b = &Batch{}
	b.PutResv(&model.Resv{Seq: 12, Kind: model.ResvAdvance})
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), "next sequence") {
		t.Fatalf("a reservation past the next sequence number: %v", err)
	}
	st.db.Update(func(tx *bolt.Tx) error {
		tx.DeleteBucket(bucketResvs)
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("4"))
	})
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 4 store: %v", err)
	}
	defer st.Close()
	if snap, err := st.Load(); err != nil || len(snap.Resvs) != 0 {
		t.Fatalf("an upgraded store: %+v, %v", snap, err)
	}
}

// TestResources: a site's custom resource definitions are stored typed,
// read back, removed; a record that is not a definition qmgr could have
// made is damage; a version 5 store is upgraded with no resources.
func TestResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	scratch, _ := resc.NewCustom("scratch", resc.TypeSize, resc.FlagHost|resc.FlagConsumeHost)
	qlist, _ := resc.NewCustom("Qlist", resc.TypeStringArray, resc.FlagHost)
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.PutResource(scratch)
	b.PutResource(qlist)
	b.DeleteResource("Qlist")
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Load()
	if err != nil || len(snap.Resources) != 1 || snap.Resources[0] != scratch {
		t.Fatalf("resources read back: %+v, %v", snap.Resources, err)
	}
	st.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketResources).Put([]byte("bad"), []byte("\x83\xa4Name\xa3bad\xa4Type\x03\xa5Flags\x0c")) // consumed, not host-level
	})
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), `resource record "bad"`) {
		t.Fatalf("a damaged definition: %v", err)
	}
	st.db.Update(func(tx *bolt.Tx) error {
		tx.DeleteBucket(bucketResources)
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("5"))
	})
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 5 store: %v", err)
	}
	defer st.Close()
	if snap, err := st.Load(); err != nil || len(snap.Resources) != 0 {
		t.Fatalf("an upgraded store: %+v, %v", snap.Resources, err)
	}
}

// TestHooks: a site hook is stored with its script and configuration
// file, read back, removed; a record under another name is damage; a
// version 8 store is upgraded with no hooks.
func TestHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h1, _ := hook.New("defaults")
	h1.Events = hook.Events(hook.QueueJob) | hook.Events(hook.ModifyJob)
	h1.Order, h1.Alarm = 7, 5
	h1.Script, h1.Config, h1.ConfigSuffix = []byte("import pbs\npbs.event().accept()\n"), []byte(`{"max": 4}`), ".json"
	h2, _ := hook.New("gone")
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.PutHook(h1)
	b.PutHook(h2)
	b.DeleteHook("gone")
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Load()
	if err != nil || len(snap.Hooks) != 1 || !reflect.DeepEqual(snap.Hooks[0], h1) {
		t.Fatalf("hooks read back: %+v, %v", snap.Hooks, err)
	}
	st.db.Update(func(tx *bolt.Tx) error {
		raw, _ := encodeRecord(h1)
		return tx.Bucket(bucketHooks).Put([]byte("other"), raw)
	})
	if _, err := st.Load(); err == nil || !strings.Contains(err.Error(), `hook record "other"`) {
		t.Fatalf("a hook under another name: %v", err)
	}
	st.db.Update(func(tx *bolt.Tx) error {
		tx.DeleteBucket(bucketHooks)
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("8"))
	})
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 8 store: %v", err)
	}
	defer st.Close()
	if snap, err := st.Load(); err != nil || len(snap.Hooks) != 0 {
		t.Fatalf("an upgraded store: %+v, %v", snap.Hooks, err)
	}
}

// TestReleasingUpgrade: a version 6 store holds a shrink under way as
// text; opened by this server it is a version 7 store whose job reads the
// same release, typed, and writes it typed from then on.
func TestReleasingUpgrade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := &model.Job{Seq: 5, ID: "5.srv", State: model.StateRunning, Releasing: model.Release{Nodes: []string{"RELX"}, GiveBack: true}}
	b := &Batch{}
	b.PutServer(model.DefaultServer("srv", "root@*"))
	b.PutJob(j)
	b.SetNextSeq(6)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	// Made old: the record's Releasing in the text form version 6 wrote.
	err = st.db.Update(func(tx *bolt.Tx) error {
		jobs := tx.Bucket(bucketJobs)
		rec := jobs.Get(jobKey(5, kindJob))
		old := bytes.Replace(rec, []byte("\x92\x91\xa4RELX\xc3"), msgp.AppendString(nil, "give:n2+n3+n4"), 1)
		if bytes.Equal(old, rec) {
			t.Fatal("the typed release is not in the record")
		}
		if err := jobs.Put(jobKey(5, kindJob), old); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("6"))
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 6 store: %v", err)
	}
	defer st.Close()
	st.db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != strconv.Itoa(StorageVersion) {
			t.Errorf("upgraded store's version %q (StorageVersion %d)", v, StorageVersion)
		}
		return nil
	})
	snap, err := st.Load()
	if err != nil || len(snap.Jobs) != 1 {
		t.Fatalf("the upgraded store's jobs: %+v, %v", snap, err)
	}
	want := model.Release{Nodes: []string{"n2", "n3", "n4"}, GiveBack: true}
	if got := snap.Jobs[0].Releasing; !reflect.DeepEqual(got, want) {
		t.Fatalf("Releasing after the upgrade: %+v, want %+v", got, want)
	}
}

// TestAllocUpgrade: a version 7 store (testdata/v7, written by the
// pbs_server before the typed allocation) holds a running job's exec_host
// and exec_vnode as text; opened by this server it is a store of this
// version (with the buckets of later versions, empty)
// whose job holds the same allocation, typed, shows the same text, and
// keeps it across a write and a reopen in the new form (beside the text
// an older server reads).
func TestAllocUpgrade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old, err := os.ReadFile(filepath.Join("testdata", "v7", FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), old, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("a version 7 store: %v", err)
	}
	st.db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != strconv.Itoa(StorageVersion) || tx.Bucket(bucketHooks) == nil {
			t.Errorf("upgraded store's version %q (StorageVersion %d)", v, StorageVersion)
		}
		return nil
	})
	want := resc.Alloc{
		{Vnode: "h[0]", Host: "h", Ncpus: 2, Resources: []resc.Pair{{Name: "ncpus", Value: "2"}, {Name: "mem", Value: "1gb"}}},
		{Vnode: "h[1]", Host: "h", Ncpus: 1, Resources: []resc.Pair{{Name: "ncpus", Value: "1"}}},
		{Vnode: "g", Host: "g", Ncpus: 4, Resources: []resc.Pair{{Name: "ncpus", Value: "4"}, {Name: "ngpus", Value: "1"}}},
	}
	check := func(when string) *model.Job {
		snap, err := st.Load()
		if err != nil || len(snap.Jobs) != 2 {
			t.Fatalf("%s: jobs %+v, %v", when, snap, err)
		}
		run, queued := snap.Jobs[0], snap.Jobs[1]
		if run.ID != "5.srv" || !run.Alloc.Equal(want) {
			t.Fatalf("%s: job %s holds %+v, want %+v", when, run.ID, run.Alloc, want)
		}
		if run.ExecHost() != "h/0*2+h/1+g/0*4" || run.ExecVnode() != "(h[0]:ncpus=2:mem=1gb)+(h[1]:ncpus=1)+(g:ncpus=4:ngpus=1)" || run.Alloc.Mother() != "h" {
			t.Errorf("%s: exec_host %q exec_vnode %q mother %q", when, run.ExecHost(), run.ExecVnode(), run.Alloc.Mother())
		}
		if queued.Alloc != nil {
			t.Errorf("%s: queued job holds %+v", when, queued.Alloc)
		}
		return run
	}
	run := check("after the upgrade")
	b := &Batch{}
	b.PutJob(run)
	if err := st.Commit([]*Batch{b}); err != nil {
		t.Fatal(err)
	}
	st.db.View(func(tx *bolt.Tx) error {
		// The text too, rendered from the allocation, for an older
		// member of a replicated group during a rolling upgrade.
		if rec := tx.Bucket(bucketJobs).Get(jobKey(5, kindJob)); !bytes.Contains(rec, []byte("h/0*2+h/1+g/0*4")) {
			t.Error("the rewritten record holds no exec_host an older server can read")
		}
		return nil
	})
	st.Close()
	if st, _, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check("rewritten and reopened")
}

// A store a newer pbs_server made is refused, saying so, and left as it
// was (a package downgraded over a newer one).
func TestNewerStoreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newer := []byte(strconv.Itoa(StorageVersion + 1))
	if err := st.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, newer) }); err != nil {
		t.Fatal(err)
	}
	st.Close()
	before, _ := os.ReadFile(filepath.Join(dir, FileName))
	_, _, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "was made by a newer pbs_server (storage version "+string(newer)) {
		t.Errorf("opening a newer store: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, FileName)); !bytes.Equal(before, after) {
		t.Error("the refused store was changed")
	}
}
