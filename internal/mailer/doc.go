// Package mailer decides and composes the mail of job events the way
// OpenPBS's server does (Mail_Points, Mail_Users, the server's
// mail_from): which events mail, to whom, and what the message says. It
// is pure; the subpackage sendmail runs the system's mailer.
package mailer
