package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/internal/trace"
	"gopbs/sched/core"
)

// oneCPUNodes is n nodes of one cpu, n1 ... nn.
func oneCPUNodes(n int) []*core.Node {
	out := make([]*core.Node, n)
	for i := range out {
		name := "n" + strconv.Itoa(i+1)
		out[i] = &core.Node{Name: name, Host: name, Avail: core.Amounts{"ncpus": 1}, Props: map[string]string{"host": name}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1}
	}
	return out
}

// readJobs reads an SWF file of testdata as a replay takes it.
func readJobs(t *testing.T, name string) ([]Job, int) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := trace.ReadSWF(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Normalize(w, 0); err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for _, j := range w.Jobs {
		jobs = append(jobs, Job{ID: strconv.FormatInt(j.ID, 10), Submit: j.Submit, Run: j.Run, Procs: j.Procs,
			Walltime: j.ReqTime, User: j.User, MinProcs: j.MinProcs, MaxProcs: j.MaxProcs})
	}
	return jobs, w.MaxProcs
}

// events replays jobs on nodes and lists every start, resize and end as
// "time job kind processors/nodes".
func events(t *testing.T, pol core.Policy, nodes []*core.Node, jobs []Job) ([]string, []Outcome) {
	t.Helper()
	var got []string
	cfg := Config{Nodes: nodes, Policy: pol, Origin: time.Unix(1_000_000_000, 0), ByProcessor: true,
		Events: func(e Event) {
			s := fmt.Sprintf("%d %s %s", e.At, e.Job, e.Kind)
			if e.Kind != EventEnd {
				s += fmt.Sprintf(" %d/%d", e.Procs, e.Nodes)
			}
			if e.Kind == EventShrinkAsked {
				s += fmt.Sprintf(" until %d", e.Until)
			}
			got = append(got, s)
		}}
	outs, err := Replay(cfg, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return got, outs
}

// TestElasticHandWorked replays testdata/elastic.swf (4 nodes of one
// cpu; jobs 2 and 5 elastic) with EASY in queued and in balanced mode
// (graceful shrink, 5 s grace, and immediate), and checks every start,
// grow, shrink and end against the schedule worked out by hand below.
// The work model: job 2 is 200 processor-seconds, job 5 20.
//
// Queued: at 0 job 1 starts on 2, job 2 on the 2 left (as many as are
// free, its range is 1-4): 200/2 = 100 s. At 30 job 1 ends; job 2 grows
// to 4 before job 3 (queued since 20) may start: 140 left / 4 = 35 s, so
// it ends at 65. Jobs 3 and 4 start then (1 + 3); job 5 waits for job
// 3's end at 75 and starts on the 1 free (20 s at 1), grows to 2 at 85
// when job 4 ends (10 left / 2 = 5 s) and ends at 90.
//
// Balanced: job 2 starts at its minimum, 1 (200 s). Job 3 starts at 20
// on the processor left. At 30 jobs 1 and 3 end and job 2 takes the 3
// free (170 left / 4: ends at 73). At 40 job 4 (3) finds no room: job 2
// gives back the 3 nodes above its minimum. Graceful, they free at 45
// (job 2 did 60 more: 110 left on 1), job 4 starts then and ends at 65;
// job 5 starts then at its minimum and job 2 takes the 2 left (90 left
// / 3 = 30 s), then the last one at 85 when job 5 ends (30 left / 4:
// 8 s, rounded up): it ends at 93. Immediate, the nodes free at 40 and
// a second pass at once starts job 4 (ends at 60); job 2 (130 left on
// 1) grows to 3 at 60 (110 left: 37 s) and to 4 at 80 (50 left: 13 s):
// it ends at 93 too.
func TestElasticHandWorked(t *testing.T) {
	jobs, procs := readJobs(t, "elastic.swf")
	if procs != 4 || len(jobs) != 5 || jobs[1].MinProcs != 1 || jobs[1].MaxProcs != 4 {
		t.Fatalf("trace read as %d processors, %+v", procs, jobs)
	}
	easy := settings{StrictFIFO: true, Backfill: true, BackfillDepth: 1000}
	queued := easy
	balanced := easy
	balanced.Balanced, balanced.PriorityBias, balanced.ShrinkGrace = true, "none", 5*time.Second
	immediate := balanced
	immediate.ShrinkImmediate = true
	for _, tc := range []struct {
		name string
		pol  settings
		want []string
	}{
		{"queued", queued, []string{
			"0 1 start 2/2", "0 2 start 2/2",
			"30 1 end", "30 2 grow 4/4",
			"65 2 end", "65 3 start 1/1", "65 4 start 3/3",
			"75 3 end", "75 5 start 1/1",
			"85 4 end", "85 5 grow 2/2",
			"90 5 end",
		}},
		{"balanced, graceful", balanced, []string{
			"0 1 start 2/2", "0 2 start 1/1",
			"20 3 start 1/1",
			"30 1 end", "30 3 end", "30 2 grow 4/4",
			"40 2 shrink-asked 4/4 until 45",
			"45 2 shrink 1/1", "45 4 start 3/3",
			"65 4 end", "65 5 start 1/1", "65 2 grow 3/3",
			"85 5 end", "85 2 grow 4/4",
			"93 2 end",
		}},
		{"balanced, immediate", immediate, []string{
			"0 1 start 2/2", "0 2 start 1/1",
			"20 3 start 1/1",
			"30 1 end", "30 3 end", "30 2 grow 4/4",
			"40 2 shrink 1/1", "40 4 start 3/3",
			"60 4 end", "60 5 start 1/1", "60 2 grow 3/3",
			"80 5 end", "80 2 grow 4/4",
			"93 2 end",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outs := events(t, tc.pol, oneCPUNodes(4), jobs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			// The outcomes agree with the events: each job's start and end.
			for _, o := range outs {
				start := fmt.Sprintf("%d %s start", o.Start, o.Job.ID)
				end := fmt.Sprintf("%d %s end", o.End, o.Job.ID)
				if !hasPrefix(got, start) || !hasPrefix(got, end) || o.Elastic != (o.Job.MinProcs > 0) {
					t.Errorf("job %s: outcome start %d end %d elastic %v", o.Job.ID, o.Start, o.End, o.Elastic)
				}
			}
		})
	}
}

func hasPrefix(lines []string, p string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}
