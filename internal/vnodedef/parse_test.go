package vnodedef

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []Line
		err      string // substring of the error; "" for none
	}{
		{"openpbs example", "$configversion 2\n# split the host\nhost: resources_available.ncpus = 0\nhost[0]: resources_available.ncpus = 2\nhost[0] : resources_available.mem = 4gb\nhost[1]: sharing = default_shared\n",
			[]Line{{3, "host", AttrResourcesAvail, "ncpus", "0"}, {4, "host[0]", AttrResourcesAvail, "ncpus", "2"},
				{5, "host[0]", AttrResourcesAvail, "mem", "4gb"}, {6, "host[1]", AttrSharing, "", "default_shared"}}, ""},
		{"leading comment, quoted value, any case", "\n# x\n$configversion 2\nh[a-1]: Resources_Available.color = \"red blue\"\nh: RESV_ENABLE = false\n",
			[]Line{{4, "h[a-1]", AttrResourcesAvail, "color", "red blue"}, {5, "h", AttrResvEnable, "", "false"}}, ""},
		{"no version line", "host: resources_available.ncpus = 2\n", nil, `:1: a version-2 file starts with "$configversion 2"`},
		{"empty file", "", nil, `starts with "$configversion 2"`},
		{"version 1", "$configversion 1\n", nil, ":1: a version-2 file"},
		{"no colon", "$configversion 2\nhost resources_available.ncpus = 2\n", nil, `:2: want "VNODE: ATTRIBUTE = VALUE"`},
		{"no equals", "$configversion 2\nhost: resources_available.ncpus 2\n", nil, ":2: want"},
		{"bad vnode name", "$configversion 2\n0host: sharing = default_shared\n", nil, `node name "0host"`},
		{"bad index", "$configversion 2\nhost[0: sharing = default_shared\n", nil, `node name "host[0"`},
		{"two indexes", "$configversion 2\nhost[0][1]: sharing = default_shared\n", nil, `node name "host[0][1]"`},
		{"unknown attribute", "$configversion 2\nhost: Mom = other\n", nil, `attribute "Mom" cannot be set`},
		{"bare resources_available", "$configversion 2\nhost: resources_available = 3\n", nil, `attribute "resources_available" cannot`},
		{"bad resource name", "$configversion 2\nhost: resources_available.9x = 3\n", nil, "resource name"},
		{"ncpus not a count", "$configversion 2\nhost: resources_available.ncpus = two\n", nil, `ncpus = "two": not a count`},
		{"negative ncpus", "$configversion 2\nhost: resources_available.ncpus = -1\n", nil, "not a count"},
		{"mem not a size", "$configversion 2\nhost: resources_available.mem = lots\n", nil, `mem = "lots"`},
		{"host set by server", "$configversion 2\nhost[0]: resources_available.host = other\n", nil, "set by the server"},
		{"excl sharing refused", "$configversion 2\nhost: sharing = default_excl\n", nil, "sharing = default_excl is not supported"},
		{"unknown sharing", "$configversion 2\nhost: sharing = sometimes\n", nil, `"sometimes": not a sharing value`},
		{"bad bool", "$configversion 2\nhost: resv_enable = maybe\n", nil, "resv_enable: "},
		{"empty value", "$configversion 2\nhost: resources_available.color =\n", nil, "has no value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("f", []byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("line %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestMergeLaterFileWins(t *testing.T) {
	t.Parallel()
	a, err := Parse("a", []byte("$configversion 2\nh[0]: resources_available.ncpus = 2\nh[1]: resources_available.ncpus = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("b", []byte("$configversion 2\nh[0]: resources_available.ncpus = 4\nh[0]: resv_enable = False\nh[0]: sharing = force_shared\n"))
	if err != nil {
		t.Fatal(err)
	}
	vs := Merge(a, b)
	if len(vs) != 2 || vs[0].Name != "h[0]" || vs[1].Name != "h[1]" {
		t.Fatalf("vnodes %+v", vs)
	}
	if vs[0].Resources["ncpus"] != "4" || vs[0].ResvEnable == nil || *vs[0].ResvEnable || vs[0].Sharing != "force_shared" {
		t.Errorf("h[0] %+v", vs[0])
	}
	if vs[1].Resources["ncpus"] != "1" || vs[1].ResvEnable != nil || vs[1].Sharing != "" {
		t.Errorf("h[1] %+v", vs[1])
	}
}

func TestCheckFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"vnodes", true}, {"site-1.conf", true}, {"PBSvnodes", false}, {"PBS", false}, {"", false},
		{"..", false}, {"a/b", false}, {".hidden", false},
	} {
		if err := CheckFileName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckFileName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	// pbs_mom -s show reads PBS's own files too, never a path.
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"PBSvnodes", true}, {"vnodes", true}, {"../config", false}, {"..", false}, {".hidden", false}} {
		if err := CheckPlainName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckPlainName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
