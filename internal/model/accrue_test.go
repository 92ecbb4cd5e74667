package model

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// TestAccrual: time counts toward eligible_time only while the type is
// eligible; a change folds it in, and a restart sets it.
func TestAccrual(t *testing.T) {
	t.Parallel()
	const t0 = 1_000_000
	steps := []struct {
		name     string
		to       AccrueType
		at       int64
		spent    int64 // how long the type left lasted
		eligible int64 // eligible time right after the change
	}{
		{"submitted: eligible", AccrueEligible, t0, 0, 0},
		{"user hold after 30s", AccrueIneligible, t0 + 30, 30, 30},
		{"released 100s later", AccrueEligible, t0 + 130, 100, 30},
		{"limit reached 20s later", AccrueIneligible, t0 + 150, 20, 50},
		{"limit lifted", AccrueEligible, t0 + 200, 50, 50},
		{"runs 5s later", AccrueRun, t0 + 205, 5, 55},
		{"exits", AccrueExit, t0 + 900, 695, 55},
	}
	a := Accrual{Type: AccrueInitial, Since: t0}
	for _, s := range steps {
		var spent int64
		a, spent = a.Change(s.to, s.at)
		if spent != s.spent || a.Eligible != s.eligible || a.Type != s.to || a.Since != s.at {
			t.Fatalf("%s: %+v spent %d, want eligible %d spent %d", s.name, a, spent, s.eligible, s.spent)
		}
	}
	views := []struct {
		a    Accrual
		now  int64
		want int64
	}{
		{Accrual{Type: AccrueEligible, Eligible: 10, Since: t0}, t0 + 5, 15},
		{Accrual{Type: AccrueEligible, Eligible: 10, Since: t0}, t0 - 5, 10}, // a clock stepped back adds nothing
		{Accrual{Type: AccrueIneligible, Eligible: 10, Since: t0}, t0 + 500, 10},
		{Accrual{Type: AccrueRun, Eligible: 10, Since: t0}, t0 + 500, 10},
		{Accrual{Type: AccrueEligible, Eligible: 10, Since: t0}.Restart(180, t0+50), t0 + 60, 190},
		{Accrual{Type: AccrueIneligible, Since: t0}.Restart(-3, t0), t0 + 60, 0},
	}
	for i, v := range views {
		if got := v.a.EligibleAt(v.now); got != v.want {
			t.Errorf("view %d: %+v at %d: %d, want %d", i, v.a, v.now, got, v.want)
		}
	}
	if got := FormatEligible(3725); got != "01:02:05" {
		t.Errorf("FormatEligible(3725) = %q", got)
	}
}

// TestAccrueFor: the type a job's state calls for, as OpenPBS's server
// decides it.
func TestAccrueFor(t *testing.T) {
	t.Parallel()
	withArray := func(queued IndexSet) *Array { return &Array{Queued: queued} }
	cases := []struct {
		name string
		j    Job
		want AccrueType
	}{
		{"queued", Job{State: StateQueued, Substate: SubQueued}, AccrueEligible},
		{"user hold", Job{State: StateHeld, Substate: SubHeld, Holds: "u"}, AccrueIneligible},
		{"user and system holds", Job{State: StateHeld, Substate: SubHeld, Holds: "us"}, AccrueIneligible},
		{"system hold", Job{State: StateHeld, Substate: SubHeld, Holds: "s"}, AccrueEligible},
		{"operator hold", Job{State: StateHeld, Substate: SubHeld, Holds: "o"}, AccrueEligible},
		{"dependency", Job{State: StateHeld, Substate: SubDepHold}, AccrueIneligible},
		{"at a run limit", Job{State: StateQueued, Substate: SubQueued, LimitBlocked: true}, AccrueIneligible},
		{"execution_time", Job{State: StateWaiting, Substate: SubWaiting}, AccrueIneligible},
		{"running", Job{State: StateRunning, Substate: SubRunning}, AccrueRun},
		{"suspended", Job{State: StateRunning, Substate: SubSuspended, Suspended: true}, AccrueEligible},
		{"suspended by the scheduler", Job{State: StateRunning, Substate: SubSchedSusp, Suspended: true}, AccrueEligible},
		{"suspended, held by its owner", Job{State: StateRunning, Substate: SubSuspended, Suspended: true, Holds: "u"}, AccrueIneligible},
		{"exiting", Job{State: StateExiting, Substate: SubExiting}, AccrueExit},
		{"finished", Job{State: StateFinished, Substate: SubFinished}, AccrueExit},
		{"array, subjobs waiting", Job{State: StateBegun, Array: withArray(IndexSet{}.Add(3))}, AccrueEligible},
		{"array, every subjob started", Job{State: StateBegun, Array: withArray(IndexSet{})}, AccrueIneligible},
	}
	for _, c := range cases {
		if got := AccrueFor(&c.j); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAccrualAttrsWho: eligible_time is set by operators and managers
// (a user is told it is read-only, as OpenPBS says), accrue_type by the
// scheduler alone; the scheduler's word is whether a limit holds the
// job back, the type the server's.
func TestAccrualAttrsWho(t *testing.T) {
	t.Parallel()
	owner := Privilege{Owner: true}
	oper := Privilege{Owner: true, Operator: true}
	mgr := Privilege{Operator: true, Manager: true}
	sched := Privilege{Operator: true, Manager: true, Scheduler: true}
	cases := []struct {
		name  string
		attr  proto.Attr
		priv  Privilege
		code  proto.Code // 0: taken
		check func(j *Job) bool
	}{
		{"owner sets eligible_time", proto.Attr{Name: proto.AttrEligibleTime, Value: "00:03:00"}, owner, proto.PBSE_ATTRRO, nil},
		{"operator sets eligible_time", proto.Attr{Name: proto.AttrEligibleTime, Value: "00:03:00"}, oper, 0,
			func(j *Job) bool { return j.Accrual == Accrual{Type: AccrueEligible, Eligible: 180} }},
		{"bad duration", proto.Attr{Name: proto.AttrEligibleTime, Value: "soon"}, mgr, proto.PBSE_BADATVAL, nil},
		{"manager sets accrue_type", proto.Attr{Name: proto.AttrAccrueType, Value: "3"}, mgr, proto.PBSE_ATTRRO, nil},
		{"scheduler: at a limit", proto.Attr{Name: proto.AttrAccrueType, Value: "1"}, sched, 0,
			func(j *Job) bool { return j.LimitBlocked && j.Accrual.Type == AccrueEligible }},
		{"scheduler: a type of the server's", proto.Attr{Name: proto.AttrAccrueType, Value: "3"}, sched, proto.PBSE_BADATVAL, nil},
	}
	for _, c := range cases {
		j := &Job{State: StateQueued, Substate: SubQueued, Accrual: Accrual{Type: AccrueEligible, Eligible: 5, Since: 100}}
		err := SetJobAttr(nil, j, c.attr, c.priv, AtAlter)
		var code proto.Code
		if err != nil {
			code = proto.CodeOf(err)
		}
		if code != c.code {
			t.Errorf("%s: %v, want code %d", c.name, err, c.code)
			continue
		}
		if c.check != nil && !c.check(j) {
			t.Errorf("%s: job left %+v, LimitBlocked %v", c.name, j.Accrual, j.LimitBlocked)
		}
	}
}
