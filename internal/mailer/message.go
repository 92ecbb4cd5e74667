package mailer

import (
	"fmt"
	"strconv"
	"strings"
)

// Event is a job event that may be mailed: OpenPBS's mail points.
type Event byte

// Events.
const (
	Abort Event = 'a' // the batch system ended the job (deleted by another user, failed, killed)
	Begin Event = 'b' // the job began execution
	End   Event = 'e' // the job ended
)

// DefaultFrom is the sender when the server's mail_from is unset, as in
// OpenPBS.
const DefaultFrom = "adm"

// Wanted reports whether a job with Mail_Points points mails on ev.
// Unset points mean "a" (OpenPBS's default); "n" mails nothing. A
// subjob of an array mails only when the points include "j": an array
// mails as a whole otherwise (its first start, its end).
func Wanted(points string, ev Event, subjob bool) bool {
	if points == "" {
		points = "a"
	}
	if strings.Contains(points, "n") || subjob && !strings.Contains(points, "j") {
		return false
	}
	return strings.IndexByte(points, byte(ev)) >= 0
}

// Job is what a job's mail says about it.
type Job struct {
	ID        string
	Name      string
	Owner     string // Job_Owner, user@host: the recipient without Mail_Users
	MailUsers string // Mail_Users, comma-separated
	ExecHost  string
	// ExitStatus and Used (resources_used, name and value in display
	// order) are for an end.
	ExitStatus int
	Used       [][2]string
	// Efficiency is an end's cpu, mem and walltime efficiency (name,
	// percent), as qacct -j shows it.
	Efficiency [][2]string
}

// Message is one mail ready for the mailer.
type Message struct {
	From string
	To   []string
	Data []byte // headers and body
}

// Recipients are the addresses of Mail_Users, or the owner when it has
// none. Mail_Users was checked when set; an address that is not one
// (ValidAddress: a program, a file, an option) is left out all the same.
func Recipients(mailUsers, owner string) []string {
	var to []string
	for _, a := range strings.Split(mailUsers, ",") {
		if a = strings.TrimSpace(a); ValidAddress(a) {
			to = append(to, a)
		}
	}
	if len(to) == 0 && ValidAddress(owner) {
		to = []string{owner}
	}
	return to
}

// ValidAddress reports whether a is a mail address the mailer may be
// given: "user" or "user@host". The user is letters, digits and . _ + -
// and the host letters, digits and . _ -, neither starting with '-' or
// '.'. sendmail reads other shapes as orders, not addresses: "|/path"
// pipes the message into a program and "/path" appends it to a file (both
// as root, since the server runs the mailer), ":include:/path" reads
// addresses from a file, and a leading '-' is an option.
func ValidAddress(a string) bool {
	user, host, hasHost := strings.Cut(a, "@")
	if !addressPart(user, "._+-") {
		return false
	}
	return !hasHost || addressPart(host, "._-")
}

// ParseUsers reads a Mail_Users value, addresses separated by commas
// (blanks around them allowed), and returns it as "a,b". A value holding
// anything but addresses (ValidAddress) is refused, naming the first
// that is not one: qsub, qalter and the server refuse it alike.
func ParseUsers(v string) (string, error) {
	var out []string
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		if !ValidAddress(a) {
			return "", fmt.Errorf("%q is not a mail address (user or user@host)", a)
		}
		out = append(out, a)
	}
	return strings.Join(out, ","), nil
}

// addressPart reports whether p is not empty, is made of letters, digits
// and the bytes of extra, and starts with a letter, digit or '_'.
func addressPart(p, extra string) bool {
	if p == "" || p[0] == '-' || p[0] == '.' || p[0] == '+' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// Compose writes the mail for ev in OpenPBS's shape: To and Subject
// headers, then "PBS Job Id:", "Job Name:", and what happened. text is
// the reason of an abort (one or more lines); for an end the exit status
// and usage are written from j.
func Compose(from string, j Job, ev Event, text string) Message {
	to := Recipients(j.MailUsers, j.Owner)
	var b strings.Builder
	head(&b, to, "PBS JOB", "PBS Job Id: ", "Job Name:   ", j.ID, j.Name)
	switch ev {
	case Begin:
		if j.ExecHost != "" {
			fmt.Fprintf(&b, "Exec host:  %s\n", j.ExecHost)
		}
		b.WriteString("Begun execution\n")
	case End:
		b.WriteString("Execution terminated\n")
		b.WriteString("Exit_status=" + strconv.Itoa(j.ExitStatus) + "\n")
		for _, u := range j.Used {
			b.WriteString("resources_used." + u[0] + "=" + u[1] + "\n")
		}
		for _, e := range j.Efficiency {
			b.WriteString("efficiency." + e[0] + "=" + e[1] + "\n")
		}
	case Abort:
		b.WriteString("Aborted by PBS Server\n")
	}
	if text = strings.TrimRight(text, "\n"); text != "" {
		b.WriteString(text + "\n")
	}
	return Message{From: from, To: to, Data: []byte(b.String())}
}

// Resv is what a reservation's mail says about it.
type Resv struct {
	ID        string
	Name      string
	Owner     string // Reserve_Owner (or a job's owner in it), user@host
	MailUsers string
}

// ComposeResv writes a reservation's mail in OpenPBS's shape: To and
// Subject headers, "PBS Reservation Id:", "Reservation Name:", then what
// happened (text).
func ComposeResv(from string, r Resv, text string) Message {
	to := Recipients(r.MailUsers, r.Owner)
	var b strings.Builder
	head(&b, to, "PBS RESERVATION", "PBS Reservation Id: ", "Reservation Name:   ", r.ID, r.Name)
	if text = strings.TrimRight(text, "\n"); text != "" {
		b.WriteString(text + "\n")
	}
	return Message{From: from, To: to, Data: []byte(b.String())}
}

// head writes a mail's headers and its first lines: the id and the name.
func head(b *strings.Builder, to []string, subject, idLabel, nameLabel, id, name string) {
	fmt.Fprintf(b, "To: %s\n", strings.Join(to, ", "))
	fmt.Fprintf(b, "Subject: %s %s\n\n", subject, id)
	fmt.Fprintf(b, "%s%s\n", idLabel, id)
	fmt.Fprintf(b, "%s%s\n", nameLabel, name)
}
