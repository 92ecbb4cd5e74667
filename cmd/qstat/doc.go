// Command qstat shows the status of jobs, queues and the server, in the
// output dialect of the caller's personality (pbs.conf PBS_PERSONALITY,
// overridden by the environment): OpenPBS 23.06 for pbspro, Torque 6.1 for
// torque. Workflow tools parse this output, so its contract is
// reference/client-contract.md §3-§5:
//
//   - qstat [-a|-i|-r|-H|-T] [-u users] [-n] [-s] [-1] [-w] [-x] [-f [-F json|dsv]]
//     [job_id | destination]...; qstat -Q [-f] [dest]...; qstat -q [dest]...;
//     qstat -B [-f]; qstat --version. Options may follow operands.
//   - pbspro refuses what OpenPBS's qstat refuses as "qstat: conflicting
//     options." (exit 2): -F json|dsv without -f (so qstat -a -F json),
//     two of -a/-i/-r/-q/-H, -G with -M, -q with -f, -B or -Q after an
//     alternate-format option without -w. It accepts -1 without -n or -s
//     (qstat -1, qstat -f -1), which OpenPBS refuses: the workflow tools
//     of the client contract pass them to both personalities.
//   - pbspro -p shows "% done" in the default table where Time Use was:
//     "--" before a job starts, 100 for a finished subjob, an array's share
//     of expired subjobs, else the larger of cput and walltime used over
//     requested (only those requested).
//   - Operands are job ids in any form the server resolves (canonical, bare
//     sequence number, seq.otherserver; surrounding whitespace is ignored)
//     or destinations (queue, @server, queue@server). All operands go to the
//     server in one request, so the header is printed once.
//   - Known jobs are printed on stdout even when other operands fail; each
//     failure is one stderr line ("qstat: Unknown Job Id <id>", Torque
//     "qstat: Unknown Job Id Error <id>"; pbspro "qstat: <id> Job has
//     finished, use -x or -H to obtain historical job information") and the
//     exit status is that of the last failure (153, 35 ...). Usage errors
//     exit 2. No jobs: no output, exit 0, except that -F json always prints
//     a document with a "Jobs" object and Torque's -x prints an empty
//     <Data></Data> when asked for every job.
//   - pbspro asks for finished jobs only with -x or -H; torque always asks
//     for them and shows them as C. Torque's -x is XML, one <Data> line per
//     operand's job (or one for all jobs without operands).
//
// The logic is in run, which takes an Env and the arguments, so that tests
// drive it in-process against a fake server connection.
package main
