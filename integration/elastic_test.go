package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// elasticCluster is a cluster of n one-cpu nodes (n1...) with pbs_sched,
// sched_config lines added (scheduling_mode and the like).
func elasticCluster(t *testing.T, n int, schedConfig string) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server kill_delay = 2")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	for i := 1; i <= n; i++ {
		name := "n" + strconv.Itoa(i)
		c.AddMom(name, testcluster.MomOptions{})
		c.MustRun("qmgr", "-c", "set node "+name+" resources_available.ncpus = 1")
	}
	if schedConfig != "" {
		appendSchedConfig(t, c, schedConfig)
	}
	c.StartScheduler("pbs_sched")
	return c
}

// A 1-3 chunk job on three one-cpu nodes, two of them busy, starts with
// one chunk and grows as the others free: its exec_vnode, its
// PBS_NODEFILE and pbsdsh see the new nodes, it gets its resize signal,
// Resource_List.select keeps the range, and a u record says each growth.
func TestElasticJobGrows(t *testing.T) {
	t.Parallel()
	c := elasticCluster(t, 3, "")
	var blockers []string
	for _, n := range []string{"n2", "n3"} {
		id := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1:host="+n)
		c.WaitJobState(id, "R", 30*time.Second)
		blockers = append(blockers, id)
	}
	ready := filepath.Join(c.Home, "ready")
	script := `#!/bin/sh
trap 'echo "resized to $(wc -l < $PBS_NODEFILE)"' USR1
touch ` + ready + `
while [ "$(wc -l < $PBS_NODEFILE)" -lt 3 ]; do sleep 0.2; done
pbsdsh sh -c 'echo "task on node $PBS_NODENUM"'
echo done
`
	id := c.Submit(script, "-N", "elastic", "-j", "oe", "-l", "select=1-3:ncpus=1", "-l", "place=scatter", "-W", "resize_signal=USR1")
	c.WaitJobState(id, "R", 30*time.Second)
	if got := attr(t, c, id, "exec_host"); got != "n1/0" {
		t.Errorf("started on %q, want n1/0 alone (n2 and n3 are busy)", got)
	}
	if got := attr(t, c, id, "Resource_List.select"); got != "1-3:ncpus=1" {
		t.Errorf("Resource_List.select %q", got)
	}
	// Told once it listens for the signal (a job that has not yet set
	// its trap would die of it, as of any signal it does not expect).
	waitFor(t, "the job to trap its resize signal", 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
	for _, b := range blockers {
		c.MustRun("qdel", b)
	}
	waitFor(t, "the job to grow to three nodes", 60*time.Second, func() bool {
		v, _ := c.JobAttr(id, "exec_vnode")
		return strings.Count(v, "(") == 3
	})
	if got := attr(t, c, id, "Resource_List.nodect"); got != "3" {
		t.Errorf("Resource_List.nodect %q while the job holds 3 chunks", got)
	}
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "elastic.o"+strconv.Itoa(testcluster.Seq(id))))
	if !strings.Contains(out, "resized to") {
		t.Logf("n1's log:\n%s", c.Mom("n1").Log())
	}
	for _, want := range []string{"resized to", "task on node 0\n", "task on node 1\n", "task on node 2\n", "done\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	if st := attr(t, c, id, "Exit_status"); st != "0" {
		t.Errorf("Exit_status %s", st)
	}
	acct := c.Accounting()
	if !strings.Contains(acct, ";u;"+id+";") {
		t.Errorf("no u record for the growth:\n%s", acct)
	}
}

