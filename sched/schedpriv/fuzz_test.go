package schedpriv

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// seedFixture adds a fixture file to a fuzz corpus when the fixtures are
// present (they are optional outside the project checkout).
func seedFixture(f *testing.F, name string) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "sched_priv", name))
	if err == nil {
		f.Add(string(data))
	}
	if def, err := Default(name, 2030); err == nil {
		f.Add(string(def))
	}
}

func FuzzSchedConfig(f *testing.F) {
	seedFixture(f, ConfigFile)
	for _, s := range []string{
		"by_queue: True prime\nby_queue: false non_prime",
		"sort_by: multi_sort\nkey: fair_share non_prime\nkey: shortest_job_first",
		"resources: \"ncpus, mem\"\njob_sort_key: cput LOW prime",
		"fair_share: true\nhalf_life: 0",
		"ignore_queue: \"#q\"\ndedicated_prefix ded # c",
		"max_starve: 99:59:59\nfairshare_decay_factor: 0x1p-2",
		": \"",
		"backfill: false prime\nbackfill_depth: all",
		"backfill: FALSE\nbackfill_depth: 0",
		"backfill_depth: 1 none\nbackfill_depth: ALL all",
		"job_sort_formula: \"eligible_time + 3600 * fairshare_factor\"\nfair_share: true\nhalf_life: 1:00:00",
		"job_sort_formula: -ncpus**2//mem\njob_sort_formula: \"fairshare_fator\"",
		"dedicated_prefix: \"\"\nfair_share: true\nfairshare_decay_time: 6:00:00",
		"key: sortest_job_first\nsort_by: multi_sort",
		"preempt_prio: \"express_queue+starving_jobs, normal_jobs\"\npreempt_order: \"SC 50 R\"\npreempt_queue_prio: -5\npreemptive_sched: true prime",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseConfig(strings.NewReader(text), "f")
		if err != nil {
			if c != nil {
				t.Fatal("config and error")
			}
			if _, ok := AsErrors(err); !ok {
				t.Fatalf("error %T is not an Errors", err)
			}
			return
		}
		if c.Prime.SortBy == MultiSort && len(c.Prime.Keys) == 0 {
			t.Fatal("multi_sort without keys accepted")
		}
		if iv, _ := c.Decay(); c.FairShareAny() && iv <= 0 {
			t.Fatal("fair_share without decay accepted")
		}
		if len(c.DedicatedPrefix) > MaxDedicatedPrefix || len(c.IgnoreQueues) > MaxIgnoreQueues {
			t.Fatal("limits not enforced")
		}
		if f := c.JobSortFormula; f != nil && f.UsesFairshare() {
			if iv, _ := c.Decay(); iv <= 0 {
				t.Fatal("a formula reading fair share without decay accepted")
			}
		}
		if c.BackfillDepth != BackfillDepthAll && c.BackfillDepth < 1 {
			t.Fatalf("backfill_depth %d accepted", c.BackfillDepth)
		}
		_ = c.Active(true)
		var buf bytes.Buffer
		if err := c.Format(&buf); err != nil {
			t.Fatal(err)
		}
		c2, err := ParseConfig(bytes.NewReader(buf.Bytes()), "formatted")
		if err != nil {
			t.Fatalf("formatted config does not parse: %v\n%s", err, buf.String())
		}
		a, b := *c, *c2
		a.Warnings, b.Warnings = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v\n%s", a, b, buf.String())
		}
	})
}

func FuzzHolidays(f *testing.F) {
	seedFixture(f, HolidaysFile)
	for _, s := range []string{
		"YEAR 2030\nweekday 1800 0600\nmonday all none\n1\n366",
		"2030 0400 1530\nsaturday none none",
		"YEAR 2030\nweekday 0800 0800\nfriday 0 2359",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h, err := ParseHolidays(strings.NewReader(text), "f")
		if err != nil {
			if h != nil {
				t.Fatal("holidays and error")
			}
			return
		}
		if !slices.IsSorted(h.Holidays) {
			t.Fatal("holidays not sorted")
		}
		start := time.Date(max(h.Year, 1970), 12, 30, 23, 0, 0, 0, time.UTC)
		for i := range 30 {
			tm := start.Add(time.Duration(i) * 97 * time.Minute)
			p := h.IsPrime(tm)
			if next, ok := h.NextChange(tm); ok {
				if !next.After(tm) || h.IsPrime(next) == p {
					t.Fatalf("NextChange(%v) = %v does not change prime status", tm, next)
				}
			}
		}
		h.YearWarning(start)
		var buf bytes.Buffer
		if err := h.Format(&buf); err != nil {
			t.Fatal(err)
		}
		h2, err := ParseHolidays(bytes.NewReader(buf.Bytes()), "formatted")
		if err != nil {
			t.Fatalf("formatted holidays do not parse: %v\n%s", err, buf.String())
		}
		if h.Year != h2.Year || h.Days != h2.Days || !slices.Equal(h.Holidays, h2.Holidays) {
			t.Fatalf("round trip changed the holidays:\n%+v\n%+v", h, h2)
		}
	})
}

