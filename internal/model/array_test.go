package model

import (
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestParseArraySpec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    string // canonical indices; "" for an error
		count   int
		maxRun  int
		wantErr string
	}{
		{in: "1-10", want: "1-10", count: 10},
		{in: "0-9:3", want: "0-9:3", count: 4},
		{in: "1-10:3", want: "1-10:3", count: 4},
		{in: "1-11:5%2", want: "1-11:5", count: 3, maxRun: 2},
		{in: "1-100%5", want: "1-100", count: 100, maxRun: 5},
		{in: "7", want: "7", count: 1},
		{in: "5,1-3,9-13:2", want: "1-3,5,9-13:2", count: 7},
		{in: " 1-4 ", want: "1-4", count: 4},
		{in: "1-2:5", want: "1", count: 1},
		{in: "", wantErr: "no index"},
		{in: "a-b", wantErr: "not an index"},
		{in: "-3", wantErr: "not an index"},
		{in: "5-1", wantErr: "ends before"},
		{in: "1-10:0", wantErr: "step"},
		{in: "3:2", wantErr: "needs a range"},
		{in: "1-5,4-8", wantErr: "overlap"},
		{in: "1,1", wantErr: "overlap"},
		{in: "1-10%0", wantErr: "limit"},
		{in: "1-10%x", wantErr: "limit"},
		{in: "1-99999999999", wantErr: "index"},
	} {
		spec, err := ParseArraySpec(c.in)
		if c.wantErr != "" {
			if err == nil || !contains(err.Error(), c.wantErr) {
				t.Errorf("ParseArraySpec(%q) = %v, %v; want an error with %q", c.in, spec.Indices, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseArraySpec(%q): %v", c.in, err)
			continue
		}
		if got := spec.Indices.String(); got != c.want || spec.Indices.Count() != c.count || spec.MaxRun != c.maxRun {
			t.Errorf("ParseArraySpec(%q) = %s (%d), max %d; want %s (%d), max %d", c.in, got, spec.Indices.Count(), spec.MaxRun, c.want, c.count, c.maxRun)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// members lists s's indices.
func members(s IndexSet) []int {
	var out []int
	s.Each(func(i int) bool { out = append(out, i); return true })
	return out
}

// TestIndexSetAgainstSlice removes and adds random indices to sets and
// checks each step against a plain sorted slice, and that the set stays
// well formed (increasing spans, each range's Hi on its step).
func TestIndexSetAgainstSlice(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 300; round++ {
		lo, step := rng.Intn(5), 1+rng.Intn(3)
		set := IndexSet{normal(lo, lo+rng.Intn(40), step)}
		want := members(set)
		for op := 0; op < 60; op++ {
			i := rng.Intn(50)
			if rng.Intn(2) == 0 {
				set = set.Remove(i)
				if k := slices.Index(want, i); k >= 0 {
					want = slices.Delete(want, k, k+1)
				}
			} else {
				set = set.Add(i)
				if !slices.Contains(want, i) {
					want = append(want, i)
					slices.Sort(want)
				}
			}
			if got := members(set); !slices.Equal(got, want) {
				t.Fatalf("round %d op %d: set %v holds %v, want %v", round, op, set, got, want)
			}
			if set.Count() != len(want) {
				t.Fatalf("Count %d, want %d", set.Count(), len(want))
			}
			for k, r := range set {
				if r.Step < 1 || r.Hi < r.Lo || (r.Hi-r.Lo)%r.Step != 0 || k > 0 && r.Lo <= set[k-1].Hi {
					t.Fatalf("set %v is not well formed at %d", set, k)
				}
			}
			for _, i := range want {
				if !set.Contains(i) {
					t.Fatalf("set %v does not contain %d", set, i)
				}
			}
		}
	}
}

func TestIndexSetStaysCompact(t *testing.T) {
	t.Parallel()
	set := IndexSet{normal(1, 100000, 1)}
	for i := 1; i <= 50000; i++ {
		set = set.Remove(i)
	}
	if len(set) != 1 || set.String() != "50001-100000" {
		t.Fatalf("after taking the first half in order: %v", set)
	}
	set = set.Add(50000).Add(49999)
	if len(set) != 1 || set.String() != "49999-100000" {
		t.Fatalf("requeued neighbours should join the range: %v", set)
	}
}

func TestParseJobRef(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		ok   bool
		seq  int64
		kind IDKind
		idx  string
	}{
		{"123", true, 123, IDJob, "-"},
		{" 123.srv\n", true, 123, IDJob, "-"},
		{"123.other.domain", true, 123, IDJob, "-"},
		{"123[]", true, 123, IDArray, "-"},
		{"123[].srv", true, 123, IDArray, "-"},
		{"123[4].srv", true, 123, IDSubjob, "4"},
		{"123[0]", true, 123, IDSubjob, "0"},
		{"123[1-5].srv", true, 123, IDRange, "1-5"},
		{"123[1-9:2,12]", true, 123, IDRange, "1-9:2,12"},
		{"0.x", true, 0, IDJob, "-"},
		{"9999999999999999999", false, 0, 0, ""},
		{"abc", false, 0, 0, ""},
		{"123[", false, 0, 0, ""},
		{"123[x].srv", false, 0, 0, ""},
		{"123[4]srv", false, 0, 0, ""},
		{"123x", false, 0, 0, ""},
		{"[4].srv", false, 0, 0, ""},
		{"", false, 0, 0, ""},
	} {
		ref, ok := ParseJobRef(c.in)
		if ok != c.ok {
			t.Errorf("ParseJobRef(%q) ok = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if ref.Seq != c.seq || ref.Kind != c.kind || ref.Indices.String() != c.idx {
			t.Errorf("ParseJobRef(%q) = %d kind %d %s; want %d kind %d %s", c.in, ref.Seq, ref.Kind, ref.Indices, c.seq, c.kind, c.idx)
		}
	}
}

func sampleArray() *Job {
	j := sampleJob()
	j.State, j.Substate, j.Alloc, j.RunCount, j.HasExit = StateQueued, SubQueued, nil, 0, false
	j.ID = FormatArrayID(7, "srv")
	j.Holds, j.HoldUntil = "", 0
	j.OutputPath = "h:/w/out." + ArrayIndexTag
	spec, _ := ParseArraySpec("1-10:3%2")
	j.Array = &Array{Indices: spec.Indices, Queued: spec.Indices.Clone(), MaxRun: spec.MaxRun}
	return j
}

func TestSubjobFromParent(t *testing.T) {
	t.Parallel()
	p := sampleArray()
	s := p.Subjob(4, "srv", 100)
	if s.ID != "7[4].srv" || !s.IsSubjob || s.Index != 4 || s.Array != nil || s.Key() != (JobKey{7, 4}) {
		t.Fatalf("subjob identity: %+v", s)
	}
	if s.OutputPath != "h:/w/out.4" {
		t.Errorf("output path %q: the index tag is not replaced", s.OutputPath)
	}
	if s.State != StateQueued || s.Etime != 100 {
		t.Errorf("subjob of a queued parent is %c with etime %d", s.State, s.Etime)
	}
	if got, _ := JobAttrValue(s, "array_id", ""); got != "7[].srv" {
		t.Errorf("array_id = %q", got)
	}
	if got, _ := JobAttrValue(s, "array_index", ""); got != "4" {
		t.Errorf("array_index = %q", got)
	}
	p.Holds = "u"
	if h := p.Subjob(7, "srv", 100); h.State != StateHeld {
		t.Errorf("subjob of a held parent is %c", h.State)
	}
	if p.Array.Queued.Count() != 4 || p.Key() != TopKey(7) {
		t.Errorf("making a subjob changed the parent: %v", p.Array.Queued)
	}
	attrs := map[string]string{}
	for _, a := range JobStatus(p, nil) {
		attrs[a.Name] = a.Value
	}
	for name, want := range map[string]string{
		"array": "True", "array_indices_submitted": "1-10:3", "array_indices_remaining": "1-10:3",
		"array_state_count": "Queued:4 Running:0 Exiting:0 Expired:0 ", "max_run_subjobs": "2",
	} {
		if attrs[name] != want {
			t.Errorf("parent %s = %q, want %q", name, attrs[name], want)
		}
	}
}

func TestArrayRecordRoundTrip(t *testing.T) {
	t.Parallel()
	p := sampleArray()
	rec, err := msgpack.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Job
	if err := msgpack.Unmarshal(rec, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Array, p.Array) {
		t.Fatalf("array after a round trip: %+v, want %+v", back.Array, p.Array)
	}
	s := p.Subjob(4, "srv", 100)
	rec, _ = msgpack.Marshal(s)
	var sb Job
	if err := msgpack.Unmarshal(rec, &sb); err != nil || sb.Key() != s.Key() || sb.Array != nil {
		t.Fatalf("subjob after a round trip: %+v, %v", sb.Key(), err)
	}
	e := &SubjobEnd{Index: 4, Substate: SubFinished, HasExit: true, Exit: 3, RunCount: 1, Stime: 5, End: 9,
		ExecHost: "n1/0", ExecVnode: "(n1:ncpus=1)", Comment: "done", Used: Resources{{Name: "cput", Value: "00:00:01"}}}
	rec, _ = msgpack.Marshal(e)
	var eb SubjobEnd
	if err := msgpack.Unmarshal(rec, &eb); err != nil || !reflect.DeepEqual(&eb, e) {
		t.Fatalf("subjob end after a round trip: %+v, %v", eb, err)
	}
	if v := p.EndedSubjob(e, "srv"); v.State != StateExpired || v.ExitStatus != 3 || v.ID != "7[4].srv" {
		t.Fatalf("ended subjob view: %c %d %s", v.State, v.ExitStatus, v.ID)
	}
}

func TestArrayExit(t *testing.T) {
	t.Parallel()
	ok := &SubjobEnd{HasExit: true, RunCount: 1}
	failed := &SubjobEnd{HasExit: true, Exit: 3, RunCount: 1}
	killed := &SubjobEnd{HasExit: true, Exit: 271, RunCount: 1}
	couldNot := &SubjobEnd{HasExit: true, Exit: -1, RunCount: 1}
	deletedQueued := &SubjobEnd{HasExit: true, Exit: 271}
	for _, c := range []struct {
		ends []*SubjobEnd
		want int
	}{
		{[]*SubjobEnd{ok, ok}, 0},
		{[]*SubjobEnd{ok, deletedQueued}, 0},
		{[]*SubjobEnd{ok, failed}, 1},
		{[]*SubjobEnd{killed, ok}, 1},
		{[]*SubjobEnd{failed, couldNot, ok}, 2},
	} {
		if got := ArrayExit(c.ends); got != c.want {
			t.Errorf("ArrayExit(%v) = %d, want %d", c.ends, got, c.want)
		}
	}
}

// FuzzParseArraySpec: a spec either fails or gives a non-empty set whose
// text parses back to the same set.
func FuzzParseArraySpec(f *testing.F) {
	for _, s := range []string{"1-10", "1-10:2%3", "5,1-3", "0", "1-5,4-8", "9-1", "1-10:0", "%", "1-2:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spec, err := ParseArraySpec(text)
		if err != nil {
			return
		}
		if spec.Indices.Empty() || spec.Indices.Count() < len(spec.Indices) {
			t.Fatalf("%q: empty or miscounted set %v", text, spec.Indices)
		}
		again, err := ParseIndexSet(spec.Indices.String())
		if err != nil || !reflect.DeepEqual(again, spec.Indices) {
			t.Fatalf("%q: %v does not read back (%v, %v)", text, spec.Indices, again, err)
		}
	})
}

// FuzzParseJobRef checks the job id parser every command and the server
// use: an id either fails or names a non-negative sequence number that
// survives formatting, and a subjob or range id names at least one index.
func FuzzParseJobRef(f *testing.F) {
	for _, s := range []string{"1", "1.s", "1[]", "1[2].s", "1[1-3:2,7].s", "1[", "1]",
		" 7.head.example.org ", "123456789012345678", "12a", ".srv", "-1.s", "+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ref, ok := ParseJobRef(id)
		if !ok {
			return
		}
		if ref.Seq < 0 {
			t.Fatalf("%q: negative sequence number", id)
		}
		for _, s := range []string{FormatJobID(ref.Seq, "srv"), FormatArrayID(ref.Seq, "srv"), strconv.FormatInt(ref.Seq, 10)} {
			if again, ok := ParseJobRef(s); !ok || again.Seq != ref.Seq {
				t.Fatalf("%q gave %d; its form %q reads as %+v, %v", id, ref.Seq, s, again, ok)
			}
		}
		if (ref.Kind == IDSubjob || ref.Kind == IDRange) && ref.Indices.Empty() {
			t.Fatalf("%q: subjob id without an index", id)
		}
		if ref.Kind == IDSubjob && ref.Indices.Count() != 1 {
			t.Fatalf("%q: one subjob, %d indices", id, ref.Indices.Count())
		}
	})
}
