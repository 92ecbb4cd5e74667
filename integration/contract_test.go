package integration

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// The client contract (reference/client-contract.md) checked the way the
// workflow tools read the commands' output: split columns, regular
// expressions, XML and JSON decoders. One pbspro server; every check runs
// in both dialects by setting PBS_PERSONALITY in the command's environment,
// as a tool configured for Torque does against a pbspro site.

// dialect is one personality as a caller selects it.
type dialect struct {
	name string
	env  []string
}

func (d dialect) torque() bool { return d.name == "torque" }

// contractJobs are the jobs every subtest looks at, by the state they are
// kept in: running (qrun'd, sleeps), queued (no scheduler runs it; its
// environment holds a hostile value), held (qsub -h), finished (exit 3)
// and deleted (qdel while queued).
type contractJobs struct {
	running, queued, held, finished, deleted string
}

func (j contractJobs) active() []string { return []string{j.running, j.queued, j.held} }

const (
	unknownSeq = "999999"
	unknownID  = unknownSeq + ".localhost"
	// weirdValue is an environment value with everything a JSON or XML
	// encoder must escape, and the comma PBS lists escape.
	weirdValue = "he said \"hi\" \\ back\nsecond, line\ttab <&>"
)

func TestClientContract(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	dialects := []dialect{
		{"pbspro", append(c.Env(), "PBS_PERSONALITY=pbspro")},
		{"torque", append(c.Env(), "PBS_PERSONALITY=torque")},
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}

	// Before any job exists: Nextflow runs qstat under pipefail and Galaxy
	// asserts rc 0, so every listing is silent and succeeds.
	t.Run("no jobs", func(t *testing.T) {
		for _, d := range dialects {
			for _, args := range [][]string{{}, {"-f"}, {"-f", "-1"}, {"-a"}, {"-u", me.Username}, {"-n", "-1"}, {"-x", "-f"}} {
				if d.torque() && len(args) > 0 && args[0] == "-x" {
					continue // Torque's -x is XML: an empty <Data></Data>
				}
				r := c.RunEnv(d.env, "qstat", args...)
				if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
					t.Errorf("%s qstat %v with no jobs: want rc 0 and no output, got %s", d.name, args, r)
				}
			}
		}
		r := c.RunEnv(dialects[0].env, "qstat", "-f", "-F", "json")
		var doc proJSON
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &doc) != nil || doc.Jobs == nil || len(doc.Jobs) != 0 {
			t.Errorf("qstat -f -F json with no jobs: want a document with an empty \"Jobs\", got %s", r)
		}
	})

	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 4")
	var jobs contractJobs
	jobs.running = c.Submit("#!/bin/sh\nsleep 600\n", "-N", "running", "-l", "walltime=1:00:00", "-l", "select=1:ncpus=2")
	c.MustRun("qrun", jobs.running)
	c.WaitJobState(jobs.running, "R", 20*time.Second)
	jobs.finished = c.Submit("#!/bin/sh\nexit 3\n", "-N", "finished")
	c.MustRun("qrun", jobs.finished)
	c.WaitJobState(jobs.finished, "F", 20*time.Second)
	weirdEnv := append(c.Env(), "WEIRD="+weirdValue)
	r := c.RunEnvAs(weirdEnv, nil, "#!/bin/sh\ntrue\n", "qsub", "-N", "queued", "-v", "WEIRD")
	if r.Code != 0 {
		t.Fatalf("qsub -v WEIRD: %s", r)
	}
	jobs.queued = strings.TrimSpace(r.Stdout)
	jobs.held = c.Submit("#!/bin/sh\ntrue\n", "-N", "held", "-h")
	jobs.deleted = c.Submit("#!/bin/sh\ntrue\n", "-N", "deleted")
	// Toil passes ids with a trailing newline; a bare sequence number is
	// what dask and Cromwell keep.
	c.MustRun("qdel", " "+strconv.Itoa(testcluster.Seq(jobs.deleted))+"\n")
	c.WaitJobState(jobs.deleted, "F", 20*time.Second)

	// Parsl, Toil and ERT split the default table on whitespace and read
	// column 1 (the id, compared for equality) and column 5 (the state).
	t.Run("default table columns", func(t *testing.T) {
		for _, d := range dialects {
			want := map[string]string{jobs.running: "R", jobs.queued: "Q", jobs.held: "H"}
			if d.torque() {
				want[jobs.finished], want[jobs.deleted] = "C", "C"
			}
			argSets := [][]string{{}, {"-1"}, {"-t"}}
			if !d.torque() {
				argSets = append(argSets, []string{"-E"}, []string{"-w"}) // OpenPBS only
			}
			for _, args := range argSets {
				checkTable(t, d, c, want, args...)
			}
			if !d.torque() {
				withHistory := map[string]string{jobs.finished: "F", jobs.deleted: "F"}
				for id, s := range want {
					withHistory[id] = s
				}
				checkTable(t, d, c, withHistory, "-x")
			}
			// Only the jobs asked for, in one call (Toil's qstat id id ...).
			checkTable(t, d, c, map[string]string{jobs.running: "R", jobs.queued: "Q"}, jobs.running, jobs.queued)
		}
	})

	// Torque mode shows only Q, R, E and C, plus H for the job whose hold
	// was asked for: Galaxy raises on any other letter.
	t.Run("torque state letters", func(t *testing.T) {
		rows := tableRows(t, mustRunEnv(t, c, dialects[1].env, "qstat"))
		for id, s := range rows {
			if !strings.Contains("QREC", s) && !(id == jobs.held && s == "H") {
				t.Errorf("torque qstat shows %s as %q", id, s)
			}
		}
	})

	// ReFrame splits qstat -f on blank lines and reads job_state and
	// exit_status with regular expressions; pysqa needs Job_Name,
	// Job_Owner, job_state, queue in that order.
	t.Run("full format blocks", func(t *testing.T) {
		for _, d := range dialects {
			args := []string{"-f", jobs.running, jobs.queued, jobs.held, jobs.finished}
			wantState := map[string]string{jobs.running: "R", jobs.queued: "Q", jobs.held: "H", jobs.finished: "F"}
			if d.torque() {
				wantState[jobs.finished] = "C"
			} else {
				args = append(args, "-x")
			}
			out := mustRunEnv(t, c, d.env, "qstat", args...)
			blocks := fullBlocks(t, out)
			for id, st := range wantState {
				b, ok := blocks[id]
				if !ok {
					t.Errorf("%s qstat -f: no block for %s:\n%s", d.name, id, out)
					continue
				}
				if m := regexp.MustCompile(`job_state = (\S+)`).FindStringSubmatch(b); m == nil || m[1] != st {
					t.Errorf("%s qstat -f %s: job_state %v, want %s", d.name, id, m, st)
				}
				checkAttrOrder(t, d.name, b, "Job_Name", "Job_Owner", "job_state", "queue")
			}
			exitName, execHost := "Exit_status", "n1/0*2"
			if d.torque() {
				exitName, execHost = "exit_status", "n1/0-1" // Torque's slot range: OOD counts 2 cpus
			}
			if !strings.Contains(blocks[jobs.running], "\n    exec_host = "+execHost+"\n") {
				t.Errorf("%s qstat -f of the 2-cpu job: want exec_host = %s in\n%s", d.name, execHost, blocks[jobs.running])
			}
			m := regexp.MustCompile(`(?m)^    ` + exitName + ` = (-?\d+)$`).FindStringSubmatch(blocks[jobs.finished])
			if m == nil || m[1] != "3" {
				t.Errorf("%s qstat -f of the finished job: want %s = 3 in\n%s", d.name, exitName, blocks[jobs.finished])
			}
		}
	})

	// Open OnDemand joins the TAB-led continuation lines of a wrapped
	// listing, then splits it into "    name = value" lines; -1 never wraps.
	t.Run("TAB continuation lines", func(t *testing.T) {
		for _, d := range dialects {
			out := mustRunEnv(t, c, d.env, "qstat", "-f", jobs.queued)
			if !strings.Contains(out, "\n\t") {
				t.Fatalf("%s qstat -f: the long Variable_List did not wrap:\n%s", d.name, out)
			}
			attrs := parseFull(t, strings.ReplaceAll(out, "\n\t", ""))
			if v := attrs["Variable_List"]; !strings.Contains(v, "PBS_O_WORKDIR=") || !strings.Contains(v, "WEIRD=") {
				t.Errorf("%s: Variable_List after joining continuations: %q", d.name, v)
			}
			if attrs["job_state"] != "Q" {
				t.Errorf("%s: job_state %q", d.name, attrs["job_state"])
			}
			flat := mustRunEnv(t, c, d.env, "qstat", "-f", "-1", jobs.queued)
			if strings.Contains(flat, "\t") {
				t.Errorf("%s qstat -f -1 wraps:\n%s", d.name, flat)
			}
			if parseFull(t, flat)["Variable_List"] != attrs["Variable_List"] {
				t.Errorf("%s: -f -1 and the joined -f disagree on Variable_List", d.name)
			}
		}
	})

	// bpipe reads Torque's qstat -x: an optional XML declaration line, then
	// one <Data> document per line, without leading blanks.
	t.Run("torque XML", func(t *testing.T) {
		torque := dialects[1].env
		all := torqueDocs(t, mustRunEnv(t, c, torque, "qstat", "-x"))
		if len(all) != 1 {
			t.Fatalf("qstat -x without operands: %d <Data> documents, want 1", len(all))
		}
		want := map[string]string{jobs.running: "R", jobs.queued: "Q", jobs.held: "H", jobs.finished: "C", jobs.deleted: "C"}
		got := map[string]torqueJob{}
		for _, j := range all[0].Jobs {
			got[j.ID] = j
		}
		for id, st := range want {
			j, ok := got[id]
			switch {
			case !ok:
				t.Errorf("qstat -x lacks %s", id)
			case j.State != st:
				t.Errorf("qstat -x: %s is %q, want %s", id, j.State, st)
			case j.Ctime <= 0:
				t.Errorf("qstat -x: %s ctime %d is not epoch seconds", id, j.Ctime)
			}
		}
		if j := got[jobs.running]; !regexp.MustCompile(`^[A-Za-z0-9_.-]+/\d+`).MatchString(j.ExecHost) || j.ExecHost != "n1/0-1" {
			t.Errorf("qstat -x: exec_host %q does not match host/N", j.ExecHost)
		}
		for _, id := range []string{jobs.finished, jobs.deleted} {
			if j := got[id]; j.Exit == nil {
				t.Errorf("qstat -x: completed job %s has no exit_status", id)
			}
		}
		if j := got[jobs.finished]; j.Exit != nil && *j.Exit != 3 {
			t.Errorf("qstat -x: exit_status %d, want 3", *j.Exit)
		}
		// One document per job asked for; -f -x is the same.
		docs := torqueDocs(t, mustRunEnv(t, c, torque, "qstat", "-x", jobs.running, jobs.finished))
		if len(docs) != 2 || len(docs[0].Jobs) != 1 || docs[0].Jobs[0].ID != jobs.running || docs[1].Jobs[0].ID != jobs.finished {
			t.Errorf("qstat -x %s %s: %+v", jobs.running, jobs.finished, docs)
		}
		docs = torqueDocs(t, mustRunEnv(t, c, torque, "qstat", "-f", "-x", jobs.queued))
		if len(docs) != 1 || len(docs[0].Jobs) != 1 || !strings.Contains(docs[0].Jobs[0].Vars, "WEIRD=") {
			t.Errorf("qstat -f -x %s: %+v", jobs.queued, docs)
		}
		r := c.RunEnv(torque, "qstat", "-x", unknownID)
		if r.Code != 153 || r.Stderr != "qstat: Unknown Job Id Error "+unknownID+"\n" {
			t.Errorf("torque qstat -x of an unknown id: %s", r)
		}
	})

	// Parsl, Galaxy and ERT decode qstat -f -F json with a JSON library.
	t.Run("pbspro JSON", func(t *testing.T) {
		pro := dialects[0].env
		for _, args := range [][]string{{"-f", "-F", "json"}, {"-x", "-f", "-F", "json"}, {"-xf", "-F", "json"}, {"-Efx", "-Fjson"}} {
			doc := decodeProJSON(t, mustRunEnv(t, c, pro, "qstat", args...))
			history := strings.Contains(args[0], "x")
			if doc.Timestamp <= 0 || doc.PBSVersion == "" || doc.PBSServer == "" {
				t.Errorf("qstat %v: header %+v", args, doc)
			}
			for _, id := range jobs.active() {
				if _, ok := doc.Jobs[id]; !ok {
					t.Errorf("qstat %v lacks %s", args, id)
				}
			}
			fin, ok := doc.Jobs[jobs.finished]
			if ok != history {
				t.Errorf("qstat %v: finished job listed %v, want %v", args, ok, history)
			}
			if history {
				if fin["job_state"] != "F" || fin["Exit_status"] != float64(3) {
					t.Errorf("qstat %v: finished job state %v Exit_status %v", args, fin["job_state"], fin["Exit_status"])
				}
				if del := doc.Jobs[jobs.deleted]; del == nil || del["Exit_status"] == nil {
					t.Errorf("qstat %v: the deleted job has no Exit_status: %v", args, del)
				}
			}
		}
		doc := decodeProJSON(t, mustRunEnv(t, c, pro, "qstat", "-f", "-F", "json", jobs.queued))
		vars, _ := doc.Jobs[jobs.queued]["Variable_List"].(map[string]any)
		if vars["WEIRD"] != weirdValue {
			t.Errorf("Variable_List.WEIRD = %q, want %q", vars["WEIRD"], weirdValue)
		}
		// ReFrame needs "Jobs" even when the id is unknown (rc 153).
		r := c.RunEnv(pro, "qstat", "-f", "-F", "json", unknownID)
		if r.Code != 153 || r.Stderr != "qstat: Unknown Job Id "+unknownID+"\n" {
			t.Errorf("qstat -f -F json of an unknown id: %s", r)
		}
		if doc := decodeProJSON(t, r.Stdout); doc.Jobs == nil || len(doc.Jobs) != 0 {
			t.Errorf("qstat -f -F json of an unknown id: %q", r.Stdout)
		}
		// Torque's qstat has no -F: a usage error, not a silent default.
		if r := c.RunEnv(dialects[1].env, "qstat", "-f", "-F", "json"); r.Code != 2 {
			t.Errorf("torque qstat -f -F json: %s", r)
		}
	})

	// Nextflow (pbspro) lists the servers with qstat -B, then asks
	// qstat -f @server and greps "Job Id:" and "job_state =".
	t.Run("nextflow server listing", func(t *testing.T) {
		for _, d := range dialects {
			var servers []string
			for _, line := range strings.Split(mustRunEnv(t, c, d.env, "qstat", "-B"), "\n") {
				if line == "" || strings.HasPrefix(line, "Server") || strings.HasPrefix(line, "---") {
					continue
				}
				servers = append(servers, "@"+strings.Fields(line)[0])
			}
			if len(servers) != 1 {
				t.Fatalf("%s qstat -B: servers %v", d.name, servers)
			}
			states := map[string]string{}
			id := ""
			for _, line := range strings.Split(mustRunEnv(t, c, d.env, "qstat", append([]string{"-f"}, servers...)...), "\n") {
				if v, ok := strings.CutPrefix(line, "Job Id: "); ok {
					id = v
				} else if v, ok := strings.CutPrefix(line, "    job_state = "); ok {
					states[id] = v
				}
			}
			for id, st := range map[string]string{jobs.running: "R", jobs.queued: "Q", jobs.held: "H"} {
				if states[id] != st {
					t.Errorf("%s qstat -f %s: %s is %q, want %s", d.name, servers[0], id, states[id], st)
				}
			}
			full := mustRunEnv(t, c, d.env, "qstat", "-B", "-f")
			if !strings.HasPrefix(full, "Server: localhost\n    ") {
				t.Errorf("%s qstat -B -f:\n%s", d.name, full)
			}
		}
	})

	// FireWorks reads the alternate format (-a, -u user): the state is the
	// tenth column.
	t.Run("alternate format columns", func(t *testing.T) {
		for _, d := range dialects {
			for _, args := range [][]string{{"-a"}, {"-u", me.Username}, {"-a", "-n", "-1"}} {
				out := mustRunEnv(t, c, d.env, "qstat", args...)
				header := false
				rows := map[string]string{}
				for _, line := range strings.Split(out, "\n") {
					f := strings.Fields(line)
					switch {
					case len(f) == 0 || strings.HasPrefix(line, "---") || strings.HasSuffix(strings.TrimSpace(line), ":"):
					case f[0] == "Job" && f[1] == "ID":
						header = strings.Join(f, " ") == "Job ID Username Queue Jobname SessID NDS TSK Memory Time S Time"
					case strings.HasPrefix(strings.TrimSpace(line), "Req'd"):
					case len(f) >= 11:
						rows[f[0]] = f[9]
					}
				}
				if !header {
					t.Errorf("%s qstat %v: no alternate header:\n%s", d.name, args, out)
				}
				for id, st := range map[string]string{jobs.running: "R", jobs.queued: "Q", jobs.held: "H"} {
					if rows[id] != st {
						t.Errorf("%s qstat %v: %s is %q, want %s\n%s", d.name, args, id, rows[id], st, out)
					}
				}
			}
		}
	})

	// The unknown-id texts clients match, with rc 153; known jobs of the
	// same call still print.
	t.Run("unknown ids", func(t *testing.T) {
		for _, d := range dialects {
			text := "Unknown Job Id"
			if d.torque() {
				text = "Unknown Job Id Error"
			}
			for _, id := range []string{unknownID, unknownSeq} {
				r := c.RunEnv(d.env, "qstat", id)
				if r.Code != 153 || r.Stdout != "" || r.Stderr != "qstat: "+text+" "+unknownID+"\n" {
					t.Errorf("%s qstat %s: %s", d.name, id, r)
				}
				r = c.RunEnv(d.env, "qdel", id)
				if r.Code != 153 || r.Stderr != "qdel: "+text+" "+unknownID+"\n" {
					t.Errorf("%s qdel %s: %s", d.name, id, r)
				}
			}
			r := c.RunEnv(d.env, "qstat", jobs.running, unknownID)
			if r.Code != 153 || !strings.Contains(r.Stderr, text+" "+unknownID) {
				t.Errorf("%s qstat known+unknown: %s", d.name, r)
			}
			if rows := tableRows(t, r.Stdout); len(rows) != 1 || rows[jobs.running] != "R" {
				t.Errorf("%s qstat known+unknown: the known job's row: %v", d.name, rows)
			}
			for _, cmd := range []string{"qhold", "qrls", "qsig", "qalter"} {
				args := []string{unknownSeq}
				if cmd == "qalter" {
					args = []string{"-N", "x", unknownSeq}
				}
				r := c.RunEnv(d.env, cmd, args...)
				if r.Code != 153 || r.Stderr != cmd+": "+text+" "+unknownID+"\n" {
					t.Errorf("%s %s %s: %s", d.name, cmd, unknownSeq, r)
				}
			}
		}
	})

	// OpenPBS hides history without -x: rc 35 and the exact text; Torque
	// shows the job as C.
	t.Run("finished job without -x", func(t *testing.T) {
		pro := dialects[0].env
		for _, args := range [][]string{{jobs.finished}, {"-f", jobs.finished}} {
			r := c.RunEnv(pro, "qstat", args...)
			want := "qstat: " + jobs.finished + " Job has finished, use -x or -H to obtain historical job information\n"
			if r.Code != 35 || r.Stdout != "" || r.Stderr != want {
				t.Errorf("qstat %v: %s", args, r)
			}
		}
		r := c.RunEnv(pro, "qdel", jobs.finished)
		if r.Code != 35 || !strings.Contains(r.Stderr, "Job has finished") {
			t.Errorf("qdel of a finished job: %s", r)
		}
		r = c.RunEnv(dialects[1].env, "qstat", jobs.finished)
		if rows := tableRows(t, r.Stdout); r.Code != 0 || rows[jobs.finished] != "C" {
			t.Errorf("torque qstat of a finished job: %s", r)
		}
	})

	// Every id-taking command accepts the canonical id, the bare sequence
	// number, seq.otherserver, surrounding whitespace and several ids.
	t.Run("id forms", func(t *testing.T) {
		seq := strconv.Itoa(testcluster.Seq(jobs.queued))
		for _, d := range dialects {
			for _, id := range []string{jobs.queued, seq, seq + ".otherserver", " " + jobs.queued + "\n", seq + "\n"} {
				blocks := fullBlocks(t, mustRunEnv(t, c, d.env, "qstat", "-f", id))
				if _, ok := blocks[jobs.queued]; len(blocks) != 1 || !ok {
					t.Errorf("%s qstat -f %q: blocks for %v", d.name, id, keys(blocks))
				}
			}
		}
		for _, id := range []string{seq + ".otherserver", " " + seq + "\n"} {
			c.MustRun("qhold", id)
			if st, _ := c.JobAttr(jobs.queued, "job_state"); st != "H" {
				t.Errorf("qhold %q: state %s", id, st)
			}
			c.MustRun("qrls", id)
			if st, _ := c.JobAttr(jobs.queued, "job_state"); st != "Q" {
				t.Errorf("qrls %q: state %s", id, st)
			}
		}
		c.MustRun("qhold", jobs.queued, strconv.Itoa(testcluster.Seq(jobs.held)))
		c.MustRun("qrls", "-h", "u", jobs.queued)
		for id, want := range map[string]string{jobs.queued: "Q", jobs.held: "H"} {
			if st, _ := c.JobAttr(id, "job_state"); st != want {
				t.Errorf("after qhold of two ids and qrls of one: %s is %s, want %s", id, st, want)
			}
		}
		// ipyparallel's qsig -s; SIGCONT leaves the job running.
		runSeq := strconv.Itoa(testcluster.Seq(jobs.running))
		for _, id := range []string{runSeq, runSeq + ".otherserver", jobs.running + "\n"} {
			if r := c.Run("qsig", "-s", "SIGCONT", id); r.Code != 0 || r.Stderr != "" {
				t.Errorf("qsig -s SIGCONT %q: %s", id, r)
			}
		}
		if st, _ := c.JobAttr(jobs.running, "job_state"); st != "R" {
			t.Errorf("after qsig -s SIGCONT the job is %s", st)
		}
	})

	// Open OnDemand lists ids with qselect, one per line.
	t.Run("qselect", func(t *testing.T) {
		for _, d := range dialects {
			for _, args := range [][]string{{"-u", me.Username}, {"-u", me.Username, "-T"}} {
				ids := map[string]bool{}
				for _, line := range strings.Split(strings.TrimSuffix(mustRunEnv(t, c, d.env, "qselect", args...), "\n"), "\n") {
					if !regexp.MustCompile(`^\d+\.localhost$`).MatchString(line) {
						t.Errorf("%s qselect %v: line %q is not one canonical id", d.name, args, line)
					}
					ids[line] = true
				}
				for _, id := range jobs.active() {
					if !ids[id] {
						t.Errorf("%s qselect %v lacks %s", d.name, args, id)
					}
				}
				if ids[jobs.finished] != d.torque() {
					t.Errorf("%s qselect %v: finished job listed %v (Torque lists completed jobs, OpenPBS needs -x)", d.name, args, ids[jobs.finished])
				}
			}
		}
		r := c.Run("qselect", "-q", "nosuchqueue")
		if r.Code != 170 || r.Stdout != "" || !strings.Contains(r.Stderr, "Unknown queue") {
			t.Errorf("qselect -q of an unknown queue: %s", r)
		}
	})

	// Toil and radical ask for the version; dask CI and radical read
	// pbsnodes -a; OOD decodes pbsnodes -aSj -F json.
	t.Run("versions and nodes", func(t *testing.T) {
		for _, d := range dialects {
			want := regexp.MustCompile(`^pbs_version = \d+\.\d+\.\d+\n$`)
			if d.torque() {
				want = regexp.MustCompile(`^Version: \d+\.\d+\.\d+\n$`)
			}
			for _, cmd := range []string{"qstat", "pbsnodes"} {
				if r := c.RunEnv(d.env, cmd, "--version"); r.Code != 0 || !want.MatchString(r.Stdout) {
					t.Errorf("%s %s --version: %s", d.name, cmd, r)
				}
			}
			out := mustRunEnv(t, c, d.env, "pbsnodes", "-a")
			if !strings.HasPrefix(out, "n1\n") || !strings.HasSuffix(out, "\n\n") {
				t.Errorf("%s pbsnodes -a: want a node-name line and a blank line after the node:\n%s", d.name, out)
			}
			keysWanted := []string{"Mom", "state", "resources_available.ncpus"}
			if d.torque() {
				keysWanted = []string{"state", "np"}
			}
			attrs := map[string]string{}
			for _, line := range strings.Split(out, "\n")[1:] {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
					attrs[k] = v
				}
			}
			for _, k := range keysWanted {
				if attrs[k] == "" {
					t.Errorf("%s pbsnodes -a lacks %q:\n%s", d.name, k, out)
				}
			}
		}
		var nodes struct {
			Nodes map[string]map[string]any `json:"nodes"`
		}
		out := mustRunEnv(t, c, dialects[0].env, "pbsnodes", "-aSj", "-F", "json")
		if err := json.Unmarshal([]byte(out), &nodes); err != nil || nodes.Nodes["n1"]["State"] == nil {
			t.Errorf("pbsnodes -aSj -F json (%v):\n%s", err, out)
		}
	})

	// qstat -T (estimated starts) is the alternate format with an "Est
	// Start" column; without a scheduler no job has an estimate.
	t.Run("estimated start listing", func(t *testing.T) {
		out := mustRunEnv(t, c, dialects[0].env, "qstat", "-T")
		if !regexp.MustCompile(`(?m)^ +Est$`).MatchString(out) || !regexp.MustCompile(`(?m)Req'd +Req'd +Start$`).MatchString(out) {
			t.Errorf("qstat -T header:\n%s", out)
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 11 && f[0] == jobs.queued && f[10] != "--" {
				t.Errorf("qstat -T: a job without an estimate shows %q", f[10])
			}
		}
	})

	// Several ids in one qdel (Parsl, Nextflow, ERT): rc 0, and the jobs
	// end with an exit status in either dialect.
	t.Run("qdel several ids", func(t *testing.T) {
		c.MustRun("qdel", jobs.running, strconv.Itoa(testcluster.Seq(jobs.queued)), jobs.held+"\n")
		for _, id := range jobs.active() {
			c.WaitJobState(id, "F", 30*time.Second)
			for _, d := range dialects {
				out := mustRunEnv(t, c, d.env, "qstat", "-x", "-f", "-1", id)
				if d.torque() {
					out = mustRunEnv(t, c, d.env, "qstat", "-f", "-1", id)
				}
				if !regexp.MustCompile(`(?mi)^    exit_status = -?\d+$`).MatchString(out) {
					t.Errorf("%s: deleted job %s has no exit status:\n%s", d.name, id, out)
				}
			}
		}
	})

	// A job array read the same ways: its id in column 1 of the table, its
	// subjobs with -t (Q, R; B and X are Torque's R and C), and the JSON
	// and XML decoders accept the bracketed ids.
	t.Run("arrays", func(t *testing.T) {
		id := c.Submit("#!/bin/sh\nsleep 600\n", "-J", "1-3", "-N", "arr")
		seq := strings.TrimSuffix(id, "[].localhost")
		sub := func(i int) string { return fmt.Sprintf("%s[%d].localhost", seq, i) }
		c.MustRun("qrun", sub(1))
		c.WaitJobState(sub(1), "R", 20*time.Second)
		for _, d := range dialects {
			begun := "B"
			if d.torque() {
				begun = "R"
			}
			checkTable(t, d, c, map[string]string{id: begun}, id)
			checkTable(t, d, c, map[string]string{id: begun, sub(1): "R", sub(2): "Q", sub(3): "Q"}, "-t", id)
			blocks := fullBlocks(t, mustRunEnv(t, c, d.env, "qstat", "-f", "-t", id))
			if len(blocks) != 4 || !regexp.MustCompile(`(?m)^    array_index = 2$`).MatchString(blocks[sub(2)]) {
				t.Errorf("%s qstat -f -t: %d blocks; subjob 2:\n%s", d.name, len(blocks), blocks[sub(2)])
			}
		}
		doc := decodeProJSON(t, mustRunEnv(t, c, dialects[0].env, "qstat", "-f", "-t", "-F", "json", id))
		for _, want := range []string{id, sub(1), sub(2), sub(3)} {
			if _, ok := doc.Jobs[want]; !ok {
				t.Errorf("qstat -f -t -F json lacks %s: %v", want, keys2(doc.Jobs))
			}
		}
		if doc.Jobs[id]["array_indices_remaining"] != "2-3" {
			t.Errorf("JSON array_indices_remaining = %v", doc.Jobs[id]["array_indices_remaining"])
		}
		xmlDocs := torqueDocs(t, mustRunEnv(t, c, dialects[1].env, "qstat", "-x", "-t"))
		found := map[string]string{}
		for _, j := range xmlDocs[0].Jobs {
			found[j.ID] = j.State
		}
		if found[sub(1)] != "R" || found[sub(3)] != "Q" {
			t.Errorf("torque qstat -x -t: %v", found)
		}
		c.MustRun("qdel", id)
		c.WaitJobState(id, "F", 30*time.Second)
		out := mustRunEnv(t, c, dialects[1].env, "qstat", "-f", "-1", id)
		if !regexp.MustCompile(`(?m)^    exit_status = 1$`).MatchString(out) || !strings.Contains(out, "job_state = C") {
			t.Errorf("torque qstat -f of the deleted array (a subjob was killed):\n%s", out)
		}
	})
}

