package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// mpiImpl is one MPI implementation as Debian packages it: its compiler
// wrapper and launcher under their implementation-specific names (the
// plain mpicc and mpirun are whichever one the alternatives chose).
type mpiImpl struct {
	name     string
	mpicc    string
	launcher string
	// args are the launcher's arguments before the program: pbs_tmrsh as
	// its remote shell, the job's node file as its hosts, 4 ranks. The
	// MPI traffic stays on the loopback interface.
	args []string
	env  string // qsub -v
}

var mpiImpls = []mpiImpl{
	{
		name: "OpenMPI", mpicc: "mpicc.openmpi", launcher: "mpirun.openmpi",
		// The test's two nodes are one host: Open MPI's shared-memory
		// transport (vader) names its segments in /dev/shm by host name
		// and local rank, so ranks of the two nodes would share them;
		// TCP over the loopback interface it is.
		args: []string{"--mca", "plm_rsh_agent", "pbs_tmrsh",
			"--mca", "oob_tcp_if_include", "lo", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo",
			"--hostfile", `"$PBS_NODEFILE"`, "-np", "4"},
		// Tests' jobs run as root, which Open MPI refuses unless told.
		env: "OMPI_ALLOW_RUN_AS_ROOT=1,OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
	},
	{
		name: "MPICH", mpicc: "mpicc.mpich", launcher: "mpiexec.mpich",
		args: []string{"-launcher", "rsh", "-launcher-exec", "pbs_tmrsh", "-iface", "lo",
			"-f", `"$PBS_NODEFILE"`, "-n", "4"},
	},
}

// Real MPI, unchanged: Debian's Open MPI and MPICH launch a 4-rank hello
// across two moms with pbs_tmrsh as their remote shell; every rank runs
// in a task (its launcher's daemon started through pbs_tmrsh), two under
// each mom, the ranks reach each other (an all-reduce), and the launcher
// exits 0.
func TestMPI(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root (the moms run jobs as their owners)")
	}
	for _, impl := range mpiImpls {
		t.Run(impl.name, func(t *testing.T) {
			mpicc, err1 := exec.LookPath(impl.mpicc)
			launcher, err2 := exec.LookPath(impl.launcher)
			_, err3 := exec.LookPath("gcc") // what both compiler wrappers run
			if err1 != nil || err2 != nil || err3 != nil {
				t.Skipf("%s is not installed (%s, %s, gcc: scripts/test.sh installs them as root on Debian)", impl.name, impl.mpicc, impl.launcher)
			}
			dir := t.TempDir()
			hello := filepath.Join(dir, "hello")
			if out, err := exec.Command(mpicc, "-o", hello, filepath.Join("testdata", "mpi_hello.c")).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", impl.mpicc, err, out)
			}
			c, n1, n2 := twoMoms(t)
			script := "#!/bin/sh\n" + launcher + " " + strings.Join(impl.args, " ") + " " + hello + "\necho \"launcher=$?\"\n"
			args := []string{"-N", "mpi", "-j", "oe", "-l", "select=2:ncpus=2:mpiprocs=2", "-l", "place=scatter"}
			if impl.env != "" {
				args = append(args, "-v", impl.env)
			}
			start := time.Now()
			id := c.Submit(script, args...)
			c.MustRun("qrun", id)
			c.WaitJobState(id, "F", 45*time.Second)
			out := readFile(t, filepath.Join(c.Home, "mpi.o"+strconv.Itoa(testcluster.Seq(id))))
			t.Logf("%s ran in %v:\n%s", impl.name, time.Since(start).Round(time.Millisecond), out)
			if !strings.Contains(out, "launcher=0\n") {
				t.Errorf("%s did not exit 0:\n%s", impl.launcher, out)
			}
			perMom := map[string]int{}
			ranks := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^hello rank (\d) of 4 sum 6 under (task|job) (\S+)$`).FindAllStringSubmatch(out, -1) {
				ranks[m[1]] = m[2] == "task"
				for _, mom := range []*testcluster.Mom{n1, n2} {
					if strings.HasPrefix(m[3], filepath.Join(mom.Home, "mom_priv", "jobs")+"/") {
						perMom[mom.Name]++
					}
				}
			}
			inTasks := 0
			for _, task := range ranks {
				if task {
					inTasks++
				}
			}
			if len(ranks) != 4 || inTasks != 4 || perMom["n1"] != 2 || perMom["n2"] != 2 {
				t.Errorf("want ranks 0-3 in tasks, two under each mom; got ranks (in a task) %v, per mom %v:\n%s\nn1:\n%s\nn2:\n%s", ranks, perMom, out, n1.Log(), n2.Log())
			}
			if st := attr(t, c, id, "Exit_status"); st != "0" {
				t.Errorf("Exit_status %s", st)
			}
		})
	}
}
