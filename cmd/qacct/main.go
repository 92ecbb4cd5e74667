// Command qacct reports usage from this server's accounting logs
// (PBS_HOME/server_priv/accounting, every day file, compressed ones too),
// with Grid Engine's name and options: usage summed by owner (-o),
// group (-g), project (-P), account (-A), queue (-q) or host (-h), each
// optionally narrowed to one value, in a time window (-b/-e in PBS's
// datetime form, -d days), as a table, --json or --csv; -j ID shows one
// job's records (an array's subjobs too) with its cpu, memory and wall
// efficiency, as Slurm's seff does. Each day's sums are kept in
// accounting/.qacct, read again when a log changes.
package main

import "github.com/gopbs/gopbs/internal/cli/qacct"

func main() { qacct.Main() }