// appendSchedConfig adds lines to sched_priv/sched_config before the
// scheduler starts (the file the server's PBS_HOME has, or a new one).
func appendSchedConfig(t *testing.T, c *testcluster.Cluster, lines string) {
	t.Helper()
	path := filepath.Join(c.Home, "sched_priv", "sched_config")
	old, _ := os.ReadFile(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(old, []byte("\n"+lines+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pbs_release_nodes gives a sister node back: the task there dies, the
// job's exec_vnode, select and PBS_NODEFILE lose it, a u record says so,
// another job starts there while the first still runs, and the first
// node cannot be given back.
func TestReleaseNodes(t *testing.T) {
	t.Parallel()
	c := elasticCluster(t, 3, "")
	mark := strconv.Itoa(20000 + os.Getpid()%10000)
	t.Cleanup(func() { killMarked(mark) })
	script := "#!/bin/sh\npbsdsh -o -n 2 sleep " + mark + "\nwhile [ ! -e " + filepath.Join(c.Home, "release") + " ]; do sleep 0.2; done\n" +
		"pbs_release_nodes n1; echo first=$?\npbs_release_nodes n3; echo rel=$?\necho lines=$(wc -l < $PBS_NODEFILE)\nsleep 300\n"
	id := c.Submit(script, "-N", "rel", "-j", "oe", "-l", "select=3:ncpus=1", "-l", "place=scatter")
	c.WaitJobState(id, "R", 30*time.Second)
	waitFor(t, "the task on n3", 20*time.Second, func() bool { return len(processesWith(mark)) > 0 })
	os.WriteFile(filepath.Join(c.Home, "release"), nil, 0o644)
	out := filepath.Join(c.Home, "rel.o"+strconv.Itoa(testcluster.Seq(id)))
	waitFor(t, "the release", 30*time.Second, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "lines=")
	})
	text := readFile(t, out)
	for _, want := range []string{"first=", "rel=0\n", "lines=2\n", "first node"} {
		if !strings.Contains(text, want) {
			t.Errorf("job output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "first=0") {
		t.Errorf("the first node was given back:\n%s", text)
	}
	waitFor(t, "the task on n3 to die", 20*time.Second, func() bool { return len(processesWith(mark)) == 0 })
	if got := attr(t, c, id, "exec_host"); strings.Contains(got, "n3") {
		t.Errorf("exec_host %q still names n3", got)
	}
	if got := attr(t, c, id, "Resource_List.select"); got != "2:ncpus=1" {
		t.Errorf("Resource_List.select %q, want 2:ncpus=1", got)
	}
	other := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	c.WaitJobState(other, "R", 30*time.Second)
	if got := attr(t, c, other, "exec_host"); got != "n3/0" {
		t.Errorf("the next job runs on %q, want the node given back", got)
	}
	if acct := c.Accounting(); !strings.Contains(acct, ";u;"+id+";") {
		t.Errorf("no u record:\n%s", acct)
	}
	c.MustRun("qdel", id, other)
}

// killMarked kills the processes with an argument mark.
func killMarked(mark string) {
	for _, pid := range processesWith(mark) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Balanced mode: an elastic job spread over every node gives a node back
// for a new job (gracefully: its task there has the grace to end, then
// is killed; or at once with shrink: immediate), never below its
// minimum; the new job starts on the node given back.
func TestElasticBalancedShrinks(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"graceful", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			c := elasticCluster(t, 3, "scheduling_mode: balanced all\nshrink: "+mode+" all\nshrink_grace: 3 all\n")
			mark := strconv.Itoa(30000 + os.Getpid()%10000)
			t.Cleanup(func() { killMarked(mark) })
			// The other nodes are offline until the job has set its trap: a
			// resize signal before it would end the job (TestElasticJobGrows).
			c.MustRun("pbsnodes", "-o", "n2", "n3")
			ready := filepath.Join(c.Home, "ready")
			script := "#!/bin/sh\ntrap 'echo resized' USR1\ntouch " + ready + "\nwhile [ \"$(wc -l < $PBS_NODEFILE)\" -lt 3 ]; do sleep 0.2; done\npbsdsh -o -n 2 sleep " + mark + "\nsleep 300\n"
			big := c.Submit(script, "-N", "bal", "-j", "oe", "-l", "select=1-3:ncpus=1", "-l", "place=scatter", "-W", "resize_signal=USR1")
			waitFor(t, "the job to trap its resize signal", 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
			c.MustRun("pbsnodes", "-r", "n2", "n3")
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(filepath.Join(c.Home, "bal.o"+strconv.Itoa(testcluster.Seq(big))))
					t.Logf("the elastic job's output:\n%s\nscheduler:\n%s", b, c.SchedLog())
				}
			})
			waitFor(t, "the elastic job to spread over the three nodes", 60*time.Second, func() bool {
				v, _ := c.JobAttr(big, "exec_vnode")
				return strings.Count(v, "(") == 3
			})
			waitFor(t, "its task on the third node", 20*time.Second, func() bool { return len(processesWith(mark)) > 0 })
			start := time.Now()
			small := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
			c.WaitJobState(small, "R", 60*time.Second)
			took := time.Since(start)
			if mode == "graceful" && took < 3*time.Second {
				t.Errorf("the new job started %v after submission: the shrink did not give the grace", took)
			}
			if len(processesWith(mark)) > 0 {
				t.Errorf("the elastic job's task on the node given back still runs")
			}
			v := attr(t, c, big, "exec_vnode")
			if n := strings.Count(v, "("); n != 2 {
				t.Errorf("the elastic job holds %s after the shrink, want 2 chunks", v)
			}
			if got := attr(t, c, small, "exec_host"); strings.Contains(v, strings.Split(got, "/")[0]+":") {
				t.Errorf("the new job runs on %s, which the elastic job still holds (%s)", got, v)
			}
			c.MustRun("qdel", big, small)
		})
	}
}

