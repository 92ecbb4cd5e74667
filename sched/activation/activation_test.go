package activation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
)

var now = time.Unix(1800000000, 0)

// reader serves one job's status; holdUntil is what a re-read shows.
type reader struct {
	holdUntil string
	fail      bool
}

func (r *reader) ServerName() string { return "srv" }

func (r *reader) JobStatus(id string) (proto.Status, error) {
	if r.fail {
		return proto.Status{}, errors.New("connection lost")
	}
	st := proto.Status{Name: id, Attrs: []proto.Attr{{Name: "Job_Name", Value: "lic"}, {Name: "queue", Value: "workq"},
		{Name: "Resource_List", Resource: "ncpus", Value: "2"}}}
	if r.holdUntil != "" {
		st.Attrs = append(st.Attrs, proto.Attr{Name: "hold_until", Value: r.holdUntil})
	}
	return st, nil
}

type bed struct {
	t   *testing.T
	dir string
	log string
}

func newBed(t *testing.T) *bed {
	dir := t.TempDir()
	return &bed{t: t, dir: dir, log: filepath.Join(dir, "calls")}
}

// filter writes a script that logs "name $2" and then runs body.
func (b *bed) filter(name, body string) string {
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho \""+name+" $2\" >> "+b.log+"\n"+body), 0o755); err != nil {
		b.t.Fatal(err)
	}
	return p
}

func (b *bed) calls() string {
	data, _ := os.ReadFile(b.log)
	os.Remove(b.log)
	return strings.TrimSpace(string(data))
}

// cycleContext is a world with queue workq (queueFilters its own) and one job.
func cycleContext(queueFilters, global []string) (*fifo.Context, *core.Job) {
	j := &core.Job{ID: "7.srv", Queue: "workq", Owner: "alice", State: core.JobQueued}
	q := &core.Queue{Name: "workq", Execution: true, Started: true, ActivationFilters: queueFilters}
	w := core.NewWorld(now, nil, []*core.Queue{q}, nil, []*core.Job{j})
	return &fifo.Context{World: w, Settings: fifo.Settings{ActivationFilters: global, FilterTimeout: time.Second, DefaultHoldDuration: 120 * time.Second}}, j
}

var where = []core.Chunk{{Node: "n1", Chunk: resc.NewChunk(1, []resc.Pair{{Name: "ncpus", Value: "2"}})}}

