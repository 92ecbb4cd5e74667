package server

import "github.com/gopbs/gopbs/internal/model"

// jobWatch is what the server does around every change of a job in its
// table (state.Watcher; called by the table with mu held): the event
// stream notes what the job was and what it became, and the job's
// eligible-time clock moves to the accrue_type its new state calls for.
type jobWatch struct{ s *Server }

// Leaving is called as j leaves the table's indices, before a change.
func (w jobWatch) Leaving(j *model.Job) { w.s.noteBefore(j) }

// Entered is called as j comes back into them, after its request was
// read again.
func (w jobWatch) Entered(j *model.Job) {
	w.s.accrue(j)
	w.s.noteAfter(j)
}

// Removed is called once j is out of the table: its last change (its
// end) was its event.
func (w jobWatch) Removed(*model.Job) { w.s.ev.before = nil }
