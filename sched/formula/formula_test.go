package formula

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	t.Parallel()
	job := map[string]float64{"eligible_time": 7200, "fairshare_factor": 0.25, "fairshare_perc": 0.1,
		"fairshare_tree_usage": 0.2, "ncpus": 8, "walltime": 3600, "mem": 2048, "queue_priority": 50, "job_priority": -3}
	tests := []struct {
		formula string
		want    float64
	}{
		{"eligible_time + 3600 * fairshare_factor", 8100},
		{"  eligible_time+3600*fairshare_factor  ", 8100},
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 - 4 - 3", 3}, // left to right
		{"2 ** 3 ** 2", 512},
		{"-2 ** 2", -4}, // ** binds tighter than the sign on its left
		{"2 ** -1", 0.5},
		{"--3", 3},
		{"+-+3", -3},
		{"7 // 2", 3},
		{"-7 // 2", -4},
		{"7 % 3", 1},
		{"-7 % 3", 2}, // Python's modulo takes the divisor's sign
		{"7 % -3", -2},
		{"7 / 2", 3.5},
		{".5 + 1e3 + 2.5E-1", 1000.75},
		{"pow(2, 10)", 1024},
		{"pow(2, -(fairshare_tree_usage / fairshare_perc))", 0.25},
		{"fair_share_perc", 0.1},
		{"min(3, ncpus, 10) + max(1, 2, 3, 4)", 7},
		{"log(e) + log(8, 2) + log2(8) + log10(1000)", 10},
		{"sqrt(16) + abs(-2) + fabs(-1) + ceil(0.2) + floor(1.8) + exp(0)", 10},
		{"floor(pi * 100)", 314},
		{"walltime / 60 + mem", 2108}, // mem in kilobytes: 2 MiB is 2048
		{"queue_priority * 1000 + job_priority", 49997},
		{"cput + ngpus", 0}, // not requested: 0
		{"1 / 0", 0},        // no value: 0
		{"1 / (fairshare_perc - 0.1)", 0},
		{"min(1 / 0, 5)", 0}, // any step without a value makes it 0
		{"log(0)", 0},
		{"sqrt(-1)", 0},
		{"5 % 0", 0},
		{"exp(1000)", 0},
		{"1e999 - 1", 0},
	}
	for _, tt := range tests {
		e, err := Parse(tt.formula)
		if err != nil {
			t.Errorf("%q: %v", tt.formula, err)
			continue
		}
		vals := make([]float64, len(e.Vars()))
		for i, v := range e.Vars() {
			switch {
			case v.Term != Resource:
				vals[i] = job[termName(v.Term)]
			case v.Resource == "mem":
				vals[i] = v.FromRequest(job["mem"] * 1024) // the scheduler holds bytes
			default:
				vals[i] = v.FromRequest(job[v.Resource])
			}
		}
		if got := e.Eval(vals); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%q = %v, want %v", tt.formula, got, tt.want)
		}
		if e.String() != strings.TrimSpace(tt.formula) {
			t.Errorf("%q: String() = %q", tt.formula, e.String())
		}
	}
}

func termName(t Term) string {
	for n, x := range termNames {
		if x == t && n != "fair_share_perc" {
			return n
		}
	}
	return ""
}

func TestVars(t *testing.T) {
	t.Parallel()
	e, err := Parse("ncpus * eligible_time + fairshare_perc + ncpus + fair_share_perc + mem")
	if err != nil {
		t.Fatal(err)
	}
	want := []Var{{Term: Resource, Resource: "ncpus"}, {Term: EligibleTime}, {Term: FairsharePerc}, {Term: Resource, Resource: "mem", kb: true}}
	if !reflect.DeepEqual(e.Vars(), want) {
		t.Errorf("vars %+v, want %+v", e.Vars(), want)
	}
	if !e.UsesFairshare() || !e.Uses(EligibleTime) || e.Uses(QueuePriority) {
		t.Error("Uses/UsesFairshare wrong")
	}
	if e2, _ := Parse("eligible_time + ncpus"); e2.UsesFairshare() {
		t.Error("no fair-share term, UsesFairshare true")
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		formula string
		col     int
		msg     string
		name    string // the unknown name reported, if any
	}{
		{"", 1, "empty formula", ""},
		{"   ", 1, "empty formula", ""},
		{"eligible_time +", 16, "the formula ends too early", ""},
		{"eligible_time 3600", 15, `missing operator before "3600"`, ""},
		{"(1 + 2", 1, "unclosed parenthesis", ""},
		{"1 + 2)", 6, `unexpected ")"`, ""},
		{"fairshare * 2", 1, `unknown term "fairshare"`, "fairshare"},
		{"2 * frobnicate(3)", 5, `unknown function "frobnicate"`, "frobnicate"},
		{"ncpus(2)", 1, "ncpus is not a function", ""},
		{"max + 1", 1, "max is a function: write max(...)", ""},
		{"arch + 1", 1, "arch is not a numeric resource", ""},
		{"ncpus if ncpus > 4 else 0", 7, "conditional expressions (x if c else y) are not supported", ""},
		{"ncpus > 4", 7, "comparisons are not supported", ""},
		{"ncpus and 1", 7, "boolean operators are not supported", ""},
		{`"ncpus"`, 1, "strings are not supported", ""},
		{"1x + 2", 1, `malformed number "1x"`, ""},
		{"1e+ 2", 1, `malformed number "1e+ "`, ""},
		{"1.2.3", 1, `malformed number "1.2."`, ""},
		{"pow(2)", 1, "pow takes 2 arguments, not 1", ""},
		{"min(2)", 1, "min takes 2 or more arguments, not 1", ""},
		{"sqrt(1, 2)", 1, "sqrt takes one argument, not 2", ""},
		{"log(1, 2, 3)", 1, "log takes 1 to 2 arguments, not 3", ""},
		{"max(1, 2,)", 10, `unexpected ")"`, ""},
		{"max(1 2)", 7, `missing operator before "2"`, ""},
		{"max(1, 2", 1, "unclosed parenthesis of max(", ""},
		{"ncpus; 1", 6, `unexpected ";"`, ""},
		{"ncpus\x00", 6, `unexpected character '\x00'`, ""},
		{"1 +* 2", 4, `unexpected "*"`, ""},
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), 65, "nested more than 64 deep", ""},
		{strings.Repeat("-", 70) + "1", 65, "nested more than 64 deep", ""},
		{strings.Repeat("1+", MaxLen), MaxLen + 1, "the formula is longer than 4096 characters", ""},
	}
	for _, tt := range tests {
		e, err := Parse(tt.formula)
		var fe *Error
		if e != nil || !errors.As(err, &fe) {
			t.Errorf("%q: %v, %v; want an *Error", tt.formula, e, err)
			continue
		}
		if fe.Col != tt.col || fe.Msg != tt.msg || fe.Name != tt.name {
			t.Errorf("%q: column %d %q name %q; want column %d %q name %q", tt.formula, fe.Col, fe.Msg, fe.Name, tt.col, tt.msg, tt.name)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	names := Names()
	for _, want := range []string{"eligible_time", "fairshare_factor", "fair_share_perc", "ncpus", "mem", "walltime", "pow", "pi"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("Names lacks %s", want)
		}
	}
	for _, n := range names {
		if _, err := Parse(n); err != nil && !strings.Contains(err.Error(), "is a function") {
			t.Errorf("Names lists %s, which does not parse: %v", n, err)
		}
	}
}
