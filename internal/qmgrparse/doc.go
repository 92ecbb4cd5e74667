// Package qmgrparse is the language of qmgr, kept free of sockets, files and
// clocks so that every rule is testable as a table: cutting input into
// commands, parsing one command, and rendering status objects the way the
// list and print commands show them.
//
// # Input
//
// Input assembles physical lines the way qmgr reads standard input: a line
// ending in a backslash continues on the next line (the backslash becomes a
// space), lines that are blank or start with '#' are skipped, and a logical
// line is cut by Split into commands at ';' and newlines. Outside quotes, '#'
// at the start of a command or after white space starts a comment that runs
// to the end of the line. Quotes (" and ') protect ';', '#' and newlines. An
// unterminated quote keeps the rest of the line in one command, and Parse
// reports it.
//
// # Commands
//
//	command object [name[,name...]] [attr[.resource] op value[, ...]]
//
// The command word is matched as any prefix of create, delete, set, unset,
// list, print, active, help (also "?"), quit and exit, tried in that order,
// so "s" is set and "p" is print. Matching is case-sensitive, as in PBS. The
// object word is any prefix of server, queue(s), node(s) or sched (from
// "sc": "s" is server), OpenPBS's scheduler object, whose one name is
// default and may be left out as the server's is; the words resource,
// hook and pbshook (and their prefixes after those) are recognised and
// rejected as unsupported. A name is name[@server]; a name
// list has no white space. When the word after the object is a known
// attribute name of that object type, or is directly followed by an
// operator, no name was given and the attribute list starts there. The
// known names are the server's own attribute tables (model.Defs), plus
// OpenPBS's names this system lacks, which the server then refuses.
//
// Operators are =, += and -=. A value runs to white space or a comma; quoted
// pieces (either quote character) may contain anything but their own quote
// and are joined with the unquoted pieces next to them, so any string can be
// written. The value of a list attribute (model.KindList: managers, acl
// lists, submission_filters, ...) also runs past commas, as OpenPBS's
// qmgr reads "set server managers = a@h,b@h", unless the comma is followed
// by the next attribute and its operator. unset, list and print take attribute names only; set and create
// take attr op value; set and unset require at least one attribute; active
// and delete allow none; create and delete of a queue, node or sched need a
// name.
//
// Parse returns a *SyntaxError whose Error text is the qmgr message, the
// command and a caret line under the offending character; callers print it
// as is and exit 1. Parse never panics, whatever the input.
//
// # Output
//
// FormatList renders objects as "Server <name>" / "Queue <name>" / "Node
// <name>" / "Sched <name>" headers followed by "    attr = value" lines (long comma lists
// wrapped near column 80 under the value, time attributes as ctime(3)
// strings) and a blank line. FormatPrint renders qmgr input that recreates
// the objects: only attributes a manager can set (see ReadOnly), comma
// lists as "= first" then "+= next", values quoted by Quote so that feeding
// the text back through Input and Parse yields the same attributes. The
// default scheduler's lines name no scheduler ("set sched log_events =
// 2047"), as OpenPBS prints them, and have no "create sched" before them:
// the scheduler always exists.
package qmgrparse
