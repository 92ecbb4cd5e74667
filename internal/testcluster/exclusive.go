package testcluster

import (
	"sync"
	"testing"
)

// Host-wide things some tests change, which two tests of one process
// must not change at once; every other test runs beside them.
const (
	// HostCgroups: tests that make cgroup hierarchies of their own or
	// confine jobs (cgroups, GPUs' devices controller, escaped processes).
	HostCgroups = "cgroups"
	// HostUsers: tests that add and remove Unix users and groups
	// (useradd locks /etc/passwd and refuses a second writer).
	HostUsers = "users"
	// HostNetns: tests that make network namespaces, bridges and hosts'
	// names (iproute2).
	HostNetns = "netns"
)

var (
	exclusiveMu sync.Mutex
	// exclusive is process-wide by nature: the tests of one binary share
	// the host.
	exclusive = map[string]*sync.Mutex{}
)

// Exclusive marks t parallel with every other test except those that
// hold the same host-wide thing (HostCgroups, HostUsers, HostNetns),
// with which it takes turns: it returns once t holds what, until t ends.
func Exclusive(t *testing.T, what string) {
	t.Helper()
	t.Parallel()
	exclusiveMu.Lock()
	mu := exclusive[what]
	if mu == nil {
		mu = new(sync.Mutex)
		exclusive[what] = mu
	}
	exclusiveMu.Unlock()
	mu.Lock()
	t.Cleanup(mu.Unlock)
}
