package mailer

import (
	"strings"
	"testing"
)

// FuzzCompose: whatever Mail_Users and the owner hold, every recipient is
// one argument the mailer cannot take for an option, and the headers are
// exactly To and Subject (no text reaches a header line of its own).
func FuzzCompose(f *testing.F) {
	f.Add("bob@x.org, carol", "alice@h1", "name", "reason\nline")
	f.Add("-oQ,\n,a b", "-x", "", "")
	f.Fuzz(func(t *testing.T, users, owner, name, text string) {
		m := Compose("adm", Job{ID: "1.srv", Name: name, Owner: owner, MailUsers: users}, Abort, text)
		for _, a := range m.To {
			if !ValidAddress(a) {
				t.Fatalf("recipient %q", a)
			}
		}
		head, _, ok := strings.Cut(string(m.Data), "\n\n")
		if !ok {
			t.Fatalf("no end of headers:\n%s", m.Data)
		}
		lines := strings.Split(head, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "To: ") || lines[1] != "Subject: PBS JOB 1.srv" {
			t.Fatalf("headers %q", lines)
		}
	})
}
