package store

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// FuzzDecodeEvent reads arbitrary bytes as a stored event record: it
// fails cleanly or gives a change that, written back, reads the same.
func FuzzDecodeEvent(f *testing.F) {
	exit := 3
	for _, e := range []proto.JobEvent{
		{Seq: 1, JobID: "1.srv", State: "Q"},
		{Seq: 42, Time: 1700000000123, JobID: "12[3].srv", Owner: "alice", Queue: "workq", State: "F", Substate: "92", ExitStatus: &exit, Comment: "done"},
	} {
		raw, err := encodeRecord(&e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(encodeEvent(e.Seq), raw)
	}
	f.Add(encodeEvent(7), []byte{0x99, 0x07})
	f.Add([]byte{1}, []byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		e, err := decodeEvent(k, v)
		if err != nil {
			return
		}
		raw, err := encodeRecord(&e)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", e, err)
		}
		again, err := decodeEvent(k, raw)
		if err != nil || !reflect.DeepEqual(e, again) {
			t.Fatalf("round trip of %+v: %+v, %v", e, again, err)
		}
	})
}
