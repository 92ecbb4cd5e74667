package qstat

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// fakeServer answers like pbs_server: it resolves bare and foreign-suffixed
// ids, omits finished jobs without History and reports bad operands.
type fakeServer struct {
	// allAttrs makes the server answer with every attribute whatever the
	// request asks for (the real one keeps only those asked for).
	allAttrs bool
	jobs     []proto.Status
	queues   []proto.Status
	server   proto.Status
	reqs     []proto.StatusRequest
	failAll  error // returned for every call when set
	closed   bool
}

func (f *fakeServer) StatusJobs(r *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	out, errs, err := f.statusJobs(r)
	if f.allAttrs || len(r.Attrs) == 0 {
		return out, errs, err
	}
	want := map[string]bool{}
	for _, a := range r.Attrs {
		want[a] = true
	}
	for i, j := range out {
		var kept []proto.Attr
		for _, a := range j.Attrs {
			if want[a.Name] {
				kept = append(kept, a)
			}
		}
		out[i].Attrs = kept
	}
	return out, errs, err
}

func (f *fakeServer) statusJobs(r *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	f.reqs = append(f.reqs, *r)
	if f.failAll != nil {
		return nil, nil, f.failAll
	}
	visible := func(j proto.Status) bool {
		s, _ := j.Get("job_state")
		return r.History || s != "F"
	}
	if len(r.IDs) == 0 {
		var out []proto.Status
		for _, j := range f.jobs {
			if visible(j) {
				out = append(out, j)
			}
		}
		return out, nil, nil
	}
	var out []proto.Status
	var errs []proto.ObjectError
	for _, id := range r.IDs {
		seq, _, _ := strings.Cut(id, ".")
		found := false
		for _, j := range f.jobs {
			if js, _, _ := strings.Cut(j.Name, "."); js == seq {
				found = true
				if visible(j) {
					out = append(out, j)
				} else {
					errs = append(errs, proto.ObjectError{Name: id, Code: proto.PBSE_HISTJOBID, Text: "Job has finished"})
				}
			}
		}
		if !found {
			errs = append(errs, proto.ObjectError{Name: id, Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"})
		}
	}
	return out, errs, nil
}

func (f *fakeServer) StatusQueues(r *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	f.reqs = append(f.reqs, *r)
	if len(r.IDs) == 0 {
		return f.queues, nil, nil
	}
	var out []proto.Status
	var errs []proto.ObjectError
	for _, id := range r.IDs {
		found := false
		for _, q := range f.queues {
			if q.Name == id {
				out, found = append(out, q), true
			}
		}
		if !found {
			errs = append(errs, proto.ObjectError{Name: id, Code: proto.PBSE_UNKQUE, Text: "Unknown queue"})
		}
	}
	return out, errs, nil
}

func (f *fakeServer) StatusServer([]string) (proto.Status, error) { return f.server, f.failAll }
func (f *fakeServer) ServerName() string                          { return "srv" }
func (f *fakeServer) Close() error                                { f.closed = true; return nil }

func attrs(kv ...string) []proto.Attr {
	var out []proto.Attr
	for i := 0; i+1 < len(kv); i += 2 {
		n, r := proto.SplitAttrName(kv[i])
		out = append(out, proto.Attr{Name: n, Resource: r, Value: kv[i+1]})
	}
	return out
}

func newServer() *fakeServer {
	return &fakeServer{
		jobs: []proto.Status{
			{Name: "1.srv", Attrs: attrs("Job_Name", "STDIN", "Job_Owner", "alice@h", "resources_used.cput", "00:00:01",
				"job_state", "R", "queue", "workq", "exec_host", "n1/0", "Resource_List.ncpus", "1",
				"Variable_List", `PBS_O_HOME=/home/alice,WEIRD=a"b\,c`)},
			{Name: "2.srv", Attrs: attrs("Job_Name", "sleep", "Job_Owner", "bob@h", "job_state", "Q", "queue", "workq")},
			{Name: "3.srv", Attrs: attrs("Job_Name", "done", "Job_Owner", "alice@h", "job_state", "F", "queue", "workq",
				"Exit_status", "0", "stime", "1704067200")},
		},
		queues: []proto.Status{{Name: "workq", Attrs: attrs("queue_type", "Execution", "total_jobs", "2",
			"state_count", "Transit:0 Queued:1 Held:0 Waiting:0 Running:1 Exiting:0 Begun:0 ", "enabled", "True", "started", "True")}},
		server: proto.Status{Name: "srv", Attrs: attrs("server_state", "Active", "total_jobs", "3",
			"state_count", "Transit:0 Queued:1 Held:0 Waiting:0 Running:1 Exiting:0 Begun:0 ")},
	}
}

type result struct {
	rc             int
	stdout, stderr string
}

func runQstat(t *testing.T, p config.Personality, f *fakeServer, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qstat", Config: &config.Config{Personality: p, Server: "srv.example.com"}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, args, deps{
		connect: func() (client, error) { return f, nil },
		now:     func() time.Time { return time.Unix(1704067300, 0) },
		loc:     time.UTC,
	})
	return result{rc, out.String(), errb.String()}
}

