// The host's cgroup hierarchies: finding them (the mount table and the
// process's own cgroups), choosing v1 or v2, and making the directory
// that holds the jobs' cgroups.

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// System is what the package reads of the host: the mount table and the
// calling process's cgroups (their texts), and the directory operations
// (the kernel's; a fake tree's in tests).
type System struct {
	MountInfo  string // /proc/self/mountinfo
	SelfCgroup string // /proc/self/cgroup
	fs         fileSystem
}

// HostSystem reads this process's view of the host.
func HostSystem() (System, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return System{}, fmt.Errorf("mount table: %w", err)
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return System{}, fmt.Errorf("own cgroups: %w", err)
	}
	return System{MountInfo: string(mi), SelfCgroup: string(cg)}, nil
}

// fileSystem makes and removes cgroup directories. On cgroupfs a new
// directory comes with its control files and rmdir removes it with
// them; a fake tree must do both itself.
type fileSystem interface {
	Mkdir(path string) error
	Rmdir(path string) error
}

type kernelFS struct{}

func (kernelFS) Mkdir(path string) error { return os.Mkdir(path, 0o755) }
func (kernelFS) Rmdir(path string) error { return syscall.Rmdir(path) }

func fsOf(f fileSystem) fileSystem {
	if f == nil {
		return kernelFS{}
	}
	return f
}

// Dir is one cgroup directory and the controllers of its hierarchy that
// act on it; Home (v1) is the cgroup in that hierarchy of the process
// that opened the tree, which the processes it starts (the shepherds)
// are in too: where a thread that went into the job's cgroup to fork
// comes back to.
type Dir struct {
	Path        string   `json:"path"`
	Controllers []string `json:"controllers,omitempty"`
	Home        string   `json:"home,omitempty"`
}

func (d Dir) has(ctrl string) bool { return slices.Contains(d.Controllers, ctrl) }

// Tree is the directory of the jobs' cgroups on this host: one per v1
// hierarchy in use, or one in the v2 hierarchy.
type Tree struct {
	v2    bool
	roots []Dir
	cpus  CPUSet // the cpus the jobs' cpusets are taken from (cpuset in use)
	mems  string // v1: the memory nodes of every job's cpuset
	fs    fileSystem
}

// V2 reports whether the tree is in the v2 hierarchy.
func (t *Tree) V2() bool { return t.v2 }

// Roots are the tree's directories.
func (t *Tree) Roots() []Dir { return slices.Clone(t.roots) }

// CPUs are the cpus the jobs' cpusets are taken from (nil without the
// cpuset controller).
func (t *Tree) CPUs() CPUSet { return slices.Clone(t.cpus) }

// mount is one cgroup file system of the mount table.
type mount struct {
	dir, root   string
	v2          bool
	controllers []string // v1: those of ours among its options
}

