package jobjson

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

var zone = time.FixedZone("X", 3600)

func sample() proto.Status {
	return proto.Status{Name: "7.srv", Attrs: []proto.Attr{
		{Name: "Job_Name", Value: "run 1"},
		{Name: "Job_Owner", Value: "alice@h"},
		{Name: "ctime", Value: "1700000000"},
		{Name: "Resource_List", Resource: "ncpus", Value: "2"},
		{Name: "Resource_List", Resource: "walltime", Value: "01:00:00"},
		{Name: "Variable_List", Value: "PBS_O_HOME=/home/a,X=1\\,2"},
		{Name: "Priority", Value: "0123"},
	}}
}

// An untouched file decodes to the attributes it was written from, and
// Diff finds nothing.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	data, err := Encode(sample(), "srv", time.Unix(1700000100, 0), zone)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ctime":"Tue Nov 14 23:13:20 2023"`) {
		t.Errorf("times are not written as qstat writes them:\n%s", data)
	}
	j, err := Decode(data, zone)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Key]string{
		{Name: "Job_Name"}: "run 1", {Name: "Job_Owner"}: "alice@h", {Name: "ctime"}: "1700000000",
		{"Resource_List", "ncpus"}: "2", {"Resource_List", "walltime"}: "01:00:00",
		{Name: "Variable_List"}: "PBS_O_HOME=/home/a,X=1\\,2", {Name: "Priority"}: "0123",
	}
	if j.ID != "7.srv" || !reflect.DeepEqual(j.Attrs, want) {
		t.Errorf("decoded %s %v", j.ID, j.Attrs)
	}
	if d := Diff(j, j); len(d) != 0 {
		t.Errorf("diff of a job with itself: %v", d)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	a := &Job{ID: "1", Attrs: map[Key]string{{Name: "Job_Name"}: "x", {"Resource_List", "ncpus"}: "1", {Name: "queue"}: "workq"}}
	b := &Job{ID: "1", Attrs: map[Key]string{{Name: "Job_Name"}: "x", {"Resource_List", "ncpus"}: "1", {"Resource_List", "walltime"}: "00:10:00"}}
	got := Diff(a, b)
	want := []proto.Attr{{Name: "Resource_List", Resource: "walltime", Value: "00:10:00"}, {Name: "queue", Op: proto.OpUnset}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff = %v, want %v", got, want)
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`not json`, "not a JSON object"},
		{`{"Jobs":{}}`, "holds 0 jobs"},
		{`{"Jobs":{"1":{},"2":{}}}`, "holds 2 jobs"},
		{`{"x":1}`, `no "Jobs"`},
		{`{"Jobs":{"1":{"a":[1]}}}`, "a: want a string"},
		{`{"Jobs":{"1":{"a":null}}}`, "null"},
		{`{"Jobs":{"1":{"R":{"x":{"y":1}}}}}`, "R.x"},
		{`{"Jobs":{"1":{"ctime":"yesterday"}}}`, "is not a time"},
		{`{"Jobs":{"1":{"Variable_List":{"A=B":"1"}}}}`, "bad variable name"},
		{`{"Jobs":{"1":{}}} trailing`, "text after"},
		{`{"Jobs":{"1":{"Variable_List":"A=1"}}}`, "want an object of variables"},
	} {
		_, err := Decode([]byte(tc.in), time.UTC)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	if _, err := Decode(make([]byte, MaxSize+1), time.UTC); err == nil {
		t.Error("an oversized file was read")
	}
}

// A number or boolean a filter writes reads as its text; a time may be
// written as Unix seconds.
func TestDecodeValues(t *testing.T) {
	t.Parallel()
	j, err := Decode([]byte(`{"Jobs":{"1.s":{"Rerunable":false,"Priority":-5,"Execution_Time":1700000000,"Resource_List":{"mem":"1gb"}}}}`), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[Key]string{{Name: "Rerunable"}: "False", {Name: "Priority"}: "-5", {Name: "Execution_Time"}: "1700000000", {"Resource_List", "mem"}: "1gb"} {
		if got := j.Attrs[k]; got != want {
			t.Errorf("%v = %q, want %q", k, got, want)
		}
	}
}

// timeValue is a time attribute's value as Unix seconds.
func timeValue(k Key, v string) (int64, bool) {
	if !display.IsTimeAttr(proto.Attr{Name: k.Name, Resource: k.Resource}) {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
