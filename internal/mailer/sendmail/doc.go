// Package sendmail hands composed job mail (mailer.Message) to the
// system's mailer: "<mailer> -oi -f <from> <recipient>...", the message on
// standard input, never through a shell, from a bounded queue with one
// sender and a timeout per run, so that a burst of job ends can neither
// fork a process per job nor hold up the server. A mailer that cannot be
// run is logged once, not per message.
package sendmail
