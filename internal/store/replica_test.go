package store

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
)

// TestApplyEntryReplaysOnce: an entry applied to a second store gives it
// the first store's state, and applying it (or an older one) again after
// a later entry changes nothing.
func TestApplyEntryReplaysOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b1 := &Batch{}
	b1.PutQueue(&model.Object{Name: "q1"})
	b1.SetNextSeq(7)
	e1, err := EncodeEntry([]*Batch{b1})
	if err != nil {
		t.Fatal(err)
	}
	b2 := &Batch{}
	b2.DeleteQueue("q1")
	e2, _ := EncodeEntry([]*Batch{b2})
	for _, step := range []struct {
		index uint64
		entry []byte
	}{{1, e1}, {2, e2}, {1, e1}} {
		if err := s.ApplyEntry(step.index, step.entry); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Queues) != 0 || snap.NextSeq != 7 {
		t.Fatalf("queues %v next %d: want none and 7 (entry 1 replayed after 2?)", snap.Queues, snap.NextSeq)
	}
	if n, _ := s.Applied(); n != 2 {
		t.Fatalf("applied %d, want 2", n)
	}
	// A copy replaces another store whole.
	var buf bytes.Buffer
	c, err := s.CopyNow()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c.Close()
	other, _, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Replace(&buf); err != nil {
		t.Fatal(err)
	}
	if n, _ := other.Applied(); n != 2 {
		t.Fatalf("replaced store applied %d, want 2", n)
	}
	if err := other.Replace(bytes.NewReader([]byte("not a store"))); err == nil {
		t.Fatal("garbage replaced the store")
	}
	if n, _ := other.Applied(); n != 2 {
		t.Fatalf("after a refused copy: applied %d, want 2", n)
	}
}

// TestEntryCarriesEveryWrite: a write of every kind goes through a log
// entry (a kind the decoder did not know, as reservations once were,
// would stop every member of a group on its first reservation), and
// CheckEntry refuses a kind past the last with ErrMalformedEntry.
func TestEntryCarriesEveryWrite(t *testing.T) {
	t.Parallel()
	b := &Batch{}
	b.PutQueue(&model.Object{Name: "q1"})
	b.SetNextSeq(9)
	b.PutResv(&model.Resv{Seq: 3})
	b.DeleteResv(2)
	b.DeleteEvent(1)
	e, err := EncodeEntry([]*Batch{b})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckEntry(e); err != nil {
		t.Fatalf("an entry with reservations: %v", err)
	}
	s, _, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ApplyEntry(1, e); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resvs) != 1 {
		t.Fatalf("reservations after the entry: %d, want 1", len(snap.Resvs))
	}
	for kind := 0; kind < int(opCount); kind++ {
		if err := CheckEntry([]byte{entryVersion, 1, byte(kind), 0, 0}); err != nil {
			t.Errorf("write kind %d refused: %v", kind, err)
		}
	}
	bad := []byte{entryVersion, 1, 99, 0, 0}
	if err := CheckEntry(bad); !errors.Is(err, ErrMalformedEntry) {
		t.Fatalf("unknown kind 99: %v, want ErrMalformedEntry", err)
	}
	if err := s.ApplyEntry(2, bad); !errors.Is(err, ErrMalformedEntry) {
		t.Fatalf("applying kind 99: %v, want ErrMalformedEntry", err)
	}
}

// FuzzDecodeEntry: no entry crashes the decoder or makes it allocate
// beyond its input; what it accepts encodes to an entry with the same
// writes.
func FuzzDecodeEntry(f *testing.F) {
	b := &Batch{}
	b.PutQueue(&model.Object{Name: "workq"})
	b.DeleteNode("n1")
	e, _ := EncodeEntry([]*Batch{b})
	f.Add(e)
	f.Add([]byte{entryVersion, 0})
	f.Add([]byte{entryVersion, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := decodeEntry(data)
		if err != nil {
			return
		}
		again, err := EncodeEntry([]*Batch{{ops: ops}})
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeEntry(again)
		if err != nil || len(back) != len(ops) {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		for i := range ops {
			if back[i].kind != ops[i].kind || !bytes.Equal(back[i].key, ops[i].key) || !bytes.Equal(back[i].value, ops[i].value) {
				t.Fatalf("write %d changed on the way back", i)
			}
		}
	})
}
