// Package trace reads the workloads the trace simulator (pbs_simulate)
// replays: the Standard Workload Format of the Parallel Workloads Archive,
// the extended SWF of the Alea simulator with its .machines file, and this
// server's own accounting logs (OpenPBS format). Every reader turns its
// input into one Workload: a slice of small Job structs, in the order the
// input gives them, plus what the input says about the machine.
//
// # Contract
//
// Readers stream: they read line by line (a line longer than 4 MiB is an
// error), the strings that repeat (user, group, queue, node spec)
// interned, so nothing but the jobs themselves grows with the size of the
// file. Input may be gzip-compressed (recognised by its magic number,
// whatever the file is called). A line the reader cannot parse is an
// error naming its line number; nothing is skipped silently. Readers keep
// values as the input writes them (-1 is "unknown" in SWF, and readers
// use -1 the same way) except that submit times are made relative to the
// trace's start; they drop no job and fix no field. Normalize then
// applies the replay conventions (../shared/traces/README.md) and is the
// only place jobs are dropped or fields rewritten. No global state: any
// number of readers may run at once.
//
// ReadSWF, Load and ReadAccounting return the whole workload (HPC2N's
// 202,876 jobs: 36 MB held, read in about 0.2 s). A replay takes an SWF
// trace one job at a time instead, through a Stream (see below), and
// holds only a window of it.
//
// # Standard Workload Format (ReadSWF)
//
// ASCII, one job per line, 18 whitespace-separated fields, -1 unknown:
//
//	1 job number              10 requested memory (KB per processor)
//	2 submit time (s)         11 status (1 done, 0 failed, 5 cancelled)
//	3 wait time               12 user id
//	4 run time                13 group id
//	5 allocated processors    14 executable number
//	6 average CPU time used   15 queue number
//	7 used memory (KB/proc)   16 partition number
//	8 requested processors    17 preceding job number
//	9 requested time          18 think time after the preceding job
//
// Fields 6 and 7 may carry a decimal fraction (some archive logs write
// one); every other field is an integer. Fields 6, 7, 14, 17 and 18 are
// checked but not kept. Lines beginning with ';' are the header: "; Key:
// value" lines are collected in Workload.Header, and MaxProcs, MaxNodes
// and UnixStartTime are also parsed into their fields (an unparsable value
// of one of these is an error); other comment lines are ignored. A file
// without an UnixStartTime header whose earliest submit time is a plausible
// Unix time (at least 315360000, ten years of seconds) is taken to write
// Unix times, as Alea's traces do: UnixStartTime becomes the earliest
// submit time and every submit time is made relative to it.
//
// # Elastic jobs (this project's extension of SWF)
//
// A job line may have 20 fields: the 18 above, then
//
//	19 minimum processors
//	20 maximum processors
//
// making the job elastic (a select with a chunk count range,
// "19-20:ncpus=1"): it runs on between field 19 and field 20 processors,
// and its work is its run time (field 4) on its processors (field 8,
// else 5), as the simulator's speed-up model reads it (package
// sched/sim). Both fields are integers with 1 <= minimum <= maximum,
// or both -1 for a rigid job written in the same layout; anything else
// is an error naming the line. They are kept in Job.MinProcs and
// Job.MaxProcs (0 for a rigid job). Lines of 18 and 20 fields may mix in
// one file. Normalize caps the maximum at the machine and drops a job
// whose minimum is above it (with the rules below). Example, a job of 8
// processors for 600 s that may run on 4 to 16:
//
//	7 120 -1 600 8 -1 -1 8 900 -1 1 3 1 -1 -1 -1 -1 -1 4 16
//
// # Alea's extended SWF (wagap-2013.swf)
//
// The MetaCentrum traces of the Alea simulator have no header and 21
// fields: the 18 above, then
//
//	19 node list: "{id,id,...}", one host number per allocated processor
//	   (so a 64-processor job on one host repeats that host 64 times);
//	   the numbers are MetaCentrum host ids (1129..1288 in wagap-2013),
//	   unrelated to the .machines file. Checked, not kept.
//	20 PBS queue name (q_2h, q_4h, q_1d, q_2d, q_4d, q_1w, q_2w, q_2w_plus,
//	   backfill, ops, priority_long): Job.Queue. Field 15 is -1 there.
//	21 PBS node spec in Torque's -l nodes syntax as the user wrote it
//	   ("1:ppn=64:x86_64:cl_zewura#excl", "8:ppn=8:cl_zegox",
//	   "1:ppn=1+3:ppn=2", "1:^zewura17.cerit-sc.cz:ppn=24", even
//	   "1:ppn=1.5:brno"): Job.NodeSpec, verbatim.
//
// In wagap-2013 the submit times are Unix times (1356996147 is 1 January
// 2013, 00:22 CET); field 10 is in bytes for the whole job (Alea divides
// it by 1024 to get KB); fields 6, 11, 13, 14, 16, 17 and 18 are always 1
// and field 7 always 1024 (placeholders, not measurements); only 44
// distinct hosts appear in the node lists; the processor count of field 5
// does not always match the node spec (60 jobs: "1:ppn=1.5:brno", a bare
// "1", "1:ppn=1+3:ppn=2" with 7 processors...). Two jobs (4185, 4199) have
// a run time of minus their start time (an end time of 0 in the source)
// and a requested time of 0; Normalize drops them.
//
// The .machines file (ReadMachines) describes the clusters, one per line,
// tab-separated: id, name, number of nodes, CPUs per node, CPU speed
// rating (Alea multiplies run times by it; 1 = as recorded), and
// optionally memory per node in KB. wagap-2013.swf.machines:
//
//	0	zewura	20	80	1	529426432
//	1	zegox	48	12	1	94035968
//
// that is 20 nodes of 80 CPUs and 505 GiB and 48 nodes of 12 CPUs and
// 90 GiB: 2176 CPUs on 68 nodes. Load reads the trace's .machines file
// when there is one and, for a trace without MaxProcs/MaxNodes headers,
// takes the machine's totals from it.
//
// # PBS accounting logs (ReadAccounting)
//
// What internal/accounting writes and OpenPBS writes (traces/OpenPBS.log):
//
//	MM/DD/YYYY HH:MM:SS;<type>;<job id>;key=value key=value ...
//
// A value holding a blank, a quote or a backslash is written in double
// quotes with '"' and '\' escaped by a backslash (accounting.Format);
// single quotes are ordinary characters (OpenPBS's
// resources_used.diag_messages='{}' reads as '{}'). Lines beginning with
// ';' are comments (OpenPBS.log begins with "; UnixStartTime: ..."). Q (queued), S (started), E (ended),
// D (deleted) and R (rerun) records build jobs; the body of other record
// types (L license, A, ...) is not read. Per job (keyed by its PBS id,
// kept in Job.PBSID): submit is ctime (the creation time; qtime is when
// the job entered its current queue, later for a routed job), else qtime,
// else etime; start and end come from start= and end= (the last S and
// the E); requested processors from Resource_List.ncpus, else the ncpus
// total of Resource_List.select (a chunk naming none counts one), else of
// Resource_List.nodes; allocated processors from resource_assigned.ncpus
// or resources_used.ncpus; requested time from Resource_List.walltime,
// memory from Resource_List.mem (bytes, whole job); user, group, queue;
// Exit_status. Later records override earlier ones (qalter). Status is 1
// for an E with exit status 0, 0 for another exit status, 5 for a job
// deleted (D) before it ended, -1 for a job the log does not see end.
// Times are made relative to the earliest submit (Workload.UnixStartTime),
// jobs are sorted by submit (ties: first appearance in the log) and
// numbered 1, 2, ... in that order (Job.ID).
//
// # Normalize
//
// Normalize(w, procs) applies the usual replay conventions: the machine
// has w.MaxProcs processors, or procs when procs > 0; a job's processors
// are its requested ones (field 8), its allocated ones (field 5) when no
// request is known (a count of 0 or less is unknown); its walltime is the requested time raised to the run
// time when the job ran longer, the run time when no request is known;
// jobs with a run time < 0, no processor count, more processors than the
// machine, or (not in the README's list, and never the case in the
// reference traces) an unknown submit time < 0 are dropped and counted in
// w.Dropped; the rest is sorted by submit time, ties in file order.
//
// # Stream
//
// OpenStream(path) reads an SWF trace's header and machines file;
// Stream.Normalize(procs) sets the machine as Normalize does; then Next
// yields the jobs one at a time exactly as Load and Normalize would leave
// them: each job is kept or dropped by the same rules (normalJob) as it
// is read, the Unix-time guess takes the earliest submit time, and jobs
// come out in submit order, ties in file order. Order is not assumed: the
// stream holds back ReorderWindow (4,096) kept jobs and sorts them as
// they come, so a file out of order by fewer jobs than that replays as if
// sorted. What one pass cannot do it refuses with ErrNotStreamable, after
// having yielded jobs, rather than give other figures: a job submitted
// before one already yielded (out of order by more than the window), a
// job submitted before the Unix time base already used, or a MaxProcs,
// MaxNodes or UnixStartTime header line after the first job. The caller
// (pbs_simulate) then replays the trace again from memory (Load and
// Normalize), which sorts it whole. The archive's traces are sorted and
// stream in about 1.4 MB (the window's ring) plus the interned names.
//
// Accounting logs are read whole (ReadAccounting, then Normalize), not
// streamed: a job's values come from several records (Q, S, E, and R or
// D) that may lie days apart in the log, later records override earlier
// ones, and jobs are numbered in submit order, which is known only once
// every record has been read. Memory is one Job per job (about 170 bytes)
// plus what merging the records needs (its id, the times seen), about half
// a kilobyte a job while the log is read.
package trace
