package display

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

func TestJobTable(t *testing.T) {
	t.Parallel()
	longID := job("123456789012.a-very-long-server.example.com",
		"Job_Name", "exactly16chars__", "Job_Owner", "averyveryverylonguser@h",
		"resources_used.cput", "1234:00:00", "job_state", "R", "queue", "averyveryverylongqueue@srv")
	spaced := job("4.srv", "Job_Name", "two words", "Job_Owner", "dave@h", "job_state", "H", "queue", "workq")
	tests := []struct {
		name string
		jobs []proto.Status
		opt  func() Options
		want string
	}{
		{"pbspro", threeJobs(), pro, lines(
			"Job id            Name             User              Time Use S Queue",
			"----------------  ---------------- ----------------  -------- - -----",
			"1.srv             STDIN            alice             00:00:00 R workq           |",
			"2.srv             averyveryverylo* bob                      0 Q workq           |",
			"3.srv             sleep            carol             00:01:02 F workq           |",
		)},
		{"torque shows F as C and cuts names at the front", threeJobs(), torque, lines(
			"Job ID                    Name             User            Time Use S Queue",
			"------------------------- ---------------- --------------- -------- - -----",
			"1.srv                      STDIN            alice           00:00:00 R workq          |",
			"2.srv                      ...rylongjobname bob                    0 Q workq          |",
			"3.srv                      sleep            carol           00:01:02 C workq          |",
		)},
		{"pbspro wide", threeJobs(), func() Options { o := pro(); o.Wide = true; return o }, lines(
			"Job id                         Name            User             Time Use S Queue",
			"-----------------------------  --------------- ---------------  -------- - ---------------",
			"1.srv                          STDIN           alice            00:00:00 R workq          |",
			"2.srv                          averyveryveryl* bob                     0 Q workq          |",
			"3.srv                          sleep           carol            00:01:02 F workq          |",
		)},
		{"pbspro truncation marks", []proto.Status{longID}, pro, lines(
			"Job id            Name             User              Time Use S Queue",
			"----------------  ---------------- ----------------  -------- - -----",
			"123456789012.a-v* exactly16chars_* averyveryverylo*  1234:00* R averyveryverylo*",
		)},
		{"torque truncation", []proto.Status{longID}, torque, lines(
			"Job ID                    Name             User            Time Use S Queue",
			"------------------------- ---------------- --------------- -------- - -----",
			"123456789012.a-very-long-serv exactly16chars__ averyveryverylo 1234:00: R averyveryverylo",
		)},
		{"whitespace never splits a column", []proto.Status{spaced}, pro, lines(
			"Job id            Name             User              Time Use S Queue",
			"----------------  ---------------- ----------------  -------- - -----",
			"4.srv             two_words        dave                     0 H workq           |",
		)},
		{"no jobs prints nothing", nil, pro, ""},
		{"server comment above the header", []proto.Status{queuedJob()}, func() Options {
			o := pro()
			o.ServerComment = "maintenance at 5"
			return o
		}, lines(
			"maintenance at 5",
			"Job id            Name             User              Time Use S Queue",
			"----------------  ---------------- ----------------  -------- - -----",
			"2.srv             averyveryverylo* bob                      0 Q workq           |",
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, func(b *bytes.Buffer) error { return JobTable(b, tt.jobs, tt.opt()) })
			check(t, got, tt.want)
		})
	}
}

// TestJobTableColumns checks what clients rely on rather than exact text:
// column 1 is the canonical id, column 5 the state, and no field is empty.
func TestJobTableColumns(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{pro(), torque()} {
		got := render(t, func(b *bytes.Buffer) error { return JobTable(b, threeJobs(), o) })
		rows := strings.Split(strings.TrimSuffix(got, "\n"), "\n")[2:]
		wantState := map[string]string{"1.srv": "R", "2.srv": "Q", "3.srv": "F"}
		if o.torque() {
			wantState["3.srv"] = "C"
		}
		for _, r := range rows {
			f := strings.Fields(r)
			if len(f) != 6 {
				t.Fatalf("%s: row %q has %d fields, want 6", o.Personality, r, len(f))
			}
			if f[4] != wantState[f[0]] {
				t.Errorf("%s: state of %s = %q, want %q", o.Personality, f[0], f[4], wantState[f[0]])
			}
		}
	}
}

func TestJobTableDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	jobs := threeJobs()
	if err := JobTable(&bytes.Buffer{}, jobs, torque()); err != nil {
		t.Fatal(err)
	}
	if v, _ := jobs[2].Get("job_state"); v != "F" {
		t.Fatalf("input job_state changed to %q", v)
	}
	if _, ok := jobs[2].Get("Exit_status"); !ok {
		t.Fatal("input Exit_status renamed")
	}
}

func TestAltJobTable(t *testing.T) {
	t.Parallel()
	withNodes := runningJob()
	withNodes.Attrs = append(withNodes.Attrs, attr("comment", "Job run at Mon Jan 01 at 00:01 on (node01:ncpus=2)"))
	tests := []struct {
		name string
		jobs []proto.Status
		opt  func() Options
		want string
	}{
		{"pbspro", []proto.Status{runningJob(), queuedJob()}, pro, lines(
			"",
			"srv: |",
			"                                                            Req'd  Req'd   Elap",
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
			"1.srv           alice    workq    STDIN        4242   1   2    1gb 01:00 R 00:00",
			"2.srv           bob      workq    averyvery*    --   --   1    --    --  Q   -- |",
		)},
		{"pbspro -n -s", []proto.Status{withNodes, queuedJob()}, func() Options {
			o := pro()
			o.Nodes, o.Comments, o.ServerComment = true, true, "busy"
			return o
		}, lines(
			"",
			"srv: busy",
			"                                                            Req'd  Req'd   Elap",
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
			"1.srv           alice    workq    STDIN        4242   1   2    1gb 01:00 R 00:00",
			"   node01/0*2",
			"   Job run at Mon Jan 01 at 00:01 on (node01:ncpus=2)",
			"2.srv           bob      workq    averyvery*    --   --   1    --    --  Q   -- |",
			"    -- |",
			"    -- |",
		)},
		{"pbspro -n -1 keeps nodes on the row", []proto.Status{withNodes}, func() Options {
			o := pro()
			o.Nodes, o.OneLine = true, true
			return o
		}, lines(
			"",
			"srv: |",
			"                                                            Req'd  Req'd   Elap",
			"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
			"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
			"1.srv           alice    workq    STDIN        4242   1   2    1gb 01:00 R 00:00 node01/0*2",
		)},
		{"pbspro wide", []proto.Status{runningJob()}, func() Options { o := pro(); o.Wide = true; return o }, lines(
			"",
			"srv: |",
			strings.Repeat(" ", 99)+"Req'd  Req'd   Elap",
			"Job ID                         Username        Queue           Jobname         SessID   NDS  TSK   Memory Time  S Time",
			"------------------------------ --------------- --------------- --------------- -------- ---- ----- ------ ----- - -----",
			"1.srv                          alice           workq           STDIN               4242    1     2    1gb 01:00 R 00:00",
		)},
		{"torque -n -s", []proto.Status{withNodes, finishedJob()}, func() Options {
			o := torque()
			o.Nodes, o.Comments = true, true
			return o
		}, lines(
			"",
			"srv: |",
			strings.Repeat(" ", 82)+"Req'd       Req'd       Elap",
			"Job ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory      Time    S   Time",
			"----------------------- ----------- -------- ---------------- ------ ----- ------ --------- --------- - ---------",
			"1.srv                   alice       workq    STDIN              4242     1      2       1gb  01:00:00 R  00:00:05",
			"   node01/0-1",
			"   Job run at Mon Jan 01 at 00:01 on (node01:ncpus=2)",
			"3.srv                   carol       workq    sleep               --    --     --        --        --  C       -- |",
			"    -- |",
			"    -- |",
		)},
		{"torque -n -1", []proto.Status{withNodes}, func() Options {
			o := torque()
			o.Nodes, o.OneLine = true, true
			return o
		}, lines(
			"",
			"srv: |",
			strings.Repeat(" ", 82)+"Req'd       Req'd       Elap",
			"Job ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory      Time    S   Time",
			"----------------------- ----------- -------- ---------------- ------ ----- ------ --------- --------- - ---------",
			"1.srv                   alice       workq    STDIN              4242     1      2       1gb  01:00:00 R  00:00:05   node01/0-1",
		)},
		{"no jobs prints nothing", nil, pro, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, func(b *bytes.Buffer) error { return AltJobTable(b, tt.jobs, tt.opt()) })
			check(t, got, tt.want)
		})
	}
}

