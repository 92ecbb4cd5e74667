package tracejob

import (
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
)

// entry is one line of a job's history: when, which source (S server,
// M mom, L scheduler, A accounting, as tracejob prints them), and the
// message.
type entry struct {
	at     time.Time
	source byte
	text   string
}

// logLine reads one daemon log line ("2026-11-24T07:55:03.365Z [INFO]
// pbs_server: job queued: job=0.vm owner=..."). It reports whether the
// line is about job id: a "job=" field equal to it. The daemon's name and
// the job field itself are left out of the message.
func logLine(line, id string, loc *time.Location) (time.Time, string, bool) {
	if strings.ContainsAny(line, "\n\r") {
		return time.Time{}, "", false // not one line of a log
	}
	stamp, rest, ok := strings.Cut(line, " ")
	if !ok {
		return time.Time{}, "", false
	}
	at, err := time.Parse("2006-01-02T15:04:05.000Z0700", stamp)
	if err != nil {
		return time.Time{}, "", false
	}
	field := "job=" + id
	i := strings.Index(rest, field)
	if i < 0 {
		return time.Time{}, "", false
	}
	if end := i + len(field); end < len(rest) && rest[end] != ' ' {
		return time.Time{}, "", false // job=12.vm is not job=1
	}
	if i > 0 && rest[i-1] != ' ' {
		return time.Time{}, "", false // subjob=..., parent_job=...
	}
	msg := strings.TrimSpace(strings.TrimRight(rest[:i], " ") + " " + strings.TrimLeft(rest[i+len(field):], " "))
	// Drop the level and the daemon: "[INFO]  pbs_server: ".
	if _, after, ok := strings.Cut(msg, "] "); ok {
		msg = strings.TrimSpace(after)
	}
	if _, after, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "pbs_") {
		msg = after
	}
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ":")
	return at.In(loc), msg, true
}

// acctLine reads one accounting record ("MM/DD/YYYY HH:MM:SS;E;id;k=v
// ...") about job id: its time (local) and "E: k=v ..." as the message.
func acctLine(line, id string, loc *time.Location) (time.Time, string, bool) {
	l, err := accounting.Split([]byte(line), loc)
	if err != nil || string(l.ID) != id {
		return time.Time{}, "", false
	}
	return l.At, string(l.Kind) + " " + strings.TrimSpace(string(l.Body)), true
}
