package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// qacct over a real server's accounting logs: jobs that burn cpu and
// memory, one of them failing, summed by owner and queue; one job's
// records and efficiency (-j), also as --json.
func TestQacct(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	// A fixed amount of work (about 2 s of one cpu here), not a time:
	// on a loaded host a loop bounded by the clock may get under a
	// second of cpu, which cput counts as 0.
	burn := "#!/bin/sh\ni=0\nwhile [ $i -lt 2000000 ]; do i=$((i+1)); done\n"
	ok := c.Submit(burn, "-l", "walltime=00:10:00", "-l", "mem=64mb", "-N", "burn")
	bad := c.Submit("#!/bin/sh\nexit 3\n")
	for _, id := range []string{ok, bad} {
		c.MustRun("qrun", id)
	}
	for _, id := range []string{ok, bad} {
		c.WaitJobState(id, "F", 60*time.Second)
	}
	c.WaitAccounting(";E;"+ok+";", ";E;"+bad+";")

	out := c.MustRun("qacct", "-o", "-q", "--csv")
	if !regexp.MustCompile(`(?m)^root,workq,2,1,\d+,\d+,`).MatchString(out) {
		t.Errorf("qacct -o -q --csv:\n%s", out)
	}
	out = c.MustRun("qacct", "-j", ok)
	for _, want := range []string{"record Q", "record S", "record E", "exit_status     0", "of 00:10:00 requested", "of 65536kb requested"} {
		if !strings.Contains(out, want) {
			t.Errorf("qacct -j %s lacks %q:\n%s", ok, want, out)
		}
	}
	// A job that burnt its one cpu: cpu efficiency above 0 (how far
	// depends on what else the host runs), at most its one cpu.
	var js []struct {
		ID  string   `json:"id"`
		CPU *float64 `json:"cpu_efficiency"`
	}
	if err := json.Unmarshal([]byte(c.MustRun("qacct", "-j", ok, "--json")), &js); err != nil || len(js) != 1 || js[0].CPU == nil || *js[0].CPU <= 0 || *js[0].CPU > 1.05 {
		t.Errorf("qacct -j --json: %v %+v\n%s", err, js, c.MustRun("qacct", "-j", ok))
	}
	// qstat -x -f of the finished job shows the same efficiency.
	if f := c.MustRun("qstat", "-x", "-f", ok); !regexp.MustCompile(`efficiency\.cpu = \d+\.\d%`).MatchString(f) || !strings.Contains(f, "efficiency.walltime = ") || !strings.Contains(f, "efficiency.mem = ") {
		t.Errorf("qstat -x -f %s shows no efficiency:\n%s", ok, f)
	}
	// The day's sums are cached, and answer the same from there.
	if _, err := os.Stat(filepath.Join(c.Home, "server_priv", "accounting", ".qacct")); err != nil {
		t.Errorf("no cache: %v", err)
	}
	if again := c.MustRun("qacct", "-o", "-q", "--csv"); !strings.HasPrefix(again, strings.SplitN(c.MustRun("qacct", "-o", "-q", "--csv"), "\n", 2)[0]) {
		t.Errorf("a second run differs:\n%s", again)
	}
}

