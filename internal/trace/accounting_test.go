package trace

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
)

// acctLog builds a log the way pbs_server writes it.
type acctLog struct{ strings.Builder }

func (l *acctLog) rec(kind byte, id string, kvs ...string) *acctLog {
	var pairs []accounting.KV
	for i := 0; i+1 < len(kvs); i += 2 {
		pairs = append(pairs, accounting.KV{Key: kvs[i], Value: kvs[i+1]})
	}
	l.WriteString(accounting.Format(time.Date(2024, 12, 21, 17, 58, 9, 0, time.UTC), kind, id, pairs))
	return l
}

func TestReadAccounting(t *testing.T) {
	t.Parallel()
	q := []string{"user", "alice smith", "group", `g"1\`, "queue", "workq", "jobname", "my job",
		"ctime", "1000", "qtime", "1005", "etime", "1005",
		"Resource_List.ncpus", "4", "Resource_List.walltime", "01:00:00", "Resource_List.mem", "2gb",
		"Resource_List.select", "2:ncpus=2:mem=1gb"}
	var l acctLog
	l.WriteString("; UnixStartTime: 1000\n")
	l.rec('Q', "7.srv", q...)
	l.rec('Q', "8.srv", "user", "bob", "queue", "workq", "ctime", "990", "Resource_List.select", "3:mem=1gb",
		"Resource_List.nodes", "1:ppn=4")
	l.WriteString("12/21/2024 18:00:00;L;license;floating license hour:0 day:0 month:0 max:0\n")
	l.rec('S', "7.srv", append(q, "start", "1100", "exec_host", "n1/0*4", "resource_assigned.ncpus", "4")...)
	l.rec('E', "7.srv", append(q, "start", "1100", "end", "2900", "Exit_status", "3", "resources_used.ncpus", "4",
		"resources_used.diag_messages", "'{}'", "run_count", "1")...)
	l.rec('Q', "9.srv", "user", "carol", "ctime", "1000", "Resource_List.nodes", "2:ppn=3+1", "Resource_List.walltime", "600")
	l.rec('D', "9.srv", "requestor", "carol@h")
	l.rec('D', "10.srv", "requestor", "root@h") // never queued here: ignored
	l.rec('Q', "11.srv", "user", "dave", "ctime", "1001", "Resource_List.ncpus", "1")
	l.rec('S', "11.srv", "start", "1500")
	l.rec('R', "11.srv")
	l.rec('S', "11.srv", "start", "1600")
	l.rec('D', "11.srv", "requestor", "dave@h")
	l.rec('E', "11.srv", "start", "1600", "end", "1700", "Exit_status", "271")
	l.rec('S', "12.srv", "user", "erin", "ctime", "3000", "Resource_List.ncpus", "2", "start", "3010") // still running
	l.rec('E', "13.srv", "user", "frank", "ctime", "500", "start", "510", "end", "520", "Exit_status", "0")

	w, err := ReadAccounting(strings.NewReader(l.String()))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 1, PBSID: "13.srv", Submit: 0, Wait: 10, Run: 10, Procs: -1, ReqProcs: -1, ReqTime: -1, ReqMem: -1,
			User: "frank", Partition: -1, Status: 1},
		{ID: 2, PBSID: "8.srv", Submit: 490, Wait: -1, Run: -1, Procs: -1, ReqProcs: 3, ReqTime: -1, ReqMem: -1,
			User: "bob", Queue: "workq", Partition: -1, Status: -1, Select: "3:mem=1gb", NodeSpec: "1:ppn=4"},
		{ID: 3, PBSID: "7.srv", Submit: 500, Wait: 100, Run: 1800, Procs: 4, ReqProcs: 4, ReqTime: 3600, ReqMem: 2 << 30,
			User: "alice smith", Group: `g"1\`, Queue: "workq", Partition: -1, Status: 0, ExitStatus: 3,
			Select: "2:ncpus=2:mem=1gb"},
		{ID: 4, PBSID: "9.srv", Submit: 500, Wait: -1, Run: -1, Procs: -1, ReqProcs: 7, ReqTime: 600, ReqMem: -1,
			User: "carol", Partition: -1, Status: 5, NodeSpec: "2:ppn=3+1"},
		{ID: 5, PBSID: "11.srv", Submit: 501, Wait: 599, Run: 100, Procs: -1, ReqProcs: 1, ReqTime: -1, ReqMem: -1,
			User: "dave", Partition: -1, Status: 5, ExitStatus: 271},
		{ID: 6, PBSID: "12.srv", Submit: 2500, Wait: 10, Run: -1, Procs: -1, ReqProcs: 2, ReqTime: -1, ReqMem: -1,
			User: "erin", Partition: -1, Status: -1},
	}
	if w.UnixStartTime != 500 {
		t.Errorf("UnixStartTime %d", w.UnixStartTime)
	}
	if len(w.Jobs) != len(want) {
		t.Fatalf("%d jobs: %+v", len(w.Jobs), w.Jobs)
	}
	for i := range want {
		if !reflect.DeepEqual(w.Jobs[i], want[i]) {
			t.Errorf("job %d\n got %+v\nwant %+v", i, w.Jobs[i], want[i])
		}
	}
	if err := Normalize(w, 8); err != nil || len(w.Jobs) != 2 || w.Dropped != 4 {
		t.Errorf("normalized: %v, %d jobs, %d dropped", err, len(w.Jobs), w.Dropped)
	}
}