// The server dies after it committed a growth and before it told the
// job's first mom: restarted, it brings the mom to what its store says:
// the new node's mom joins, the node file agrees.
func TestElasticRestartMidGrowth(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	for _, n := range []string{"n1", "n2"} {
		c.AddMom(n, testcluster.MomOptions{})
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 1")
	}
	blocker := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1:host=n2")
	c.MustRun("qrun", blocker)
	c.WaitJobState(blocker, "R", 20*time.Second)
	id := c.Submit("#!/bin/sh\nwhile [ \"$(wc -l < $PBS_NODEFILE)\" -lt 2 ]; do sleep 0.2; done\npbsdsh sh -c 'echo \"task $PBS_NODENUM\"'\n", "-N", "grow", "-j", "oe", "-l", "select=1-2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "R", 20*time.Second)
	// The next start of the server crashes at its first growth.
	c.SetFault("pbs_server", fault.ServerResizeMom+"=crash")
	c.KillServer(syscall.SIGTERM)
	c.StartServer()
	c.SetFault("pbs_server", "")
	c.StartScheduler("pbs_sched")
	c.MustRun("qdel", blocker)
	if !c.WaitServerDown(60 * time.Second) {
		t.Fatal("the server did not reach the growth")
	}
	c.StartServer()
	c.WaitJobState(id, "F", 60*time.Second)
	out := readFile(t, filepath.Join(c.Home, "grow.o"+strconv.Itoa(testcluster.Seq(id))))
	for _, want := range []string{"task 0\n", "task 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
}

// An activation filter that says 1 for a running job stops its growth
// (the nodes stay free for others); it sees the running flag and the
// job's range in its environment.
func TestElasticActivationFilterStopsGrowth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	seen := filepath.Join(dir, "seen")
	filter := filepath.Join(dir, "no_growth")
	os.WriteFile(filter, []byte("#!/bin/sh\necho \"$PBS_FILTER_JOB_ID running=$PBS_FILTER_RUNNING range=$PBS_FILTER_MIN_CHUNKS-$PBS_FILTER_MAX_CHUNKS chunks=$PBS_FILTER_CHUNKS\" >> "+seen+"\n[ \"$PBS_FILTER_RUNNING\" = 1 ] && exit 1\nexit 0\n"), 0o755)
	c := elasticCluster(t, 2, "activation_filter: "+filter+"\n")
	blocker := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1:host=n2")
	c.WaitJobState(blocker, "R", 30*time.Second)
	id := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1-2:ncpus=1", "-l", "place=scatter")
	c.WaitJobState(id, "R", 30*time.Second)
	c.MustRun("qdel", blocker)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(seen)
			t.Logf("filter saw:\n%s\nscheduler:\n%s", b, c.SchedLog())
		}
	})
	waitFor(t, "the filter to be asked about growing the job", 30*time.Second, func() bool {
		b, _ := os.ReadFile(seen)
		return strings.Contains(string(b), id+" running=1 range=1-2 chunks=2")
	})
	c.WaitCycles(t, 2)
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 1 {
		t.Errorf("the job grew to %s although its activation filter said no", v)
	}
	c.MustRun("qdel", id)
}

