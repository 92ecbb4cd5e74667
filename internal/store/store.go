package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Options tune a Store.
type Options struct {
	// SyncDelay is added to every commit to model a slower disk in
	// benchmarks (bbolt syncs twice per commit, so pass twice the per-fsync
	// delay you want to model). Zero in production.
	SyncDelay time.Duration
	// BeforeCommit, when set, runs before each commit; an error fails the
	// commit. Tests use it to inject storage errors.
	BeforeCommit func() error
	// AfterCommit, when set, hears of each commit: how many batches it
	// carried, how long it took (the transaction and its fsyncs) and
	// whether it failed. The server's metrics use it.
	AfterCommit func(batches int, took time.Duration, err error)
}

// Store is the open bbolt file.
type Store struct {
	db   *bolt.DB
	path string
	opts Options
	// repl, when set, carries commits through a replicated group's log
	// (replica.go).
	repl Replicator
}

// Snapshot is everything Load reads at start-up.
type Snapshot struct {
	Server *model.Object
	// Sched is the sched object, nil when none was written.
	Sched   *model.Object
	Queues  []*model.Object
	Nodes   []*model.Object
	Jobs    []*model.Job // in sequence order
	NextSeq int64
	// LeaseCeiling is the longest lease any run of the server granted
	// (SetLeaseCeiling), in seconds; 0 when none was recorded.
	LeaseCeiling int64
	// Subjobs are the subjobs with records of their own (queued alone,
	// running, exiting), by parent and index; Ends what is kept of
	// finished ones, by parent and index.
	Subjobs []*model.Job
	Ends    map[int64][]*model.SubjobEnd
	// Resvs are the reservations, in sequence order.
	Resvs []*model.Resv
	// Resources are the site's custom resources, by name.
	Resources []resc.Custom
	// Hooks are the site hooks, by name.
	Hooks []*hook.Hook
}

// Open opens the store in dir, creating a fresh one when none exists
// (fresh is then true and the caller initialises defaults with Init).
func Open(dir string, opts Options) (s *Store, fresh bool, err error) {
	return openFile(filepath.Join(dir, FileName), opts)
}

func openFile(path string, opts Options) (s *Store, fresh bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := create(path); err != nil {
			return nil, false, err
		}
		fresh = true
	} else if err != nil {
		return nil, false, fmt.Errorf("store %s: %w", path, err)
	}
	if err := checkSize(path); err != nil {
		return nil, false, err
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, false, err
	}
	s = &Store{db: db, path: path, opts: opts}
	if err := guard(path, s.check); err != nil {
		db.Close()
		return nil, false, err
	}
	if err := s.upgrade(); err != nil {
		db.Close()
		return nil, false, err
	}
	return s, fresh, nil
}

// openBolt opens the file, turning bbolt's failures into errors naming it.
func openBolt(path string) (db *bolt.DB, err error) {
	err = guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
		return err
	})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("store %s is locked: is another pbs_server running on this PBS_HOME?", path)
		}
		return nil, fmt.Errorf("store %s cannot be opened (damaged or not a store; it was left untouched): %w", path, err)
	}
	return db, nil
}

// create builds an empty store with every bucket and the version in a
// temporary file, then renames it into place.
func create(path string) error {
	tmp := path + ".new"
	os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return fmt.Errorf("create store %s: %w", tmp, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keyVersion, []byte(strconv.Itoa(StorageVersion))); err != nil {
			return err
		}
		return meta.Put(keyNextSeq, encodeSeq(0))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create store %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("create store: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// guard runs f, which reads the store's file, turning the panics with
// which bbolt meets a damaged file (and faults on pages of its memory map
// past the end of a truncated one) into an error naming the file, so the
// server stops with a message rather than a goroutine dump.
func guard(path string, f func() error) (err error) {
	return Guard(path, f)
}

// Guard runs f, which reads the bbolt file at path, turning bbolt's panics
// on a damaged file into an error naming it (guard; the raft log uses it
// too).
func Guard(path string, f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store %s is damaged (left untouched; restore it from a backup): %v", path, r)
		}
	}()
	return f()
}

