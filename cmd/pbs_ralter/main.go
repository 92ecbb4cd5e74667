// Command pbs_ralter changes a reservation's start, end, users, name or
// mail, as OpenPBS's does, and prints the state it is left in
// ("R12.srv BEING_ALTERED" until the scheduler confirms new times). See
// resvcmd.AlterUsage.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsralter"

func main() { pbsralter.Main() }