func TestNodeLines(t *testing.T) {
	t.Parallel()
	var hosts []string
	for i := 1; i <= 12; i++ {
		hosts = append(hosts, "node"+string(rune('0'+i/10))+string(rune('0'+i%10))+".example.com/0")
	}
	eh := strings.Join(hosts, "+")
	pro := proNodeLines(eh)
	wantPro := []string{
		"node01/0+node02/0+node03/0+node04/0+node05/0+node06/0+node07/0+node08/0+",
		"node09/0+node10/0+node11/0+node12/0",
	}
	if strings.Join(pro, "\n") != strings.Join(wantPro, "\n") {
		t.Errorf("pbspro lines = %q, want %q", pro, wantPro)
	}
	tq := torqueNodeLines(eh, false)
	wantTorque := []string{
		"node01/0+node02/0+node03/0+node04/0+node05/0+node06/0+node07/0+node08/0",
		"+node09/0+node10/0+node11/0+node12/0",
	}
	if strings.Join(tq, "\n") != strings.Join(wantTorque, "\n") {
		t.Errorf("torque lines = %q, want %q", tq, wantTorque)
	}
	if got := torqueNodeLines(eh, true); len(got) != 1 {
		t.Errorf("torque -1 gave %d lines, want 1", len(got))
	}
	if got := nodeNames("10.1.2.3/0*2+a.b/1"); strings.Join(got, "+") != "10.1.2.3/0*2+a/1" {
		t.Errorf("nodeNames kept/stripped wrongly: %q", got)
	}
}

func TestSizes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		unit SizeUnit
		pro  string
		tq   string
	}{
		{"1gb", SizeNatural, "1gb", "1gb"},
		{"16000mb", SizeNatural, "16gb", "16000mb"},
		{"500b", SizeNatural, "500b", "500b"},
		{"20000kb", SizeNatural, "20mb", "20000kb"},
		{"1gb", SizeMegawords, "128mw", "128mw"},
		{"1gw", SizeGigabytes, "8gb", "8gb"},
		{"2048", SizeGigabytes, "1gb", "1gb"},
		{"lots", SizeNatural, "lots", "lots"},
	}
	for _, tt := range tests {
		if got := proSize(tt.in, tt.unit); got != tt.pro {
			t.Errorf("proSize(%q, %d) = %q, want %q", tt.in, tt.unit, got, tt.pro)
		}
		if got := torqueSize(tt.in, tt.unit); got != tt.tq {
			t.Errorf("torqueSize(%q, %d) = %q, want %q", tt.in, tt.unit, got, tt.tq)
		}
	}
}

func TestNodesTasks(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]int{
		"2:ppn=4+1:ppn=2": 10, "node01:ppn=2": 2, "3": 3, "1:gpu:ppn=8": 8, "": 0,
		"99999999999:ppn=99999999999": 1, "1073741823:ppn=2": 0,
	} {
		if got := nodesTasks(spec); got != want {
			t.Errorf("nodesTasks(%q) = %d, want %d", spec, got, want)
		}
	}
}

func TestStateLetter(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"F": "C", "X": "C", "M": "C", "B": "R", "T": "Q", "U": "S", "Q": "Q", "H": "H", "W": "W", "R": "R", "E": "E", "S": "S"} {
		if got := StateLetter("torque", in); got != want {
			t.Errorf("torque %s -> %s, want %s", in, got, want)
		}
		if got := StateLetter("pbspro", in); got != in {
			t.Errorf("pbspro %s -> %s, want unchanged", in, got)
		}
	}
}

// Torque lists a job's slots per host as ranges; OpenPBS's host/index*cpus
// becomes that, anything else stays as it is.
func TestTorqueExecHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"n1/0":                      "n1/0",
		"n1/0*2":                    "n1/0-1",
		"n1/3*1":                    "n1/3",
		"n1.example.com/2*4+n2/0":   "n1.example.com/2-5+n2/0",
		"n1/0*2+n2/0*16":            "n1/0-1+n2/0-15",
		"n1":                        "n1",
		"n1/x*2":                    "n1/x*2",
		"n1/0*0":                    "n1/0*0",
		"n1/0*-3":                   "n1/0*-3",
		"n1/0*99999999999999999999": "n1/0*99999999999999999999",
		"":                          "",
	} {
		if got := torqueExecHost(in); got != want {
			t.Errorf("torqueExecHost(%q) = %q, want %q", in, got, want)
		}
	}
	// Only the torque personality rewrites it.
	attrs := []proto.Attr{{Name: "exec_host", Value: "n1/0*2"}}
	if got := present("torque", attrs)[0].Value; got != "n1/0-1" {
		t.Errorf("torque shows %q", got)
	}
	if got := present("pbspro", attrs)[0].Value; got != "n1/0*2" {
		t.Errorf("pbspro shows %q", got)
	}
}

