package mailer

import (
	"reflect"
	"testing"
)

func TestWanted(t *testing.T) {
	for _, tt := range []struct {
		points string
		ev     Event
		subjob bool
		want   bool
	}{
		{"", Abort, false, true}, // OpenPBS's default is a
		{"", Begin, false, false},
		{"", End, false, false},
		{"abe", Begin, false, true},
		{"abe", End, false, true},
		{"be", Abort, false, false},
		{"n", Abort, false, false},
		{"abe", End, true, false}, // a subjob mails only with j
		{"abej", End, true, true},
		{"aj", Begin, true, false},
		{"ej", End, false, true}, // j adds subjobs; the array still mails
	} {
		if got := Wanted(tt.points, tt.ev, tt.subjob); got != tt.want {
			t.Errorf("Wanted(%q, %c, subjob %v) = %v", tt.points, tt.ev, tt.subjob, got)
		}
	}
}

func TestRecipientsAndAddresses(t *testing.T) {
	for _, tt := range []struct {
		users, owner string
		want         []string
	}{
		{"", "alice@h1", []string{"alice@h1"}},
		{"bob@x.org, carol", "alice@h1", []string{"bob@x.org", "carol"}},
		{" , ", "alice@h1", []string{"alice@h1"}},
		{"-oQ/tmp,bob", "alice@h1", []string{"bob"}}, // an option is never an address
		// sendmail's program, file and include forms run or write as
		// the server's user (issue 19 item 6): never recipients.
		{"|/tmp/x,/etc/passwd,:include:/tmp/l,\"|/bin/sh\"", "alice@h1", []string{"alice@h1"}},
		{"", "-x", nil},
	} {
		if got := Recipients(tt.users, tt.owner); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Recipients(%q, %q) = %q, want %q", tt.users, tt.owner, got, tt.want)
		}
	}
	for a, want := range map[string]bool{
		"u@h": true, "u": true, "first.last+tag@mail.example.org": true, "u_1@node_7": true,
		"": false, "-f": false, "a b": false, "a,b": false, "a\nb": false, "a\tb": false,
		"|/tmp/prog": false, "/tmp/file": false, "u@h/x": false, ":include:/tmp/l": false, `"|prog"`: false,
		"u@": false, "@h": false, "u@h@i": false, "u@-h": false, ".u": false, "u;id": false, "u@h:25": false,
	} {
		if ValidAddress(a) != want {
			t.Errorf("ValidAddress(%q) = %v", a, !want)
		}
	}
}

func TestCompose(t *testing.T) {
	j := Job{ID: "12.srv", Name: "sim", Owner: "alice@h1", ExecHost: "n1/0*2", ExitStatus: 3,
		Used: [][2]string{{"cput", "00:00:01"}, {"walltime", "00:00:05"}}, Efficiency: [][2]string{{"cpu", "10.0%"}, {"walltime", "8.3%"}}}
	for _, tt := range []struct {
		name string
		ev   Event
		text string
		want string
	}{
		{"begin", Begin, "", "To: alice@h1\nSubject: PBS JOB 12.srv\n\nPBS Job Id: 12.srv\nJob Name:   sim\nExec host:  n1/0*2\nBegun execution\n"},
		{"end", End, "", "To: alice@h1\nSubject: PBS JOB 12.srv\n\nPBS Job Id: 12.srv\nJob Name:   sim\nExecution terminated\nExit_status=3\nresources_used.cput=00:00:01\nresources_used.walltime=00:00:05\nefficiency.cpu=10.0%\nefficiency.walltime=8.3%\n"},
		{"abort", Abort, "Job deleted at request of root@h1\n", "To: alice@h1\nSubject: PBS JOB 12.srv\n\nPBS Job Id: 12.srv\nJob Name:   sim\nAborted by PBS Server\nJob deleted at request of root@h1\n"},
	} {
		m := Compose("adm", j, tt.ev, tt.text)
		if string(m.Data) != tt.want || m.From != "adm" || !reflect.DeepEqual(m.To, []string{"alice@h1"}) {
			t.Errorf("%s: from %q to %q\n%s\nwant\n%s", tt.name, m.From, m.To, m.Data, tt.want)
		}
	}
	j.MailUsers = "bob@x.org,carol"
	m := Compose("pbs@srv", j, Begin, "")
	if !reflect.DeepEqual(m.To, []string{"bob@x.org", "carol"}) || string(m.Data[:len("To: bob@x.org, carol\n")]) != "To: bob@x.org, carol\n" {
		t.Errorf("Mail_Users: to %q\n%s", m.To, m.Data)
	}
}
