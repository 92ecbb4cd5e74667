package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// tasksExperiment measures task launch inside a job on two moms of this
// host: n calls of pbsdsh true (a task on each of the two nodes, the
// second through the sister's mom) and of pbs_tmrsh n2 true, each timed
// in the job by bash's clock (no process started to read it).
func tasksExperiment(n int) {
	tb := &benchTB{}
	defer tb.cleanup()
	cl := testcluster.New(tb, testcluster.Options{ServerArgs: []string{"-log-level", "warn"}})
	cl.AddMom("n1", testcluster.MomOptions{})
	cl.AddMom("n2", testcluster.MomOptions{})
	loop := filepath.Join(cl.Home, "tasks.sh")
	body := `for what in "pbsdsh true" "pbs_tmrsh n2 true"; do
	$what || echo "failed: $what"
	for ((i = 0; i < ` + strconv.Itoa(n) + `; i++)); do
		s=$EPOCHREALTIME
		$what || echo "failed: $what"
		e=$EPOCHREALTIME
		echo "${what%% *} ${s/./} ${e/./}"
	done
done
`
	if err := os.WriteFile(loop, []byte(body), 0o644); err != nil {
		log.Fatal(err)
	}
	id := cl.Submit("#!/bin/sh\nexec bash "+loop+"\n", "-N", "tasks", "-j", "oe", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	cl.MustRun("qrun", id)
	cl.WaitJobState(id, "F", time.Duration(n)*2*time.Second+30*time.Second)
	out, err := os.ReadFile(filepath.Join(cl.Home, "tasks.o"+strconv.Itoa(testcluster.Seq(id))))
	if err != nil {
		log.Fatal(err)
	}
	times := map[string][]time.Duration{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "failed:" || len(f) != 3 {
			log.Fatalf("job output: %s", out)
		}
		s, err1 := strconv.ParseInt(f[1], 10, 64)
		e, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			log.Fatalf("job output: %s", out)
		}
		times[f[0]] = append(times[f[0]], time.Duration(e-s)*time.Microsecond)
	}
	for _, what := range []string{"pbsdsh", "pbs_tmrsh"} {
		d := times[what]
		if len(d) != n {
			log.Fatalf("%d timings of %s, want %d: %s", len(d), what, n, out)
		}
		sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
		ms := func(x time.Duration) string { return strconv.FormatFloat(float64(x)/1e6, 'f', 1, 64) }
		fmt.Printf("%s (2 moms) over %d calls: p50 %s ms, p90 %s ms, max %s ms\n", what, n, ms(d[n/2]), ms(d[n*9/10]), ms(d[n-1]))
	}
}