// checkSize refuses a file shorter than the pages its newest valid meta
// page says it holds: a store that lost its tail. Either meta page (bbolt
// keeps two, at offsets 0 and one page) may be the newest; the smaller
// claim of the valid ones is checked, as bbolt may fall back to it.
func checkSize(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("store %s: %w", path, err)
	}
	need, ok := metaHighWater(f)
	if ok && fi.Size() < need {
		return fmt.Errorf("store %s is truncated: %d bytes, but its pages need %d (left untouched; restore it from a backup)", path, fi.Size(), need)
	}
	return nil
}

// bbolt's meta page layout (its file format, stable since 1.x): a 16-byte
// page header, then magic (4), version (4), page size (4), flags (4), root
// bucket (16), freelist page (8), high-water page id (8), txid (8),
// checksum (8, FNV-64a of the meta before it).
const (
	boltPageHeader = 16
	boltMagic      = 0xED0CDAED
	boltMetaSize   = 64
)

// metaHighWater returns the file size the store's valid meta pages
// require (the smallest claim), and whether any meta page was valid.
func metaHighWater(f *os.File) (int64, bool) {
	var best int64
	found := false
	var pageSize int64
	for i := 0; i < 2; i++ {
		off := int64(0)
		if i == 1 {
			if pageSize == 0 {
				break
			}
			off = pageSize
		}
		buf := make([]byte, boltPageHeader+boltMetaSize)
		if _, err := f.ReadAt(buf, off); err != nil {
			continue
		}
		m := buf[boltPageHeader:]
		if binary.LittleEndian.Uint32(m[0:]) != boltMagic {
			continue
		}
		h := fnv.New64a()
		h.Write(m[:56])
		if h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			continue
		}
		ps := int64(binary.LittleEndian.Uint32(m[8:]))
		if ps <= 0 {
			continue
		}
		pageSize = ps
		need := int64(binary.LittleEndian.Uint64(m[40:])) * ps
		if !found || need < best {
			best, found = need, true
		}
	}
	return best, found
}

// check verifies the version and that every bucket exists.
func (s *Store) check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyVersion)
		for _, b := range allBuckets {
			added := slices.ContainsFunc(addedBuckets, func(a []byte) bool { return bytes.Equal(a, b) }) // made by upgrade
			if tx.Bucket(b) == nil && !(added && string(v) != strconv.Itoa(StorageVersion)) {
				return fmt.Errorf("store %s has no %q bucket: damaged or not a gopbs store (left untouched)", s.path, b)
			}
		}
		if n, err := strconv.Atoi(string(v)); err == nil && n > StorageVersion {
			return fmt.Errorf("store %s was made by a newer pbs_server (storage version %d; this one reads versions 1 to %d): run that version again (the store is left untouched)", s.path, n, StorageVersion)
		}
		if string(v) != strconv.Itoa(StorageVersion) && string(v) != "1" && string(v) != "2" && string(v) != "3" && string(v) != "4" && string(v) != "5" && string(v) != "6" && string(v) != "7" && string(v) != "8" {
			return fmt.Errorf("store %s has storage version %q; this pbs_server reads version %d", s.path, v, StorageVersion)
		}
		if n := tx.Bucket(bucketMeta).Get(keyNextSeq); len(n) != 8 {
			return fmt.Errorf("store %s: next job sequence number is damaged (%d bytes)", s.path, len(n))
		}
		return nil
	})
}

// upgrade marks a version 1 to 8 store as the current version, with
// the buckets it lacks made empty: nothing else differs (see
// StorageVersion), and an older pbs_server then refuses it by its version
// instead of failing on a record it does not know.
func (s *Store) upgrade() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if string(meta.Get(keyVersion)) == strconv.Itoa(StorageVersion) {
			return nil
		}
		for _, b := range addedBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("store %s: upgrade to storage version %d: %w", s.path, StorageVersion, err)
			}
		}
		if err := meta.Put(keyVersion, []byte(strconv.Itoa(StorageVersion))); err != nil {
			return fmt.Errorf("store %s: upgrade to storage version %d: %w", s.path, StorageVersion, err)
		}
		return nil
	})
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Path is the store file.
func (s *Store) Path() string { return s.path }