// qalter lowers a running elastic job's maximum (never raises it, nor
// changes anything else of its select), and the job then grows only so
// far.
func TestElasticQalterLowersMax(t *testing.T) {
	t.Parallel()
	c := elasticCluster(t, 3, "")
	var blockers []string
	for _, n := range []string{"n2", "n3"} {
		id := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1:host="+n)
		c.WaitJobState(id, "R", 30*time.Second)
		blockers = append(blockers, id)
	}
	id := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1-3:ncpus=1", "-l", "place=scatter")
	c.WaitJobState(id, "R", 30*time.Second)
	for _, bad := range []string{"1-4:ncpus=1", "1-3:ncpus=2", "2-3:ncpus=1"} {
		if r := c.Run("qalter", "-l", "select="+bad, id); r.Code == 0 {
			t.Errorf("qalter -l select=%s of a running job accepted", bad)
		}
	}
	c.MustRun("qalter", "-l", "select=1-2:ncpus=1", id)
	for _, b := range blockers {
		c.MustRun("qdel", b)
	}
	waitFor(t, "the job to grow to two chunks", 60*time.Second, func() bool {
		v, _ := c.JobAttr(id, "exec_vnode")
		return strings.Count(v, "(") == 2
	})
	c.WaitCycles(t, 2)
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 2 {
		t.Errorf("the job grew past its lowered maximum: %s", v)
	}
	c.MustRun("qdel", id)
}

// A new node's mom that cannot join a growing job: the growth is undone
// in one step (the job holds what it held, its node file agrees) and the
// node is marked offline saying why, so that it is not tried again.
func TestElasticGrowthJoinRefused(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	c.SetFault("pbs_mom", fault.MomJoinJob+"=error")
	c.AddMom("n2", testcluster.MomOptions{})
	c.SetFault("pbs_mom", "")
	for _, n := range []string{"n1", "n2"} {
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 1")
	}
	id := c.Submit("#!/bin/sh\nsleep 300\n", "-N", "refused", "-l", "select=1-2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", "-H", "n1", id)
	c.WaitJobState(id, "R", 20*time.Second)
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.StartScheduler("pbs_sched")
	waitFor(t, "n2 to be marked offline", 30*time.Second, func() bool {
		return strings.Contains(c.NodeState("n2"), "offline")
	})
	if cm := nodeAttr(c, "n2", "comment"); !strings.Contains(cm, "could not grow onto this node") {
		t.Errorf("n2's comment %q", cm)
	}
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 1 {
		t.Errorf("the job holds %s after its growth was undone", v)
	}
	if st := attr(t, c, id, "job_state"); st != "R" {
		t.Errorf("job_state %s", st)
	}
	c.MustRun("qdel", id)
}

