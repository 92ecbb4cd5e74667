package cgroup

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	def := DefaultConfig()
	tests := []struct {
		name string
		in   string
		want func(c *Config)
		err  string
	}{
		{"empty means enabled with defaults", "", func(c *Config) {}, ""},
		{"comments and blanks", "# site policy\n\n  enabled true  # on\n", func(c *Config) {}, ""},
		{"everything", "enabled yes\nhierarchy v1\ncontrollers memory, pids,cpu\nroot ./site/pbs\nmem_reserved 512mb\npids_max 4096\nexclude_hosts h1, h2\n", func(c *Config) {
			c.Hierarchy = HierarchyV1
			c.Controllers = []string{Memory, CPU, Pids}
			c.Root = "./site/pbs"
			c.MemReserved = 512 << 20
			c.PidsMax = 4096
			c.ExcludeHosts = []string{"h1", "h2"}
		}, ""},
		{"tab separated", "hierarchy\tv2\n", func(c *Config) { c.Hierarchy = HierarchyV2 }, ""},
		{"disabled", "enabled false\n", func(c *Config) { c.Enabled = false }, ""},
		{"no controllers", "controllers none\n", func(c *Config) { c.Controllers = []string{} }, ""},
		{"pids_max brings pids", "controllers memory\npids_max 10\n", func(c *Config) { c.Controllers = []string{Memory, Pids}; c.PidsMax = 10 }, ""},
		{"unknown key", "enabled true\nfrobnicate 1\n", nil, "cgroups:2: unknown key \"frobnicate\""},
		{"bad bool", "enabled maybe\n", nil, "cgroups:1: enabled"},
		{"bad hierarchy", "hierarchy v3\n", nil, "cgroups:1: hierarchy \"v3\""},
		{"devices", "controllers devices,memory\n", func(c *Config) { c.Controllers = []string{Memory, Devices} }, ""},
		{"devices refused on v2", "hierarchy v2\ncontrollers devices\n", nil, "cgroups: controller devices needs hierarchy v1"},
		{"unknown controller", "controllers memory,blkio\n", nil, "unknown controller \"blkio\""},
		{"bad size", "mem_reserved lots\n", nil, "cgroups:1: mem_reserved"},
		{"bad pids", "pids_max 0\n", nil, "pids_max"},
		{"absolute root", "root /pbs\n", nil, "root \"/pbs\""},
		{"escaping root", "root ./a/../../b\n", nil, "each part must be a name"},
		{"no value", "root\n", nil, "cgroups:1: root has no value"},
		{"twice", "pids_max 1\n\npids_max 2\n", nil, "cgroups:3: pids_max already set on line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig(strings.NewReader(tt.in), "cgroups")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := def
			want.Controllers = append([]string(nil), def.Controllers...)
			tt.want(&want)
			if !reflect.DeepEqual(c, want) {
				t.Fatalf("got %+v\nwant %+v", c, want)
			}
		})
	}
}

func TestExcluded(t *testing.T) {
	c, err := ParseConfig(strings.NewReader("exclude_hosts n1,login.example.org\n"), "cgroups")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Excluded("n1") || !c.Excluded("x", "login.example.org") || c.Excluded("n2", "") {
		t.Fatal("exclusion by node or host name")
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add("enabled true\nhierarchy auto\ncontrollers memory,cpuset,cpu,pids\nroot pbs_jobs\nmem_reserved 1gb\npids_max 10\nexclude_hosts a,b\n")
	f.Add("controllers none\nroot ./x/y\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConfig(strings.NewReader(s), "cgroups")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cgroups:") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		if checkRoot(c.Root) != nil {
			t.Fatalf("root %q accepted", c.Root)
		}
		if c.PidsMax > 0 && !c.Has(Pids) {
			t.Fatal("pids_max without the pids controller")
		}
		for _, ctrl := range c.Controllers {
			if !strings.Contains("memory cpuset cpu pids", ctrl) {
				t.Fatalf("controller %q accepted", ctrl)
			}
		}
	})
}

