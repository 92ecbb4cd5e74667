package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// Scripts in the shapes workflow tools submit (reference/client-contract.md
// §2), through the real qsub: Galaxy's blank line after the shebang,
// batchspawner's bare "#PBS " line, Nextflow's hidden ".command.run",
// options attached to their letters, a command-line option over a
// directive, an "-o dir/" (dask), and the script deleted the moment qsub
// returns (dask does): each job runs what was submitted, named and placed
// as asked.
func TestQsubScriptShapes(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	c.StartScheduler("pbs_sched")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, ".command.run")
	body := "#!/bin/bash\n\n#PBS -N galaxy\n#PBS \n#PBS -l walltime=0:5:0\n#PBS -q workq\n" +
		"echo \"name=$PBS_JOBNAME bash=$BASH_VERSION\"\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(c.MustRun("qsub", "-joe", "-o", dir+"/", "-Nshapes", "-lselect=1:ncpus=1", script))
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	c.WaitJobState(id, "F", 30*time.Second)
	for name, want := range map[string]string{
		"Job_Name": "shapes", "Resource_List.walltime": "00:05:00", "Resource_List.select": "1:ncpus=1",
		"Join_Path": "oe", "Exit_status": "0", "queue": "workq",
	} {
		if got, _ := c.JobAttr(id, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	out, err := os.ReadFile(filepath.Join(dir, "shapes.o"+strings.SplitN(id, ".", 2)[0]))
	if err != nil || !strings.HasPrefix(string(out), "name=shapes bash=") || strings.HasPrefix(string(out), "name=shapes bash=\n") {
		t.Errorf("the job's output (run by bash, its #! line, from the spooled script): %q, %v", out, err)
	}
}
