package pbsnodes

import (
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/resc"
)

// Node state items as the server sends them (proto: a comma list).
const (
	stFree         = "free"
	stOffline      = "offline"
	stDown         = "down"
	stUnknown      = "state-unknown"
	stJobBusy      = "job-busy"      // OpenPBS: every cpu assigned
	stJobExclusive = "job-exclusive" // Torque's name for the same
	stBusy         = "busy"
)

// stateItems splits a state value into its items, without blanks or
// empty items.
func stateItems(state string) []string {
	var out []string
	for _, it := range strings.Split(state, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

func hasItem(items []string, want ...string) bool {
	for _, it := range items {
		for _, w := range want {
			if it == w {
				return true
			}
		}
	}
	return false
}

// torqueState is a state as Torque names it: OpenPBS's job-busy is
// Torque's job-exclusive (a node whose cpus are all assigned), which is
// what Torque tools count as a full node.
func torqueState(state string) string {
	items := stateItems(state)
	for i, it := range items {
		if it == stJobBusy {
			items[i] = stJobExclusive
		}
	}
	return strings.Join(items, ",")
}

// stateKeyword reports whether s is one of Torque's "pbsnodes -l <state>"
// keywords (case-insensitive, as Torque compares them).
func stateKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "free", "offline", "down", "reserve", "job-exclusive", "job-sharing", "busy",
		"state-unknown", "time-shared", "active", "all", "up":
		return true
	}
	return false
}

// stateMatches reports whether a node in state passes -l's filter: with no
// keyword, nodes that are down, offline or unknown (OpenPBS's offline by
// mom and unresolvable count as offline and down); with one, Torque's
// meaning of that keyword.
func stateMatches(filter, state string) bool {
	items := stateItems(torqueState(state))
	unavailable := hasItem(items, stDown, stOffline, stUnknown, "offline_by_mom", "unresolvable")
	switch filter {
	case "":
		return unavailable
	case "all":
		return true
	case "up":
		return !unavailable
	case "down":
		return hasItem(items, stDown, stUnknown)
	case "active":
		return hasItem(items, stBusy, stJobExclusive, "job-sharing")
	case "reserve":
		return hasItem(items, "reserve", "resv-exclusive")
	case "offline":
		return hasItem(items, stOffline, "offline_by_mom")
	}
	return hasItem(items, filter)
}

// sizeKB reads a size value ("24684096kb", "2gb") in kilobytes, rounding
// up a remainder, as the server counts memory.
func sizeKB(v string) (int64, bool) {
	b, err := resc.ParseSize(v)
	if err != nil || b < 0 {
		return 0, false
	}
	return b/1024 + min(1, b%1024), true
}

// shortSize writes kilobytes in the largest unit (k, m, g, t, p) that
// keeps the number at most three digits, rounding to the nearest unit, so
// that it fits the summary's memory columns ("24684096kb" -> "24gb").
func shortSize(kb int64) string {
	const units = "kmgtp"
	u := 0
	for kb > 999 && u < len(units)-1 {
		kb = (kb + 512) / 1024
		u++
	}
	return strconv.FormatInt(kb, 10) + units[u:u+1] + "b"
}
