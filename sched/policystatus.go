package sched

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/logging/logclass"
	"github.com/gopbs/gopbs/proto"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// policyStatus is what an admin must know about the policy files without
// reading sched_logs: that the last edit was refused (and the previous
// policy still runs), or that the holidays file is for another year. The
// scheduler shows it as the server's comment (qstat -Bf), set and
// cleared on the server's next contact (syncComment), and logs each
// change once.
type policyStatus struct {
	mu sync.Mutex
	// refused is why the files on disk are not in force, "file:line:
	// message" first; empty when the last load succeeded.
	refused string
	// holidays are those of the policy in force, for the year check.
	holidays *schedpriv.Holidays
	// stale is the warning about the holidays' year at the last check.
	stale string
}

// statusPrefix starts every comment the scheduler sets, so that it clears
// only its own and never an admin's.
func statusPrefix(name string) string { return name + ": " }

// loaded records a successful load.
func (ps *policyStatus) loaded(files *schedpriv.Files) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.refused, ps.holidays = "", files.Holidays
}

// rejected records a refused load.
func (ps *policyStatus) rejected(err error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.refused = summarize(err)
}

// checkYear compares the holidays' YEAR with now's year and returns the
// warning when it changed since the last check ("" and false otherwise),
// so that the log says it once, and again after New Year.
func (ps *policyStatus) checkYear(now time.Time) (warning string, changed bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	w := ""
	if p, ok := ps.holidays.YearWarning(now); ok {
		w = p.String()
	}
	changed = w != ps.stale
	ps.stale = w
	return w, changed
}

// comment is the server comment the status calls for, "" for none.
func (ps *policyStatus) comment(name string) string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch {
	case ps.refused != "":
		return statusPrefix(name) + "sched_priv refused, the previous policy stays in force: " + ps.refused
	case ps.stale != "":
		return statusPrefix(name) + ps.stale
	}
	return ""
}

// summarize makes a one-line reason of a load error: its first problem
// with file and line, and how many more there are.
func summarize(err error) string {
	if errs, ok := schedpriv.AsErrors(err); ok && len(errs) > 0 {
		s := errs[0].String()
		if n := len(errs) - 1; n > 0 {
			s += fmt.Sprintf(" (and %d more in sched_logs)", n)
		}
		return oneLine(s)
	}
	// Errors joined with I/O errors (errors.Join) or a policy's own.
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) && len(joined.Unwrap()) > 0 {
		first := joined.Unwrap()[0]
		if errs, ok := schedpriv.AsErrors(first); ok && len(errs) > 0 {
			return summarize(first)
		}
		return oneLine(first.Error())
	}
	return oneLine(err.Error())
}

// oneLine keeps the first line of s: a comment is shown on one line.
func oneLine(s string) string {
	first, rest, more := strings.Cut(s, "\n")
	if more && strings.TrimSpace(rest) != "" {
		return first + " (more in sched_logs)"
	}
	return first
}

// syncComment makes the server's comment match the status, over the
// connection the server opened: the scheduler is a manager there. It
// changes nothing when they already agree, and removes only a comment of
// its own.
func (r *runner) syncComment(c *proto.Client) {
	want := r.status.comment(r.o.Name)
	st, err := c.StatusServer([]string{proto.AttrComment})
	if err != nil {
		r.log.Warn("cannot read the server's comment", "error", err)
		return
	}
	cur, _ := st.Get(proto.AttrComment)
	req := &proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer,
		Attrs: []proto.Attr{{Name: proto.AttrComment, Value: want}}}
	switch {
	case want == cur:
		return
	case want == "" && !strings.HasPrefix(cur, statusPrefix(r.o.Name)):
		return // an admin's comment, not ours
	case want == "":
		req.Command = proto.MgrUnset
		req.Attrs[0].Value = ""
	}
	if err := c.Manager(req); err != nil {
		r.log.Warn("cannot set the server's comment", "error", err)
		return
	}
	if want == "" {
		r.log.Info("server comment cleared: sched_priv is in force", logclass.Key, logclass.Admin)
	} else {
		r.log.Info("server comment set", "comment", want, logclass.Key, logclass.Admin)
	}
}

// noteYear logs the holidays' year warning when it changes.
func (r *runner) noteYear(now time.Time) {
	w, changed := r.status.checkYear(now)
	switch {
	case changed && w != "":
		r.log.Warn("sched_priv", "warning", w, logclass.Key, logclass.Admin)
	case changed:
		r.log.Info("the holidays file is for this year", logclass.Key, logclass.Admin)
	}
}
