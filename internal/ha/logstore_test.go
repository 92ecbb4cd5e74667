package ha

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestLogStore: records come back as written, a range is deleted, the
// stable values survive a reopen, and an unset key is raft's "not found".
func TestLogStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	s, err := openLogStore(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 5)
	var logs []*raft.Log
	for i := uint64(1); i <= 5; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte{byte(i)}, AppendedAt: at})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := s.GetLog(3, &l); err != nil || l.Index != 3 || l.Term != 2 || !bytes.Equal(l.Data, []byte{3}) || !l.AppendedAt.Equal(at) {
		t.Fatalf("GetLog(3) = %+v, %v", l, err)
	}
	if err := s.DeleteRange(1, 2); err != nil {
		t.Fatal(err)
	}
	if first, _ := s.FirstIndex(); first != 3 {
		t.Fatalf("first index %d after deleting 1-2, want 3", first)
	}
	if last, _ := s.LastIndex(); last != 5 {
		t.Fatalf("last index %d, want 5", last)
	}
	if err := s.GetLog(1, &l); err != raft.ErrLogNotFound {
		t.Fatalf("GetLog(1) after delete: %v", err)
	}
	if _, err := s.Get([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("unset key: %v, want raft's not found", err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = openLogStore(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("term after reopen %d, %v", v, err)
	}
}

// TestDamagedLogStoreRefused: a damaged raft log is refused with an
// error naming the file and the command that rebuilds the member.
func TestDamagedLogStoreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	s, err := openLogStore(path)
	if err != nil {
		t.Fatal(err)
	}
	s.StoreLog(&raft.Log{Index: 1, Term: 1, Data: []byte("x")})
	s.Close()
	b, _ := os.ReadFile(path)
	for i := 0; i < 8192 && i < len(b); i++ {
		b[i] ^= 0x5a // both meta pages
	}
	os.WriteFile(path, b, 0o600)
	_, err = openLogStore(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "-ha-rebuild") {
		t.Fatalf("damaged raft log: %v", err)
	}
}

// FuzzDecodeLog: no record crashes the decoder; what it accepts encodes
// back to the same record.
func FuzzDecodeLog(f *testing.F) {
	f.Add(encodeLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("entry"), AppendedAt: time.Unix(1, 0)}))
	f.Add(encodeLog(&raft.Log{}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if decodeLog(b, &l) != nil {
			return
		}
		var back raft.Log
		if err := decodeLog(encodeLog(&l), &back); err != nil {
			t.Fatal(err)
		}
		if back.Index != l.Index || back.Term != l.Term || back.Type != l.Type || !bytes.Equal(back.Data, l.Data) || !bytes.Equal(back.Extensions, l.Extensions) || !back.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("record changed on the way back: %+v -> %+v", l, back)
		}
	})
}