func keys2(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustRunEnv(t *testing.T, c *testcluster.Cluster, env []string, name string, args ...string) string {
	t.Helper()
	r := c.RunEnv(env, name, args...)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("%s %v: want rc 0 and nothing on stderr, got %s", name, args, r)
	}
	return r.Stdout
}

// tableRows reads the default qstat table as Parsl, Toil and ERT do:
// after the dashes line, each line split on whitespace, column 1 the id
// and column 5 the state. Every row must have its six fields.
func tableRows(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	body := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "---") {
			body = true
			continue
		}
		if !body || line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Errorf("table row %q has %d fields, want 6", line, len(f))
			continue
		}
		rows[f[0]] = f[4]
	}
	return rows
}

func checkTable(t *testing.T, d dialect, c *testcluster.Cluster, want map[string]string, args ...string) {
	t.Helper()
	out := mustRunEnv(t, c, d.env, "qstat", args...)
	got := tableRows(t, out)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s qstat %v: rows %v, want %v\n%s", d.name, args, got, want, out)
	}
}

// fullBlocks splits qstat -f output on blank lines as ReFrame does and
// returns each block by its "Job Id: " line.
func fullBlocks(t *testing.T, out string) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, b := range strings.Split(strings.TrimRight(out, "\n"), "\n\n") {
		first, _, _ := strings.Cut(b, "\n")
		id, ok := strings.CutPrefix(first, "Job Id: ")
		if !ok {
			t.Errorf("qstat -f block does not start with \"Job Id: \":\n%s", b)
			continue
		}
		blocks[id] = b
	}
	return blocks
}

