package resc

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		bytes int64
		canon string
		err   bool
	}{
		{"27GB", 27 << 30, "27gb", false},
		{"2048mb", 2048 << 20, "2048mb", false},
		{"1gb", 1 << 30, "1gb", false},
		{"123456K", 123456 << 10, "123456kb", false},
		{"1234B", 1234, "1234b", false},
		{"1000", 1000, "1000b", false},
		{"4w", 32, "4w", false},
		{"2mw", 16 << 20, "2mw", false},
		{"1pb", 1 << 50, "1pb", false},
		{"", 0, "", true},
		{"mb", 0, "", true},
		{"1.5gb", 0, "", true},
		{"10xb", 0, "", true},
		{"99999999999999999999", 0, "", true},
		{"9000000pb", 0, "", true},
		{"-1gb", 0, "", true},
	}
	for _, tt := range tests {
		b, canon, err := parseSize(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("parseSize(%q) err = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if b != tt.bytes || canon != tt.canon {
			t.Errorf("parseSize(%q) = %d %q, want %d %q", tt.in, b, canon, tt.bytes, tt.canon)
		}
	}
}

func TestFormatSize(t *testing.T) {
	t.Parallel()
	for bytes, want := range map[int64]string{
		0: "0b", 1000: "1000b", 1024: "1kb", 600 << 20: "600mb", 614401 << 10: "614401kb", 1536 << 10: "1536kb", 3 << 40: "3tb",
	} {
		if got := FormatSize(bytes); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", bytes, got, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		secs int64
		err  bool
	}{
		{"0:5:0", 300, false},
		{"54:10:00", 54*3600 + 600, false},
		{"1:00:00", 3600, false},
		{"3600", 3600, false},
		{"90:00", 5400, false},
		{"100:00:00", 360000, false},
		{"10.5", 10, false},
		{"1:60:00", 0, true},
		{"1:00:75", 0, true},
		{"1::0", 0, true},
		{"1:2:3:4", 0, true},
		{"", 0, true},
		{"abc", 0, true},
		{"-5", 0, true},
		{"1:00:00.x", 0, true},
		{"99999999999999999999", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.err || got != tt.secs {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.secs, tt.err)
		}
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{"walltime", "1:0:0", "01:00:00", false},
		{"walltime", "200:00:00", "200:00:00", false},
		{"cput", "61", "00:01:01", false},
		{"mem", "2GB", "2gb", false},
		{"ncpus", "4", "4", false},
		{"ncpus", "-1", "", true},
		{"ncpus", "four", "", true},
		{"accelerator", "yes", "True", false},
		{"select", "2:ncpus=1:mem=300MB", "2:ncpus=1:mem=300mb", false},
		{"select", "ncpus=2", "1:ncpus=2", false},
		{"select", "1:walltime=1:00:00", "", true},
		{"select", "2:ncpus=1:ncpus=2", "", true},
		{"place", "excl:scatter", "scatter:excl", false},
		{"place", "spread", "", true},
		{"nodes", "2:ppn=4", "2:ppn=4", false},
		{"nodes", "2:ppn=x", "", true},
		{"wd", "True", "True", false},
		{"mysite", "anything goes", "anything goes", false},
		{"mysite", "bad\nvalue", "", true},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.name, tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Canonical(%s, %q) = %q, %v; want %q, error %v", tt.name, tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestSelectTotals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec string
		want map[string]string
	}{
		{"2:ncpus=1:mem=300mb", map[string]string{"nodect": "2", "ncpus": "2", "mem": "600mb"}},
		{"1:ncpus=4+2:mem=1gb", map[string]string{"nodect": "3", "ncpus": "6", "mem": "2gb"}},
		{"3:host=a", map[string]string{"nodect": "3", "ncpus": "3"}},
		{"1:ncpus=2:ngpus=1+1:ncpus=2:ngpus=1", map[string]string{"nodect": "2", "ncpus": "4", "ngpus": "2"}},
		{"1-3:ncpus=40", map[string]string{"nodect": "3", "ncpus": "120"}},
		{"1:ncpus=2+2-4:ncpus=1:mem=1gb", map[string]string{"nodect": "5", "ncpus": "6", "mem": "4gb"}},
	}
	for _, tt := range tests {
		sel, err := ParseSelect(tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		if got := sel.Totals(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Totals(%s) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}

// A chunk count may be a range (elastic jobs): one spec per select, the
// minimum at least 1 and not above the maximum; the totals count the
// minimum; an allocation fixes the count.
func TestSelectRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, want   string
		min, max     int
		err          string
		allocN       int
		allocWant    string
		allocRefused bool
	}{
		{spec: "2-8:ncpus=4", want: "2-8:ncpus=4", min: 2, max: 8, allocN: 5, allocWant: "5:ncpus=4"},
		{spec: "1:ncpus=2+1-3:ncpus=1", want: "1:ncpus=2+1-3:ncpus=1", min: 2, max: 4, allocN: 4, allocWant: "1:ncpus=2+3:ncpus=1"},
		{spec: "3-3:ncpus=1", want: "3:ncpus=1", min: 3, max: 3, allocN: 3, allocWant: "3:ncpus=1"},
		{spec: "2-4", want: "2-4", min: 2, max: 4, allocN: 1, allocRefused: true},
		{spec: "2-4:ncpus=1", want: "2-4:ncpus=1", min: 2, max: 4, allocN: 5, allocRefused: true},
		{spec: "8-2:ncpus=1", err: "minimum is above the maximum"},
		{spec: "0-2:ncpus=1", err: "at least 1"},
		{spec: "1-2:ncpus=1+1-2:ncpus=2", err: "only one chunk spec"},
		{spec: "a-2:ncpus=1", err: "written min-max"},
		{spec: "1-2000000", err: "between 1 and 1048576"},
	}
	for _, tt := range tests {
		sel, err := ParseSelect(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSelect(%q) = %v, want an error with %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseSelect(%q): %v", tt.spec, err)
		}
		if got := sel.String(); got != tt.want {
			t.Errorf("ParseSelect(%q).String() = %q, want %q", tt.spec, got, tt.want)
		}
		if sel.NodeCount() != tt.min || sel.MaxNodeCount() != tt.max {
			t.Errorf("%q: %d to %d chunks, want %d to %d", tt.spec, sel.NodeCount(), sel.MaxNodeCount(), tt.min, tt.max)
		}
		if got := sel.Totals()["nodect"]; got != strconv.Itoa(tt.max) {
			t.Errorf("%q: nodect %s, want the maximum %d (what the job may hold)", tt.spec, got, tt.max)
		}
		alloc, ok := sel.WithNodeCount(tt.allocN)
		if ok == tt.allocRefused {
			t.Errorf("%q.WithNodeCount(%d) ok = %v", tt.spec, tt.allocN, ok)
		}
		if ok && alloc.String() != tt.allocWant {
			t.Errorf("%q.WithNodeCount(%d) = %q, want %q", tt.spec, tt.allocN, alloc, tt.allocWant)
		}
		if ok && alloc.Elastic() >= 0 {
			t.Errorf("%q.WithNodeCount(%d) is still elastic", tt.spec, tt.allocN)
		}
		if w := sel[len(sel)-1].With("mem", "1gb"); w.Max != sel[len(sel)-1].Max {
			t.Errorf("%q: With loses the range", tt.spec)
		}
	}
}

func TestParseNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec, want string
		err        bool
	}{
		{"2:ppn=4", "2:ncpus=4:mpiprocs=4", false},
		{"1", "1:ncpus=1:mpiprocs=1", false},
		{"nodeA+nodeB:ppn=2", "1:ncpus=1:mpiprocs=1:host=nodeA+1:ncpus=2:mpiprocs=2:host=nodeB", false},
		{"2:bigmem:ppn=2#shared", "2:ncpus=2:mpiprocs=2:bigmem=True", false},
		{"1:ppn=2:gpus=1", "1:ncpus=2:mpiprocs=2:ngpus=1", false},
		{"0", "", true},
		{"", "", true},
		{"2:ppn=0", "", true},
		{"+", "", true},
		{"2:p p", "", true},
	}
	for _, tt := range tests {
		sel, err := ParseNodes(tt.spec)
		if (err != nil) != tt.err {
			t.Errorf("ParseNodes(%q) err = %v", tt.spec, err)
			continue
		}
		if err == nil && sel.String() != tt.want {
			t.Errorf("ParseNodes(%q) = %q, want %q", tt.spec, sel.String(), tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		cmp        int
		ordered    bool
	}{
		{"mem", "1gb", "1024mb", 0, true},
		{"mem", "2gb", "1024mb", 1, true},
		{"walltime", "00:59:59", "1:00:00", -1, true},
		{"ncpus", "8", "16", -1, true},
		{"arch", "linux", "LINUX", 0, false},
		{"arch", "linux", "aix", 1, false},
	}
	for _, tt := range tests {
		c, o := Compare(tt.name, tt.a, tt.b)
		if c != tt.cmp || o != tt.ordered {
			t.Errorf("Compare(%s,%s,%s) = %d,%v want %d,%v", tt.name, tt.a, tt.b, c, o, tt.cmp, tt.ordered)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"2:ncpus=1:mem=300mb", "1:00:00", "27GB", "nodeA+2:ppn=3", "scatter:excl"} {
		f.Add("select", s)
		f.Add("walltime", s)
		f.Add("mem", s)
		f.Add("nodes", s)
		f.Add("place", s)
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		canon, err := Canonical(name, value)
		if err != nil {
			return
		}
		// Canonical forms are fixed points.
		again, err := Canonical(name, canon)
		if err != nil {
			t.Fatalf("canonical %q of %q does not re-parse: %v", canon, value, err)
		}
		if again != canon {
			t.Fatalf("Canonical not idempotent: %q -> %q -> %q", value, canon, again)
		}
	})
}

func FuzzSelect(f *testing.F) {
	f.Add("2:ncpus=1:mem=300mb+1:ngpus=2")
	f.Add("nodeA:ppn=2+3")
	f.Add("2-8:ncpus=4+1:mem=1gb")
	f.Fuzz(func(t *testing.T, spec string) {
		if sel, err := ParseSelect(spec); err == nil {
			if sel.NodeCount() <= 0 || sel.MaxNodeCount() < sel.NodeCount() {
				t.Fatalf("select %q has %d to %d chunks", spec, sel.NodeCount(), sel.MaxNodeCount())
			}
			_ = sel.Totals()
			back, err := ParseSelect(sel.String())
			if err != nil || back.String() != sel.String() || back.MaxNodeCount() != sel.MaxNodeCount() {
				t.Fatalf("select %q written %q reads back as %v, %v", spec, sel.String(), back, err)
			}
			if _, ok := sel.WithNodeCount(sel.MaxNodeCount()); !ok {
				t.Fatalf("select %q cannot be allocated at its maximum", spec)
			}
		}
		if sel, err := ParseNodes(spec); err == nil {
			if _, err := ParseSelect(sel.String()); err != nil {
				t.Fatalf("nodes %q converted to select %q that does not parse: %v", spec, sel.String(), err)
			}
		}
	})
}

// Resource names reach accounting records and listings as keys: only
// OpenPBS's name syntax passes, and no value may hold a line break.
func TestNamesAndControlCharacters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"ncpus", "2", true},
		{"my_res-2", "x", true},
		{"2fast", "x", false},
		{"x=1 \n12/21/2024 17:58:09;E;99.srv;user=root", "1", false},
		{"a.b", "x", false},
		{"", "x", false},
		{"software", "abc\rdef", false},
		{"software", "abc\ndef", false},
	} {
		_, err := Canonical(tc.name, tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("Canonical(%q, %q) = %v, want ok=%v", tc.name, tc.value, err, tc.ok)
		}
	}
}