func TestOutcomes(t *testing.T) {
	b := newBed(t)
	ok1 := b.filter("ok1", "exit 0\n")
	ok2 := b.filter("ok2", "exit 0\n")
	for _, tc := range []struct {
		name, body string
		backfill   bool
		code       core.Code
		reason     string
		until      time.Time
	}{
		{"zero", "exit 0\n", false, core.Run, "", time.Time{}},
		{"one", "exit 1\n", false, core.Block, "activation filter DIR/one (exit 1): no job of equal or lower priority starts after it this cycle", time.Time{}},
		{"two", "echo 'no license' >&2\nexit 2\n", false, core.Keep, "activation filter DIR/two (exit 2: no license): its resources are kept for it", time.Time{}},
		{"seven", "exit 7\n", false, core.Keep, "activation filter DIR/seven (exit 7): its resources are kept for it", time.Time{}},
		{"slow", "sleep 10\n", false, core.Keep, "activation filter DIR/slow (timed out after 1s): its resources are kept for it", time.Time{}},
		{"three", "exit 3\n", false, core.WaitUntil, "held until " + now.Add(2*time.Minute).Format("Mon Jan 02 at 15:04:05") + " by activation filter DIR/three (exit 3)", now.Add(2 * time.Minute)},
		{"four", "exit 4\n", false, core.Never, "job failed by activation filter DIR/four (exit 4)", time.Time{}},
		{"backfill two", "exit 2\n", true, core.NotNow, "activation filter DIR/backfill two (exit 2) refused a backfill start", time.Time{}},
		{"backfill one", "exit 1\n", true, core.NotNow, "activation filter DIR/backfill one (exit 1) refused a backfill start", time.Time{}},
		{"backfill zero", "exit 0\n", true, core.Run, "", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := b.filter(tc.name, tc.body)
			cx, j := cycleContext([]string{ok1}, []string{ok2, last})
			f := &Filters{}
			f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
			s := f.Activate(cx, fifo.Candidate{Job: j, Where: where, Backfill: tc.backfill, Index: 1})
			reason := strings.ReplaceAll(s.Reason, b.dir, "DIR")
			if s.Code != tc.code || reason != tc.reason || !s.Until.Equal(tc.until) {
				t.Errorf("status %v %q %v, want %v %q %v", s.Code, reason, s.Until, tc.code, tc.reason, tc.until)
			}
			want := "ok1 \nok2 \n" + tc.name + " \nok2 --revert\nok1 --revert"
			if tc.code == core.Run {
				want = "ok1 \nok2 \n" + tc.name
			}
			if got := b.calls(); got != want {
				t.Errorf("calls:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A missing program keeps the resources; exit 3 with a hold_until ahead
// holds until then.
func TestMissingAndHoldUntil(t *testing.T) {
	b := newBed(t)
	cx, j := cycleContext(nil, []string{filepath.Join(b.dir, "nothere")})
	f := &Filters{}
	f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
	if s := f.Activate(cx, fifo.Candidate{Job: j, Where: where}); s.Code != core.Keep || !strings.Contains(s.Reason, "(not found)") {
		t.Errorf("missing program: %v", s)
	}
	later := now.Add(time.Hour)
	cx, j = cycleContext(nil, []string{b.filter("three", "exit 3\n")})
	f.BeginCycle(&reader{holdUntil: "1800003600"}, time.Now().Add(time.Minute), nil)
	if s := f.Activate(cx, fifo.Candidate{Job: j, Where: where}); s.Code != core.WaitUntil || !s.Until.Equal(later) {
		t.Errorf("exit 3 with hold_until: %v", s)
	}
	f.BeginCycle(&reader{fail: true}, time.Now().Add(time.Minute), nil)
	if s := f.Activate(cx, fifo.Candidate{Job: j, Where: where}); s.Code != core.NotNow || !strings.Contains(s.Reason, "connection lost") {
		t.Errorf("unreadable job: %v", s)
	}
}

// The filter gets the job file and the context of the cycle.
func TestFileAndEnvironment(t *testing.T) {
	b := newBed(t)
	out := filepath.Join(b.dir, "seen")
	check := b.filter("env", `env | grep ^PBS_FILTER_ | sort > `+out+`
cat "$1" >> `+out+`
exit 0
`)
	cx, j := cycleContext(nil, []string{check})
	f := &Filters{}
	f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
	f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
	if s := f.Activate(cx, fifo.Candidate{Job: j, Where: where, Backfill: true, Index: 3}); !s.IsRun() {
		t.Fatal(s)
	}
	data, _ := os.ReadFile(out)
	for _, want := range []string{"PBS_FILTER_BACKFILL=1\n", "PBS_FILTER_EXEC_VNODE=(n1:ncpus=2)\n", "PBS_FILTER_JOB_ID=7.srv\n", "PBS_FILTER_JOB_INDEX=3\n",
		"PBS_FILTER_KIND=activation\n", "PBS_FILTER_PASS=2\n", "PBS_FILTER_QUEUE=workq\n", "PBS_FILTER_RESOURCE_COUNT=2\n", "PBS_FILTER_USER=alice\n",
		`"7.srv":{`, `"Job_Name":"lic"`, `"ncpus":2`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the filter did not see %q:\n%s", want, data)
		}
	}
}

// Every filter of a start the server then refused is called to revert;
// a started job's are not.
func TestRevertWhenTheServerRefusesTheStart(t *testing.T) {
	b := newBed(t)
	cx, j := cycleContext([]string{b.filter("q", "exit 0\n")}, []string{b.filter("g", "exit 0\n")})
	f := &Filters{}
	f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
	if s := f.Activate(cx, fifo.Candidate{Job: j, Where: where}); !s.IsRun() {
		t.Fatal(s)
	}
	f.EndCycle([]string{"other.srv"})
	if got := b.calls(); got != "q \ng" {
		t.Errorf("calls after a start: %q", got)
	}
	f.BeginCycle(&reader{}, time.Now().Add(time.Minute), nil)
	f.Activate(cx, fifo.Candidate{Job: j, Where: where})
	f.EndCycle([]string{j.ID})
	if got := b.calls(); got != "q \ng \ng --revert\nq --revert" {
		t.Errorf("calls after a refused start: %q", got)
	}
}