func encodeSeq(n int64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(n))
	return b
}

// jobKey is the bucketJobs key of a job's record or script.
func jobKey(seq int64, kind byte) []byte {
	b := make([]byte, 9)
	binary.BigEndian.PutUint64(b, uint64(seq))
	b[8] = kind
	return b
}

// Load reads every object. Any record that does not decode is an error
// naming its bucket and key.
func (s *Store) Load() (*Snapshot, error) {
	snap := &Snapshot{}
	err := guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			snap.NextSeq = int64(binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keyNextSeq)))
			if v := tx.Bucket(bucketMeta).Get(keyLeaseCeiling); len(v) == 8 {
				snap.LeaseCeiling = int64(binary.BigEndian.Uint64(v))
			}
			if raw := tx.Bucket(bucketServer).Get(keyServer); raw != nil {
				var o model.Object
				if err := decodeRecord(raw, &o); err != nil {
					return fmt.Errorf("store %s: server record: %w", s.path, err)
				}
				snap.Server = &o
			}
			if raw := tx.Bucket(bucketServer).Get(keySched); raw != nil {
				var o model.Object
				if err := decodeRecord(raw, &o); err != nil {
					return fmt.Errorf("store %s: sched record: %w", s.path, err)
				}
				snap.Sched = &o
			}
			for _, spec := range []struct {
				bucket []byte
				dst    *[]*model.Object
			}{{bucketQueues, &snap.Queues}, {bucketNodes, &snap.Nodes}} {
				err := tx.Bucket(spec.bucket).ForEach(func(k, v []byte) error {
					var o model.Object
					if err := decodeRecord(v, &o); err != nil {
						return fmt.Errorf("store %s: %s %q: %w", s.path, spec.bucket, k, err)
					}
					*spec.dst = append(*spec.dst, &o)
					return nil
				})
				if err != nil {
					return err
				}
			}
			err := tx.Bucket(bucketResources).ForEach(func(k, v []byte) error {
				var c resc.Custom
				if err := decodeRecord(v, &c); err != nil {
					return fmt.Errorf("store %s: resource record %q: %v", s.path, k, err)
				}
				// The definition is checked again as qmgr's was: a record
				// no server could have written is damage, not a resource.
				d, err := resc.NewCustom(c.Name, c.Type, c.Flags)
				if err != nil || d.Name != string(k) {
					return fmt.Errorf("store %s: resource record %q holds %+v: damaged", s.path, k, c)
				}
				snap.Resources = append(snap.Resources, d)
				return nil
			})
			if err != nil {
				return err
			}
			err = tx.Bucket(bucketHooks).ForEach(func(k, v []byte) error {
				var h hook.Hook
				if err := decodeRecord(v, &h); err != nil {
					return fmt.Errorf("store %s: hook record %q: %w", s.path, k, err)
				}
				if h.Name != string(k) {
					return fmt.Errorf("store %s: hook record %q holds hook %q: damaged", s.path, k, h.Name)
				}
				snap.Hooks = append(snap.Hooks, &h)
				return nil
			})
			if err != nil {
				return err
			}
			err = tx.Bucket(bucketResvs).ForEach(func(k, v []byte) error {
				var r model.Resv
				if err := decodeRecord(v, &r); err != nil {
					return fmt.Errorf("store %s: reservation record %x: %v", s.path, k, err)
				}
				if len(k) != 8 || r.Seq != int64(binary.BigEndian.Uint64(k)) {
					return fmt.Errorf("store %s: reservation record %x holds reservation %d", s.path, k, r.Seq)
				}
				snap.Resvs = append(snap.Resvs, &r)
				return nil
			})
			if err != nil {
				return err
			}
			return tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
				if len(k) == 13 && (k[8] == kindSubjob || k[8] == kindSubjobEnd) {
					return s.loadSubjob(snap, k, v)
				}
				if len(k) != 9 {
					return fmt.Errorf("store %s: job key %x is not 9 bytes", s.path, k)
				}
				if k[8] != kindJob {
					return nil
				}
				var j model.Job
				if err := decodeRecord(v, &j); err != nil {
					return fmt.Errorf("store %s: job record %x: %v", s.path, k, err)
				}
				if j.Seq != int64(binary.BigEndian.Uint64(k)) {
					return fmt.Errorf("store %s: job record %x holds job %d", s.path, k, j.Seq)
				}
				snap.Jobs = append(snap.Jobs, &j)
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	for _, j := range snap.Jobs {
		if j.Seq >= snap.NextSeq {
			return nil, fmt.Errorf("store %s: job %d is at or above the next sequence number %d: damaged", s.path, j.Seq, snap.NextSeq)
		}
	}
	for _, r := range snap.Resvs {
		if r.Seq >= snap.NextSeq {
			return nil, fmt.Errorf("store %s: reservation %d is at or above the next sequence number %d: damaged", s.path, r.Seq, snap.NextSeq)
		}
	}
	parents := make(map[int64]bool, len(snap.Jobs))
	for _, j := range snap.Jobs {
		if j.IsArray() {
			parents[j.Seq] = true
		}
	}
	for _, j := range snap.Subjobs {
		if !parents[j.Seq] {
			return nil, fmt.Errorf("store %s: subjob %s has no array record: damaged", s.path, j.ID)
		}
	}
	for seq := range snap.Ends {
		if !parents[seq] {
			return nil, fmt.Errorf("store %s: finished subjobs of %d have no array record: damaged", s.path, seq)
		}
	}
	return snap, nil
}