func TestDefaultTableAndUnknownIds(t *testing.T) {
	t.Parallel()
	f := newServer()
	r := runQstat(t, config.PBSPro, f, "1", "99", "2.other\n")
	if r.rc != 153 {
		t.Errorf("rc = %d, want 153", r.rc)
	}
	want := "Job id            Name             User              Time Use S Queue\n" +
		"----------------  ---------------- ----------------  -------- - -----\n" +
		"1.srv             STDIN            alice             00:00:01 R workq           \n" +
		"2.srv             sleep            bob                      0 Q workq           \n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r.stderr != "qstat: Unknown Job Id 99.srv\n" {
		t.Errorf("stderr = %q", r.stderr)
	}
	if got := f.reqs[0].IDs; !reflect.DeepEqual(got, []string{"1", "99", "2.other"}) {
		t.Errorf("ids sent = %q (one request, whitespace trimmed)", got)
	}
	if f.reqs[0].History {
		t.Error("pbspro without -x must not ask for history")
	}
	if !f.closed {
		t.Error("connection not closed")
	}
}

func TestTorqueUnknownAndCompleted(t *testing.T) {
	t.Parallel()
	f := newServer()
	r := runQstat(t, config.Torque, f, "3", "42.srv")
	if r.rc != 153 || r.stderr != "qstat: Unknown Job Id Error 42.srv\n" {
		t.Errorf("rc %d stderr %q", r.rc, r.stderr)
	}
	if !strings.Contains(r.stdout, "3.srv                      done             alice                  0 C workq") {
		t.Errorf("completed job not shown as C:\n%s", r.stdout)
	}
	if !f.reqs[0].History {
		t.Error("torque must always ask for finished jobs")
	}
}

func TestFinishedWithoutX(t *testing.T) {
	t.Parallel()
	f := newServer()
	r := runQstat(t, config.PBSPro, f, "-f", "3")
	if r.rc != 35 {
		t.Errorf("rc = %d, want 35", r.rc)
	}
	if want := "qstat: 3.srv Job has finished, use -x or -H to obtain historical job information\n"; r.stderr != want {
		t.Errorf("stderr = %q, want %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q", r.stdout)
	}
	// With -x the job is there, Exit_status included.
	r = runQstat(t, config.PBSPro, newServer(), "-x", "-f", "3")
	if r.rc != 0 || !strings.Contains(r.stdout, "    Exit_status = 0\n") || !strings.Contains(r.stdout, "    stime = Mon Jan  1 00:00:00 2024\n") {
		t.Errorf("rc %d:\n%s", r.rc, r.stdout)
	}
}

