// mom_priv/cgroups: which confinement a mom applies to its jobs. The
// parser reads text and nothing else (no files, no kernel), so that it
// can be tested by table and fuzzed.

package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/resc"
)

// ConfigFile is the configuration's name in mom_priv.
const ConfigFile = "cgroups"

// Controller names as the kernel spells them.
const (
	Memory = "memory"
	Cpuset = "cpuset"
	CPU    = "cpu"
	Pids   = "pids"
	// Devices hides from each job the GPUs that are not its own (v1 only:
	// v2 controls devices with eBPF programs, which this mom does not
	// load).
	Devices = "devices"
	// cpuacct is v1's cpu accounting, which is not used: the shepherd,
	// child subreaper of the whole job, counts its cpu exactly.
	cpuacct = "cpuacct"
)

// controllers are those a configuration may name, in the order they are
// listed back.
var controllers = []string{Memory, Cpuset, CPU, Pids, Devices}

// Hierarchy choices of the "hierarchy" key.
const (
	HierarchyAuto = "auto"
	HierarchyV1   = "v1"
	HierarchyV2   = "v2"
)

// DefaultRoot is the directory under each hierarchy that holds the jobs'
// cgroups, as OpenPBS's hook names its own pbs_jobs.service.
const DefaultRoot = "pbs_jobs"

// Config is mom_priv/cgroups.
type Config struct {
	// Enabled is true unless the file says "enabled false": a mom without
	// the file confines nothing.
	Enabled bool
	// Hierarchy is auto (v2 when its hierarchy offers every controller
	// asked for, else v1), v1 or v2.
	Hierarchy string
	// Controllers are those asked for (memory, cpuset, cpu, pids,
	// devices), in a
	// fixed order; empty ("none") still puts each job in a cgroup of its
	// own, killed and counted as a whole.
	Controllers []string
	// Root is the directory of the jobs' cgroups under each hierarchy's
	// mount; "./name" puts it under the mom's own cgroup instead.
	Root string
	// MemReserved is memory kept for the host: jobs are offered the host's
	// memory less this, and a job that asks for no mem is limited to it.
	MemReserved int64
	// PidsMax limits each job's processes and threads (0: no limit).
	PidsMax int64
	// ExcludeHosts are node or host names on which the mom confines
	// nothing (one file shared by every node).
	ExcludeHosts []string
}

// Has reports whether controller c was asked for.
func (c *Config) Has(ctrl string) bool { return slices.Contains(c.Controllers, ctrl) }

// DefaultConfig is what an empty mom_priv/cgroups means.
func DefaultConfig() Config {
	return Config{Enabled: true, Hierarchy: HierarchyAuto, Controllers: []string{Memory, Cpuset, CPU}, Root: DefaultRoot}
}

// Excluded reports whether any of names (the node's, the host's) is one
// of the excluded hosts.
func (c *Config) Excluded(names ...string) bool {
	for _, n := range names {
		if n != "" && slices.Contains(c.ExcludeHosts, n) {
			return true
		}
	}
	return false
}

// ParseConfig reads mom_priv/cgroups: "key value" lines, '#' comments,
// each key at most once. A line it does not understand is an error
// naming name:line, which stops the mom: confinement asked for and not
// applied would go unnoticed.
func ParseConfig(r io.Reader, name string) (Config, error) {
	c := DefaultConfig()
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, n, fmt.Sprintf(format, args...))
		}
		key, value := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			key, value = line[:i], strings.TrimSpace(line[i+1:])
		}
		if prev, ok := seen[key]; ok {
			return Config{}, bad("%s already set on line %d", key, prev)
		}
		if value == "" {
			return Config{}, bad("%s has no value", key)
		}
		seen[key] = n
		if err := c.set(key, value); err != nil {
			return Config{}, bad("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if c.Hierarchy == HierarchyV2 && c.Has(Devices) {
		// v2 has no devices files: access is decided by eBPF programs
		// attached to the cgroup, which this mom does not load.
		return Config{}, fmt.Errorf("%s: controller devices needs hierarchy v1 (v2 controls devices with eBPF programs, not supported)", name)
	}
	if c.PidsMax > 0 && !c.Has(Pids) {
		// A limit asks for its controller.
		c.Controllers = orderControllers(append(c.Controllers, Pids))
	}
	return c, nil
}

// set applies one line.
func (c *Config) set(key, value string) error {
	switch key {
	case "enabled":
		b, ok := parseBool(value)
		if !ok {
			return fmt.Errorf("enabled %q: want true or false", value)
		}
		c.Enabled = b
	case "hierarchy":
		switch value {
		case HierarchyAuto, HierarchyV1, HierarchyV2:
			c.Hierarchy = value
		default:
			return fmt.Errorf("hierarchy %q: want auto, v1 or v2", value)
		}
	case "controllers":
		list, err := parseControllers(value)
		if err != nil {
			return err
		}
		c.Controllers = list
	case "root":
		if err := checkRoot(value); err != nil {
			return err
		}
		c.Root = value
	case "mem_reserved":
		b, err := resc.ParseSize(value)
		if err != nil {
			return fmt.Errorf("mem_reserved %q: want a size (512mb)", value)
		}
		c.MemReserved = b
	case "pids_max":
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("pids_max %q: want a number above 0", value)
		}
		c.PidsMax = v
	case "exclude_hosts":
		c.ExcludeHosts = nil
		for _, h := range strings.Split(value, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.ExcludeHosts = append(c.ExcludeHosts, h)
			}
		}
	default:
		return fmt.Errorf("unknown key %q (want enabled, hierarchy, controllers, root, mem_reserved, pids_max or exclude_hosts)", key)
	}
	return nil
}

func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "true", "yes", "1", "on":
		return true, true
	case "false", "no", "0", "off":
		return false, true
	}
	return false, false
}

// parseControllers reads "memory,cpuset,cpu,pids" or "none".
func parseControllers(value string) ([]string, error) {
	if value == "none" {
		return []string{}, nil
	}
	var list []string
	for _, f := range strings.Split(value, ",") {
		f = strings.TrimSpace(f)
		switch {
		case slices.Contains(controllers, f):
			list = append(list, f)
		case f == cpuacct:
			return nil, fmt.Errorf("controller cpuacct: cpu time is always counted; remove it")
		default:
			return nil, fmt.Errorf("unknown controller %q (want memory, cpuset, cpu, pids, devices or none)", f)
		}
	}
	return orderControllers(list), nil
}

// orderControllers puts list in the fixed order, without repeats.
func orderControllers(list []string) []string {
	out := []string{}
	for _, c := range controllers {
		if slices.Contains(list, c) {
			out = append(out, c)
		}
	}
	return out
}

// checkRoot accepts a relative directory path ("pbs_jobs", "site/pbs",
// "./pbs_jobs") that stays below where it starts.
func checkRoot(v string) error {
	rest := strings.TrimPrefix(v, "./")
	if rest == "" || strings.HasPrefix(rest, "/") {
		return fmt.Errorf("root %q: want a relative directory (pbs_jobs, or ./name under the mom's own cgroup)", v)
	}
	for _, part := range strings.Split(rest, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("root %q: each part must be a name", v)
		}
	}
	return nil
}
