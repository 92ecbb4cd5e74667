// Command pbs_rstat lists reservations as OpenPBS's does: a line each
// (-S, the default), every attribute (-f, -F), or the ids (-B); all of
// them, or those named. See resvcmd.StatUsage.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsrstat"

func main() { pbsrstat.Main() }
