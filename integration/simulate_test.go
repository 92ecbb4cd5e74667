package integration

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/fifo"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
	"github.com/gopbs/gopbs/sched/sim"
)

// The same sched_config gives the same start order in the simulator and
// on a live cluster (issue 8): the simulator runs the same core, policy
// and files as pbs_sched.
func TestSimulatorMatchesLiveOrder(t *testing.T) {
	t.Parallel()
	root, err := testcluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join(root, "examples", "sim", "easy", "sched_config"))
	if err != nil {
		t.Fatal(err)
	}
	// Four cpus. Job 1 takes them all; job 2 waits for it and then heads
	// the queue; job 4 cannot start beside 2 and 3 and reserves; job 5
	// backfills before that reservation.
	jobs := []struct {
		ncpus, sleep int
		wall         string
	}{{4, 2, "00:00:30"}, {2, 2, "00:00:30"}, {1, 1, "00:00:10"}, {2, 1, "00:00:40"}, {1, 3, "00:00:05"}}

	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	priv := filepath.Join(c.Home, "sched_priv")
	os.MkdirAll(priv, 0o750)
	if err := os.WriteFile(filepath.Join(priv, "sched_config"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var simJobs []sim.Job
	for i, j := range jobs {
		id := c.Submit("#!/bin/sh\nsleep "+strconv.Itoa(j.sleep)+"\n", "-l", "select=1:ncpus="+strconv.Itoa(j.ncpus), "-l", "walltime="+j.wall)
		ids = append(ids, id)
		secs, _ := strconv.ParseInt(strings.TrimPrefix(j.wall, "00:00:"), 10, 64)
		simJobs = append(simJobs, sim.Job{ID: strconv.Itoa(i + 1), Run: int64(j.sleep), Procs: j.ncpus, Walltime: secs, User: "u"})
	}
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	for _, id := range ids {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	// The live order: S records in the order the server wrote them.
	acct := c.Accounting()
	var live []string
	for _, line := range strings.Split(acct, "\n") {
		if f := strings.SplitN(line, ";", 4); len(f) == 4 && f[1] == "S" {
			for k, id := range ids {
				if f[2] == id {
					live = append(live, strconv.Itoa(k+1))
				}
			}
		}
	}

	files, err := privdir.Load(priv, time.Local)
	if err != nil {
		t.Fatal(err)
	}
	pol := &fifo.Policy{}
	if err := pol.Configure(files, core.NopLogger{}); err != nil {
		t.Fatal(err)
	}
	node := &core.Node{Name: "n1", Avail: core.Amounts{"ncpus": 4}, Props: map[string]string{"host": "n1"}, Assigned: core.Amounts{}, IdealLoad: -1, MaxLoad: -1}
	outs, err := sim.Replay(sim.Config{Nodes: []*core.Node{node}, Policy: pol, Origin: time.Now()}, simJobs)
	if err != nil {
		t.Fatal(err)
	}
	order := append([]sim.Outcome(nil), outs...)
	// Starts in time order; jobs started at one instant in decision order,
	// which is the order of their ids here.
	for a := 1; a < len(order); a++ {
		for b := a; b > 0 && order[b].Start < order[b-1].Start; b-- {
			order[b], order[b-1] = order[b-1], order[b]
		}
	}
	var simulated []string
	for _, o := range order {
		simulated = append(simulated, o.Job.ID)
	}
	if want := []string{"1", "2", "3", "5", "4"}; !reflect.DeepEqual(simulated, want) {
		t.Fatalf("simulated start order %v, want %v (worked by hand)", simulated, want)
	}
	if !reflect.DeepEqual(live, simulated) {
		t.Fatalf("live start order %v, simulated %v", live, simulated)
	}

	// pbs_simulate takes the node layout from the running server.
	var swf strings.Builder
	for _, j := range simJobs {
		swf.WriteString(j.ID + " 0 -1 " + strconv.FormatInt(j.Run, 10) + " " + strconv.Itoa(j.Procs) + " -1 -1 " +
			strconv.Itoa(j.Procs) + " " + strconv.FormatInt(j.Walltime, 10) + " -1 1 1 1 -1 1 -1 -1 -1\n")
	}
	trace := filepath.Join(c.Home, "small.swf")
	if err := os.WriteFile(trace, []byte(swf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := c.MustRun("pbs_simulate", "--from-server", "--sched-priv", priv, trace)
	if !strings.Contains(out, "5 jobs (0 dropped) on 4 processors in 1 nodes") {
		t.Fatalf("pbs_simulate --from-server:\n%s", out)
	}
}