// loadSubjob reads one subjob record (key: seq, kind, index).
func (s *Store) loadSubjob(snap *Snapshot, k, v []byte) error {
	seq := int64(binary.BigEndian.Uint64(k))
	index := int(binary.BigEndian.Uint32(k[9:]))
	if k[8] == kindSubjobEnd {
		var e model.SubjobEnd
		if err := decodeRecord(v, &e); err != nil {
			return fmt.Errorf("store %s: finished subjob record %x: %v", s.path, k, err)
		}
		if e.Index != index {
			return fmt.Errorf("store %s: finished subjob record %x holds index %d", s.path, k, e.Index)
		}
		if snap.Ends == nil {
			snap.Ends = map[int64][]*model.SubjobEnd{}
		}
		snap.Ends[seq] = append(snap.Ends[seq], &e)
		return nil
	}
	var j model.Job
	if err := decodeRecord(v, &j); err != nil {
		return fmt.Errorf("store %s: subjob record %x: %v", s.path, k, err)
	}
	if j.Seq != seq || !j.IsSubjob || j.Index != index {
		return fmt.Errorf("store %s: subjob record %x holds job %s", s.path, k, j.ID)
	}
	snap.Subjobs = append(snap.Subjobs, &j)
	return nil
}

// decodeRecord decodes one stored record, bounded first: a damaged record
// nesting millions of arrays would overflow the stack of the recursive
// decoder, which no recover can catch.
func decodeRecord(b []byte, v any) error {
	if err := proto.CheckShape(b, proto.MaxDepth); err != nil {
		return err
	}
	return msgpack.Unmarshal(b, v)
}

// Script returns a job's spooled script.
func (s *Store) Script(seq int64) ([]byte, error) {
	scripts, errs := s.Scripts([]int64{seq})
	return scripts[0], errs[0]
}

