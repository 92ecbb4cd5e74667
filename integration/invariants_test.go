package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// The promises of DESIGN §6, checked on a cluster after whatever a test
// did to it (crashes at fault points, kill -9 loops): see checkInvariants.

// beatScript is a job that appends "<job id> <pid> <unix ns>" to log five
// times a second for about secs seconds: the intervals of each run show
// whether two runs of one job ever overlapped.
func beatScript(log string, secs int) string {
	return fmt.Sprintf("#!/bin/sh\ni=0\nwhile [ $i -lt %d ]; do echo \"$PBS_JOBID $$ $(date +%%s%%N)\" >> %s; i=$((i+1)); sleep 0.2; done\n", secs*5, log)
}

// submitter submits jobs from several goroutines and remembers the ids
// that qsub acknowledged (printed with exit 0).
type submitter struct {
	mu    sync.Mutex
	acked []string
	fails int
}

func (s *submitter) run(c *testcluster.Cluster, loops, perLoop int, script string, args ...string) {
	var wg sync.WaitGroup
	for l := 0; l < loops; l++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perLoop; i++ {
				r := c.RunStdin(script, "qsub", args...)
				id := strings.TrimSpace(r.Stdout)
				s.mu.Lock()
				if r.Code == 0 && id != "" {
					s.acked = append(s.acked, id)
				} else {
					s.fails++
				}
				s.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func (s *submitter) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acked...)
}

// jobView is what qstat -f -F json says of one job.
type jobView struct {
	State      string `json:"job_state"`
	ExecHost   string `json:"exec_host"`
	ExitStatus *int   `json:"Exit_status"`
	Comment    string `json:"comment"`
}

func qstatJobs(t *testing.T, c *testcluster.Cluster) map[string]jobView {
	t.Helper()
	r := c.Run("qstat", "-x", "-f", "-F", "json")
	if r.Code != 0 {
		t.Fatalf("qstat -x -f -F json: %s", r)
	}
	var out struct {
		Jobs map[string]jobView `json:"Jobs"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("qstat json: %v\n%s", err, r.Stdout)
	}
	return out.Jobs
}

// waitQuiet waits until every job has finished.
func waitQuiet(t *testing.T, c *testcluster.Cluster, timeout time.Duration) map[string]jobView {
	t.Helper()
	var jobs map[string]jobView
	testcluster.WaitFor(t, "every job finished", timeout, func() (bool, string) {
		jobs = qstatJobs(t, c)
		for id, j := range jobs {
			if j.State != "F" {
				return false, id + " is " + j.State + " (" + j.Comment + ")"
			}
		}
		return true, ""
	})
	return jobs
}

// checkInvariants checks, once every job has finished:
//   - every acknowledged job exists, and no id is listed twice;
//   - every job is in exactly one state, and finished jobs have an
//     Exit_status;
//   - node allocations agree with running jobs (none left assigned);
//   - no job ran twice at once (the beat log of beatScript);
//   - the moms hold no job directory of a finished job.
func checkInvariants(t *testing.T, c *testcluster.Cluster, acked []string, beatLog string, moms ...*testcluster.Mom) {
	t.Helper()
	jobs := waitQuiet(t, c, 90*time.Second)
	for _, id := range acked {
		if _, ok := jobs[id]; !ok {
			t.Errorf("acknowledged job %s is gone", id)
		}
	}
	listing := c.MustRun("qstat", "-x")
	seen := map[string]int{}
	for _, line := range strings.Split(listing, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], ".") {
			seen[f[0]]++
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("job %s listed %d times", id, n)
		}
	}
	for id, j := range jobs {
		if j.ExitStatus == nil {
			t.Errorf("finished job %s has no Exit_status (comment %q)", id, j.Comment)
		}
	}
	nodes := c.MustRun("pbsnodes", "-a")
	for _, line := range strings.Split(nodes, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "jobs = ") {
			t.Errorf("a node still lists running jobs with none running: %s", line)
		}
		if strings.HasPrefix(line, "resources_assigned.ncpus = ") && line != "resources_assigned.ncpus = 0" {
			t.Errorf("a node still has cpus assigned with no job running: %s", line)
		}
	}
	checkNoOverlap(t, beatLog)
	for _, m := range moms {
		dir := filepath.Join(m.Home, "mom_priv", "jobs")
		if ok, n := testcluster.Poll(20*time.Second, func() (bool, string) {
			ents, _ := os.ReadDir(dir)
			return len(ents) == 0, strconv.Itoa(len(ents))
		}); !ok {
			t.Errorf("mom %s still holds %s job directories with every job finished", m.Name, n)
		}
	}
}

// checkNoOverlap reads a beat log and fails when two runs (processes) of
// one job beat during overlapping intervals.
func checkNoOverlap(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type span struct{ first, last int64 }
	runs := map[string]map[string]*span{} // job -> pid -> span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 3 {
			continue
		}
		ns, err := strconv.ParseInt(fl[2], 10, 64)
		if err != nil {
			continue
		}
		if runs[fl[0]] == nil {
			runs[fl[0]] = map[string]*span{}
		}
		sp := runs[fl[0]][fl[1]]
		if sp == nil {
			runs[fl[0]][fl[1]] = &span{ns, ns}
			continue
		}
		sp.first, sp.last = min(sp.first, ns), max(sp.last, ns)
	}
	for job, byPid := range runs {
		var spans []*span
		for _, sp := range byPid {
			spans = append(spans, sp)
		}
		sort.Slice(spans, func(i, k int) bool { return spans[i].first < spans[k].first })
		for i := 1; i < len(spans); i++ {
			if spans[i].first <= spans[i-1].last {
				t.Errorf("job %s ran twice at once: one run beat until %d, another from %d", job, spans[i-1].last, spans[i].first)
			}
		}
	}
}