func TestCPUList(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		err     bool
	}{
		{"", "", false},
		{"0", "0", false},
		{"0-3,8,10-11\n", "0-3,8,10-11", false},
		{"3,1,2,2", "1-3", false},
		{"5-4", "", true},
		{"a", "", true},
		{"-1", "", true},
		{"0-99999", "", true},
	} {
		s, err := ParseCPUList(tt.in)
		if (err != nil) != tt.err || err == nil && s.String() != tt.out {
			t.Errorf("ParseCPUList(%q) = %v %v, want %q (error %v)", tt.in, s, err, tt.out, tt.err)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	f.Add("0-3,8,10-11")
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseCPUList(s)
		if err != nil {
			return
		}
		back, err := ParseCPUList(set.String())
		if err != nil || !reflect.DeepEqual(back, set) {
			t.Fatalf("%q -> %q -> %v %v", s, set.String(), back, err)
		}
	})
}

func TestAllocator(t *testing.T) {
	a := NewAllocator(CPUSet{0, 1, 2, 3})
	x, ok := a.Take("x", 2)
	if !ok || x.String() != "0-1" {
		t.Fatalf("x got %v %v", x, ok)
	}
	if _, ok := a.Take("y", 3); ok {
		t.Fatal("3 of 2 free cpus given")
	}
	y, ok := a.Take("y", 2)
	if !ok || y.String() != "2-3" {
		t.Fatalf("y got %v %v", y, ok)
	}
	a.Release("x")
	z, ok := a.Take("z", 1)
	if !ok || z.String() != "0" {
		t.Fatalf("z got %v %v", z, ok)
	}
	b := NewAllocator(CPUSet{0, 1})
	b.Hold("r", CPUSet{1, 7})
	if c, ok := b.Take("n", 1); !ok || c.String() != "0" {
		t.Fatalf("after a held cpu: %v %v", c, ok)
	}
}

func TestParseMountInfoAndProcCgroup(t *testing.T) {
	mi := `25 30 0:23 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
26 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
27 25 0:25 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
28 25 0:26 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd
29 25 0:27 /lxc/c1 /sys/fs/cgroup/my\040pids rw shared:5 - cgroup cgroup rw,pids
30 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
`
	got := parseMountInfo(mi)
	want := []mount{
		{dir: "/sys/fs/cgroup/cpu,cpuacct", root: "/", controllers: []string{CPU}},
		{dir: "/sys/fs/cgroup/memory", root: "/", controllers: []string{Memory}},
		{dir: "/sys/fs/cgroup/my pids", root: "/lxc/c1", controllers: []string{Pids}},
		{dir: "/sys/fs/cgroup/unified", root: "/", v2: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts\n%+v\nwant\n%+v", got, want)
	}
	self := parseProcCgroup("12:pids:/lxc/c1/sub\n4:cpu,cpuacct:/\n1:name=systemd:/init.scope\n0::/user.slice\nbad\n")
	if self[Pids] != "/lxc/c1/sub" || self[CPU] != "/" || self[cpuacct] != "/" || self[""] != "/user.slice" {
		t.Fatalf("self %v", self)
	}
	if d := ownDir(want[2], self[Pids]); d != "/sys/fs/cgroup/my pids/sub" {
		t.Fatalf("own pids dir %q", d)
	}
	if d := ownDir(want[2], "/other"); d != "" {
		t.Fatalf("a cgroup outside the mount seen at %q", d)
	}
}

func FuzzParseMountInfo(f *testing.F) {
	f.Add("26 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n30 25 0:28 / /x rw - cgroup2 cgroup2 rw\n", "4:cpu,cpuacct:/a\n0::/b\n")
	f.Fuzz(func(t *testing.T, mi, pc string) {
		for _, m := range parseMountInfo(mi) {
			if !m.v2 && len(m.controllers) == 0 {
				t.Fatalf("v1 mount without controllers: %+v", m)
			}
		}
		for k, v := range parseProcCgroup(pc) {
			if !strings.HasPrefix(v, "/") {
				t.Fatalf("%s: path %q", k, v)
			}
		}
		parseKeyed(pc, "oom_kill")
	})
}