// Our S and E records are written as OpenPBS writes them: the same keys
// in the same order as the real OpenPBS log in ../shared/traces (read
// here with a parser of OpenPBS's documented form, not ours), and their
// values are what qstat -x -f showed of the job.
func TestAccountingAsOpenPBS(t *testing.T) {
	t.Parallel()
	ref, err := os.ReadFile(filepath.Join("..", "..", "shared", "traces", "OpenPBS.log"))
	if err != nil {
		t.Skipf("the OpenPBS reference log: %v", err)
	}
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	id := c.Submit("#!/bin/sh\necho hi\n", "-l", "select=1:ncpus=1:mem=300mb", "-l", "walltime=02:00:00")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	acct := c.WaitAccounting(";E;" + id + ";")
	for _, kind := range []string{"S", "E"} {
		var ours, theirs string
		for _, l := range strings.Split(acct, "\n") {
			if strings.Contains(l, ";"+kind+";"+id+";") {
				ours = l
			}
		}
		for _, l := range strings.Split(string(ref), "\n") {
			if strings.Contains(l, ";"+kind+";") {
				theirs = l
				break
			}
		}
		if shape(ours) != shape(theirs) {
			t.Errorf("%s record's keys:\nours    %s\nOpenPBS %s", kind, shape(ours), shape(theirs))
		}
		if strings.HasSuffix(ours, " ") != strings.HasSuffix(theirs, " ") {
			t.Errorf("%s record's end: ours %q, OpenPBS's %q", kind, ours[max(len(ours)-12, 0):], theirs[max(len(theirs)-12, 0):])
		}
	}
	// The values are the job's.
	var e map[string]string
	for _, l := range strings.Split(acct, "\n") {
		if strings.Contains(l, ";E;"+id+";") {
			e = openPBSFields(l)
		}
	}
	f := c.MustRun("qstat", "-x", "-f", id)
	attr := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(name) + ` = (.*)$`).FindStringSubmatch(f)
		if m == nil {
			return "(none)"
		}
		return m[1]
	}
	for rec, at := range map[string]string{"user": "euser", "group": "egroup", "jobname": "Job_Name", "queue": "queue",
		"exec_host": "exec_host", "exec_vnode": "exec_vnode", "Exit_status": "Exit_status", "run_count": "run_count", "session": "session_id",
		"Resource_List.select": "Resource_List.select", "Resource_List.walltime": "Resource_List.walltime",
		"resources_used.walltime": "resources_used.walltime", "resources_used.cput": "resources_used.cput"} {
		if e[rec] != attr(at) {
			t.Errorf("E record's %s = %q, qstat's %s = %q", rec, e[rec], at, attr(at))
		}
	}
}

// openPBSFields reads a record as OpenPBS documents it: four fields
// split by ';', the last blank-separated key=value pairs, a value in
// double quotes when it holds a blank.
func openPBSFields(line string) map[string]string {
	parts := strings.SplitN(line, ";", 4)
	out := map[string]string{}
	if len(parts) != 4 {
		return out
	}
	for _, m := range regexp.MustCompile(`(\S+?)=("(?:[^"\\]|\\.)*"|\S*)`).FindAllStringSubmatch(parts[3], -1) {
		out[m[1]] = strings.Trim(m[2], `"`)
	}
	return out
}

// shape is a record's keys in order, each run of Resource_List.*,
// resources_used.* or resource_assigned.* as one, and the keys OpenPBS
// writes only on some sites (diag_messages) or we only with eligible
// time on (eligible_time) left out.
func shape(line string) string {
	parts := strings.SplitN(line, ";", 4)
	if len(parts) != 4 {
		return "(no record)"
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(\S+?)=("(?:[^"\\]|\\.)*"|\S*)`).FindAllStringSubmatch(parts[3], -1) {
		k := m[1]
		if k == "resources_used.diag_messages" || k == "eligible_time" {
			continue
		}
		for _, group := range []string{"Resource_List.", "resources_used.", "resource_assigned."} {
			if strings.HasPrefix(k, group) {
				k = group + "*"
			}
		}
		if len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, " ")
}

// A job on two nodes: the mother superior reports what it used on each,
// the server writes an n record for each after the E record, and qacct -j
// shows each node's part and cpu efficiency (the sister's burnt by a
// task pbsdsh started there).
func TestQacctByNode(t *testing.T) {
	t.Parallel()
	c, _, _ := twoMoms(t)
	burn := "i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done"
	id := c.Submit("#!/bin/sh\npbsdsh -n 1 -- /bin/sh -c '"+burn+"'\n", "-l", "select=2:ncpus=1", "-l", "place=scatter")
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 90*time.Second)
	acct := c.WaitAccounting(";E;"+id+";", ";n;"+id+";node=n1", ";n;"+id+";node=n2")
	if strings.Index(acct, ";E;"+id+";") > strings.Index(acct, ";n;"+id+";") {
		t.Errorf("the n records come before the E record:\n%s", acct)
	}
	out := c.MustRun("qacct", "-j", id)
	m := regexp.MustCompile(`(?m)^node\s+n2: ncpus 1, cpu_time (\d\d):(\d\d):(\d\d), mem_peak \S+, cpu_efficiency (\S+)$`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "node            n1: ncpus 1, ") || m[2]+m[3] == "0000" && m[1] == "00" {
		t.Errorf("qacct -j %s by node (n2 burnt a second of cpu or more):\n%s", id, out)
	}
}
