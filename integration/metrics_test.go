package integration

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/metrics"
	"github.com/gopbs/gopbs/internal/testcluster"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// metricsCluster is a server, one mom (n1, two cpus) and pbs_sched, each
// serving metrics on a port of its own (PBS_SERVER_METRICS,
// PBS_SCHED_METRICS, PBS_MOM_METRICS); sched_config turns fair share on
// and sched_priv/usage gives alice past usage (1234 cpu seconds). Scheduling is off until the
// caller turns it on. It returns the three scrape URLs.
func metricsCluster(t *testing.T) (c *testcluster.Cluster, server, sched, mom string) {
	t.Helper()
	addr := func() string { return fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(t)) }
	sa, ca, ma := addr(), addr(), addr()
	c = testcluster.New(t, testcluster.Options{Conf: "PBS_SERVER_METRICS=" + sa + "\nPBS_SCHED_METRICS=" + ca + "\n"})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.MustRun("qmgr", "-c", "set server job_history_enable = True")
	c.AddMom("n1", testcluster.MomOptions{Conf: "PBS_MOM_METRICS=" + ma + "\n"})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	priv := filepath.Join(c.Home, "sched_priv")
	os.MkdirAll(priv, 0o750)
	if err := os.WriteFile(filepath.Join(priv, "sched_config"), []byte("fair_share: true all\nsync_time: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	usage := &schedpriv.UsageState{Entities: schedpriv.Usage{"alice": 1234}}
	if err := privdir.WriteUsageFile(priv, usage); err != nil {
		t.Fatal(err)
	}
	url := func(a string) string { return "http://" + a + metrics.Path }
	return c, url(sa), url(ca), url(ma)
}

// expectSeries checks series in a scrape; each want is name, value and
// label pairs.
type series struct {
	name   string
	v      float64
	labels []string
}

func expectSeries(t *testing.T, who string, s testcluster.Samples, want []series) {
	t.Helper()
	for _, w := range want {
		if v, ok := s.Get(w.name, w.labels...); !ok || v != w.v {
			t.Errorf("%s: %s = %v (present %v), want %v", who, testcluster.SeriesKey(w.name, w.labels...), v, ok, w.v)
		}
	}
}

// sampleKeys lists a scrape's pbs_ series, for failure messages.
func sampleKeys(s testcluster.Samples) string {
	var ks []string
	for k, v := range s {
		if strings.HasPrefix(k, "pbs_") && !strings.Contains(k, "_bucket") {
			ks = append(ks, fmt.Sprintf("%s %v", k, v))
		}
	}
	sort.Strings(ks)
	return strings.Join(ks, "\n")
}

// The three daemons' metrics after a known workload, scraped over HTTP.
// On a node of two cpus: J1 (one cpu, a minute) starts; J2 (two cpus)
// cannot and reserves the node for J1's end; J3 (one cpu, five seconds)
// is backfilled before it and exits 3. J1 is rerun (requeued, started
// again) and deleted; J2 then runs and exits 0. So: 3 submissions, ends
// ok 1, failed 1, deleted 1, 1 requeue, 4 starts of which 1 backfilled;
// alice's past usage shown as fair-share usage.
func TestMetricsAfterKnownWorkload(t *testing.T) {
	t.Parallel()
	c, serverURL, schedURL, momURL := metricsCluster(t)
	j1 := c.Submit("#!/bin/sh\nsleep 60\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:00")
	j2 := c.Submit("#!/bin/sh\nexit 0\n", "-l", "select=1:ncpus=2", "-l", "walltime=00:00:10")
	j3 := c.Submit("#!/bin/sh\nexit 3\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:00:05")
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(j3, "F", 30*time.Second)
	c.WaitJobState(j1, "R", 10*time.Second)
	if st, _ := c.JobAttr(j2, "job_state"); st != "Q" {
		t.Fatalf("J2 is %q, want Q behind J1", st)
	}
	c.MustRun("qrerun", j1)
	testcluster.WaitFor(t, "J1's second run", 30*time.Second, func() (bool, string) {
		st, _ := c.JobAttr(j1, "job_state")
		rc, _ := c.JobAttr(j1, "run_count")
		return st == "R" && rc == "2", st + " run_count " + rc
	})
	c.MustRun("qdel", j1)
	c.WaitJobState(j1, "F", 30*time.Second)
	c.WaitJobState(j2, "F", 30*time.Second)
	for id, want := range map[string]string{j2: "0", j3: "3"} {
		if got := attr(t, c, id, "Exit_status"); got != want {
			t.Fatalf("%s: Exit_status %s, want %s", id, got, want)
		}
	}

	// The counters are fed after each commit and the mom's end report:
	// wait for the last of them (J2's end, the node free).
	var s testcluster.Samples
	testcluster.WaitFor(t, "the server's metrics to show every end", 10*time.Second, func() (bool, string) {
		s = testcluster.MustScrape(t, serverURL)
		ok, _ := s.Get(metrics.ServerEnds, "queue", "workq", "result", metrics.EndOK)
		free, _ := s.Get(metrics.ServerNodes, "state", "free")
		return ok == 1 && free == 1, sampleKeys(s)
	})
	expectSeries(t, "pbs_server", s, []series{
		{metrics.ServerSubmissions, 3, []string{"queue", "workq"}},
		{metrics.ServerEnds, 1, []string{"queue", "workq", "result", metrics.EndOK}},
		{metrics.ServerEnds, 1, []string{"queue", "workq", "result", metrics.EndFailed}},
		{metrics.ServerEnds, 1, []string{"queue", "workq", "result", metrics.EndDeleted}},
		{metrics.ServerRequeues, 1, []string{"queue", "workq"}},
		{metrics.ServerJobs, 3, []string{"queue", "workq", "state", "finished"}},
		{metrics.ServerJobs, 0, []string{"queue", "workq", "state", "queued"}},
		{metrics.ServerJobs, 0, []string{"queue", "workq", "state", "running"}},
		{metrics.ServerNodes, 1, []string{"state", "free"}},
		{metrics.ServerRequestSeconds + "_count", 3, []string{"type", "Submit"}},
		{metrics.ServerRequestSeconds + "_count", 1, []string{"type", "RerunJob"}},
		{metrics.ServerConnections + metrics.RefusedSuffix, 0, []string{"class", "local"}},
		{metrics.ServerConnections + metrics.RefusedSuffix, 0, []string{"class", "remote"}},
	})
	for _, name := range []string{metrics.ServerCommitSeconds, metrics.ServerCommitBatch} {
		if n, _ := s.Get(name + "_count"); n < 8 {
			t.Errorf("pbs_server: %s_count %v, want a commit per change (at least 8)", name, n)
		}
	}
	for _, typ := range []string{"MomStatus", "JobObit", "RunJobs"} {
		if n, _ := s.Get(metrics.ServerRequestSeconds+"_count", "type", typ); n < 1 {
			t.Errorf("pbs_server: no %s request observed", typ)
		}
	}
	if n, _ := s.Get(metrics.ServerConnections, "class", "remote"); n < 1 {
		t.Errorf("pbs_server: %v remote connections, want the mom's at least", n)
	}

	s = testcluster.MustScrape(t, schedURL)
	expectSeries(t, "pbs_sched", s, []series{
		{metrics.SchedStarted, 4, nil},
		{metrics.SchedBackfilled, 1, nil},
		{metrics.SchedFairshareUsage, 1234, []string{"entity", "alice"}},
	})
	cycles, _ := s.Get(metrics.SchedCycles)
	for _, phase := range []string{metrics.PhaseFetch, metrics.PhaseDecide, metrics.PhaseApply} {
		if n, _ := s.Get(metrics.SchedPhaseSeconds+"_count", "phase", phase); n < cycles || n < 1 {
			t.Errorf("pbs_sched: %v %s phases for %v cycles", n, phase, cycles)
		}
	}
	if s.Has(metrics.SchedRefused) {
		t.Errorf("pbs_sched: refusals in a workload without any:\n%s", sampleKeys(s))
	}

	s = testcluster.MustScrape(t, momURL)
	expectSeries(t, "pbs_mom", s, []series{
		{metrics.MomStarts, 4, nil},
		{metrics.MomJobsRunning, 0, nil},
		{metrics.MomOOMKills, 0, nil},
	})
	lease, _ := s.Get(metrics.MomLease)
	if age, ok := s.Get(metrics.MomLeaseAge); !ok || age < 0 || lease <= 0 || age > lease {
		t.Errorf("pbs_mom: lease age %v (present %v), lease %v: want a renewed lease", age, ok, lease)
	}
}

// A flood on the metrics port (silent connections, half-sent headers,
// garbage, oversized headers) takes only that listener's budget: qsub
// and qstat on the batch socket go on answering at once, a scrape still
// gets through, the metrics class shows its refusals or evictions, and
// the batch classes none.
func TestMetricsFloodLeavesBatchPortsAlone(t *testing.T) {
	t.Parallel()
	addr := fmt.Sprintf("127.0.0.1:%d", testcluster.FreePort(t))
	c := testcluster.New(t, testcluster.Options{Conf: "PBS_SERVER_METRICS=" + addr + "\n"})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	url := "http://" + addr + metrics.Path
	testcluster.MustScrape(t, url)

	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	junk := []string{
		"",                          // silent
		"GET /metr",                 // a request line never finished
		"\x16\x03\x01\x00\x05hello", // a TLS hello to a plain port
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 32<<10) + "\r\n\r\n",
	}
	for i := 0; i < 4*metrics.Budget.Max; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, nc)
		if j := junk[i%len(junk)]; j != "" {
			nc.SetWriteDeadline(time.Now().Add(time.Second))
			io.WriteString(nc, j)
		}
		if i%50 == 49 {
			// The batch socket answers while the flood goes on.
			start := time.Now()
			id := c.Submit("#!/bin/sh\n")
			c.MustRun("qstat", id)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("qsub and qstat took %v during the flood", took)
			}
		}
	}
	var s testcluster.Samples
	testcluster.WaitFor(t, "a scrape through the flood", 20*time.Second, func() (bool, string) {
		var err error
		if s, err = testcluster.Scrape(url); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	refused, _ := s.Get(metrics.ServerConnections+metrics.RefusedSuffix, "class", metrics.ListenerClass)
	evicted, _ := s.Get(metrics.ServerConnections+metrics.EvictedSuffix, "class", metrics.ListenerClass)
	if refused+evicted == 0 {
		t.Errorf("a flood of %d connections neither refused nor evicted any:\n%s", len(conns), sampleKeys(s))
	}
	if held, _ := s.Get(metrics.ServerConnections, "class", metrics.ListenerClass); held > float64(metrics.Budget.Max) {
		t.Errorf("%v metrics connections held, over the budget of %d", held, metrics.Budget.Max)
	}
	expectSeries(t, "pbs_server", s, []series{
		{metrics.ServerConnections + metrics.RefusedSuffix, 0, []string{"class", "local"}},
		{metrics.ServerConnections + metrics.EvictedSuffix, 0, []string{"class", "local"}},
		{metrics.ServerConnections + metrics.RefusedSuffix, 0, []string{"class", "remote"}},
	})
	if n, _ := s.Get(metrics.ServerSubmissions, "queue", "workq"); n < 4 {
		t.Errorf("%v submissions counted, want the flood's 5", n)
	}
}
