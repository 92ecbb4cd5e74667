package schedpriv

import (
	"fmt"
	"strings"
)

// SortKey names a job ordering of the classic sort_by and key options. Its
// value is the name as written in sched_config.
type SortKey string

// The sort names of sched_config. Each one but NoSort, FairShareSort and
// MultiSort orders jobs by one requested resource or attribute; see Spec.
const (
	NoSort              SortKey = "no_sort"
	ShortestJobFirst    SortKey = "shortest_job_first"
	LongestJobFirst     SortKey = "longest_job_first"
	SmallestMemoryFirst SortKey = "smallest_memory_first"
	LargestMemoryFirst  SortKey = "largest_memory_first"
	HighPriorityFirst   SortKey = "high_priority_first"
	LowPriorityFirst    SortKey = "low_priority_first"
	LargeWalltimeFirst  SortKey = "large_walltime_first"
	ShortWalltimeFirst  SortKey = "short_walltime_first"
	FairShareSort       SortKey = "fair_share"
	MultiSort           SortKey = "multi_sort"
)

// SortKeys lists every sort name in the order the classic scheduler numbers
// them; a fresh slice each call, so callers may keep or change it.
func SortKeys() []SortKey {
	return []SortKey{
		NoSort, ShortestJobFirst, LongestJobFirst, SmallestMemoryFirst,
		LargestMemoryFirst, HighPriorityFirst, LowPriorityFirst,
		LargeWalltimeFirst, ShortWalltimeFirst, FairShareSort, MultiSort,
	}
}

// SortSource says what a sort compares.
type SortSource int

const (
	// SourceNone: no ordering (no_sort): jobs keep the server's order.
	SourceNone SortSource = iota
	// SourceResource: the job's Resource_List entry named by SortSpec.Resource.
	SourceResource
	// SourcePriority: the job's Priority attribute.
	SourcePriority
	// SourceFairShare: the fair-share standing of the job's owner (its share
	// percentage over its usage); the best-served-least owner comes first.
	SourceFairShare
	// SourceMulti: the key list, compared in order until two jobs differ.
	SourceMulti
)

// SortSpec is the meaning of a SortKey: what is compared and in which
// direction. A policy builds its comparator from this, so that the meaning
// of each name is defined once, here.
type SortSpec struct {
	Key        SortKey
	Source     SortSource
	Resource   string // for SourceResource: "cput", "mem" or "walltime"
	Descending bool   // largest value first
}

// Spec returns the meaning of k; ok is false for a name sched_config does
// not know.
func (k SortKey) Spec() (spec SortSpec, ok bool) {
	s := SortSpec{Key: k}
	switch k {
	case NoSort:
		s.Source = SourceNone
	case ShortestJobFirst:
		s.Source, s.Resource = SourceResource, "cput"
	case LongestJobFirst:
		s.Source, s.Resource, s.Descending = SourceResource, "cput", true
	case SmallestMemoryFirst:
		s.Source, s.Resource = SourceResource, "mem"
	case LargestMemoryFirst:
		s.Source, s.Resource, s.Descending = SourceResource, "mem", true
	case HighPriorityFirst:
		s.Source, s.Descending = SourcePriority, true
	case LowPriorityFirst:
		s.Source = SourcePriority
	case LargeWalltimeFirst:
		s.Source, s.Resource, s.Descending = SourceResource, "walltime", true
	case ShortWalltimeFirst:
		s.Source, s.Resource = SourceResource, "walltime"
	case FairShareSort:
		s.Source, s.Descending = SourceFairShare, true
	case MultiSort:
		s.Source = SourceMulti
	default:
		return SortSpec{}, false
	}
	return s, true
}

// Valid reports whether k is one of the sort names.
func (k SortKey) Valid() bool {
	_, ok := k.Spec()
	return ok
}

func (k SortKey) String() string { return string(k) }

// parseSortKey matches a name exactly, as PBS does: sort names are
// lower-case identifiers and a near miss is more likely a typo than intent,
// so it is refused, naming the closest sort. The admin guide's other
// spellings (sortAlias) read as the sort they stand for.
func parseSortKey(s string) (SortKey, error) {
	if k, ok := sortAlias(s); ok {
		return k, nil
	}
	k := SortKey(s)
	if !k.Valid() {
		names := sortNames()
		if near := closest(s, names); near != "" {
			return "", fmt.Errorf("unknown sort %q; did you mean %s?", s, near)
		}
		return "", fmt.Errorf("unknown sort %q (one of %s)", s, strings.Join(names, ", "))
	}
	return k, nil
}

// SortAliases maps the other spellings sort_by and key accept to the sort
// they stand for: cmp_job_walltime_asc, the classic scheduler's comparator
// that the admin guide names for short_walltime_first. Format writes the
// sort's own name. A fresh map each call.
func SortAliases() map[string]SortKey {
	return map[string]SortKey{"cmp_job_walltime_asc": ShortWalltimeFirst}
}

func sortAlias(s string) (SortKey, bool) {
	k, ok := SortAliases()[s]
	return k, ok
}

func sortNames() []string {
	ks := SortKeys()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return s
}

// ResourceSort is one entry of the OpenPBS job_sort_key / node_sort_key
// lists: a resource (or one of OpenPBS's special names such as
// fair_share_perc, job_priority, sort_priority) and a direction.
type ResourceSort struct {
	Resource   string
	Descending bool // "HIGH": largest first; "LOW": smallest first
}

// String renders the entry the way sched_config writes it.
func (r ResourceSort) String() string {
	if r.Descending {
		return r.Resource + " HIGH"
	}
	return r.Resource + " LOW"
}

func parseResourceSort(s string) (ResourceSort, error) {
	w := fields(s)
	if len(w) != 2 {
		return ResourceSort{}, fmt.Errorf("want \"resource HIGH\" or \"resource LOW\", got %q", s)
	}
	if !validName(w[0]) {
		return ResourceSort{}, fmt.Errorf("bad resource name %q", w[0])
	}
	switch strings.ToUpper(w[1]) {
	case "HIGH":
		return ResourceSort{Resource: w[0], Descending: true}, nil
	case "LOW":
		return ResourceSort{Resource: w[0]}, nil
	}
	return ResourceSort{}, fmt.Errorf("sort direction %q is neither HIGH nor LOW", w[1])
}

// validName accepts the names sched_config values carry (queue prefixes,
// resources, entities): non-empty, no white space, quotes or commas, so they
// can always be written back unquoted.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isBlank(c) || c == '"' || c == ',' || c == '\n' || c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
