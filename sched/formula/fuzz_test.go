package formula

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// FuzzParse: Parse either refuses a text with an *Error pointing inside
// it (or just past its end), or returns an Expr that reads back the same
// from its String, whose Eval is a finite number whatever its inputs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"eligible_time + 3600 * fairshare_factor",
		"pow(2, -(fairshare_tree_usage / fair_share_perc))",
		"-2 ** -2 ** .5 // 3 % 7e1",
		"min(ncpus, mem, walltime) + max(1, log(8, 2))",
		"ncpus if ncpus > 1 else 0",
		"((((1))))",
		"1e999 * 0",
		"max(1,",
		"accrue_type",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := Parse(text)
		if err != nil {
			var fe *Error
			if e != nil || !errors.As(err, &fe) || fe.Msg == "" || fe.Col < 1 || fe.Col > len(text)+1 {
				t.Fatalf("%q: %#v, %v", text, e, err)
			}
			return
		}
		back, err := Parse(e.String())
		if err != nil || !reflect.DeepEqual(e, back) {
			t.Fatalf("%q reads back from %q as %#v, %v", text, e.String(), back, err)
		}
		for _, x := range []float64{0, 1, -1, 1e300, math.SmallestNonzeroFloat64} {
			vals := make([]float64, len(e.Vars()))
			for i := range vals {
				vals[i] = x
			}
			if v := e.Eval(vals); math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q with %v: %v", text, x, v)
			}
		}
	})
}
