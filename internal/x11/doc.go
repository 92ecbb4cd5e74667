// Package x11 is what X11 forwarding of interactive jobs (qsub -I -X)
// needs of the X Window System's formats: the DISPLAY variable
// (display.go), the Xauthority file where X keeps its cookies (auth.go),
// and the connection setup an X client opens with (setup.go), whose
// credentials the forwarding replaces.
//
// The scheme is ssh's. The job's side never holds the user's real
// cookie: the shepherd makes a one-job cookie, writes it to an
// Xauthority file only the job's owner reads, for the job's DISPLAY, and checks
// each X client's setup against it before anything is relayed; it sends
// the setup on with the credentials taken out. qsub, on the user's host,
// puts the real cookie (from the user's own Xauthority file) into the
// setup and connects to the user's display.
//
// Who calls: internal/shepherd (the job's side) and qsub. Parsers take
// untrusted bytes and check every length; each has a fuzz target.
package x11
