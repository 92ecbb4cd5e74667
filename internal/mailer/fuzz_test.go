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

// FuzzParseUsers: a Mail_Users value is taken only when every address in
// it is one (ValidAddress), and what is kept reads back unchanged.
func FuzzParseUsers(f *testing.F) {
	for _, s := range []string{"bob@x.org, carol", "|/bin/sh", "/tmp/f", ":include:/x", "a,,b", " u@h "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		users, err := ParseUsers(v)
		if err != nil {
			return
		}
		for _, a := range strings.Split(users, ",") {
			if !ValidAddress(a) {
				t.Fatalf("ParseUsers(%q) kept %q", v, a)
			}
		}
		if again, err := ParseUsers(users); err != nil || again != users {
			t.Fatalf("ParseUsers(%q) = %q, which reads back as %q, %v", v, users, again, err)
		}
	})
}
