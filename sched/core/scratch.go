package core

// Scratch is what a driver that runs cycle after cycle, one at a time,
// keeps from one cycle to the next so that a cycle does not allocate its
// calendar and plan afresh: a simulator runs hundreds of thousands of
// short cycles, and each would otherwise cost as much in allocations as in
// deciding. The zero value is ready; a nil Scratch lends nothing.
type Scratch struct {
	cal  Calendar
	plan Plan
	// Policy is a policy's own memory from one cycle to the next, of a
	// type the policy chooses and alone reads (sched/fifo keeps its
	// cycle's state here); nil until the policy sets it.
	Policy any
}

// Calendar returns the calendar of w: s's own, reset (Calendar.Reset),
// or a new one when s is nil. The calendar the previous call returned is
// that same object.
func (s *Scratch) Calendar(w *World) *Calendar {
	if s == nil {
		return NewCalendar(w)
	}
	s.cal.Reset(w)
	return &s.cal
}

// Plan returns an empty plan: s's own, emptied (Plan.Reset), or a new one
// when s is nil. The plan the previous call returned is that same object.
func (s *Scratch) Plan() *Plan {
	if s == nil {
		return NewPlan()
	}
	s.plan.Reset()
	return &s.plan
}