// parseMountInfo finds the cgroup mounts of a /proc/<pid>/mountinfo
// text, in its order.
func parseMountInfo(s string) []mount {
	var out []mount
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 5 || sep+3 > len(f) {
			continue
		}
		m := mount{root: unescapeMount(f[3]), dir: unescapeMount(f[4])}
		switch f[sep+1] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			if sep+3 < len(f) {
				for _, o := range strings.Split(f[sep+3], ",") {
					if slices.Contains(controllers, o) || o == Freezer {
						m.controllers = append(m.controllers, o)
					}
				}
			}
			if len(m.controllers) == 0 {
				continue // name=systemd and the controllers we do not use
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// parseProcCgroup reads /proc/<pid>/cgroup into each controller's path
// ("" for the v2 hierarchy).
func parseProcCgroup(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// ownDir is where a process whose cgroup in m's hierarchy is path sees
// it, or "" when m does not show it.
func ownDir(m mount, path string) string {
	root := strings.TrimSuffix(m.root, "/")
	if root != "" && path != root && !strings.HasPrefix(path, root+"/") {
		return ""
	}
	return filepath.Join(m.dir, strings.TrimPrefix(path, root))
}

// Open finds the hierarchy cfg asks for and makes the tree's directories
// (and, v2, enables the controllers down to them). It fails, saying
// what is missing, when the host cannot confine as cfg asks.
func Open(cfg Config, sys System) (*Tree, error) {
	fs := fsOf(sys.fs)
	mounts := parseMountInfo(sys.MountInfo)
	self := parseProcCgroup(sys.SelfCgroup)
	want := cfg.Controllers

	var v2 *mount
	var v2avail []string
	for i := range mounts {
		if mounts[i].v2 {
			v2 = &mounts[i]
			b, _ := os.ReadFile(filepath.Join(v2.dir, "cgroup.controllers"))
			v2avail = strings.Fields(string(b))
			break
		}
	}
	v1 := map[string]*mount{}
	for i := range mounts {
		for _, c := range mounts[i].controllers {
			if _, ok := v1[c]; !ok {
				v1[c] = &mounts[i]
			}
		}
	}
	var v1missing, v2missing []string
	for _, c := range want {
		if v1[c] == nil {
			v1missing = append(v1missing, c)
		}
		if !slices.Contains(v2avail, c) {
			v2missing = append(v2missing, c)
		}
	}
	ok1 := len(v1) > 0 && len(v1missing) == 0
	// v2 has no devices controller to offer (eBPF programs do its work):
	// asked for, only v1 will do.
	ok2 := v2 != nil && len(v2missing) == 0 && !slices.Contains(want, Devices)
	useV2 := false
	switch cfg.Hierarchy {
	case HierarchyV2:
		if v2 == nil {
			return nil, errors.New("hierarchy v2: no cgroup2 file system is mounted")
		}
		if !ok2 {
			return nil, fmt.Errorf("hierarchy v2: controllers %s not offered at %s (it offers %q)", strings.Join(v2missing, ","), v2.dir, strings.Join(v2avail, " "))
		}
		useV2 = true
	case HierarchyV1:
		if !ok1 {
			return nil, fmt.Errorf("hierarchy v1: controllers %s are not mounted as v1 hierarchies", strings.Join(v1missing, ","))
		}
	default:
		switch {
		case ok2:
			useV2 = true
		case ok1:
		default:
			return nil, fmt.Errorf("controllers %s are in neither hierarchy (v1 lacks %s; v2 %s)", strings.Join(want, ","),
				orNone(v1missing), v2Lacks(v2, v2missing))
		}
	}
	t := &Tree{v2: useV2, fs: sys.fs}
	if useV2 {
		base, err := baseDir(cfg.Root, *v2, self[""])
		if err != nil {
			return nil, err
		}
		root := Dir{Path: filepath.Join(base, strings.TrimPrefix(cfg.Root, "./")), Controllers: slices.Clone(want)}
		if err := makeV2Root(fs, v2.dir, root.Path, want); err != nil {
			return nil, err
		}
		t.roots = []Dir{root}
		if slices.Contains(want, Cpuset) {
			cpus, err := readCPUs(filepath.Join(root.Path, "cpuset.cpus.effective"))
			if err != nil {
				return nil, err
			}
			t.cpus = cpus
		}
		return t, nil
	}
	// v1: one directory per hierarchy of the controllers.
	byMount := map[*mount][]string{}
	var order []*mount
	for _, c := range want {
		m := v1[c]
		if m == nil {
			continue
		}
		if _, ok := byMount[m]; !ok {
			order = append(order, m)
		}
		byMount[m] = append(byMount[m], c)
	}
	if m := v1[Freezer]; m != nil {
		// Suspend freezes the jobs (freeze.go).
		if _, ok := byMount[m]; !ok {
			order = append(order, m)
		}
		byMount[m] = append(byMount[m], Freezer)
	}
	for _, m := range order {
		base, err := baseDir(cfg.Root, *m, self[m.controllers[0]])
		if err != nil {
			return nil, err
		}
		home := ownDir(*m, self[m.controllers[0]])
		if home == "" {
			return nil, fmt.Errorf("this process's own cgroup is not visible under %s", m.dir)
		}
		d := Dir{Path: filepath.Join(base, strings.TrimPrefix(cfg.Root, "./")), Controllers: byMount[m], Home: home}
		if err := makeV1Root(fs, base, d); err != nil {
			return nil, err
		}
		if d.has(Cpuset) {
			cpus, err := readCPUs(filepath.Join(d.Path, "cpuset.cpus"))
			if err != nil {
				return nil, err
			}
			mems, err := readTrim(filepath.Join(d.Path, "cpuset.mems"))
			if err != nil {
				return nil, err
			}
			t.cpus, t.mems = cpus, mems
		}
		t.roots = append(t.roots, d)
	}
	return t, nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ",")
}

func v2Lacks(m *mount, missing []string) string {
	if m == nil {
		return "is not mounted"
	}
	return "lacks " + orNone(missing) + " at " + m.dir
}

// baseDir is where root starts in m's hierarchy: its mount point, or the
// process's own cgroup for "./name".
func baseDir(root string, m mount, selfPath string) (string, error) {
	if !strings.HasPrefix(root, "./") {
		return m.dir, nil
	}
	d := ""
	if selfPath != "" {
		d = ownDir(m, selfPath)
	}
	if d == "" {
		return "", fmt.Errorf("root %s: this process's own cgroup is not visible under %s", root, m.dir)
	}
	return d, nil
}

// makeV1Root makes d.Path below base; a cpuset directory made gets its
// parent's cpus and memory nodes (v1 leaves them empty, and an empty
// cpuset takes no process).
func makeV1Root(fs fileSystem, base string, d Dir) error {
	rel, _ := filepath.Rel(base, d.Path)
	cur := base
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		parent := cur
		cur = filepath.Join(cur, part)
		if err := fs.Mkdir(cur); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make %s: %w", cur, err)
		}
		if !d.has(Cpuset) {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, _ := readTrim(filepath.Join(cur, f)); v != "" {
				continue
			}
			v, err := readTrim(filepath.Join(parent, f))
			if err != nil {
				return err
			}
			if err := writeFile(filepath.Join(cur, f), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// makeV2Root makes root below mountDir and enables want in the subtree
// of every directory from mountDir down to root, so that the jobs'
// directories under root have them.
func makeV2Root(fs fileSystem, mountDir, root string, want []string) error {
	rel, err := filepath.Rel(mountDir, root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("root %s is not under %s", root, mountDir)
	}
	cur := mountDir
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 0; i <= len(parts); i++ {
		if i > 0 {
			cur = filepath.Join(cur, parts[i-1])
			if err := fs.Mkdir(cur); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("make %s: %w", cur, err)
			}
		}
		if len(want) == 0 {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(cur, "cgroup.subtree_control"))
		on := strings.Fields(string(b))
		var add []string
		for _, c := range want {
			if !slices.Contains(on, c) {
				add = append(add, "+"+c)
			}
		}
		if len(add) == 0 {
			continue
		}
		if err := writeFile(filepath.Join(cur, "cgroup.subtree_control"), strings.Join(add, " ")); err != nil {
			if errors.Is(err, syscall.EBUSY) {
				return fmt.Errorf("%w (a v2 cgroup that holds processes cannot pass controllers on: choose a root outside the mom's own cgroup)", err)
			}
			return err
		}
	}
	return nil
}

// checkID refuses a job id that is not one directory name.
func checkID(id string) error {
	if id == "" || id == "." || id == ".." || len(id) > 255 || strings.ContainsAny(id, "/\x00\n") {
		return fmt.Errorf("job id %q cannot name a cgroup", id)
	}
	return nil
}

// Job is the handle of job id's cgroup (which may not exist).
func (t *Tree) Job(id string) (*Job, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	j := &Job{ID: id, V2: t.v2, fs: t.fs}
	for _, r := range t.roots {
		d := r
		d.Path = filepath.Join(r.Path, id)
		j.Dirs = append(j.Dirs, d)
	}
	return j, nil
}

// List names the jobs that have a cgroup here (in any hierarchy).
func (t *Tree) List() ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, r := range t.roots {
		ents, err := os.ReadDir(r.Path)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.Path, err)
		}
		for _, e := range ents {
			if e.IsDir() && !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// RemoveAll kills and removes every job's cgroup of the tree, waiting up
// to wait for each, and then the tree's own directories (a test's tree,
// or a host that stops confining).
func (t *Tree) RemoveAll(wait time.Duration) error {
	ids, err := t.List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, id := range ids {
		j, err := t.Job(id)
		if err == nil {
			err = j.Destroy(wait)
		}
		if err != nil {
			return err
		}
	}
	return (&Job{Dirs: t.roots, fs: t.fs}).Remove()
}

// Create makes job id's cgroup with lim. What a previous run of the job
// left there is killed and removed first.
func (t *Tree) Create(id string, lim Limits) (*Job, error) {
	j, err := t.Job(id)
	if err != nil {
		return nil, err
	}
	stale := *j
	j.Limits = lim
	if !j.V2 {
		// Only the hierarchies the job needs: every directory is made,
		// joined, read and removed for every job. One at least holds the
		// job, to kill it whole.
		j.Dirs = slices.DeleteFunc(slices.Clone(j.Dirs), func(d Dir) bool { return !lim.needs(d) })
		if len(j.Dirs) == 0 {
			j.Dirs = stale.Dirs[:1]
		}
	}
	err = j.mkdirs()
	if errors.Is(err, os.ErrExist) {
		// Left by an earlier run of the job: what is in it goes.
		if err := stale.Destroy(staleKillWait); err != nil {
			return nil, fmt.Errorf("a previous cgroup of %s: %w", id, err)
		}
		err = j.mkdirs()
	}
	if err != nil {
		return nil, err
	}
	if err := j.apply(t); err != nil {
		j.Remove()
		return nil, err
	}
	return j, nil
}

// needs reports whether a job with these limits needs its directory in
// v1 hierarchy d: memory counts what it uses, the freezer suspends it,
// the others only limit.
func (lim Limits) needs(d Dir) bool {
	return d.has(Memory) || d.has(Freezer) || d.has(Cpuset) && len(lim.Cpus) > 0 ||
		d.has(CPU) && lim.CPUQuota > 0 || d.has(Pids) && lim.PidsMax > 0 ||
		d.has(Devices) && len(lim.DenyDevices) > 0
}

// mkdirs makes the job's directories; on failure it removes those it
// made.
func (j *Job) mkdirs() error {
	for i, d := range j.Dirs {
		if err := fsOf(j.fs).Mkdir(d.Path); err != nil {
			made := &Job{Dirs: j.Dirs[:i], fs: j.fs}
			made.Remove()
			return fmt.Errorf("make %s: %w", d.Path, err)
		}
	}
	return nil
}

// cfsPeriod is the cpu quota's period, in microseconds (the kernel's
// default).
const cfsPeriod = 100000

// apply writes the job's limits into its new directories.
func (j *Job) apply(t *Tree) error {
	lim := j.Limits
	w := func(d Dir, name, value string) error { return writeFile(filepath.Join(d.Path, name), value) }
	quota := func() string { return fmt.Sprint(int64(lim.CPUQuota * cfsPeriod)) }
	for _, d := range j.Dirs {
		var err error
		if j.V2 {
			err = firstErr(
				when(d.has(Memory) && lim.Mem > 0, func() error { return w(d, "memory.max", fmt.Sprint(lim.Mem)) }),
				when(d.has(Memory) && lim.Vmem > lim.Mem && lim.Mem > 0 && exists(filepath.Join(d.Path, "memory.swap.max")),
					func() error { return w(d, "memory.swap.max", fmt.Sprint(lim.Vmem-lim.Mem)) }),
				// The kernel's OOM killer then takes the whole job, not one
				// of its processes.
				when(d.has(Memory), func() error { return w(d, "memory.oom.group", "1") }),
				when(d.has(Cpuset) && len(lim.Cpus) > 0, func() error { return w(d, "cpuset.cpus", lim.Cpus.String()) }),
				when(d.has(CPU) && lim.CPUQuota > 0, func() error { return w(d, "cpu.max", quota()+" "+fmt.Sprint(cfsPeriod)) }),
				when(d.has(Pids) && lim.PidsMax > 0, func() error { return w(d, "pids.max", fmt.Sprint(lim.PidsMax)) }),
				when(d.has(Devices), func() error {
					// One rule a write; the job's own and every other
					// device stay as the parent allows them.
					for _, dev := range lim.DenyDevices {
						if err := w(d, "devices.deny", dev+" rwm"); err != nil {
							return err
						}
					}
					return nil
				}),
			)
		} else {
			err = firstErr(
				when(d.has(Memory) && lim.Mem > 0, func() error { return w(d, "memory.limit_in_bytes", fmt.Sprint(lim.Mem)) }),
				when(d.has(Memory) && lim.Vmem > 0 && exists(filepath.Join(d.Path, "memory.memsw.limit_in_bytes")),
					func() error { return w(d, "memory.memsw.limit_in_bytes", fmt.Sprint(max(lim.Vmem, lim.Mem))) }),
				// Off before the cpus are set, so that neither setting them
				// nor the removal rebuilds the scheduler's domains (the top
				// cpuset's balancing spans every cpu all the same).
				when(d.has(Cpuset), func() error { return w(d, "cpuset.sched_load_balance", "0") }),
				// A v1 cpuset takes no process until it has cpus and
				// memory nodes.
				when(d.has(Cpuset), func() error { return w(d, "cpuset.mems", t.mems) }),
				when(d.has(Cpuset), func() error { return w(d, "cpuset.cpus", lim.Cpus.String()) }),
				when(d.has(CPU) && lim.CPUQuota > 0, func() error { return w(d, "cpu.cfs_quota_us", quota()) }),
				when(d.has(Pids) && lim.PidsMax > 0, func() error { return w(d, "pids.max", fmt.Sprint(lim.PidsMax)) }),
				when(d.has(Devices), func() error {
					// One rule a write; the job's own and every other
					// device stay as the parent allows them.
					for _, dev := range lim.DenyDevices {
						if err := w(d, "devices.deny", dev+" rwm"); err != nil {
							return err
						}
					}
					return nil
				}),
			)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// when runs f if cond holds (for firstErr's list).
func when(cond bool, f func() error) func() error {
	if !cond {
		return nil
	}
	return f
}

// firstErr runs fs in order until one fails.
func firstErr(fs ...func() error) error {
	for _, f := range fs {
		if f == nil {
			continue
		}
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes a control file, which must exist (O_CREATE would
// hide a controller that is not there).
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

func readCPUs(path string) (CPUSet, error) {
	s, err := readTrim(path)
	if err != nil {
		return nil, err
	}
	return ParseCPUList(s)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
