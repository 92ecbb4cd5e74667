package fifo

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/sched"
	"github.com/gopbs/gopbs/sched/core"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
)

// shippedPolicy is a Policy configured with the shipped sched_priv files.
func shippedPolicy(t *testing.T) (*schedpriv.Files, *Policy) {
	t.Helper()
	files, err := schedpriv.Defaults(now.Year(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{}
	if err := p.Configure(files, core.NopLogger{}); err != nil {
		t.Fatal(err)
	}
	return files, p
}

// The shipped sched_priv, through the policy, in prime and non-prime time:
// queues by priority; within a queue the smallest memory request first
// (jobs without one after, in submission order); a job queued over 24
// hours goes before everything and, once started, blocks nothing.
func TestShippedPolicy(t *testing.T) {
	t.Parallel()
	files, p := shippedPolicy(t)
	mem := func(v string) []any { return []any{r("Resource_List", "mem", v)} }
	build := func(at time.Time, starving bool) *world {
		queued := func(ago time.Duration) []any {
			return []any{a("qtime", strconv.FormatInt(at.Add(-ago).Unix(), 10))}
		}
		w := newWorld().queue("hi", "Execution", true, a("Priority", "10")).node("n1", 8, "free")
		add := func(seq int, queue string, extra ...[]any) {
			attrs := queued(time.Hour)
			for _, e := range extra {
				attrs = append(attrs, e...)
			}
			w.job(seq, "Q", queue, "u", "1:ncpus=1", toAttrs(attrs)...)
		}
		add(1, "workq", mem("512mb"))
		add(2, "hi", mem("2gb"))
		add(3, "hi")
		add(4, "hi", mem("1gb"))
		if starving {
			add(5, "workq", mem("4gb"), queued(25*time.Hour))
		}
		return w
	}
	// 2026-11-23 is a Monday: 10:00 is prime time, 20:00 non-prime; the
	// shipped policy is the same in both.
	for _, at := range []time.Time{
		time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC),
	} {
		if prime := files.Holidays.IsPrime(at); prime != (at.Hour() == 10) {
			t.Fatalf("%v: prime %v", at, prime)
		}
		for _, starving := range []bool{false, true} {
			w := build(at, starving)
			plan := p.Schedule(sched.NewWorld(at, w.server, w.queues, w.nodes, w.jobs), core.EventNew, core.NopLogger{})
			want := []string{"run 4 n1", "run 2 n1", "run 3 n1", "run 1 n1"}
			if starving {
				want = append([]string{"run 5 n1"}, want...)
			}
			if got := outcome(plan); !reflect.DeepEqual(got, want) {
				t.Errorf("%v starving=%v:\n got %q\nwant %q", at, starving, got, want)
			}
		}
	}
}

func toAttrs(v []any) []proto.Attr {
	out := make([]proto.Attr, len(v))
	for i, x := range v {
		out[i] = x.(proto.Attr)
	}
	return out
}

// The settings in force follow the clock when the files make them differ
// (a holidays year: strict fifo in prime time only here), and stay those
// of prime time at every moment without one, however often the policy
// schedules: 2026-11-23 is a Monday, 10:00 prime time, 20:00 not.
func TestSettingsFollowTheClock(t *testing.T) {
	t.Parallel()
	cfg, err := schedpriv.ParseConfig(strings.NewReader("strict_fifo: true prime\nstrict_fifo: false non_prime\nbackfill: false all\n"), "sched_config")
	if err != nil {
		t.Fatal(err)
	}
	dflt, err := schedpriv.Defaults(2026, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	prime, nonPrime := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	strict := []string{"comment 2 " + cNodes, "comment 3 " + cStrictFIFO, "comment 4 " + cStrictFIFO, "comment 5 " + cStrictFIFO}
	plain := []string{"comment 2 " + cNodes, "run 3 n1", "comment 4 " + cNodes, "comment 5 " + cNodes}
	for _, tc := range []struct {
		name     string
		holidays *schedpriv.Holidays
		want     map[time.Time][]string
	}{
		{"holidays", dflt.Holidays, map[time.Time][]string{prime: strict, nonPrime: plain}},
		{"no holidays", nil, map[time.Time][]string{prime: strict, nonPrime: strict}},
	} {
		p := &Policy{}
		if err := p.Configure(&schedpriv.Files{Config: cfg, Holidays: tc.holidays}, core.NopLogger{}); err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Time{prime, nonPrime, prime, nonPrime} {
			w := easyWorld()
			got := outcome(p.Schedule(sched.NewWorld(at, w.server, w.queues, w.nodes, w.jobs), core.EventNew, core.NopLogger{}))
			if !reflect.DeepEqual(got, tc.want[at]) {
				t.Errorf("%s at %v:\n got %q\nwant %q", tc.name, at.Format("15:04"), got, tc.want[at])
			}
		}
	}
}

// Usage shows the fair-share usage for display without taking it as
// saved: UsageState still reports the change afterwards, so the runner's
// next save writes it. With fair share off there is none.
func TestUsageForDisplayLeavesSaveMark(t *testing.T) {
	t.Parallel()
	files, p := shippedPolicy(t)
	if u := p.Usage(); u != nil {
		t.Fatalf("usage %v with fair share off", u)
	}
	files.Config.Prime.FairShare, files.Config.NonPrime.FairShare = true, true
	if err := p.Configure(files, core.NopLogger{}); err != nil {
		t.Fatal(err)
	}
	w := newWorld().node("n1", 8, "free").job(1, "R", "workq", "alice", "1:ncpus=1", r("resources_used", "cput", "00:01:40"))
	p.Schedule(sched.NewWorld(now, w.server, w.queues, w.nodes, w.jobs), core.EventNew, core.NopLogger{})
	u := p.Usage()
	if u["alice"] != 100 {
		t.Fatalf("usage %v, want alice 100", u)
	}
	u["alice"] = 0 // a copy: the ledger is not changed through it
	if _, changed := p.UsageState(); !changed {
		t.Fatal("reading the usage for display cleared the change to save")
	}
	if u := p.Usage(); u["alice"] != 100 {
		t.Fatalf("the ledger changed through Usage's map: %v", u)
	}
}
