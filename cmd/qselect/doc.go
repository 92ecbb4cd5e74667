// Command qselect prints the ids of the jobs that match every given
// criterion, one canonical id per line, in the server's order.
//
// Usage: qselect [-a [op]date_time] [-A account] [-c [op]interval]
// [-h hold_list] [-H] [-J] [-l resource.op.value[,...]] [-N name]
// [-p [op]priority] [-P project] [-q destination] [-r y|n] [-s [op]states]
// [-t subopt[op]date_time] [-T] [-u user_list] [-x]
//
//   - op is one of .eq. .ne. .ge. .gt. .le. .lt. written before the value
//     ("-p .gt.10"; -l puts it between resource and value, "ncpus.gt.4");
//     without one the comparison is equality. The criteria go to the server
//     as proto.Attr values with the matching proto.Op*, using the OpenPBS
//     attribute names; the server does the matching.
//   - date_time is [[[[CC]YY]MM]DD]hhmm[.SS] in local time; a time already
//     past rolls forward to the next day (month if DD was given, year if MM
//     was) as qsub -a does. It is sent as Unix seconds.
//   - -r is sent as the wire booleans True/False; -q queue@server selects on
//     the queue, @server alone selects nothing extra. In the torque
//     personality -s C means the finished (F) jobs.
//   - -x (and -H, which selects F and M) includes finished jobs; the torque
//     personality always does, since Torque keeps completed jobs as C.
//   - Exit status 0 on success, even when nothing matched; a server error is
//     printed as "qselect: <message>" with its status. Usage errors (bad
//     values, operands) exit 2.
package main
