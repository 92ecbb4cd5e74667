package trace

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

const swfSample = `; Version: 2.2
; Computer: IBM SP2
; UnixStartTime: 843480031
; MaxNodes: 100
; MaxProcs: 100
; Note: uses the EASY scheduler
;       (a continuation line)
; Queue:  0  interactive
; Queue:  1  batch
;
   15   599850 192180   3477    4     -1    -1    4  53940    -1  1  12  12  -1 -1 -1 -1 -1
   16   600022  11940   2488   25  12.5    -1   -1     -1  2048  0  13  13   7  1  2 15 60
`

func TestReadSWF(t *testing.T) {
	t.Parallel()
	w, err := ReadSWF(strings.NewReader(swfSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 15, Submit: 599850, Wait: 192180, Run: 3477, Procs: 4, ReqProcs: 4, ReqTime: 53940, ReqMem: -1,
			Status: 1, User: "12", Group: "12", Partition: -1},
		{ID: 16, Submit: 600022, Wait: 11940, Run: 2488, Procs: 25, ReqProcs: -1, ReqTime: -1, ReqMem: 2048,
			Status: 0, User: "13", Group: "13", Queue: "1", Partition: 2},
	}
	if !reflect.DeepEqual(w.Jobs, want) {
		t.Errorf("jobs\n got %+v\nwant %+v", w.Jobs, want)
	}
	if w.MaxProcs != 100 || w.MaxNodes != 100 || w.UnixStartTime != 843480031 {
		t.Errorf("header: %d procs, %d nodes, start %d", w.MaxProcs, w.MaxNodes, w.UnixStartTime)
	}
	if got := w.Header["Queue"]; got != "0  interactive\n1  batch" {
		t.Errorf("Queue header %q", got)
	}
	if got := w.Header["Computer"]; got != "IBM SP2" {
		t.Errorf("Computer header %q", got)
	}
	if _, ok := w.Header["(a continuation line)"]; ok || len(w.Header) != 7 {
		t.Errorf("header %q", w.Header)
	}
	if w.Jobs[0].User != w.Jobs[0].Group || len(w.Jobs[0].User) != 2 {
		t.Error("user ids not kept")
	}
}

func TestReadSWFInputs(t *testing.T) {
	t.Parallel()
	job := "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
	tests := []struct {
		name, in string
		jobs     int
		start    int64
		submit0  int64
	}{
		{"empty", "", 0, 0, 0},
		{"header only", "; MaxProcs: 4\n", 0, 0, 0},
		{"crlf and tabs", "; MaxProcs: 4\r\n\r\n" + strings.ReplaceAll(job, " ", "\t") + "\r\n", 1, 0, 0},
		{"no final newline", job, 1, 0, 0},
		{"leading blanks", "    " + job + "   \n", 1, 0, 0},
		// Without UnixStartTime, Unix submit times become relative.
		{"unix times", strings.Replace(job, " 0 ", " 1356996147 ", 1) + "\n" +
			strings.Replace(job, " 0 ", " 1356996100 ", 1) + "\n", 2, 1356996100, 47},
		{"relative times", strings.Replace(job, " 0 ", " 315359999 ", 1), 1, 0, 315359999},
		{"unix times with a header", "; UnixStartTime: 5\n" + strings.Replace(job, " 0 ", " 1356996147 ", 1), 1, 5, 1356996147},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := ReadSWF(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Jobs) != tc.jobs || w.UnixStartTime != tc.start {
				t.Fatalf("%d jobs, start %d; want %d, %d", len(w.Jobs), w.UnixStartTime, tc.jobs, tc.start)
			}
			if tc.jobs > 0 && w.Jobs[0].Submit != tc.submit0 {
				t.Errorf("first submit %d, want %d", w.Jobs[0].Submit, tc.submit0)
			}
		})
	}
}

func TestReadSWFGzip(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(swfSample))
	z.Close()
	w, err := ReadSWF(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 2 || w.MaxProcs != 100 {
		t.Fatalf("%d jobs, %d procs", len(w.Jobs), w.MaxProcs)
	}
	if _, err := ReadSWF(bytes.NewReader([]byte{0x1f, 0x8b, 1, 2, 3})); err == nil {
		t.Error("broken gzip data read without error")
	}
}

