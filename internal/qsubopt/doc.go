// Package qsubopt turns qsub and qalter command lines, and the #PBS
// directives of a job script, into the requests the commands send: a
// proto.SubmitRequest for qsub, a list of proto.Attr for qalter.
//
// The package is pure. It opens no socket and reads no file, clock or
// environment of its own: the caller passes all of that in a Context, so
// that every rule here is tested with tables.
//
// Contract (reference/client-contract.md §2, reference/pbs-behaviour.md §5.1):
//
//   - Options are parsed with POSIX getopt (clusters, attached values). qsub
//     accepts the union of the OpenPBS and Torque option letters and
//     "--version"; "qsub [options] -- executable [args]" submits a generated
//     /bin/sh script that execs the executable with its arguments quoted.
//   - The script is the operand path or, without an operand, stdin, and is
//     read completely before anything is sent (tools delete it at once).
//   - Directives: the prefix is -C's value, else $PBS_DPREFIX when set and
//     non-empty, else "#PBS"; -C "" turns scanning off. A directive is a line
//     whose text after leading blanks is the prefix followed by a blank or
//     the end of the line. Scanning stops at the first executable line;
//     blank lines and lines whose first non-blank character is ':' or '#'
//     are not executable. A trailing backslash joins the next line (a
//     repeated prefix at its start is dropped); CR before LF is ignored.
//     Directive text is split into words like a shell word list, without a
//     shell: single quotes, double quotes (inside which a backslash escapes
//     any character), backslash escapes, and '#' at the start of a word
//     begins a comment. -C inside a directive is ignored.
//   - Precedence: the command line beats directives. On the command line a
//     repeated option replaces the earlier value; among directives the first
//     value wins, because Nextflow puts the value it means first. -l, -v and
//     -W are merged per resource, variable or attribute by the same rule.
//   - Values reach the server as given; checking names, sizes and lists is
//     the server's job. This package rejects only what it must interpret
//     itself (-a, -b, -j, -p, -r, qalter's -h, the syntax of -l, -v and -W
//     lists and their names, an -o or -e host without a path), the syntax
//     of -W stagein and stageout lists (OpenPBS's qsub refuses those too,
//     "illegal -W value") and empty values, with an error naming the
//     option and the value.
//   - Variable_List always starts with the PBS_O_ variables qsub computes;
//     -V and -v cannot replace them (a job that submits a job would otherwise
//     pass its own PBS_O_WORKDIR on). -v NAME without '=' takes qsub's value
//     and is left out when qsub has none. qalter sends its -v variables with
//     proto.OpIncr: they are to be added to the job's list, not replace it.
//
// No option is accepted and ignored. Torque's -b is read here
// (Submission.ConnectWait: qsub keeps trying to reach the server that
// long) and OpenPBS's -f asks for what this qsub always does (it stays in
// the foreground; it never leaves a background process talking to the
// server). Torque's -K and -T are sent as kill_delay (the job's seconds
// between SIGTERM and SIGKILL) and jobtype (the mom runs
// prologue.<jobtype> and epilogue.<jobtype>); -D, -F and -R as
// init_root_dir, job_arguments and Remove_Files for the server to accept
// or refuse (it refuses init_root_dir). -W block=true is read here too
// (Submission.Block): qsub waits for the job's end. Options that ask for
// what this system does not do are refused with a usage error naming the
// option and why (unsupported): -x (a script run in an interactive job),
// -E and -i (Moab's), -L (Torque's NUMA request). -I (an interactive
// job) is read here (Submission.Interactive), and -X with it
// (Submission.X11, the user's DISPLAY parsed):
// standard input is then left to the job and only a script operand is
// read, for its directives; with -J or -r y it is refused, as OpenPBS's
// qsub refuses them, and -W block=true means nothing beside it.
package qsubopt
