package resvs

import (
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// The clock's step for each state and time, and what it leaves of the
// reservation: standing ones move to their next occurrence (skipping
// those missed), confirmed ones begin, unconfirmed ones go unless a later
// occurrence may still be confirmed.
func TestAdvance(t *testing.T) {
	t.Parallel()
	occ := func(starts ...int64) []model.ResvOcc {
		var out []model.ResvOcc
		for _, s := range starts {
			out = append(out, model.ResvOcc{Start: s, Nodes: "(n1:ncpus=1)"})
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		state     proto.ResvState
		occ       []model.ResvOcc
		now       int64
		step      Step
		wantState proto.ResvState
		wantStart int64
		due       bool
	}{
		{"confirmed, before its start", proto.ResvConfirmed, occ(100), 99, StepNone, proto.ResvConfirmed, 100, false},
		{"confirmed, at its start", proto.ResvConfirmed, occ(100), 100, StepBegin, proto.ResvRunning, 100, true},
		{"running, inside", proto.ResvRunning, occ(100), 105, StepNone, proto.ResvRunning, 100, false},
		{"running, at its end", proto.ResvRunning, occ(100), 110, StepEnd, proto.ResvRunning, 100, true},
		{"unconfirmed at its start", proto.ResvUnconfirmed, occ(100), 100, StepNotConfirmed, proto.ResvUnconfirmed, 100, true},
		{"unconfirmed standing at a start", proto.ResvUnconfirmed, occ(100, 200), 100, StepNone, proto.ResvUnconfirmed, 100, true},
		{"standing, an occurrence ended", proto.ResvRunning, occ(100, 200, 300), 110, StepNextOccurrence, proto.ResvConfirmed, 200, true},
		{"standing, occurrences missed", proto.ResvRunning, occ(100, 200, 300), 250, StepNextOccurrence, proto.ResvConfirmed, 300, true},
		{"being deleted", proto.ResvBeingDeleted, occ(100), 500, StepNone, proto.ResvBeingDeleted, 100, true},
		{"degraded inside", proto.ResvDegraded, occ(100), 105, StepNone, proto.ResvDegraded, 100, false},
	} {
		r := &model.Resv{Seq: 1, Kind: model.ResvStanding, State: tc.state, Duration: 10, Occ: tc.occ, Comment: "c"}
		if got := Due(r, tc.now); got != tc.due {
			t.Errorf("%s: Due %v, want %v", tc.name, got, tc.due)
		}
		step := Advance(r, tc.now)
		if step != tc.step || r.State != tc.wantState || r.Start() != tc.wantStart {
			t.Errorf("%s: step %d, state %s, start %d; want step %d, %s, %d", tc.name, step, r.State, r.Start(), tc.step, tc.wantState, tc.wantStart)
		}
		if step == StepNextOccurrence && (r.Comment != "" || r.Mtime != tc.now) {
			t.Errorf("%s: comment %q, mtime %d after the next occurrence became current", tc.name, r.Comment, r.Mtime)
		}
	}
	// A next occurrence with no nodes yet waits to be confirmed.
	r := &model.Resv{Seq: 1, Kind: model.ResvStanding, State: proto.ResvRunning, Duration: 10,
		Occ: []model.ResvOcc{{Start: 100, Nodes: "(n1:ncpus=1)"}, {Start: 200}}}
	if step := Advance(r, 110); step != StepNextOccurrence || r.State != proto.ResvUnconfirmed {
		t.Errorf("next occurrence without nodes: step %d, state %s", step, r.State)
	}
}

func TestRetryDue(t *testing.T) {
	t.Parallel()
	r := &model.Resv{State: proto.ResvDegraded, Retry: 100}
	for _, tc := range []struct {
		now, asked int64
		want       bool
	}{{99, 0, false}, {100, 0, true}, {150, 100, false}, {150, 50, true}} {
		if got := RetryDue(r, tc.now, tc.asked); got != tc.want {
			t.Errorf("at %d, asked %d: %v, want %v", tc.now, tc.asked, got, tc.want)
		}
	}
	if RetryDue(&model.Resv{State: proto.ResvConfirmed, Retry: 100}, 150, 0) {
		t.Error("a reservation that is not degraded is due for a retry")
	}
}

// Each verdict from each state, and what it leaves; a verdict the state
// cannot take and placements that do not fit change nothing.
func TestJudge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		state     proto.ResvState
		nodes     []string
		verdict   Verdict
		wantState proto.ResvState
		comment   string
	}{
		{"no room for an unconfirmed one", proto.ResvUnconfirmed, nil, Denied, proto.ResvUnconfirmed, "c"},
		{"no room for new times", proto.ResvBeingAltered, nil, AlterationDenied, proto.ResvConfirmed, "Alteration denied: full"},
		{"a running one lost its nodes", proto.ResvRunning, nil, Degraded, proto.ResvDegraded, "full"},
		{"a degraded one still finds none", proto.ResvDegraded, nil, StillDegraded, proto.ResvDegraded, "full"},
		{"confirmed", proto.ResvUnconfirmed, []string{"(n2:ncpus=2)"}, Confirmed, proto.ResvConfirmed, ""},
		{"a degraded one moved, inside its window", proto.ResvDegraded, []string{"(n2:ncpus=2)"}, Moved, proto.ResvRunning, ""},
		{"new times confirmed", proto.ResvBeingAltered, []string{"(n2:ncpus=2)"}, Altered, proto.ResvRunning, ""},
	} {
		v, _ := view(t)
		r := &model.Resv{Seq: 2, Kind: model.ResvAdvance, State: tc.state, Duration: 50, Count: 1, Comment: "c", Retry: 7,
			Occ: []model.ResvOcc{{Start: 120}}, Before: &model.ResvBefore{Start: 300, Duration: 20, State: proto.ResvConfirmed}}
		v.Resvs.Insert(r)
		got, err := v.Judge(r, tc.nodes, "full", 150, 600)
		if err != nil || got != tc.verdict || r.State != tc.wantState || r.Comment != tc.comment {
			t.Errorf("%s: %v, %v, state %s, comment %q; want %v, %s, %q", tc.name, got, err, r.State, r.Comment, tc.verdict, tc.wantState, tc.comment)
			continue
		}
		switch got {
		case Degraded, StillDegraded:
			if r.Retry != 750 {
				t.Errorf("%s: retry at %d, want 750", tc.name, r.Retry)
			}
		case AlterationDenied:
			if r.Start() != 300 || r.Duration != 20 || r.Before != nil {
				t.Errorf("%s: start %d duration %d before %+v", tc.name, r.Start(), r.Duration, r.Before)
			}
		case Confirmed, Moved, Altered:
			if r.Nodes() != "(n2:ncpus=2)" || r.Retry != 0 || r.Before != nil || r.Mtime != 150 {
				t.Errorf("%s: nodes %q retry %d before %+v mtime %d", tc.name, r.Nodes(), r.Retry, r.Before, r.Mtime)
			}
		}
	}
	v, r := view(t)
	for _, tc := range []struct {
		name  string
		state proto.ResvState
		nodes []string
		code  proto.Code
	}{
		{"no room while being deleted", proto.ResvBeingDeleted, nil, proto.PBSE_BADSTATE},
		{"two placements for one occurrence", proto.ResvRunning, []string{"(n2:ncpus=1)", "(n2:ncpus=1)"}, proto.PBSE_BADATVAL},
		{"an unknown node", proto.ResvRunning, []string{"(n9:ncpus=1)"}, proto.PBSE_UNKNODE},
	} {
		r.SetState(tc.state)
		before := *r
		if _, err := v.Judge(r, tc.nodes, "x", 150, 600); proto.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
		}
		if r.State != before.State || r.Nodes() != before.Nodes() || r.Comment != before.Comment {
			t.Errorf("%s: refused, yet the reservation changed: %+v", tc.name, r)
		}
	}
}