// Scripts reads the scripts of several jobs in one transaction (a
// scheduler's cycle starts thousands at once); errs[i] says why script i
// could not be read.
func (s *Store) Scripts(seqs []int64) (scripts [][]byte, errs []error) {
	scripts, errs = make([][]byte, len(seqs)), make([]error, len(seqs))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketJobs)
		for i, seq := range seqs {
			v := b.Get(jobKey(seq, kindScript))
			if v == nil {
				errs[i] = fmt.Errorf("no script stored for job %d", seq)
				continue
			}
			scripts[i] = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return scripts, errs
}

// opKind is one buffered write.
type opKind uint8

const (
	opPutJob opKind = iota
	opDelJob
	opPutScript
	opPutQueue
	opDelQueue
	opPutNode
	opDelNode
	opPutServer
	opPutMeta // a value in bucketMeta (the next sequence number, the lease ceiling)
	opDelSubjob
	opPutEvent
	opDelEvent
	opPutResv
	opDelResv
	opPutResource
	opDelResource
	opPutHook
	opDelHook
	// opCount is the number of kinds: a log entry naming a kind at or
	// past it is malformed (decodeEntry).
	opCount
)

type op struct {
	kind  opKind
	key   []byte
	value []byte
}

// Batch buffers the writes of one mutation. Values are encoded when added,
// so the caller may keep modifying its objects afterwards.
type Batch struct {
	ops   []op
	err   error
	after []func()
}

// After runs f once the batch is durable: after its group's commit, outside
// the lock, before the callers get their answers; never when the commit
// fails. Work that must not happen before the change is durable
// (accounting records, scheduler events) goes here.
func (b *Batch) After(f func()) { b.after = append(b.after, f) }

func (b *Batch) add(kind opKind, key []byte, v any) {
	if b.err != nil {
		return
	}
	var raw []byte
	switch x := v.(type) {
	case nil:
	case []byte:
		raw = x
	default:
		var err error
		if raw, err = encodeRecord(v); err != nil {
			b.err = fmt.Errorf("encode %T: %w", v, err)
			return
		}
	}
	b.ops = append(b.ops, op{kind, key, raw})
}

// recordEncoder is an encoder and its buffer, kept between records: a
// cycle's commit encodes thousands of jobs, and a fresh buffer grew by
// copying several times for each.
type recordEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var recordEncoders = sync.Pool{New: func() any {
	e := &recordEncoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}}

// encodeRecord is msgpack.Marshal(v) through a kept encoder, or through
// the record's own appending encoder when it has one (jobs).
func encodeRecord(v any) ([]byte, error) {
	e := recordEncoders.Get().(*recordEncoder)
	e.buf.Reset()
	var err error
	if a, ok := v.(interface{ AppendMsgpack([]byte) []byte }); ok {
		e.buf.Write(a.AppendMsgpack(e.buf.AvailableBuffer()))
	} else {
		err = e.enc.Encode(v)
	}
	raw := append([]byte(nil), e.buf.Bytes()...)
	if e.buf.Cap() <= 1<<20 {
		recordEncoders.Put(e)
	}
	return raw, err
}

// PutJob writes a job.
func (b *Batch) PutJob(j *model.Job) { b.add(opPutJob, jobKey(j.Seq, kindJob), j) }

// DeleteJob removes a job and its script, or an array with its script and
// every record of its subjobs.
func (b *Batch) DeleteJob(seq int64) { b.add(opDelJob, encodeSeq(seq), nil) }

// subjobKey is the bucketJobs key of a subjob's record.
func subjobKey(seq int64, kind byte, index int) []byte {
	k := make([]byte, 13)
	binary.BigEndian.PutUint64(k, uint64(seq))
	k[8] = kind
	binary.BigEndian.PutUint32(k[9:], uint32(index))
	return k
}

// PutSubjob writes a subjob that has a record of its own.
func (b *Batch) PutSubjob(j *model.Job) {
	b.add(opPutJob, subjobKey(j.Seq, kindSubjob, j.Index), j)
}

