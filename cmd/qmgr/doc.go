// Command qmgr administers pbs_server: it creates, deletes, sets and unsets
// attributes of the server, queues, nodes and the scheduler (OpenPBS's
// sched object), and lists or prints them.
//
//	qmgr [-a] [-c command] [-e] [-n] [-z] [server]
//
// Without -c, commands are read from standard input (with the prompts
// "Qmgr: " and "Qmgr< " when standard input and output are terminals). The
// command language, its error messages and the list/print formats are
// package qmgrparse's; this command connects, sends one manager request
// per named object ("set server" names the server with "", "set sched"
// without a name the default scheduler, as OpenPBS's qmgr does), and reports
// server errors as "qmgr obj=<name> svr=<server>: <message>", where server
// is the one named on the command line or in name@server, else "default".
//
// Options: -a stops at the first error; -e echoes each command to standard
// output before running it; -n only checks syntax and never connects; -z
// suppresses error messages.
//
// Exit status: 0 when every command succeeded; otherwise the status of the
// last command that failed: 1 syntax error, 2 a request the server
// rejected (or nothing to act on), 3 no connection to the server, 4 an
// "active" command naming an object that does not exist.
//
// The connection layer reaches the one server of this host's pbs.conf, so
// a server operand or an @server suffix only names that server in messages;
// a second server operand is refused.
package main