// A count range is judged at its maximum (issue 29): on nodes of 40
// cpus, "select=1-3:ncpus=40" is refused by the shipped max_cpus filter
// (64) and by a queue's resources_max.ncpus = 40 as "select=3:ncpus=40"
// is; its Resource_List.ncpus is the 120 it may hold. Under
// max_user_res.ncpus = 40 it starts with one chunk and never grows past
// the limit, though two nodes stay free, and a growth asked of the
// server directly (as a scheduler would) is refused naming the limit.
func TestElasticRangeJudgedAtMaximum(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	for _, n := range []string{"n1", "n2", "n3"} {
		c.AddMom(n, testcluster.MomOptions{})
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 40")
	}
	script := "#!/bin/sh\nsleep 300\n"
	c.MustRun("qmgr", "-c", "set server submission_filters = "+example(t, "max_cpus"))
	for _, sel := range []string{"select=3:ncpus=40", "select=1-3:ncpus=40"} {
		r := c.RunStdin(script, "qsub", "-l", sel)
		if r.Code == 0 || !strings.Contains(r.Stderr, "asks for 120 cpus") {
			t.Errorf("qsub -l %s past max_cpus: code %d %q, want the filter's refusal of 120 cpus", sel, r.Code, r.Stderr)
		}
	}
	c.MustRun("qmgr", "-c", "unset server submission_filters")
	c.MustRun("qmgr", "-c", "set queue workq resources_max.ncpus = 40")
	for _, sel := range []string{"select=3:ncpus=40", "select=1-3:ncpus=40"} {
		r := c.RunStdin(script, "qsub", "-l", sel)
		if r.Code == 0 || !strings.Contains(r.Stderr, "resources_max.ncpus = 40, job requests 120") {
			t.Errorf("qsub -l %s past resources_max.ncpus = 40: code %d %q", sel, r.Code, r.Stderr)
		}
	}
	c.MustRun("qmgr", "-c", "unset queue workq resources_max.ncpus")
	c.MustRun("qmgr", "-c", "set server max_user_res.ncpus = 40")
	c.StartScheduler("pbs_sched")
	id := c.Submit(script, "-l", "select=1-3:ncpus=40", "-l", "place=scatter")
	c.WaitJobState(id, "R", 30*time.Second)
	if got := attr(t, c, id, "Resource_List.ncpus"); got != "120" {
		t.Errorf("Resource_List.ncpus %q, want 120 (the most the job may hold)", got)
	}
	if got := attr(t, c, id, "Resource_List.select"); got != "1-3:ncpus=40" {
		t.Errorf("Resource_List.select %q", got)
	}
	cycles := c.SchedCycles()
	c.WaitCycles(t, cycles+3)
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 1 {
		t.Errorf("exec_vnode %q under max_user_res.ncpus = 40, want one chunk", v)
	}
	cl, err := proto.Dial(proto.DialOptions{Network: "unix", Address: filepath.Join(c.Home, "pbs_server.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	host := attr(t, c, id, "exec_host")
	free := "n2"
	if strings.HasPrefix(host, "n2") {
		free = "n3"
	}
	err = cl.ResizeJob(&proto.ResizeRequest{JobID: id, Add: []string{free}})
	if err == nil || !strings.Contains(err.Error(), "max_user_res.ncpus = 40") {
		t.Errorf("a growth past max_user_res asked of the server: %v, want a refusal naming the limit", err)
	}
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 1 {
		t.Errorf("exec_vnode %q after the refused growth", v)
	}
}

// A shrink starts a scheduling cycle as a job's end does (issue 30):
// with the periodic cycle ten minutes off, the job a balanced shrink
// made room for starts as soon as the shrink is done (pbs_release_nodes
// ends the same way, finishShrink).
func TestShrinkStartsCycle(t *testing.T) {
	t.Parallel()
	c := elasticCluster(t, 2, "scheduling_mode: balanced\nshrink: graceful\nshrink_grace: 2")
	// The periodic cycle ten minutes off: the 2 s one already timed
	// comes once more, then none.
	timed := strings.Count(c.ServerLog(), "command=time")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 600")
	waitFor(t, "the last 2 s periodic cycle", 20*time.Second, func() bool { return strings.Count(c.ServerLog(), "command=time") > timed })
	// It traps its resize signal and keeps its chunks: the shrink is done
	// once the grace is over.
	// n2 is offline until the job has set its trap: a resize signal
	// before it would end the job (TestElasticJobGrows).
	c.MustRun("pbsnodes", "-o", "n2")
	ready := filepath.Join(c.Home, "ready")
	id := c.Submit("#!/bin/sh\ntrap '' USR1\ntouch "+ready+"\nsleep 300\n", "-l", "select=1-2:ncpus=1", "-l", "place=scatter", "-W", "resize_signal=USR1")
	waitFor(t, "the job to trap its resize signal", 20*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
	c.MustRun("pbsnodes", "-r", "n2")
	c.MustRun("qmgr", "-c", "set server scheduling = True") // a cycle now: none is timed
	waitFor(t, "the elastic job on both nodes", 60*time.Second, func() bool {
		v, _ := c.JobAttr(id, "exec_vnode")
		return strings.Count(v, "(") == 2
	})
	waiting := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1")
	start := time.Now()
	c.WaitJobState(waiting, "R", 30*time.Second)
	t.Logf("the job a shrink made room for started %v after its submission", time.Since(start).Round(time.Millisecond))
	if v := attr(t, c, id, "exec_vnode"); strings.Count(v, "(") != 1 {
		t.Errorf("the elastic job holds %q, want one chunk", v)
	}
	c.MustRun("qdel", id, waiting)
}
