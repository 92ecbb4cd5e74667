package place

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/resc"
)

func TestParseExecVnodeStrict(t *testing.T) {
	t.Parallel()
	got, err := ParseExecVnode(nil, "(n1:ncpus=2:arch=linux)+(n1:mem=1kb)")
	want := []Assigned{{"n1", resc.Amounts{"ncpus": 2}}, {"n1", resc.Amounts{"mem": 1024}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct{ in, err string }{
		{"(:ncpus=1)", "names no node"},
		{"(n1:ncpus)", `"ncpus" is not name=value`},
		{"(n1:ncpus=lots)", "ncpus=lots is not an amount"},
	} {
		if _, err := ParseExecVnode(nil, tc.in); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseExecVnode(%q): %v, want %q", tc.in, err, tc.err)
		}
		if got := ParseAssigned(nil, tc.in); len(got) > 1 {
			t.Errorf("ParseAssigned(%q) = %+v", tc.in, got)
		}
	}
}

// FuzzParseExecVnode: any text reads without a panic; the lenient reading
// keeps what the strict one keeps when the strict one succeeds, and every
// part it gives names a node.
func FuzzParseExecVnode(f *testing.F) {
	f.Add("(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)")
	f.Add("n1+n2")
	f.Add("(h[0]:ncpus=1:ngpus=2)+(:x)")
	f.Fuzz(func(t *testing.T, s string) {
		lenient := ParseAssigned(nil, s)
		for _, a := range lenient {
			if a.Node == "" {
				t.Fatalf("a part with no node: %+v", lenient)
			}
		}
		strict, err := ParseExecVnode(nil, s)
		if err == nil && !reflect.DeepEqual(strict, lenient) {
			t.Fatalf("strict %+v, lenient %+v", strict, lenient)
		}
		if len(resc.SplitExecVnode(s)) < len(lenient) {
			t.Fatalf("more chunks than parts")
		}
	})
}
