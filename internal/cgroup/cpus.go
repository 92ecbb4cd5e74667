// Cpu lists ("0-3,8", the kernel's cpuset format) and the choice of each
// job's cpus among a node's.

package cgroup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPU bounds the cpu numbers a list may name (the kernel's NR_CPUS is
// at most 8192), so that a damaged file cannot make a huge set.
const maxCPU = 1 << 13

// CPUSet is a set of cpu numbers, ascending, without repeats.
type CPUSet []int

// ParseCPUList reads the kernel's list format: "0-3,8,10-11"; "" is the
// empty set.
func ParseCPUList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return CPUSet{}, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= maxCPU {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b >= maxCPU {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for i := a; i <= b; i++ {
			seen[i] = true
		}
	}
	out := make(CPUSet, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// String writes the set in the kernel's list format.
func (s CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Allocator hands out a node's cpus to its jobs, each cpu to one job at a
// time. It is not safe for concurrent use: its owner locks.
type Allocator struct {
	all   CPUSet
	owner map[int]string // cpu -> job id
}

// NewAllocator shares out all.
func NewAllocator(all CPUSet) *Allocator {
	return &Allocator{all: slices.Clone(all), owner: map[int]string{}}
}

// Take gives job id the n lowest free cpus; ok is false, and nothing is
// taken, when fewer are free (the node's cpus are oversubscribed).
func (a *Allocator) Take(id string, n int) (cpus CPUSet, ok bool) {
	if n <= 0 {
		return nil, false
	}
	for _, c := range a.all {
		if _, busy := a.owner[c]; !busy {
			cpus = append(cpus, c)
			if len(cpus) == n {
				break
			}
		}
	}
	if len(cpus) < n {
		return nil, false
	}
	for _, c := range cpus {
		a.owner[c] = id
	}
	return cpus, true
}

// Hold records that job id has cpus (a job found running at start).
func (a *Allocator) Hold(id string, cpus CPUSet) {
	for _, c := range cpus {
		if slices.Contains(a.all, c) {
			a.owner[c] = id
		}
	}
}

// Free is how many cpus no job has.
func (a *Allocator) Free() int {
	n := 0
	for _, c := range a.all {
		if _, busy := a.owner[c]; !busy {
			n++
		}
	}
	return n
}

// Release frees job id's cpus.
func (a *Allocator) Release(id string) {
	for c, o := range a.owner {
		if o == id {
			delete(a.owner, c)
		}
	}
}
