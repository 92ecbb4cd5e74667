// Command pbs_rdel deletes reservations, as OpenPBS's does: the jobs in
// them are deleted, running ones killed. Their owner, an operator or a
// manager may. See resvcmd.DelUsage.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsrdel"

func main() { pbsrdel.Main() }
