package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// mailLog is a fake mailer's record: each run's argv, its standard input
// and a separator line.
type mailLog string

const mailSep = "=== end of mail ==="

// mails returns the messages recorded for job id (by its PBS Job Id line).
func (l mailLog) mails(id string) []string {
	var out []string
	for _, m := range strings.Split(string(l), mailSep+"\n") {
		if strings.Contains(m, "\nPBS Job Id: "+id+"\n") {
			out = append(out, m)
		}
	}
	return out
}

// fakeMailer writes a mailer that records each run's argv and message
// (then mailSep) in the file record.
func fakeMailer(t *testing.T) (record, mailer string) {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	record = filepath.Join(dir, "mail.log")
	mailer = filepath.Join(dir, "sendmail")
	script := "#!/bin/sh\n{ echo \"argv: $*\"; cat; echo '" + mailSep + "'; } >> " + record + "\n"
	if err := os.WriteFile(mailer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return record, mailer
}

// Job mail: pbs_server runs the mailer PBS_SENDMAIL names, without a
// shell, with "-oi -f <mail_from> <recipients>" (-oi: a line of "."
// does not end the message) and the message on its
// standard input, for the events Mail_Points asks for: the start and end
// of a job (b, e), its abort by the system (a, the default: deleted by
// someone other than its owner, killed for its walltime), and for an
// array as a whole unless j asks for its subjobs; -m n sends nothing.
func TestJobMail(t *testing.T) {
	t.Parallel()
	record, mailer := fakeMailer(t)
	c := testcluster.New(t, testcluster.Options{Conf: "PBS_SENDMAIL=" + mailer + "\n"})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	read := func() mailLog { b, _ := os.ReadFile(record); return mailLog(b) }
	// waitMails waits until job id has n mails (and checks no more come
	// with the next ones: callers wait for a later job's mail).
	waitMails := func(id string, n int) []string {
		t.Helper()
		var m []string
		testcluster.WaitFor(t, fmt.Sprintf("%d mails for job %s", n, id), 20*time.Second, func() (bool, string) {
			m = read().mails(id)
			return len(m) >= n, fmt.Sprintf("%d; mailer saw:\n%s", len(m), read())
		})
		return m
	}

	// b and e, to Mail_Users, from the default sender adm.
	be := c.Submit("#!/bin/sh\nexit 3\n", "-N", "mailbe", "-m", "be", "-M", "u1@example.org,u2", "-l", "walltime=00:10:00")
	c.MustRun("qrun", be)
	c.WaitJobState(be, "F", 20*time.Second)
	m := waitMails(be, 2)
	begin, end := m[0], m[1]
	if !strings.HasPrefix(begin, "argv: -oi -f adm u1@example.org u2\nTo: u1@example.org, u2\nSubject: PBS JOB "+be+"\n\n") ||
		!strings.Contains(begin, "Job Name:   mailbe\nExec host:  n1/0\nBegun execution\n") {
		t.Errorf("begin mail:\n%s", begin)
	}
	// With the job's efficiency, as qacct -j shows it.
	if !strings.Contains(end, "Execution terminated\nExit_status=3\n") || !regexp.MustCompile(`(?m)^resources_used\.walltime=\d\d:\d\d:\d\d$`).MatchString(end) ||
		!regexp.MustCompile(`(?m)^efficiency\.walltime=\d+\.\d%$`).MatchString(end) {
		t.Errorf("end mail:\n%s", end)
	}

	// -m n: nothing, even for an abort; mail_from changes the sender.
	c.MustRun("qmgr", "-c", "set server mail_from = pbs@head")
	none := c.Submit("#!/bin/sh\nsleep 30\n", "-m", "n", "-l", "walltime=1")
	c.MustRun("qrun", none)

	// The default (a): a walltime kill aborts, without an end mail.
	wall := c.Submit("#!/bin/sh\nsleep 30\n", "-N", "mailwall", "-l", "walltime=1")
	c.MustRun("qrun", wall)
	c.WaitJobState(wall, "F", 20*time.Second)
	c.WaitJobState(none, "F", 20*time.Second)
	m = waitMails(wall, 1)
	owner, _ := c.JobAttr(wall, "Job_Owner")
	if !strings.HasPrefix(m[0], "argv: -oi -f pbs@head "+owner+"\n") || !strings.Contains(m[0], "Aborted by PBS Server\nJob exceeded resource walltime\n") {
		t.Errorf("walltime abort mail (owner %s):\n%s", owner, m[0])
	}

	// Deleted by someone other than its owner: an abort; by its owner:
	// nothing.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	r := c.RunAs(nobody, "#!/bin/sh\ntrue\n", "qsub", "-N", "mailother")
	if r.Code != 0 {
		t.Fatalf("qsub as nobody: %s", r)
	}
	other := strings.TrimSpace(r.Stdout)
	c.MustRun("qdel", other)
	m = waitMails(other, 1)
	if !strings.Contains(m[0], "\nAborted by PBS Server\nJob deleted at request of root@") || !strings.HasPrefix(m[0], "argv: -oi -f pbs@head nobody@") {
		t.Errorf("abort mail for a job deleted by root:\n%s", m[0])
	}
	own := c.Submit("#!/bin/sh\ntrue\n")
	c.MustRun("qdel", own)

	// An array mails as a whole: its first start and its end, not each
	// subjob's; with j each subjob's too.
	arr := c.Submit("#!/bin/sh\ntrue\n", "-J", "1-2", "-m", "be")
	for i := 0; i < 2; i++ {
		c.MustRun("qrun", arr)
	}
	c.WaitJobState(arr, "F", 20*time.Second)
	m = waitMails(arr, 2)
	if !strings.Contains(m[0], "Begun execution") || !strings.Contains(m[1], "Execution terminated\nExit_status=0\n") {
		t.Errorf("array mails:\n%s", strings.Join(m, "\n"))
	}
	arrj := c.Submit("#!/bin/sh\ntrue\n", "-J", "1-2", "-m", "ej")
	for i := 0; i < 2; i++ {
		c.MustRun("qrun", arrj)
	}
	c.WaitJobState(arrj, "F", 20*time.Second)
	seq := strings.SplitN(arrj, "[", 2)[0]
	waitMails(arrj, 1)
	for _, i := range []string{"1", "2"} {
		waitMails(seq+"["+i+"]."+c.ServerName(), 1)
	}

	// The last mail is in: none came for the -m n job or the job its
	// owner deleted, and no subjob of the first array mailed.
	log := read()
	for _, id := range []string{none, own, strings.SplitN(arr, "[", 2)[0] + "[1]." + c.ServerName()} {
		if got := log.mails(id); len(got) != 0 {
			t.Errorf("job %s mailed:\n%s", id, strings.Join(got, "\n"))
		}
	}
	if got := len(log.mails(be)); got != 2 {
		t.Errorf("job %s: %d mails, want 2", be, got)
	}
}