func FuzzResourceGroup(f *testing.F) {
	seedFixture(f, ResourceGroupFile)
	f.Add("a 1 root 1\nb 2 a 0\nc 3 unknown 5 # x")
	f.Add("a 1 root 9223372036854775807\nb 2 root 9223372036854775807")
	f.Fuzz(func(t *testing.T, text string) {
		tree, err := ParseResourceGroup(strings.NewReader(text), "f", 10)
		if err != nil {
			if tree != nil {
				t.Fatal("tree and error")
			}
			return
		}
		n := 0
		tree.Walk(func(g *Group) {
			n++
			if math.IsNaN(g.Percentage) || g.Percentage < 0 || g.Percentage > 1+1e-9 {
				t.Fatalf("%s: percentage %v", g.Name, g.Percentage)
			}
			if got, ok := tree.Lookup(g.Name); !ok || got != g {
				t.Fatalf("Lookup(%s) inconsistent", g.Name)
			}
		})
		if n != tree.Len() {
			t.Fatalf("Walk saw %d nodes, Len %d", n, tree.Len())
		}
		c := tree.Clone()
		c.AddUnknown("fuzz-newcomer")
		if _, ok := tree.Lookup("fuzz-newcomer"); ok && !strings.Contains(text, "fuzz-newcomer") {
			t.Fatal("Clone shares state")
		}
		var buf bytes.Buffer
		if err := tree.Format(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ParseResourceGroup(bytes.NewReader(buf.Bytes()), "formatted", 10)
		if err != nil {
			t.Fatalf("formatted tree does not parse: %v\n%s", err, buf.String())
		}
		if back.Len() != tree.Len() {
			t.Fatalf("round trip: %d nodes, want %d", back.Len(), tree.Len())
		}
		back.Walk(func(g *Group) {
			o, _ := tree.Lookup(g.Name)
			if o == nil || o.ID != g.ID || o.Shares != g.Shares || o.Percentage != g.Percentage {
				t.Fatalf("round trip changed %s", g.Name)
			}
		})
	})
}

func FuzzDedicated(f *testing.F) {
	seedFixture(f, DedicatedFile)
	f.Add("12/31/99 23:00 01/01/00 01:00\n02/29/2024 00:00 03/01/2024 00:00")
	f.Add("1/1/5 0:00 1/1/5 1:00 # c")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := ParseDedicated(strings.NewReader(text), "f", time.UTC)
		if err != nil {
			if d != nil {
				t.Fatal("windows and error")
			}
			return
		}
		for i, w := range d.Windows {
			if !w.To.After(w.From) {
				t.Fatalf("window %d ends before it starts", i)
			}
			if i > 0 && w.From.Before(d.Windows[i-1].To) {
				t.Fatalf("windows %d and %d overlap or are unsorted", i-1, i)
			}
			mid := w.From.Add(w.To.Sub(w.From) / 2)
			if w.To.Sub(w.From) > time.Second {
				if cur, ok := d.Current(mid); !ok || cur != w {
					t.Fatalf("Current(%v) = %v, %v", mid, cur, ok)
				}
			}
			if next, ok := d.Next(w.From); !ok || next != w {
				t.Fatalf("Next(%v) = %v, %v", w.From, next, ok)
			}
		}
		var buf bytes.Buffer
		if err := d.Format(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ParseDedicated(bytes.NewReader(buf.Bytes()), "formatted", time.UTC)
		if err != nil {
			t.Fatalf("formatted windows do not parse: %v\n%s", err, buf.String())
		}
		if len(back.Windows) != len(d.Windows) {
			t.Fatal("round trip changed the number of windows")
		}
		for i := range d.Windows {
			if !back.Windows[i].From.Equal(d.Windows[i].From) || !back.Windows[i].To.Equal(d.Windows[i].To) {
				t.Fatalf("round trip changed window %d", i)
			}
		}
	})
}

func FuzzUsage(f *testing.F) {
	f.Add([]byte("gopbs-usage 1\nalice\t10\nb%09ob\t0.5\n"), "name\twith tab", 1.5)
	f.Add([]byte("gopbs-usage 2\ndecayed\t5\ne\talice\t1\nsum\t00000000\n"), "x", 0.0)
	f.Add([]byte("alice\x00\x00\x00\x00"), strings.Repeat("long", 100), 1e300)
	f.Fuzz(func(t *testing.T, data []byte, name string, v float64) {
		// Whatever Decode accepts, Encode writes back to the same state.
		if s, err := Decode(bytes.NewReader(data), "f"); err == nil {
			var buf bytes.Buffer
			if err := Encode(&buf, s); err != nil {
				t.Fatalf("Encode of decoded usage: %v", err)
			}
			back, err := Decode(&buf, "again")
			if err != nil || !usageEqual(s, back) {
				t.Fatalf("round trip: %v %v %v", s, back, err)
			}
		} else if s != nil {
			t.Fatal("usage and error")
		}
		// Any name and any valid value survive a round trip, as an entity
		// and as a job.
		s := &UsageState{Entities: Usage{name: v, "other": 1}, Jobs: map[string]float64{name: v}}
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			if name != "" && v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				t.Fatalf("Encode rejected a valid entry: %v", err)
			}
			return
		}
		back, err := Decode(&buf, "f")
		if err != nil || !usageEqual(s, back) {
			t.Fatalf("round trip of %q=%v: %v %v", name, v, back, err)
		}
	})
}
