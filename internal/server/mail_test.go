package server

import (
	"testing"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/proto"
)

// TestEndMail: a job that ran mails its end; one the system killed or
// that could not start mails an abort instead, saying why.
func TestEndMail(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		exit    int
		comment string
		ev      mailer.Event
		text    string
	}{
		{0, "", mailer.End, ""},
		{3, "", mailer.End, ""},
		{271, "", mailer.End, ""}, // deleted while running: it ran, and ended
		{proto.JobExecKillWalltime, "job killed: walltime 2 exceeded limit 1", mailer.Abort, "Job exceeded resource walltime\nSee job standard error file"},
		{proto.JobExecFail1, "job exec failed: TMPDIR /tmp/x: denied", mailer.Abort, "job exec failed: TMPDIR /tmp/x: denied\nSee job standard error file"},
		{proto.JobExecFailUID, "", mailer.Abort, "Job cannot be executed\nSee job standard error file"},
	} {
		ev, text := endMail(tt.exit, tt.comment)
		if ev != tt.ev || text != tt.text {
			t.Errorf("endMail(%d, %q) = %c %q, want %c %q", tt.exit, tt.comment, ev, text, tt.ev, tt.text)
		}
	}
}
