// Package acctsum is qacct's arithmetic over accounting records: one
// ended job's row read from its E record (Read), usage summed by who ran
// it and where (Sums, keyed by Key), and the efficiencies Slurm's seff
// shows (cpu: cput / (ncpus × walltime); memory: peak / requested; wall:
// walltime / requested walltime).
//
// Pure: it takes records already split (internal/accounting), never a
// file or a clock; qacct (internal/cli/qacct) reads the logs and keeps
// each day's sums in its cache.
package acctsum
