package trace

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func gz(s string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(s))
	z.Close()
	return b.Bytes()
}

// writeSWF writes w back as SWF (fields not kept as -1; a workload read
// without UnixStartTime gets one, which reads back the same), the extended
// format for jobs with a node spec.
func writeSWF(w *Workload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "; UnixStartTime: %d\n", w.UnixStartTime) // also 0: no Unix-time guess on reading back
	if w.MaxProcs != 0 {
		fmt.Fprintf(&b, "; MaxProcs: %d\n", w.MaxProcs)
	}
	if w.MaxNodes != 0 {
		fmt.Fprintf(&b, "; MaxNodes: %d\n", w.MaxNodes)
	}
	for _, j := range w.Jobs {
		queue := j.Queue
		if queue == "" || j.NodeSpec != "" {
			queue = "-1"
		}
		fmt.Fprintf(&b, "%d %d %d %d %d -1 -1 %d %d %d %d %s %s -1 %s %d -1 -1",
			j.ID, j.Submit, j.Wait, j.Run, j.Procs, j.ReqProcs, j.ReqTime, j.ReqMem, j.Status, j.User, j.Group, queue, j.Partition)
		if j.NodeSpec != "" {
			fmt.Fprintf(&b, " {} %s %s", j.Queue, j.NodeSpec)
		} else if j.MinProcs > 0 {
			fmt.Fprintf(&b, " %d %d", j.MinProcs, j.MaxProcs)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzReadSWF: any input is an error or a workload whose jobs have the
// fields of a job line, which Normalize turns into a replayable workload
// and which writes back and reads again to the same jobs.
func FuzzReadSWF(f *testing.F) {
	f.Add([]byte(swfSample))
	f.Add(gz(swfSample))
	f.Add([]byte("0 1356996147 0 56011 64 1 1024 64 86400 68719476736 1 62 1 1 -1 1 1 1 {1241,1241} q_1d 1:ppn=64#excl\n" +
		"4185 1359980916 1 -1359980917 1 1 1024 1 0 419430400 1 1229 1 1 -1 1 1 1 {1284} q_4d 1:ppn=1\n"))
	f.Add([]byte("; MaxProcs: 64\n7 120 -1 600 8 -1 -1 8 900 -1 1 3 1 -1 -1 -1 -1 -1 4 16\n8 130 -1 60 2 -1 -1 2 90 -1 1 3 1 -1 -1 -1 -1 -1 -1 -1\n9 140 -1 60 2 -1 -1 2 90 -1 1 3 1 -1 -1 -1 -1 -1 1 100\n"))
	f.Add([]byte("; MaxProcs: 4\r\n1 0 -1 0 4 12.5 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\r\n2 0 -1 7 -1 -1 -1 5 -1 -1 -1 1 1 -1 -1 -1 -1 -1"))
	f.Fuzz(func(t *testing.T, in []byte) {
		w, err := ReadSWF(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, j := range w.Jobs {
			for _, s := range []string{j.User, j.Group, j.Queue, j.NodeSpec} {
				if strings.ContainsAny(s, " \t\r\n\v\f") {
					t.Fatalf("job %d: field %q", j.ID, s)
				}
			}
			if j.User == "" || j.Group == "" || j.Select != "" || j.PBSID != "" {
				t.Fatalf("job %+v", j)
			}
			if (j.MinProcs != 0 || j.MaxProcs != 0) && (j.MinProcs < 1 || j.MaxProcs < j.MinProcs || j.NodeSpec != "") {
				t.Fatalf("job %d: elastic range %d-%d", j.ID, j.MinProcs, j.MaxProcs)
			}
		}
		again, err := ReadSWF(strings.NewReader(writeSWF(w)))
		if err != nil {
			t.Fatalf("written back: %v\n%s", err, writeSWF(w))
		}
		if len(again.Jobs) != len(w.Jobs) || len(w.Jobs) > 0 && !reflect.DeepEqual(again.Jobs, w.Jobs) ||
			again.MaxProcs != w.MaxProcs || again.MaxNodes != w.MaxNodes || again.UnixStartTime != w.UnixStartTime {
			t.Fatalf("written back and read again:\n%+v\n%+v", again, w)
		}
		n := len(w.Jobs)
		if err := Normalize(w, 64); err != nil {
			t.Fatal(err)
		}
		if len(w.Jobs)+w.Dropped != n {
			t.Fatalf("%d jobs, %d kept, %d dropped", n, len(w.Jobs), w.Dropped)
		}
		checkNormalized(t, w)
	})
}

// FuzzReadAccounting: any input is an error or a workload of jobs numbered
// in submit order with sane fields, which Normalize accepts.
func FuzzReadAccounting(f *testing.F) {
	var l acctLog
	l.rec('Q', "7.srv", "user", "a b", "group", `g"\`, "queue", "workq", "ctime", "1000", "Resource_List.ncpus", "4",
		"Resource_List.walltime", "01:00:00", "Resource_List.mem", "2gb", "Resource_List.select", "2:ncpus=2")
	l.rec('S', "7.srv", "start", "1100", "Resource_List.nodes", "2:ppn=2+n1:ppn=1#excl")
	l.rec('R', "7.srv")
	l.rec('D', "7.srv")
	l.rec('E', "7.srv", "start", "1200", "end", "2000", "Exit_status", "-3", "resources_used.ncpus", "4")
	l.WriteString("; UnixStartTime: 1\n12/21/2024 18:00:00;L;license;floating license hour:0\n")
	f.Add([]byte(l.String()))
	f.Add(gz(l.String()))
	f.Add([]byte(`12/21/2024 17:58:09;E;112461.t;user=v group=m queue=workq ctime=1734800289 qtime=1734800289 ` +
		`start=1734800289 exec_vnode=(t2:ncpus=1:mem=307200kb)+(t2:ncpus=1) Resource_List.mem=600mb Resource_List.ncpus=2 ` +
		`Resource_List.select=2:ncpus=1:mem=300mb Resource_List.walltime=02:00:00 end=1734802095 Exit_status=0 ` +
		`resources_used.diag_messages='{}' run_count=1` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		w, err := ReadAccounting(bytes.NewReader(in))
		if err != nil {
			return
		}
		for i, j := range w.Jobs {
			if j.ID != int64(i+1) || j.PBSID == "" || i > 0 && w.Jobs[i-1].Submit > j.Submit {
				t.Fatalf("job %d: %+v", i, j)
			}
			if j.Submit < -1 || j.Submit >= 0 && w.UnixStartTime < 0 || j.ReqProcs < -1 || j.Procs < -1 ||
				j.ReqTime < -1 || j.ReqMem < -1 || j.Status < -1 || j.Status > 5 {
				t.Fatalf("job %+v", j)
			}
			for _, s := range []string{j.User, j.Group, j.Queue, j.NodeSpec, j.Select, j.PBSID} {
				if strings.ContainsAny(s, "\n\r") {
					t.Fatalf("job %d: field %q", j.ID, s)
				}
			}
		}
		n := len(w.Jobs)
		if err := Normalize(w, 64); err != nil {
			t.Fatal(err)
		}
		if len(w.Jobs)+w.Dropped != n {
			t.Fatalf("%d jobs, %d kept, %d dropped", n, len(w.Jobs), w.Dropped)
		}
		checkNormalized(t, w)
	})
}