// FormatDuration writes what "%02d:%02d:%02d" writes, hours beyond 99
// and negative durations (as 0) included.
func TestFormatDurationAsPrintf(t *testing.T) {
	t.Parallel()
	for _, secs := range []int64{-5, 0, 1, 59, 60, 61, 3599, 3600, 36000, 359999, 360000, 1<<40 + 7} {
		want := fmt.Sprintf("%02d:%02d:%02d", max(secs, 0)/3600, max(secs, 0)/60%60, max(secs, 0)%60)
		if got := FormatDuration(secs); got != want {
			t.Errorf("FormatDuration(%d) = %q, want %q", secs, got, want)
		}
	}
}

// place is read strictly: what it reads as is written back the same, and a
// group names a resource.
func TestParsePlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out, why string
	}{
		{"scatter:excl", "scatter:excl", ""},
		{" group=switch:pack ", "pack:group=switch", ""},
		{"group= :pack", "", "a resource name"},
		{"group=", "", "a resource name"},
		{"group=sw:tch", "", "unknown placement"},
		{"pack:scatter", "", "two arrangements"},
		{"", "", "empty place"},
	} {
		p, err := ParsePlace(tc.in)
		switch {
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("ParsePlace(%q): %v, want an error saying %q", tc.in, err, tc.why)
		case tc.why == "" && (err != nil || p.String() != tc.out):
			t.Errorf("ParsePlace(%q) = %q, %v; want %q", tc.in, p.String(), err, tc.out)
		}
	}
}
