// Command acctsynth writes a synthetic year of accounting logs, as
// pbs_server writes them (internal/accounting.Format), for qacct's
// benchmark: every job's Q, S and E records, from -users users in
// -groups groups over -queues queues and -hosts hosts, -per-day jobs a
// day for -days days ending yesterday.
//
//	go run ./tools/acctsynth -dir /tmp/acct-year -days 365 -per-day 13700
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
)

func main() {
	dir := flag.String("dir", "acct-year", "directory to write the day files into")
	days := flag.Int("days", 365, "days of logs")
	perDay := flag.Int("per-day", 13700, "jobs ending each day (13,700 a day is 5 million a year)")
	users := flag.Int("users", 300, "users")
	groups := flag.Int("groups", 30, "groups")
	queues := flag.Int("queues", 6, "queues")
	hosts := flag.Int("hosts", 500, "hosts")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "acctsynth:", err)
		os.Exit(1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	first := time.Now().Truncate(24*time.Hour).AddDate(0, 0, -*days)
	seq := 1000
	for d := range *days {
		day := first.AddDate(0, 0, d)
		f, err := os.Create(filepath.Join(*dir, day.Format("20060102")))
		if err != nil {
			fmt.Fprintln(os.Stderr, "acctsynth:", err)
			os.Exit(1)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i := range *perDay {
			seq++
			at := day.Add(time.Duration(i) * 24 * time.Hour / time.Duration(*perDay))
			u := r.IntN(*users)
			ncpus := 1 << r.IntN(5)
			wall := 60 + r.IntN(4*3600)
			reqWall := wall + r.IntN(4*3600)
			mem := (64 + r.IntN(8192)) << 10 // kb
			host := fmt.Sprintf("node%04d", r.IntN(*hosts))
			id := fmt.Sprintf("%d.pbs1", seq)
			ctime := at.Unix() - int64(wall) - int64(r.IntN(3600))
			start := at.Unix() - int64(wall)
			head := []accounting.KV{{Key: "user", Value: fmt.Sprintf("user%03d", u)}, {Key: "group", Value: fmt.Sprintf("grp%02d", u%*groups)},
				{Key: "project", Value: "_pbs_project_default"}, {Key: "jobname", Value: "run.sh"}, {Key: "queue", Value: fmt.Sprintf("q%d", r.IntN(*queues))},
				{Key: "ctime", Value: fmt.Sprint(ctime)}, {Key: "qtime", Value: fmt.Sprint(ctime)}, {Key: "etime", Value: fmt.Sprint(ctime)}}
			run := []accounting.KV{{Key: "start", Value: fmt.Sprint(start)}, {Key: "exec_host", Value: fmt.Sprintf("%s/0*%d", host, ncpus)},
				{Key: "exec_vnode", Value: fmt.Sprintf("(%s:ncpus=%d:mem=%dkb)", host, ncpus, 2*mem)}}
			req := []accounting.KV{{Key: "Resource_List.mem", Value: fmt.Sprintf("%dkb", 2*mem)}, {Key: "Resource_List.ncpus", Value: fmt.Sprint(ncpus)},
				{Key: "Resource_List.nodect", Value: "1"}, {Key: "Resource_List.place", Value: "pack"},
				{Key: "Resource_List.select", Value: fmt.Sprintf("1:ncpus=%d:mem=%dkb", ncpus, 2*mem)},
				{Key: "Resource_List.walltime", Value: dur(reqWall)}}
			cput := int(float64(wall*ncpus) * r.Float64())
			end := []accounting.KV{{Key: "session", Value: fmt.Sprint(r.IntN(1 << 22))}, {Key: "end", Value: fmt.Sprint(at.Unix())},
				{Key: "Exit_status", Value: fmt.Sprint(r.IntN(20) / 19)}, {Key: "resources_used.cpupercent", Value: fmt.Sprint(100 * cput / max(wall, 1))},
				{Key: "resources_used.cput", Value: dur(cput)}, {Key: "resources_used.mem", Value: fmt.Sprintf("%dkb", mem)},
				{Key: "resources_used.ncpus", Value: fmt.Sprint(ncpus)}, {Key: "resources_used.vmem", Value: fmt.Sprintf("%dkb", mem+1024)},
				{Key: "resources_used.walltime", Value: dur(wall)}, {Key: "run_count", Value: "1"}}
			qrec := append(append([]accounting.KV{}, head...), req...)
			srec := append(append(append([]accounting.KV{}, head...), run...), req...)
			erec := append(append(append(append([]accounting.KV{}, head...), run...), req...), end...)
			w.WriteString(accounting.Format(time.Unix(ctime, 0).In(day.Location()).Add(0), accounting.Queued, id, qrec))
			w.WriteString(accounting.Format(time.Unix(start, 0), accounting.Started, id, srec))
			w.WriteString(accounting.Format(at, accounting.Ended, id, erec))
		}
		if err := w.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "acctsynth:", err)
			os.Exit(1)
		}
		f.Close()
	}
}

func dur(s int) string { return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60) }
