// Package filter runs the admin's filter programs: the submission filters
// pbs_server runs at qsub and the activation filters pbs_sched runs before
// it starts a job (DESIGN §7, seeded by Windows HPC's filters). Both kinds
// share this contract, so one program can be tested by hand the same way
// either daemon calls it:
//
//   - The program is executed directly, never through a shell: argv[0] is
//     its path, argv[1] the path of a JSON file holding the job as
//     "qstat -f -F json <id>" prints it. Nothing a user typed becomes a
//     command line.
//   - Context comes in the environment: the daemon's own environment plus
//     PBS_FILTER_KIND (submission or activation), PBS_FILTER_JOB_ID and the
//     variables of the kind (Env builds them; the daemons' docs list them).
//   - The exit code is the verdict; what it means depends on the kind
//     (submission: 0 accept, 1 accept as rewritten; activation: 0..4).
//   - A program that runs longer than its timeout is killed with its whole
//     process group (it runs in a group of its own), so a filter that forks
//     a helper cannot leave it behind; the run reports "timed out".
//   - A path that does not exist reports "not found"; one that cannot be
//     executed reports why. Neither is an exit code: the chain's caller
//     treats them as the kind's "anything else".
//   - The first line of the program's standard error (at most 200 bytes)
//     goes into the daemon's message to the user, so a filter explains a
//     refusal by printing one line there. Standard output is discarded.
//   - Reverting: when a chain fails, the filters that must undo what they
//     did are called again in reverse order with the same file and the
//     extra argument argv[2] = "--revert" (Revert). An argument rather than
//     an environment variable, so that "$2" in a shell script and a look at
//     ps both show it. Their exit codes on revert are logged, not obeyed.
//
// Who calls: pbs_server (internal/server) for submission filters, the
// scheduler's activation filters (sched/activation); both only outside
// any lock, since a filter may take up to its timeout.
package filter
