// Command pbs_rsub makes a reservation, as OpenPBS's does: an advance
// one (-R start, -E end or -D duration, -l what), a standing one (-r an
// iCalendar rule, in the time zone PBS_TZID), or a maintenance one of
// whole hosts (--hosts, managers only). It prints the reservation's id and
// state ("R12.srv UNCONFIRMED"); the scheduler then confirms it or denies
// it. With -I it waits for that verdict. See resvcmd.SubUsage.
package main

import "github.com/gopbs/gopbs/internal/cli/pbsrsub"

func main() { pbsrsub.Main() }
