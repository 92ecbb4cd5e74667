package pbsnodes

import (
	"io"

	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

// summaryJSON writes -S -F json and -Sj -F json with OpenPBS's member
// names: "State", "OS", "hardware", "host", "queue", "Memory", "ncpus",
// "nmics", "ngpus", "comment" for the node view; "State", "Total Jobs",
// "Running Jobs", "Suspended Jobs", "mem f/t", "ncpus f/t", "nmics f/t",
// "ngpus f/t" and the "jobs" array (full ids) for the job view.
func (f *formatter) summaryJSON(w io.Writer, j *display.JSONDoc, nodes []proto.Status, jobView bool) error {
	for _, s := range nodes {
		m := f.summarize(s)
		j.Open(s.Name, '{')
		j.Str("State", m.state)
		if jobView {
			j.Num("Total Jobs", int64(len(m.jobs)))
			j.Num("Running Jobs", int64(len(m.jobs)))
			j.Num("Suspended Jobs", 0)
			j.Str("mem f/t", m.memFreeTotal())
			j.Str("ncpus f/t", m.ncpus.freeTotal())
			j.Str("nmics f/t", m.nmics.freeTotal())
			j.Str("ngpus f/t", m.ngpus.freeTotal())
			j.Open("jobs", '[')
			for _, id := range m.jobs {
				j.Elem(display.JSONQuote(id))
			}
			j.Close(']')
		} else {
			j.Str("OS", m.os)
			j.Str("hardware", m.hardware)
			j.Str("host", m.host)
			j.Str("queue", m.queue)
			j.Str("Memory", m.memTotal())
			j.Num("ncpus", m.ncpus.total)
			j.Num("nmics", m.nmics.total)
			j.Num("ngpus", m.ngpus.total)
			j.Str("comment", m.comment)
		}
		j.Close('}')
	}
	return j.Finish(w)
}
