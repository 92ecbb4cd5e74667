package integration

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cgroup"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// GPUs without a GPU: the test gives the mom a device list ($gpus) of
// its own, files or, with root, character devices of its own making.

// gpuScript reports the job's CUDA_VISIBLE_DEVICES and whether it can
// open each of paths, then waits to be deleted.
func gpuScript(paths []string) string {
	s := "#!/bin/sh\necho \"cvd=$CUDA_VISIBLE_DEVICES\"\n"
	for _, p := range paths {
		s += "if out=$(head -c1 " + p + " 2>&1 >/dev/null); then echo \"open " + filepath.Base(p) + " ok\"; else echo \"open " + filepath.Base(p) + " failed: $out\"; fi\n"
	}
	return s + "echo done\nsleep 300\n"
}

// gpuCluster is a cluster whose one mom, n1, has the GPUs paths (and
// confines its jobs as cgroups says, if not ""), with 8 cpus so that
// only GPUs are short, and pbs_sched running.
func gpuCluster(t *testing.T, paths []string, cgroups string) (*testcluster.Cluster, *testcluster.Mom) {
	t.Helper()
	opts := testcluster.MomOptions{Config: "$gpus " + strings.Join(paths, ",") + "\n"}
	if cgroups != "" {
		opts.Files = map[string]string{cgroup.ConfigFile: cgroups}
	}
	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	m := c.AddMom("n1", opts)
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 8")
	waitFor(t, "n1 to report its 2 GPUs", 20*time.Second, func() bool { return nodeAttr(c, "n1", "resources_available.ngpus") == "2" })
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.StartScheduler("pbs_sched")
	return c, m
}

// runGPUJobs runs two jobs of one GPU each on n1 and returns their ids
// and output files, once each has said what it sees.
func runGPUJobs(t *testing.T, c *testcluster.Cluster, paths []string) (ids, outs []string) {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "out"+string(rune('0'+i)))
		id := c.Submit(gpuScript(paths), "-l", "select=1:ncpus=1:ngpus=1", "-o", out)
		// One at a time: the first takes the lowest index.
		c.WaitJobState(id, "R", 30*time.Second)
		waitFor(t, id+" to say what it sees", 20*time.Second, func() bool {
			b, _ := os.ReadFile(out)
			return strings.Contains(string(b), "done")
		})
		ids, outs = append(ids, id), append(outs, out)
	}
	return ids, outs
}

// A node with 2 GPUs: the first job of ngpus=1 gets GPU 0, the second,
// at the same time, GPU 1 (CUDA_VISIBLE_DEVICES, exec_gpus); a third
// waits for one to end and then gets the freed one, even when the mom
// restarted meanwhile; a job asking for 3
// never runs: it stays queued, saying so. Without cgroups the others are
// not hidden.
func TestGPUsAssigned(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"gpu0", "gpu1"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	os.Chmod(dir, 0o755)
	c, m := gpuCluster(t, paths, "")
	ids, outs := runGPUJobs(t, c, paths)
	for i, id := range ids {
		got := readFile(t, outs[i])
		want := "cvd=" + string(rune('0'+i)) + "\nopen gpu0 ok\nopen gpu1 ok\n"
		if !strings.HasPrefix(got, want) {
			t.Errorf("job %d (%s) output %q, want %q first", i, id, got, want)
		}
		wantGPUs := "n1-gpu/" + string(rune('0'+i))
		waitFor(t, id+"'s exec_gpus", 20*time.Second, func() bool { return attr(t, c, id, "exec_gpus") == wantGPUs })
	}
	if f := c.MustRun("qstat", "-f", ids[1]); !strings.Contains(f, "exec_gpus = n1-gpu/1") {
		t.Errorf("qstat -f shows no exec_gpus:\n%s", f)
	}
	third := c.Submit("#!/bin/sh\necho \"cvd=$CUDA_VISIBLE_DEVICES\"\n", "-l", "select=1:ncpus=1:ngpus=1", "-o", filepath.Join(dir, "third"))
	tooMany := c.Submit("#!/bin/sh\ntrue\n", "-l", "select=1:ncpus=1:ngpus=3", "-o", "/dev/null")
	cm := waitAttr(t, c, tooMany, "comment", func(v string) bool { return strings.HasPrefix(v, "Can Never Run: ") }, 30*time.Second)
	if !strings.Contains(cm, "ngpus") || attr(t, c, tooMany, "job_state") != "Q" {
		t.Errorf("the job of 3 GPUs on a node of 2: comment %q, state %s (want it queued, saying it can never run)", cm, attr(t, c, tooMany, "job_state"))
	}
	c.MustRun("qdel", tooMany)
	if st := attr(t, c, third, "job_state"); st != "Q" {
		t.Errorf("a third job of one GPU while both are taken: state %s", st)
	}
	// A restarted mom holds the GPUs of the jobs still running: the
	// second job's end frees GPU 1, not the lowest.
	m.Kill(syscall.SIGKILL)
	m.WaitDown(10 * time.Second)
	m.Start()
	waitFor(t, "the mom to listen again", 20*time.Second, func() bool {
		conn, err := net.Dial("tcp", "localhost:"+strconv.Itoa(m.Port))
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	c.MustRun("qdel", ids[1])
	c.WaitJobState(third, "F", 60*time.Second)
	if got := readFile(t, filepath.Join(dir, "third")); got != "cvd=1\n" {
		t.Errorf("the third job, after the second's end and a mom restart, sees %q", got)
	}
	c.MustRun("qdel", ids[0])
	c.WaitJobState(ids[0], "F", 60*time.Second)
}

// With the devices controller (v1), a job can open its own GPU's device
// and not the other's (EPERM).
func TestGPUsHiddenByDevicesCgroup(t *testing.T) {
	testcluster.Exclusive(t, testcluster.HostCgroups)
	conf, tree := cgroupTree(t, "hierarchy v1\ncontrollers devices\n")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	// /dev/full and /dev/zero stand for two GPUs: distinct character
	// devices that read without a driver.
	var paths []string
	for i, minor := range []int{7, 5} {
		p := filepath.Join(dir, "gpu"+string(rune('0'+i)))
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
			t.Skipf("cannot make a device node: %v", err)
		}
		os.Chmod(p, 0o666)
		paths = append(paths, p)
	}
	c, _ := gpuCluster(t, paths, conf)
	ids, outs := runGPUJobs(t, c, paths)
	for i, id := range ids {
		got := readFile(t, outs[i])
		own, other := "gpu0", "gpu1"
		if i == 1 {
			own, other = other, own
		}
		if !strings.Contains(got, "cvd="+string(rune('0'+i))+"\n") || !strings.Contains(got, "open "+own+" ok\n") ||
			!strings.Contains(got, "open "+other+" failed: ") || !strings.Contains(got, "Operation not permitted") {
			t.Errorf("job %d (%s): %q; want its own GPU open and the other's refused (EPERM)", i, id, got)
		}
	}
	for _, id := range ids {
		c.MustRun("qdel", id)
	}
	for _, id := range ids {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	waitFor(t, "no cgroup left", 10*time.Second, func() bool { return len(cgroupIDs(t, tree)) == 0 })
}
