package model

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/resc"
)

// A reservation's placement is typed in memory and kept as its text in a
// record, the form stores before it hold: an old record's text reads
// typed, a placement with no text is none, and text that is no placement
// is refused rather than read as none.
func TestResvPlaceStoredAsText(t *testing.T) {
	t.Parallel()
	r := &Resv{Seq: 3, Kind: ResvAdvance, Select: "2:ncpus=1", Place: resc.Place{Arrangement: resc.ArrangeScatter, Sharing: resc.SharingExcl}}
	rec, err := msgpack.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Resv
	if err := msgpack.Unmarshal(rec, &back); err != nil || back.Place != r.Place || !back.Place.Exclusive() {
		t.Fatalf("round trip: %+v, %v", back.Place, err)
	}
	for _, tc := range []struct {
		text string
		want resc.Place
		bad  bool
	}{
		{"scatter:excl", resc.Place{Arrangement: resc.ArrangeScatter, Sharing: resc.SharingExcl}, false},
		{"exclhost", resc.Place{Sharing: resc.SharingExclHost}, false},
		{"", resc.Place{}, false},
		{"sideways", resc.Place{}, true},
	} {
		old, err := msgpack.Marshal(map[string]any{"Seq": 3, "Kind": ResvAdvance, "Place": tc.text})
		if err != nil {
			t.Fatal(err)
		}
		var got Resv
		err = msgpack.Unmarshal(old, &got)
		if tc.bad != (err != nil) || (!tc.bad && got.Place != tc.want) {
			t.Errorf("a record's place %q reads as %+v, %v", tc.text, got.Place, err)
		}
	}
}
