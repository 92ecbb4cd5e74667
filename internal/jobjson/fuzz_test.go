package jobjson

import (
	"reflect"
	"testing"
	"time"
)

// FuzzDecode: any bytes decode or fail cleanly, and a decoded job written
// again decodes to the same attributes (what a filter leaves alone never
// shows as a change).
func FuzzDecode(f *testing.F) {
	data, _ := Encode(sample(), "srv", time.Unix(1700000100, 0), time.UTC)
	f.Add(data)
	f.Add([]byte(`{"Jobs":{"1.s":{"Rerunable":false,"Priority":-5,"Execution_Time":1700000000,"Resource_List":{"mem":"1gb"}}}}`))
	f.Add([]byte(`{"Jobs":{"1":{"Variable_List":{"A":"x,y","B":2}}}}`))
	f.Add([]byte(`{"Jobs":{"1":{"estimated":{"start_time":"UNKNOWN"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Decode(data, time.UTC)
		if err != nil {
			return
		}
		for k, v := range j.Attrs {
			// ctime strings exist only for years 0..9999: a larger time a
			// filter wrote as seconds cannot be written back as text.
			if n, ok := timeValue(k, v); ok && (n < -62135596800 || n > 253402300799) {
				return
			}
		}
		again, err := Encode(j.Status(), "srv", time.Unix(0, 0), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		k, err := Decode(again, time.UTC)
		if err != nil {
			t.Fatalf("re-encoded job does not decode: %v\n%s", err, again)
		}
		if k.ID != j.ID || !reflect.DeepEqual(k.Attrs, j.Attrs) {
			t.Fatalf("round trip changed the job:\n%v\n%v\n%s", j.Attrs, k.Attrs, again)
		}
	})
}