// qstat -T: OpenPBS's header ("Est" above "Req'd  Req'd   Start"), the
// estimate only for jobs that may still start (Q, S, B), rows ordered
// started jobs first, then by estimate, then the rest in server order.
func TestAltJobTableEstimatedStart(t *testing.T) {
	t.Parallel()
	o := pro()
	o.EstStart = true
	at := func(d time.Duration) string { return strconv.FormatInt(o.Now.Add(d).Unix(), 10) }
	soon, later := at(90*time.Minute), at(72*time.Hour)
	row := func(id, state string, kv ...string) proto.Status {
		return job(id, append([]string{"Job_Name", "j" + id[:1], "Job_Owner", "a@h", "job_state", state, "queue", "workq"}, kv...)...)
	}
	jobs := []proto.Status{
		row("3.srv", "Q"),
		row("2.srv", "Q", "estimated.start_time", later),
		row("5.srv", "H", "estimated.start_time", soon),
		row("1.srv", "R", "stime", jan1m1, "estimated.start_time", soon),
		row("4.srv", "Q", "estimated.start_time", soon),
	}
	check(t, render(t, func(b *bytes.Buffer) error { return AltJobTable(b, jobs, o) }), lines(
		"",
		"srv: |",
		"                                                                           Est",
		"                                                            Req'd  Req'd   Start",
		"Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
		"--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
		"1.srv           a        workq    j1            --   --  --    --    --  R    --",
		"5.srv           a        workq    j5            --   --  --    --    --  H    --",
		"4.srv           a        workq    j4            --   --  --    --    --  Q 01:31",
		"2.srv           a        workq    j2            --   --  --    --    --  Q Th 00",
		"3.srv           a        workq    j3            --   --  --    --    --  Q    --",
	))
	if jobs[0].Name != "3.srv" {
		t.Error("the caller's slice was reordered")
	}
	o.Wide = true
	out := render(t, func(b *bytes.Buffer) error { return AltJobTable(b, jobs[:1], o) })
	head := strings.Split(out, "\n")
	if len(head) < 4 || !strings.HasSuffix(head[2], strings.Repeat(" ", 15)+"Est") || !strings.HasSuffix(head[3], "Req'd  Req'd   Start") ||
		len(head[2]) != len(head[3])-len("Req'd  Req'd   Start")+len(strings.Repeat(" ", 15)+"Est") {
		t.Errorf("wide -T header:\n%s", out)
	}
}

// The Est Start cell's forms, relative to Monday 2024-01-01 00:01:40 UTC.
func TestEstStart(t *testing.T) {
	t.Parallel()
	now := time.Unix(1704067300, 0).UTC()
	unix := func(y int, m time.Month, d, h, min int) string {
		return strconv.FormatInt(time.Date(y, m, d, h, min, 0, 0, time.UTC).Unix(), 10)
	}
	for _, tt := range []struct{ v, want string }{
		{"", "--"},
		{"0", "?"},
		{"junk", "?"},
		{strconv.FormatInt(now.Unix()-60, 10), "--"},
		{unix(2024, 1, 1, 1, 31), "01:31"},
		{unix(2024, 1, 1, 23, 58), "23:58"},
		{unix(2024, 1, 2, 10, 0), "Tu 10"},
		{unix(2024, 1, 7, 23, 0), "Su 23"},
		{unix(2024, 1, 9, 0, 0), "Jan"},
		{unix(2024, 12, 31, 0, 0), "Dec"},
		{unix(2025, 6, 1, 0, 0), "2025"},
		{unix(2028, 12, 31, 0, 0), "2028"},
		{unix(2029, 1, 1, 0, 0), ">5yrs"},
	} {
		if got := estStart(tt.v, now); got != tt.want {
			t.Errorf("estStart(%q) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
