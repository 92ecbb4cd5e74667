// Command qorder exchanges the places of two jobs in the server's job
// order, OpenPBS's qorder:
//
//	qorder job_identifier job_identifier
//	qorder --version
//
// What it does and says:
//
//   - The server swaps the jobs' queue_rank (the order it lists jobs in,
//     and so the order the scheduler tries them in when no sort key
//     separates them: with the default fifo order the swapped order is
//     the run order). Jobs of different queues also exchange queues, each
//     admitted to the other's queue as qmove admits a job. The order is
//     stored and survives a restart.
//   - Both jobs must be the caller's, unless an operator or manager asks;
//     neither may be running (R, E, or an array that began: "Request
//     invalid for state of job"); subjob ids are refused ("Invalid
//     request"), an array moves whole.
//   - Both ids must name the same server, else "qorder: both jobs ids must
//     specify the same server" (exit 1). A failure of the request prints
//     "qorder: <message> <id1> or <id2>", exit status the PBSE code's, as
//     OpenPBS does. A wrong number of operands prints the usage, exit 2.
//
// The logic is in run, which takes an Env, the arguments and a connector,
// so that tests drive it against a fake server connection.
package main