func TestReadAleaSWF(t *testing.T) {
	t.Parallel()
	in := "0 1356996147 0 56011 64 1 1024 64 86400 68719476736 1 62 1 1 -1 1 1 1 {1241,1241} q_1d 1:ppn=64:x86_64:cl_zewura#excl\n" +
		"1 1356996695 71 1164297 12 1 1024 12 1209600 91268055040 1 101 1 1 -1 1 1 1 {} q_2w 1:ppn=1+3:ppn=2\n"
	w, err := ReadSWF(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 0, Submit: 0, Wait: 0, Run: 56011, Procs: 64, ReqProcs: 64, ReqTime: 86400, ReqMem: 68719476736,
			Status: 1, User: "62", Group: "1", Queue: "q_1d", Partition: 1, NodeSpec: "1:ppn=64:x86_64:cl_zewura#excl"},
		{ID: 1, Submit: 548, Wait: 71, Run: 1164297, Procs: 12, ReqProcs: 12, ReqTime: 1209600, ReqMem: 91268055040,
			Status: 1, User: "101", Group: "1", Queue: "q_2w", Partition: 1, NodeSpec: "1:ppn=1+3:ppn=2"},
	}
	if !reflect.DeepEqual(w.Jobs, want) || w.UnixStartTime != 1356996147 {
		t.Errorf("start %d, jobs\n got %+v\nwant %+v", w.UnixStartTime, w.Jobs, want)
	}
}

// TestReadSWFErrors: a bad line is an error naming its line number and
// what is wrong with it.
func TestReadSWFErrors(t *testing.T) {
	t.Parallel()
	good := "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
	field := func(i int, v string) string {
		f := strings.Fields(good)
		f[i-1] = v
		return strings.Join(f, " ")
	}
	tests := []struct{ name, in, want string }{
		{"17 fields", "; x\n\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", "line 3: 17 fields, want 18"},
		{"19 fields", good + " 1\n", "line 1: 19 fields"},
		{"22 fields", good + " {1} q x y\n", "line 1: more than 21 fields"},
		{"text", "hello\n", "line 1: 1 fields"},
		{"run time", good + "\n" + field(4, "1e3"), `line 2: field 4 (run time): "1e3" is not an integer`},
		{"fraction in submit", field(2, "1.5"), "line 1: field 2 (submit time)"},
		{"fraction in CPU time ok", field(6, "1.5x"), "line 1: field 6 (average CPU time)"},
		{"empty fraction", field(7, "1."), "line 1: field 7 (used memory)"},
		{"overflow", field(1, "9223372036854775808"), "line 1: field 1 (job number)"},
		{"procs out of int32", field(5, "4294967296"), "line 1: field 5 (allocated processors): 4294967296 out of range"},
		{"MaxProcs", "; Version: 2\n; MaxProcs: many\n" + good, `line 2: header MaxProcs: "many" is not a count`},
		{"negative MaxNodes", "; MaxNodes: -1\n", "line 1: header MaxNodes"},
		{"UnixStartTime", "; UnixStartTime: 1.5\n", "line 1: header UnixStartTime"},
		{"node list", good + " 1,2 q 1:ppn=1\n", "line 1: field 19 (node list)"},
		{"node list entry", good + " {1,,2} q 1:ppn=1\n", "line 1: field 19 (node list)"},
		{"long line", good + "\n" + strings.Repeat("1", maxLine+1), "line 2: longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSWF(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadMachines(t *testing.T) {
	t.Parallel()
	ms, err := ReadMachines(strings.NewReader("0\tzewura\t20\t80\t1\t529426432\n\n# comment\n1 zegox 48 12 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Machine{
		{ID: 0, Name: "zewura", Nodes: 20, CPUsPerNode: 80, Speed: 1, MemKB: 529426432},
		{ID: 1, Name: "zegox", Nodes: 48, CPUsPerNode: 12, Speed: 1},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("got %+v", ms)
	}
	for in, want := range map[string]string{
		"0 a 1 1\n":              "line 1: 4 fields",
		"0 a 1 1 1 1 1\n":        "line 1: more than 6 fields",
		"0 a 1 1 1\nx a 1 1 1\n": `line 2: id "x" is not a count`,
		"0 a -1 1 1\n":           `line 1: nodes "-1" is not a count`,
		"0 a 1 0 1\n":            "line 1: a cluster needs at least one node",
		"0 a 1 1 1 12345678901x": `line 1: memory "12345678901x"`,
	} {
		if _, err := ReadMachines(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}