// parseFull reads one job's unwrapped listing: after "Job Id:", every line
// is "    name = value" with one blank on each side of '='.
func parseFull(t *testing.T, out string) map[string]string {
	t.Helper()
	attrs := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if i == 0 {
			if !strings.HasPrefix(line, "Job Id: ") {
				t.Errorf("first line %q", line)
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "    ")
		k, v, ok2 := strings.Cut(rest, " = ")
		if !ok || !ok2 || k == "" || strings.ContainsAny(k, " \t") {
			t.Errorf("line %q is not \"    name = value\"", line)
			continue
		}
		attrs[k] = v
	}
	return attrs
}

func checkAttrOrder(t *testing.T, dialect, block string, names ...string) {
	t.Helper()
	last := -1
	for _, n := range names {
		i := strings.Index(block, "\n    "+n+" = ")
		if i < 0 || i < last {
			t.Errorf("%s qstat -f: %s missing or out of order (%v):\n%s", dialect, n, names, block)
			return
		}
		last = i
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

type torqueJob struct {
	ID       string `xml:"Job_Id"`
	State    string `xml:"job_state"`
	Exit     *int   `xml:"exit_status"`
	ExecHost string `xml:"exec_host"`
	Ctime    int64  `xml:"ctime"`
	Vars     string `xml:"Variable_List"`
}

type torqueData struct {
	XMLName xml.Name    `xml:"Data"`
	Jobs    []torqueJob `xml:"Job"`
}

// torqueDocs decodes Torque -x output line by line, as bpipe does: an
// optional declaration line, then one <Data> document per line.
func torqueDocs(t *testing.T, out string) []torqueData {
	t.Helper()
	var docs []torqueData
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == `<?xml version="1.0"?>` {
			continue
		}
		if !strings.HasPrefix(line, "<Data>") || !strings.HasSuffix(line, "</Data>") {
			t.Fatalf("qstat -x line is not one <Data> document: %q", line)
		}
		var d torqueData
		if err := xml.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("qstat -x: %v in %q", err, line)
		}
		docs = append(docs, d)
	}
	return docs
}

type proJSON struct {
	Timestamp  int64                     `json:"timestamp"`
	PBSVersion string                    `json:"pbs_version"`
	PBSServer  string                    `json:"pbs_server"`
	Jobs       map[string]map[string]any `json:"Jobs"`
}

func decodeProJSON(t *testing.T, out string) proJSON {
	t.Helper()
	var doc proJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("qstat JSON does not decode: %v\n%s", err, out)
	}
	return doc
}