func TestNoJobs(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"-f"}, {"-a"}, {"-u", "nobody"}, {"-f", "-1"}} {
		for _, p := range []config.Personality{config.PBSPro, config.Torque} {
			f := &fakeServer{}
			r := runQstat(t, p, f, args...)
			if r.rc != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("%s %q: rc %d stdout %q stderr %q", p, args, r.rc, r.stdout, r.stderr)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for p, want := range map[config.Personality]string{config.PBSPro: "pbs_version = 23.06.06\n", config.Torque: "Version: 6.1.3\n"} {
		r := runQstat(t, p, &fakeServer{failAll: errors.New("must not connect")}, "--version")
		if r.rc != 0 || r.stdout != want {
			t.Errorf("%s: rc %d stdout %q", p, r.rc, r.stdout)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-f", "-F", "json", "1", "77"}, {"-xf", "-Fjson", "1", "77"}, {"-Efx", "-Fjson", "1", "77"}} {
		r := runQstat(t, config.PBSPro, newServer(), args...)
		if r.rc != 153 || r.stderr != "qstat: Unknown Job Id 77.srv\n" {
			t.Errorf("%q: rc %d stderr %q", args, r.rc, r.stderr)
		}
		var doc struct {
			PBSServer string `json:"pbs_server"`
			Jobs      map[string]map[string]any
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, r.stdout)
		}
		vars, _ := doc.Jobs["1.srv"]["Variable_List"].(map[string]any)
		if doc.PBSServer != "srv.example.com" || vars["WEIRD"] != `a"b,c` {
			t.Errorf("%q: server %q vars %v", args, doc.PBSServer, vars)
		}
	}
	// Nothing matched: still a document with an empty Jobs object.
	r := runQstat(t, config.PBSPro, newServer(), "-f", "-F", "json", "77")
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || string(doc["Jobs"]) != "{}" {
		t.Errorf("rc %d err %v Jobs %q", r.rc, err, doc["Jobs"])
	}
}

func TestTorqueXML(t *testing.T) {
	t.Parallel()
	r := runQstat(t, config.Torque, newServer(), "-x", "1", "3")
	ls := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.rc != 0 || len(ls) != 4 {
		t.Fatalf("rc %d, want a declaration and a <Data> line per job:\n%s", r.rc, r.stdout)
	}
	for i, l := range ls {
		if i%2 == 0 {
			if l != `<?xml version="1.0"?>` {
				t.Errorf("line %d = %q", i, l)
			}
			continue
		}
		var data struct {
			Jobs []struct {
				ID     string `xml:"Job_Id"`
				State  string `xml:"job_state"`
				Status string `xml:"exit_status"`
			} `xml:"Job"`
		}
		if err := xml.Unmarshal([]byte(l), &data); err != nil || len(data.Jobs) != 1 {
			t.Fatalf("line %d: %v %q", i, err, l)
		}
		if i == 3 && (data.Jobs[0].ID != "3.srv" || data.Jobs[0].State != "C" || data.Jobs[0].Status != "0") {
			t.Errorf("finished job: %+v", data.Jobs[0])
		}
	}
	all := runQstat(t, config.Torque, newServer(), "-x")
	if n := strings.Count(all.stdout, "<Data>"); n != 1 || strings.Count(all.stdout, "<Job>") != 3 {
		t.Errorf("no operands: want one <Data> with 3 jobs:\n%s", all.stdout)
	}
	empty := runQstat(t, config.Torque, &fakeServer{}, "-x")
	if empty.stdout != "<?xml version=\"1.0\"?>\n<Data></Data>\n" {
		t.Errorf("no jobs: %q", empty.stdout)
	}
}

func TestAlternateFormats(t *testing.T) {
	t.Parallel()
	r := runQstat(t, config.PBSPro, newServer(), "-u", "alice,carol", "-x")
	if r.rc != 0 || !strings.HasPrefix(r.stdout, "\nsrv: \n") {
		t.Fatalf("-u must use the -a format:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "1.srv ") || !strings.Contains(r.stdout, "3.srv ") || strings.Contains(r.stdout, "2.srv") {
		t.Errorf("-u alice,carol selected wrongly:\n%s", r.stdout)
	}
	r = runQstat(t, config.PBSPro, newServer(), "-r", "-n")
	if !strings.Contains(r.stdout, "1.srv ") || strings.Contains(r.stdout, "2.srv") || !strings.Contains(r.stdout, "\n   n1/0\n") {
		t.Errorf("-r -n:\n%s", r.stdout)
	}
	r = runQstat(t, config.Torque, newServer(), "-c")
	if strings.Contains(r.stdout, "3.srv") {
		t.Errorf("torque -c shows a completed job:\n%s", r.stdout)
	}
	r = runQstat(t, config.PBSPro, newServer(), "-H")
	if !f3only(r.stdout) {
		t.Errorf("-H shows more than history:\n%s", r.stdout)
	}
}

func f3only(s string) bool {
	return strings.Contains(s, "3.srv ") && !strings.Contains(s, "1.srv") && !strings.Contains(s, "2.srv")
}

func TestOptionsAfterOperandsAndAccepted(t *testing.T) {
	t.Parallel()
	f := newServer()
	r := runQstat(t, config.PBSPro, f, "-f", "3", "-x")
	if r.rc != 0 || !strings.HasPrefix(r.stdout, "Job Id: 3.srv\n") || !f.reqs[0].History {
		t.Errorf("qstat -f 3 -x: rc %d\n%s", r.rc, r.stdout)
	}
	for _, args := range [][]string{{"-E"}, {"-t"}, {"-J"}, {"-T"}, {"-w"}, {"-f", "-1"}, {"-a", "-n", "-1"}, {"-s"}} {
		if r := runQstat(t, config.PBSPro, newServer(), args...); r.rc != 0 || r.stderr != "" {
			t.Errorf("pbspro %q: rc %d stderr %q", args, r.rc, r.stderr)
		}
	}
	for _, args := range [][]string{{"-E", "x"}, {"-e"}, {"-f", "-1"}, {"-t"}, {"-a", "-n", "-1"}, {"-C"}} {
		if r := runQstat(t, config.Torque, newServer(), args...); r.rc != 0 || r.stderr != "" {
			t.Errorf("torque %q: rc %d stderr %q", args, r.rc, r.stderr)
		}
	}
}

func TestFullNoWrap(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("v", 120)
	f := newServer()
	f.jobs[1].Attrs = append(f.jobs[1].Attrs, proto.Attr{Name: "comment", Value: long})
	wrapped := runQstat(t, config.PBSPro, f, "-f", "2")
	if !strings.Contains(wrapped.stdout, "\n\t") {
		t.Errorf("long value not wrapped:\n%s", wrapped.stdout)
	}
	for _, p := range []config.Personality{config.PBSPro, config.Torque} {
		r := runQstat(t, p, f, "-f", "-1", "2")
		if !strings.Contains(r.stdout, "    comment = "+long+"\n") {
			t.Errorf("%s -f -1 wrapped:\n%s", p, r.stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		p    config.Personality
		args []string
	}{
		{config.PBSPro, []string{"-Z"}},
		{config.PBSPro, []string{"-F", "yaml"}},
		{config.PBSPro, []string{"-Q", "-B"}},
		{config.PBSPro, []string{"-a", "-r"}},
		{config.PBSPro, []string{"-w", "-F", "json"}},
		{config.PBSPro, []string{"-G", "-M"}},
		{config.PBSPro, []string{"-u"}},
		{config.Torque, []string{"-w"}},
		{config.Torque, []string{"--help"}},
	}
	for _, c := range cases {
		f := newServer()
		r := runQstat(t, c.p, f, c.args...)
		if r.rc != 2 || !strings.Contains(r.stderr, "usage:") || r.stdout != "" || len(f.reqs) != 0 {
			t.Errorf("%s %q: rc %d stderr %q", c.p, c.args, r.rc, r.stderr)
		}
	}
}

// Each personality's usage lists only options its qstat accepts, and a
// usage error prints that usage.
func TestUsagePerPersonality(t *testing.T) {
	t.Parallel()
	for _, p := range []config.Personality{config.PBSPro, config.Torque} {
		text := usage(p)
		for _, m := range regexp.MustCompile(`\[-([A-Za-z0-9])\b`).FindAllStringSubmatch(text, -1) {
			if !strings.Contains(spec(p).Short, m[1]) {
				t.Errorf("%s usage lists -%s, which its qstat refuses", p, m[1])
			}
		}
		r := runQstat(t, p, newServer(), "-Z")
		if r.rc != 2 || !strings.HasSuffix(r.stderr, text) {
			t.Errorf("%s -Z: rc %d stderr %q", p, r.rc, r.stderr)
		}
	}
	if strings.Contains(torqueUsage, "-F") || strings.Contains(torqueUsage, "-T") {
		t.Error("Torque's usage lists OpenPBS-only options")
	}
}

func TestConnectFailure(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "qstat", Config: &config.Config{Personality: config.PBSPro}, Stdout: &out, Stderr: &errb}
	rc := runWith(env, nil, deps{
		connect: func() (client, error) {
			return nil, &proto.Error{Code: proto.PBSE_NOSERVER, Text: "cannot connect to server at /x: refused"}
		},
		now: time.Now,
	})
	if rc != proto.PBSE_NOSERVER.ExitStatus() || errb.String() != "qstat: cannot connect to server at /x: refused\n" {
		t.Errorf("rc %d stderr %q", rc, errb.String())
	}
}

func TestWholeRequestUnknown(t *testing.T) {
	t.Parallel()
	f := newServer()
	f.failAll = &proto.Error{Code: proto.PBSE_UNKJOBID, Text: "Unknown Job Id"}
	r := runQstat(t, config.PBSPro, f, "5")
	if r.rc != 153 || r.stderr != "qstat: Unknown Job Id 5.srv\n" {
		t.Errorf("rc %d stderr %q", r.rc, r.stderr)
	}
}

func TestQueuesAndServer(t *testing.T) {
	t.Parallel()
	r := runQstat(t, config.PBSPro, newServer(), "-Q")
	want := "Queue              Max   Tot Ena Str   Que   Run   Hld   Wat   Trn   Ext Type\n" +
		"---------------- ----- ----- --- --- ----- ----- ----- ----- ----- ----- ----\n" +
		"workq                0     2 yes yes     1     1     0     0     0     0 Exe*\n"
	if r.rc != 0 || r.stdout != want {
		t.Errorf("-Q rc %d:\n%s", r.rc, r.stdout)
	}
	f := newServer()
	r = runQstat(t, config.PBSPro, f, "-Qf", "workq@srv", "nope")
	if r.rc != proto.PBSE_UNKQUE.ExitStatus() || !strings.HasPrefix(r.stdout, "Queue: workq\n    queue_type = Execution\n") ||
		r.stderr != "qstat: Unknown queue nope\n" || !reflect.DeepEqual(f.reqs[0].IDs, []string{"workq", "nope"}) {
		t.Errorf("-Qf: rc %d ids %q\n%s%s", r.rc, f.reqs[0].IDs, r.stdout, r.stderr)
	}
	r = runQstat(t, config.PBSPro, newServer(), "-B", "-f")
	if r.rc != 0 || !strings.HasPrefix(r.stdout, "Server: srv\n    server_state = Active\n") {
		t.Errorf("-Bf:\n%s", r.stdout)
	}
	r = runQstat(t, config.Torque, newServer(), "-B")
	if r.rc != 0 || !strings.Contains(r.stdout, "srv                  0     3     1     1     0     0     0     0     0 Active") {
		t.Errorf("torque -B:\n%s", r.stdout)
	}
	r = runQstat(t, config.PBSPro, newServer(), "-q")
	if r.rc != 0 || !strings.HasPrefix(r.stdout, "\nserver: srv\n\n") || !strings.Contains(r.stdout, "workq ") {
		t.Errorf("-q:\n%s", r.stdout)
	}
}

// The default table asks only for the attributes it shows and filters
// on; every listing prints the same as from an answer with all of them.
func TestAskedAttributesSuffice(t *testing.T) {
	t.Parallel()
	sets := [][]string{nil, {"-x"}, {"-w"}, {"-u", "alice"}, {"-J"}, {"-t"}, {"-J", "-t"}, {"-c"}, {"-a"}, {"-s"}, {"-n"}, {"-f"}, {"-T"}, {"-F", "json"}, {"1", "3"}}
	for _, p := range []config.Personality{config.PBSPro, config.Torque} {
		for _, args := range sets {
			if p == config.Torque && len(args) > 0 && (args[0] == "-J" || args[0] == "-T" || args[0] == "-F" || args[0] == "-w") {
				continue
			}
			withArray := func() *fakeServer {
				f := newServer()
				f.jobs = append(f.jobs,
					proto.Status{Name: "4[].srv", Attrs: attrs("Job_Name", "arr", "Job_Owner", "bob@h", "job_state", "B", "queue", "workq", "array", "True", "array_indices_submitted", "1-3")},
					proto.Status{Name: "4[1].srv", Attrs: attrs("Job_Name", "arr", "Job_Owner", "bob@h", "job_state", "R", "queue", "workq", "array_id", "4[].srv", "array_index", "1")})
				return f
			}
			got := runQstat(t, p, withArray(), args...)
			all := withArray()
			all.allAttrs = true
			want := runQstat(t, p, all, args...)
			if got != want {
				t.Errorf("%s qstat %q: with the attributes asked for\n%+v\nwith all\n%+v", p, args, got, want)
			}
		}
	}
	f := newServer()
	runQstat(t, config.PBSPro, f)
	if len(f.reqs[0].Attrs) == 0 {
		t.Error("the default table asks for every attribute")
	}
}

// The combinations OpenPBS's qstat refuses as "conflicting options"
// (qstat.c's alt_opt and f_opt rules) are refused with its words and
// usage, exit 2, before connecting; the neighbouring ones it accepts run.
func TestOpenPBSConflicts(t *testing.T) {
	t.Parallel()
	refused := [][]string{
		{"-a", "-F", "json"}, {"-a", "-F", "dsv"}, {"-F", "json"}, {"-Q", "-F", "json"}, {"-B", "-F", "dsv"},
		{"-f", "-n", "-F", "json"}, {"-f", "-s", "-F", "dsv"},
		{"-q", "-f"}, {"-i", "-H"}, {"-a", "-q"}, {"-G", "-M"},
		{"-a", "-Q"}, {"-n", "-B"}, {"-G", "-Q"},
	}
	for _, args := range refused {
		f := newServer()
		r := runQstat(t, config.PBSPro, f, args...)
		if r.rc != 2 || !strings.HasPrefix(r.stderr, "qstat: conflicting options.\nusage:") || len(f.reqs) != 0 {
			t.Errorf("%q: rc %d stderr %q", args, r.rc, r.stderr)
		}
	}
	accepted := [][]string{
		{"-f", "-F", "json"}, {"-Q", "-f", "-F", "json"}, {"-B", "-f", "-F", "dsv"}, {"-n", "-f", "-F", "json"},
		{"-a", "-a"}, {"-G", "-G"}, {"-Q", "-G"}, {"-w", "-a", "-Q"}, {"-a", "-n", "-1"}, {"-s", "-1"},
		{"-1"}, {"-a", "-1"}, {"-f", "-1"}, {"-B", "-f", "-1"}, {"-p"}, {"-pt"}, {"-rwt"}, {"-p", "-w"}, {"-f", "-p"},
	}
	for _, args := range accepted {
		if r := runQstat(t, config.PBSPro, newServer(), args...); r.rc != 0 || r.stderr != "" {
			t.Errorf("%q: rc %d stderr %q", args, r.rc, r.stderr)
		}
	}
	// -D belongs to -F dsv, not to -F json.
	if r := runQstat(t, config.PBSPro, newServer(), "-f", "-F", "json", "-D", ","); r.rc != 2 {
		t.Errorf("-F json -D: rc %d", r.rc)
	}
}

// qstat -p shows "% done" in place of Time Use (OpenPBS's percent_cal),
// and asks the server for the requests it divides by.
func TestPercentDone(t *testing.T) {
	t.Parallel()
	f := &fakeServer{jobs: []proto.Status{
		{Name: "1.srv", Attrs: attrs("Job_Name", "cpu", "Job_Owner", "alice@h", "job_state", "R", "queue", "workq",
			"resources_used.cput", "00:15:00", "Resource_List.cput", "01:00:00",
			"resources_used.walltime", "00:06:00", "Resource_List.walltime", "01:00:00")},
		{Name: "2.srv", Attrs: attrs("Job_Name", "wall", "Job_Owner", "bob@h", "job_state", "R", "queue", "workq",
			"resources_used.walltime", "00:30:00", "Resource_List.walltime", "01:00:00")},
		{Name: "3.srv", Attrs: attrs("Job_Name", "waits", "Job_Owner", "bob@h", "job_state", "Q", "queue", "workq",
			"Resource_List.walltime", "01:00:00")},
		{Name: "4[].srv", Attrs: attrs("Job_Name", "arr", "Job_Owner", "bob@h", "job_state", "B", "queue", "workq",
			"array_state_count", "Queued:1 Running:1 Exiting:0 Expired:2 ")},
		{Name: "5.srv", Attrs: attrs("Job_Name", "free", "Job_Owner", "bob@h", "job_state", "H", "queue", "workq")},
		{Name: "4[1].srv", Attrs: attrs("Job_Name", "arr", "Job_Owner", "bob@h", "job_state", "X", "queue", "workq")},
	}}
	r := runQstat(t, config.PBSPro, f, "-p")
	want := strings.Join([]string{
		"Job id            Name             User               % done  S Queue",
		"----------------  ---------------- ----------------  -------- - -----",
		"1.srv             cpu              alice                  25  R workq           ",
		"2.srv             wall             bob                    50  R workq           ",
		"3.srv             waits            bob                    --  Q workq           ",
		"4[].srv           arr              bob                    50  B workq           ",
		"5.srv             free             bob                    --  H workq           ",
		"4[1].srv          arr              bob                    100 X workq           ",
	}, "\n") + "\n"
	if r.rc != 0 || r.stdout != want {
		t.Errorf("qstat -p: rc %d\n%s\nwant\n%s", r.rc, r.stdout, want)
	}
	asked := strings.Join(f.reqs[0].Attrs, ",")
	if !strings.Contains(asked, "Resource_List") || !strings.Contains(asked, "array_state_count") {
		t.Errorf("qstat -p asked for %s", asked)
	}
}