// TestReadAccountingRoundTrip: whatever value pbs_server writes reads
// back as written (line breaks become blanks, as Format does).
func TestReadAccountingRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"plain", "two words", `q"uote`, `back\slash`, `\"`, `"`, `\`, "tab\there", " lead", "trail ", "", "a=b", "'single'", "'", "'a b'", "x\ny"} {
		var l acctLog
		l.rec('Q', "1.s", "user", v, "group", v, "queue", v, "ctime", "5")
		w, err := ReadAccounting(strings.NewReader(l.String()))
		if err != nil {
			t.Errorf("%q: %v (%q)", v, err, l.String())
			continue
		}
		want := strings.ReplaceAll(v, "\n", " ")
		if j := w.Jobs[0]; j.User != want || j.Group != want || j.Queue != want {
			t.Errorf("%q reads back as %q %q %q", v, j.User, j.Group, j.Queue)
		}
	}
}

func TestReadAccountingErrors(t *testing.T) {
	t.Parallel()
	q := "12/21/2024 17:58:09;Q;1.s;user=a ctime=5"
	tests := []struct{ name, in, want string }{
		{"not a record", q + "\nhello\n", "line 2: not an accounting record"},
		{"one field", "12/21/2024 17:58:09\n", "line 1: not an accounting record"},
		{"long type", "12/21/2024 17:58:09;QQ;1.s;user=a\n", "line 1: not an accounting record"},
		{"bad date", "21/12/2024 17:58:09;Q;1.s;user=a\n", `line 1: bad date "21/12/2024 17:58:09"`},
		{"no id", "12/21/2024 17:58:09;Q;;user=a\n", "line 1: Q record without a job id"},
		{"unterminated", q + "\n" + `12/21/2024 17:58:09;E;1.s;jobname="x end=5` + "\n", "line 2: jobname: unterminated quoted value"},
		{"not key=value", q + " junk\n", `line 1: want key=value, got "junk"`},
		{"ctime", "12/21/2024 17:58:09;Q;1.s;ctime=yesterday\n", `line 1: ctime="yesterday": not a number of seconds`},
		{"negative start", q + "\n12/21/2024 17:58:09;S;1.s;start=-5\n", "line 2: start="},
		{"ncpus", q + " Resource_List.ncpus=two\n", `line 1: Resource_List.ncpus="two": not a count`},
		{"ncpus range", q + " Resource_List.ncpus=99999999999\n", "line 1: Resource_List.ncpus="},
		{"select", q + " Resource_List.select=2:ncpus=x\n", "line 1: Resource_List.select: "},
		{"nodes", q + " Resource_List.nodes=0:ppn=1\n", "line 1: Resource_List.nodes: "},
		{"walltime", q + " Resource_List.walltime=1:99:00\n", "line 1: Resource_List.walltime: "},
		{"mem", q + " Resource_List.mem=lots\n", "line 1: Resource_List.mem: "},
		{"exit", q + "\n12/21/2024 17:58:09;E;1.s;Exit_status=ok\n", `line 2: Exit_status="ok"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadAccounting(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