// EndSubjob replaces a subjob's record, if it has one, with what is kept
// once it has finished.
func (b *Batch) EndSubjob(seq int64, e *model.SubjobEnd) {
	b.add(opDelSubjob, subjobKey(seq, kindSubjob, e.Index), nil)
	b.add(opPutJob, subjobKey(seq, kindSubjobEnd, e.Index), e)
}

// DeleteSubjob removes the record of a subjob queued alone, which goes
// back to its parent's queued indices.
func (b *Batch) DeleteSubjob(seq int64, index int) {
	b.add(opDelSubjob, subjobKey(seq, kindSubjob, index), nil)
}

// PutScript writes a job's script.
func (b *Batch) PutScript(seq int64, script []byte) {
	b.add(opPutScript, jobKey(seq, kindScript), script)
}

// PutQueue writes a queue.
func (b *Batch) PutQueue(q *model.Object) { b.add(opPutQueue, []byte(q.Name), q) }

// DeleteQueue removes a queue.
func (b *Batch) DeleteQueue(name string) { b.add(opDelQueue, []byte(name), nil) }

// PutNode writes a node.
func (b *Batch) PutNode(n *model.Object) { b.add(opPutNode, []byte(n.Name), n) }

// DeleteNode removes a node.
func (b *Batch) DeleteNode(name string) { b.add(opDelNode, []byte(name), nil) }

// PutServer writes the server object.
func (b *Batch) PutServer(o *model.Object) { b.add(opPutServer, keyServer, o) }

// PutSched writes the sched object, beside the server's (keySched).
func (b *Batch) PutSched(o *model.Object) { b.add(opPutServer, keySched, o) }

// SetNextSeq records the next job sequence number.
func (b *Batch) SetNextSeq(n int64) { b.add(opPutMeta, keyNextSeq, encodeSeq(n)) }

// SetLeaseCeiling records the longest lease granted to a mom, in seconds:
// a server started later (after a restart, or a new leader of a
// replicated group) requeues nothing before that long, whatever the
// settings say by then.
func (b *Batch) SetLeaseCeiling(secs int64) { b.add(opPutMeta, keyLeaseCeiling, encodeSeq(secs)) }

// PutEvent keeps a published change of a job (the event stream).
func (b *Batch) PutEvent(e *proto.JobEvent) { b.add(opPutEvent, encodeEvent(e.Seq), e) }

// DeleteEvent forgets change seq (no longer kept for resuming).
func (b *Batch) DeleteEvent(seq uint64) { b.add(opDelEvent, encodeEvent(seq), nil) }

// PutResv writes a reservation.
func (b *Batch) PutResv(r *model.Resv) { b.add(opPutResv, encodeSeq(r.Seq), r) }

// DeleteResv removes a reservation.
func (b *Batch) DeleteResv(seq int64) { b.add(opDelResv, encodeSeq(seq), nil) }

// PutResource stores a custom resource's definition.
func (b *Batch) PutResource(c resc.Custom) { b.add(opPutResource, []byte(c.Name), c) }

// DeleteResource removes a custom resource's definition.
func (b *Batch) DeleteResource(name string) { b.add(opDelResource, []byte(name), nil) }

// PutHook stores a site hook, its script and configuration file.
func (b *Batch) PutHook(h *hook.Hook) { b.add(opPutHook, []byte(h.Name), h) }

// DeleteHook removes a site hook.
func (b *Batch) DeleteHook(name string) { b.add(opDelHook, []byte(name), nil) }

