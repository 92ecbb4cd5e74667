// Command pbsnodes shows the batch nodes and lets operators take them
// offline, put them back and annotate them, in the output dialect of the
// caller's personality (pbs.conf PBS_PERSONALITY, overridden by the
// environment): OpenPBS 23.06 for pbspro, Torque 6.1 for torque. Workflow
// tools (dask-jobqueue CI, radical, Open OnDemand, exporters) parse this
// output; the formats follow reference/pbs-behaviour.md §4.6, §5.5 and
// client-contract.md §3, §7.
//
// Usage (both personalities accept every option; only presentation
// differs, and options may follow operands):
//
//	pbsnodes [-a] [-v] [-S [-j] [-L]] [-F json|dsv [-D delim]] [-x] [-s server] [node ...]
//	pbsnodes -l [-n] [state] [node ...]
//	pbsnodes {-o|-c|-r} [-N note | -C note] [-q] node ...
//	pbsnodes {-N note | -C note} node ...
//	pbsnodes -H node ...
//	pbsnodes --version
//
// Listing (-a, or no action option). Without operands every node is shown,
// sorted by name; operands are shown in the order given. -v and -H change
// nothing (every node is its own host and vnode); -s must name the
// configured server, since commands reach no other.
//
//   - pbspro: per node "<name>\n", then "     <attribute> = <value>\n"
//     (five blanks) for every attribute in the server's order with OpenPBS
//     spelling (resources as resources_available.ncpus), then a blank line.
//     last_state_change_time and last_used_time are ctime strings
//     ("Mon Jan  1 00:00:00 2024", local zone).
//   - torque: the same layout with the Torque view, in this order and only
//     where the server reports something to derive it from: state (job-busy
//     shown as job-exclusive), power_state = Running, np (assigned ncpus,
//     else the mom's pcpus), properties, ntype = cluster, jobs
//     ("slot/jobid" items joined by ","), status ("opsys=<arch>,
//     physmem=<mem>,ncpus=<pcpus>,loadave=<loadave>"), note (the comment),
//     mom_service_port (Port), gpus (ngpus). Nothing is invented: no
//     uname, sessions, sockets or manager port.
//   - Values never break a line: newlines and control characters show
//     escaped (\n, ^A), as in qstat -f.
//   - -x (Torque): one line "<Data><Node><name>n</name><state>..</state>
//     ...</Node>...</Data>" of the Torque view, well-formed whatever the
//     values hold.
//   - -F json: {"timestamp":<now>,"pbs_version":"23.06.06","pbs_server":
//     "<PBS_SERVER>","nodes":{"<name>":{"Mom":"..","Port":15002,...,
//     "jobs":["1.srv",...],"resources_available":{"ncpus":2,...},
//     "resources_assigned":{...},"last_state_change_time":1704067200}}},
//     in OpenPBS's layout (one member per line, four-blank indent). Values
//     that are plain integers are JSON numbers, everything else a string;
//     resources are nested objects; jobs is an array of distinct job ids;
//     times stay Unix seconds, as OpenPBS prints them in JSON. Zero-valued
//     resources_assigned are kept (OpenPBS drops them). Always valid JSON,
//     whatever the values hold (encoding/json escaping).
//   - -F dsv: per node one line "Name=<name>|attr=value|..." (-D sets the
//     delimiter; a delimiter or backslash in a value is escaped with a
//     backslash); times as Unix seconds, jobs without blanks.
//
// Summaries (-S; -j and -L imply -S), OpenPBS's formats:
//
//	vnode           state           OS       hardware host            queue        mem     ncpus   nmics   ngpus  comment
//	--------------- --------------- -------- -------- --------------- ---------- -------- ------- ------- ------- ---------
//	n1              free            --       --       n1              --             24gb       2       0       0 --
//
// rows "%-15.15s %-15.15s %-8.8s %-8.8s %-15.15s %-10.10s %8.8s %7.7s
// %7.7s %7.7s %s": state is the first item of the state list, OS,
// hardware and host are resources_available.OS/.hardware/.host, queue is
// the node's queue attribute, mem, ncpus, nmics and ngpus are totals from
// resources_available, and a missing text field shows as "--". The job
// view (-Sj):
//
//	                                                        mem       ncpus   nmics   ngpus
//	vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs
//	--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------
//	n2              job-busy             3     3      0      5gb/8gb     0/4     0/0     1/1 7,12,13.other
//
// rows "%-15.15s %-15.15s %6d %5d %6d %12.12s %7.7s %7.7s %7.7s %s":
// njobs and run count the distinct jobs on the node (the server does not
// tell suspended jobs apart, so susp is 0), "f/t" is free/total where free
// is resources_available minus resources_assigned, and jobs lists the ids
// with ".<server>" dropped ("--" when none). -L prints whole cells and the
// whole state list instead of truncating. Memory is shown in the largest
// unit of k, m, g, t, p that keeps the number at most three digits,
// rounded to the nearest unit (24684096kb -> 24gb; 0kb when unknown); an
// unreadable value is shown as sent. The header is printed when there is
// a row. With -F json the summary is an object per node with OpenPBS's
// names: "State", "OS", "hardware", "host", "queue", "Memory", "ncpus",
// "nmics", "ngpus" (numbers), "comment"; with -j "State", "Total Jobs",
// "Running Jobs", "Suspended Jobs" (numbers), "mem f/t", "ncpus f/t",
// "nmics f/t", "ngpus f/t" and "jobs" (an array of full ids). With -F dsv
// "vnode=..|state=..|OS=..|hardware=..|host=..|queue=..|mem=..|ncpus=..|
// nmics=..|ngpus=..|comment=.." or "vnode=..|state=..|njobs=..|run=..|
// susp=..|mem(f/t)=..|ncpus(f/t)=..|nmics(f/t)=..|ngpus(f/t)=..|jobs=..".
//
// -l lists, without operands, the nodes that are down, offline or unknown
// (state items down, offline, state-unknown, offline_by_mom,
// unresolvable); with operands, those nodes whatever their state. A first
// operand that is one of Torque's state keywords (free, offline, down,
// reserve, job-exclusive, job-sharing, busy, state-unknown, time-shared,
// active, all, up; any case) filters by that state instead, over all nodes
// or the ones named. Lines are "%-20.20s %s\n" (name, state); with -n and
// a note "%-20.20s %-26.26s %s\n" (name, state, note). torque names states
// the Torque way (job-exclusive).
//
// Changes (operator privilege; one manager request per node, so that one
// failing node does not stop the others):
//
//   - -o sets state = offline; -c and -r set state = free, which the server
//     takes as "clear offline" (Torque's -r "reset" is the same here).
//   - -N note (Torque) or -C note (OpenPBS) sets the node's comment, alone
//     or in the same request as -o/-c/-r. An empty note clears the comment
//     (a separate unset request); in the torque personality "-N n" clears
//     it too, as in Torque; in pbspro "n" is an ordinary note.
//   - Nothing is printed on success.
//
// Errors and exit status:
//
//   - A failing node operand prints "pbsnodes: <message> <node>" on stderr
//     (cmdutil.ErrorText wording: "pbsnodes: Unknown node n9",
//     "pbsnodes: Unauthorized Request n1") and the other nodes are still
//     shown or changed. In JSON the unknown node is left out of "nodes".
//   - Exit status: 0 on success; for failures the pbspro personality
//     exits with the PBSE code modulo 256 of the last failure (unknown node
//     214, permission 159), the torque personality with 1, as Torque does.
//   - A server without any node: "pbsnodes: Server has no node list" on
//     stderr and exit 1 in both personalities (the text of PBSE_NONODES,
//     which both real servers answer on a fresh install); -F json still
//     prints its document with an empty "nodes" object.
//   - -q suppresses the messages of node and server errors (not of usage
//     errors); the exit status is unchanged.
//   - Usage errors print "pbsnodes: <why>" and the usage, and exit 2.
//   - --version prints "pbs_version = 23.06.06" (pbspro) or
//     "Version: 6.1.3" (torque) and exits 0.
//
// The logic is in runWith, which takes an Env, the arguments and a way to
// connect, so that tests drive it in-process against a fake server.
package main
