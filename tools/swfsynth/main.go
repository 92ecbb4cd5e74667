package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

func main() {
	jobs := flag.Int("jobs", 232000, "number of jobs")
	procs := flag.Int("procs", 1152, "processors of the machine")
	seed := flag.Uint64("seed", 7, "random seed")
	flag.Parse()
	if *jobs < 1 || *procs < 512 {
		fmt.Fprintln(os.Stderr, "swfsynth: -jobs must be at least 1 and -procs at least 512")
		os.Exit(2)
	}
	r := rand.New(rand.NewPCG(*seed, *seed))
	sizes := []int{1, 1, 1, 2, 4, 8, 8, 16, 16, 32, 32, 64, 128, 256, 512}
	type job struct{ procs, run, wall int }
	js := make([]job, *jobs)
	work := 0.0
	for i := range js {
		p := sizes[r.IntN(len(sizes))]
		run := int(min(max(math.Exp(r.NormFloat64()*1.6+6.5), 1), 172800))
		// Users ask round times: up to the next 5 minutes below an hour,
		// the next half hour above.
		wall := int(float64(run)*(1+2*r.Float64())) + 60
		if step := 300; wall < 3600 {
			wall = (wall + step - 1) / step * step
		} else {
			wall = (wall + 1799) / 1800 * 1800
		}
		js[i] = job{p, run, wall}
		work += float64(p * run)
	}
	mean := work / float64(len(js))
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "; Version: 2.2\n; Computer: swfsynth deep queue (seed %d)\n; MaxJobs: %d\n; MaxRecords: %d\n; MaxProcs: %d\n; MaxNodes: %d\n",
		*seed, *jobs, *jobs, *procs, *procs)
	t := 0.0
	for i, j := range js {
		load := 0.95 + 0.3*math.Sin(t/(5*86400)*2*math.Pi)
		t += r.ExpFloat64() / (load * float64(*procs) / mean)
		// job submit wait run used cpu mem req-procs req-time req-mem status uid gid exe queue partition preceding think
		fmt.Fprintf(w, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 -1 1 1 -1 -1\n", i+1, int64(t), j.run, j.procs, j.procs, j.wall, 1+(i+1)%300)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "swfsynth:", err)
		os.Exit(1)
	}
}