func encodeEvent(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// Events reads the last n changes kept (PutEvent), in sequence order.
func (s *Store) Events(n int) ([]proto.JobEvent, error) {
	var out []proto.JobEvent
	err := guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketEvents).Cursor()
			var k, v []byte
			for k, v = c.Last(); k != nil && len(out) < n; k, v = c.Prev() {
				e, err := decodeEvent(k, v)
				if err != nil {
					return fmt.Errorf("store %s: %w", s.path, err)
				}
				if len(out) > 0 && e.Seq+1 != out[len(out)-1].Seq {
					break // an older run's changes before a gap: not kept for resuming
				}
				out = append(out, e)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// decodeEvent reads the event record v under key k.
func decodeEvent(k, v []byte) (proto.JobEvent, error) {
	var e proto.JobEvent
	if err := decodeRecord(v, &e); err != nil {
		return e, fmt.Errorf("event record %x: %w", k, err)
	}
	if len(k) != 8 || e.Seq != binary.BigEndian.Uint64(k) {
		return e, fmt.Errorf("event record %x holds change %d", k, e.Seq)
	}
	return e, nil
}

// Empty reports whether the batch has no writes.
func (b *Batch) Empty() bool { return len(b.ops) == 0 }

// Commit applies the batches in order in one transaction and syncs it.
func (s *Store) Commit(batches []*Batch) error {
	for _, b := range batches {
		if b.err != nil {
			return b.err
		}
	}
	if s.opts.BeforeCommit != nil {
		if err := s.opts.BeforeCommit(); err != nil {
			return err
		}
	}
	if err := fault.Hit(fault.StoreBeforeCommit); err != nil {
		return err
	}
	if s.repl != nil {
		entry, err := EncodeEntry(batches)
		if err != nil {
			return err
		}
		if err := s.repl.Replicate(entry); err != nil {
			return err
		}
		return fault.Hit(fault.StoreAfterCommit)
	}
	start := time.Now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, b := range batches {
			for _, o := range b.ops {
				if err := apply(tx, o); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if s.opts.SyncDelay > 0 {
		time.Sleep(s.opts.SyncDelay)
	}
	if s.opts.AfterCommit != nil {
		s.opts.AfterCommit(len(batches), time.Since(start), err)
	}
	if err == nil {
		err = fault.Hit(fault.StoreAfterCommit)
	}
	return err
}

func apply(tx *bolt.Tx, o op) error {
	switch o.kind {
	case opPutJob:
		return tx.Bucket(bucketJobs).Put(o.key, o.value)
	case opDelJob:
		// Every record under the sequence number: the job, its script,
		// and an array's subjobs. Keys are gathered first: deleting
		// while a cursor walks may skip the key after each deletion.
		var keys [][]byte
		c := tx.Bucket(bucketJobs).Cursor()
		for k, _ := c.Seek(o.key); k != nil && len(k) > 8 && string(k[:8]) == string(o.key); k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := tx.Bucket(bucketJobs).Delete(k); err != nil {
				return err
			}
		}
		return nil
	case opDelSubjob:
		return tx.Bucket(bucketJobs).Delete(o.key)
	case opPutScript:
		return tx.Bucket(bucketJobs).Put(o.key, o.value)
	case opPutQueue:
		return tx.Bucket(bucketQueues).Put(o.key, o.value)
	case opDelQueue:
		return tx.Bucket(bucketQueues).Delete(o.key)
	case opPutNode:
		return tx.Bucket(bucketNodes).Put(o.key, o.value)
	case opDelNode:
		return tx.Bucket(bucketNodes).Delete(o.key)
	case opPutServer:
		return tx.Bucket(bucketServer).Put(o.key, o.value)
	case opPutMeta:
		return tx.Bucket(bucketMeta).Put(o.key, o.value)
	case opPutEvent:
		return tx.Bucket(bucketEvents).Put(o.key, o.value)
	case opDelEvent:
		return tx.Bucket(bucketEvents).Delete(o.key)
	case opPutResv:
		return tx.Bucket(bucketResvs).Put(o.key, o.value)
	case opDelResv:
		return tx.Bucket(bucketResvs).Delete(o.key)
	case opPutResource:
		return tx.Bucket(bucketResources).Put(o.key, o.value)
	case opDelResource:
		return tx.Bucket(bucketResources).Delete(o.key)
	case opPutHook:
		return tx.Bucket(bucketHooks).Put(o.key, o.value)
	case opDelHook:
		return tx.Bucket(bucketHooks).Delete(o.key)
	}
	return fmt.Errorf("unknown store operation %d", o.kind)
}
