package ha

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/gopbs/gopbs/internal/store"
)

// logStore is raft's log and stable store in one bbolt file
// (server_priv/raft/raft.db): bucket "logs" maps the 8-byte big-endian
// index to an encoded raft.Log (encodeLog), bucket "conf" holds raft's
// few stable values (current term, last vote). It does what
// raft-boltdb/v2 does; that module (v2.3.1) cannot be built with raft
// v1.8.0, whose go-metrics no longer has the compat package it imports.
type logStore struct {
	db   *bolt.DB
	path string
}

var (
	bucketLogs = []byte("logs")
	bucketConf = []byte("conf")
)

// errKeyNotFound is the error raft expects from a stable store for an
// unset key (it compares the text).
var errKeyNotFound = errors.New("not found")

// openLogStore opens (creating) the file; a damaged file is an error
// naming it and the command that rebuilds the member.
func openLogStore(path string) (*logStore, error) {
	var db *bolt.DB
	err := store.Guard(path, func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
		if err != nil {
			return err
		}
		return db.Update(func(tx *bolt.Tx) error {
			for _, b := range [][]byte{bucketLogs, bucketConf} {
				if _, err := tx.CreateBucketIfNotExists(b); err != nil {
					return err
				}
			}
			// Read every record once: a damaged page fails here, at
			// start, rather than in the middle of an election.
			return tx.Bucket(bucketLogs).ForEach(func(k, v []byte) error {
				var l raft.Log
				if len(k) != 8 {
					return fmt.Errorf("log key %x", k)
				}
				return decodeLog(v, &l)
			})
		})
	})
	if err != nil {
		if db != nil {
			db.Close()
		}
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("raft log %s is locked: is another pbs_server running on this PBS_HOME?", path)
		}
		return nil, fmt.Errorf("raft log %s is damaged (left untouched): %w; rebuild this member from the others with pbs_server -ha-rebuild", path, err)
	}
	return &logStore{db: db, path: path}, nil
}

func (s *logStore) Close() error { return s.db.Close() }

func indexKey(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// encodeLog lays a log record out as index, term, type (8, 8, 1 bytes),
// appended-at in Unix nanoseconds (8), then data and extensions, each
// after its 4-byte length.
func encodeLog(l *raft.Log) []byte {
	out := make([]byte, 0, 33+8+len(l.Data)+len(l.Extensions))
	out = binary.BigEndian.AppendUint64(out, l.Index)
	out = binary.BigEndian.AppendUint64(out, l.Term)
	out = append(out, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	out = binary.BigEndian.AppendUint64(out, uint64(at))
	out = binary.BigEndian.AppendUint32(out, uint32(len(l.Data)))
	out = append(out, l.Data...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(l.Extensions)))
	return append(out, l.Extensions...)
}

var errLogRecord = errors.New("malformed raft log record")

// decodeLog parses encodeLog's layout into l, copying the bytes (bbolt's
// are valid only inside the transaction).
func decodeLog(b []byte, l *raft.Log) error {
	if len(b) < 33 {
		return fmt.Errorf("%w: %d bytes", errLogRecord, len(b))
	}
	l.Index = binary.BigEndian.Uint64(b)
	l.Term = binary.BigEndian.Uint64(b[8:])
	l.Type = raft.LogType(b[16])
	if at := int64(binary.BigEndian.Uint64(b[17:])); at != 0 {
		l.AppendedAt = time.Unix(0, at)
	} else {
		l.AppendedAt = time.Time{}
	}
	rest := b[25:]
	field := func() ([]byte, error) {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: truncated", errLogRecord)
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, fmt.Errorf("%w: length %d past the end", errLogRecord, n)
		}
		f := append([]byte(nil), rest[4:4+n]...)
		rest = rest[4+n:]
		return f, nil
	}
	var err error
	if l.Data, err = field(); err != nil {
		return err
	}
	if l.Extensions, err = field(); err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d bytes after it", errLogRecord, len(rest))
	}
	return nil
}

func (s *logStore) FirstIndex() (uint64, error) {
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().First(); k != nil {
			n = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return n, err
}

func (s *logStore) LastIndex() (uint64, error) {
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketLogs).Cursor().Last(); k != nil {
			n = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return n, err
}

func (s *logStore) GetLog(index uint64, l *raft.Log) error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLogs).Get(indexKey(index))
		if v == nil {
			return raft.ErrLogNotFound
		}
		if err := decodeLog(v, l); err != nil {
			return fmt.Errorf("raft log %s: entry %d: %w", s.path, index, err)
		}
		return nil
	})
}

func (s *logStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs writes the records in one transaction: one fsync for a
// whole batch of applies.
func (s *logStore) StoreLogs(logs []*raft.Log) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLogs)
		for _, l := range logs {
			if err := b.Put(indexKey(l.Index), encodeLog(l)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *logStore) DeleteRange(min, max uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLogs).Cursor()
		for k, _ := c.Seek(indexKey(min)); k != nil && binary.BigEndian.Uint64(k) <= max; k, _ = c.Next() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *logStore) Set(k, v []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketConf).Put(k, v) })
}

func (s *logStore) Get(k []byte) ([]byte, error) {
	var v []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketConf).Get(k); got != nil {
			v = append([]byte(nil), got...)
		}
		return nil
	})
	if err == nil && v == nil {
		return nil, errKeyNotFound
	}
	return v, err
}

func (s *logStore) SetUint64(k []byte, v uint64) error {
	return s.Set(k, binary.BigEndian.AppendUint64(nil, v))
}

func (s *logStore) GetUint64(k []byte) (uint64, error) {
	v, err := s.Get(k)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raft log %s: stable value %q is %d bytes", s.path, k, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
