// Replication: in a replicated server group (internal/ha) the leader's
// commits do not write the file directly. Each group's batches become one
// entry of the group's log (EncodeEntry); once a majority holds it, every
// member, the leader included, applies it to its own store (ApplyEntry).
// The store records the index of the last entry applied in the same
// transaction, so an entry replayed after a restart is applied once.

package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gopbs/gopbs/internal/atomicfile"
)

// Replicator carries a commit's entry through the group's log and returns
// once every write in it is applied to this store (or the error: then
// nothing may be assumed applied).
type Replicator interface {
	Replicate(entry []byte) error
}

// SetReplicator routes every later Commit through r. Call it before the
// store is used.
func (s *Store) SetReplicator(r Replicator) { s.repl = r }

// entryVersion is the first byte of an entry: its layout.
const entryVersion = 1

// maxEntryOps bounds the operations one entry may claim, so a damaged
// entry cannot make the decoder allocate without bound.
const maxEntryOps = 1 << 24

// EncodeEntry is the batches' writes, in order, as one log entry: the
// version, the number of writes, then each write as its kind, key and
// value, lengths as uvarints.
func EncodeEntry(batches []*Batch) ([]byte, error) {
	n, size := 0, 16
	for _, b := range batches {
		if b.err != nil {
			return nil, b.err
		}
		n += len(b.ops)
		for _, o := range b.ops {
			size += 1 + 2*binary.MaxVarintLen32 + len(o.key) + len(o.value)
		}
	}
	out := make([]byte, 0, size)
	out = append(out, entryVersion)
	out = binary.AppendUvarint(out, uint64(n))
	for _, b := range batches {
		for _, o := range b.ops {
			out = append(out, byte(o.kind))
			out = binary.AppendUvarint(out, uint64(len(o.key)))
			out = append(out, o.key...)
			out = binary.AppendUvarint(out, uint64(len(o.value)))
			out = append(out, o.value...)
		}
	}
	return out, nil
}

// ErrMalformedEntry is the class of CheckEntry's and ApplyEntry's errors
// for an entry no store can decode: replaying it cannot help.
var ErrMalformedEntry = errors.New("malformed log entry")

// decodeEntry parses an entry from EncodeEntry. Keys and values alias data.
func decodeEntry(data []byte) ([]op, error) {
	if len(data) == 0 || data[0] != entryVersion {
		return nil, fmt.Errorf("%w: unknown version", ErrMalformedEntry)
	}
	data = data[1:]
	n, k := binary.Uvarint(data)
	if k <= 0 || n > maxEntryOps || n > uint64(len(data)) {
		return nil, fmt.Errorf("%w: bad count", ErrMalformedEntry)
	}
	data = data[k:]
	ops := make([]op, 0, n)
	field := func() ([]byte, error) {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) {
			return nil, fmt.Errorf("%w: bad length", ErrMalformedEntry)
		}
		f := data[k : k+int(l)]
		data = data[k+int(l):]
		return f, nil
	}
	for range n {
		if len(data) == 0 {
			return nil, fmt.Errorf("%w: truncated", ErrMalformedEntry)
		}
		kind := opKind(data[0])
		if kind >= opCount {
			return nil, fmt.Errorf("%w: unknown operation %d", ErrMalformedEntry, kind)
		}
		data = data[1:]
		key, err := field()
		if err != nil {
			return nil, err
		}
		value, err := field()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op{kind: kind, key: key, value: value})
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last write", ErrMalformedEntry, len(data))
	}
	return ops, nil
}

// CheckEntry reports whether data is an entry ApplyEntry can decode. The
// group's leader checks every entry before it is appended to the log,
// and a member checks the entries it has yet to apply before it takes
// part in the group: an entry that no member can apply must never be
// committed, for every member would stop on it.
func CheckEntry(data []byte) error {
	_, err := decodeEntry(data)
	return err
}

// ApplyEntry applies log entry number index to the file in one
// transaction, with the index, unless an entry at index or later is
// applied already (a replay after a restart).
func (s *Store) ApplyEntry(index uint64, data []byte) error {
	ops, err := decodeEntry(data)
	if err != nil {
		return fmt.Errorf("store %s: entry %d: %w", s.path, index, err)
	}
	start := time.Now()
	n := 0
	err = s.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyApplied); len(v) == 8 && binary.BigEndian.Uint64(v) >= index {
			return nil
		}
		n = 1
		for _, o := range ops {
			if err := apply(tx, o); err != nil {
				return err
			}
		}
		return meta.Put(keyApplied, binary.BigEndian.AppendUint64(nil, index))
	})
	if s.opts.SyncDelay > 0 && n > 0 {
		time.Sleep(s.opts.SyncDelay)
	}
	if s.opts.AfterCommit != nil && n > 0 {
		s.opts.AfterCommit(1, time.Since(start), err)
	}
	return err
}

// Applied is the index of the last log entry applied (0: none).
func (s *Store) Applied() (uint64, error) {
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyApplied); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return n, err
}

// Copy is a consistent copy of the store being written (a snapshot of the
// group's state). Close it once written.
type Copy struct {
	tx *bolt.Tx
}

// CopyNow starts a copy of the store as it is now; writes after it are
// not in it.
func (s *Store) CopyNow() (*Copy, error) {
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.path, err)
	}
	return &Copy{tx: tx}, nil
}

// WriteTo writes the whole file as of CopyNow.
func (c *Copy) WriteTo(w io.Writer) (int64, error) { return c.tx.WriteTo(w) }

// Close ends the copy.
func (c *Copy) Close() { c.tx.Rollback() }

// Replace makes the store a copy read from r (another member's snapshot):
// it is written beside the file, checked as Open checks a store, and
// renamed over it. Nobody may use the store meanwhile (a member applies
// a snapshot only while it serves nothing).
func (s *Store) Replace(r io.Reader) error {
	tmp := s.path + ".restore"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("restore store: %w", err)
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("restore store %s: %w", tmp, err)
	}
	check, _, err := openFile(tmp, s.opts)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("restore store: the copy received is not a store: %w", err)
	}
	check.Close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("restore store %s: %w", s.path, err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("restore store: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(s.path)); err != nil {
		return err
	}
	db, err := openBolt(s.path)
	if err != nil {
		return err
	}
	s.db = db
	return nil
}
