package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopbs/internal/testcluster"
	"gopbs/internal/web"
	"gopbs/internal/web/apischema"
)

// webCluster starts a cluster whose server serves the web page and API on
// a free loopback port (PBS_WEB), with conf's further pbs.conf lines, and
// returns it with the base URL.
func webCluster(t *testing.T, conf string) (*testcluster.Cluster, string) {
	t.Helper()
	port := testcluster.FreePort(t)
	c := testcluster.New(t, testcluster.Options{Conf: fmt.Sprintf("PBS_WEB=127.0.0.1:%d\n", port) + conf})
	return c, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// get fetches url with the headers (name, value pairs) and returns the
// status and body.
func get(t *testing.T, url string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

var timestampLine = regexp.MustCompile(`(?m)^    "timestamp":[0-9]+,$`)

// The API serves the very documents the commands print: a tool can swap
// qstat -f -F json (and -Q, -B, pbsnodes -a) for a GET.
func TestWebAPIMatchesCommands(t *testing.T) {
	c, base := webCluster(t, "")
	c.AddMom("n1", testcluster.MomOptions{})
	held := c.Submit("#!/bin/sh\n#PBS -N apijob\nsleep 60\n", "-h", "-l", "walltime=00:10:00", "-v", "SECRET=s3")
	c.Submit("#!/bin/sh\necho x\n", "-h", "-J", "1-3")
	// Root's token: the whole record, as qstat shows it to root.
	auth := rootToken(t, c)
	for _, tt := range []struct {
		path string
		cmd  []string
	}{
		{"/api/v1/jobs", []string{"qstat", "-f", "-F", "json"}},
		{"/api/v1/jobs?history=true", []string{"qstat", "-f", "-x", "-F", "json"}},
		{"/api/v1/jobs/" + held, []string{"qstat", "-f", "-x", "-F", "json", held}},
		{"/api/v1/queues", []string{"qstat", "-Q", "-f", "-F", "json"}},
		{"/api/v1/server", []string{"qstat", "-B", "-f", "-F", "json"}},
		{"/api/v1/nodes", []string{"pbsnodes", "-a", "-F", "json"}},
	} {
		// A node's load and the server's counts move between the two
		// reads now and then: compare until they agree.
		var last string
		ok, _ := testcluster.Poll(10*time.Second, func() (bool, string) {
			code, body := get(t, base+tt.path, auth...)
			want := c.MustRun(tt.cmd[0], tt.cmd[1:]...)
			if code != 200 {
				t.Fatalf("GET %s: %d %s", tt.path, code, body)
			}
			got, want := timestampLine.ReplaceAllString(body, ""), timestampLine.ReplaceAllString(want, "")
			last = fmt.Sprintf("GET %s:\n%s\n%s:\n%s", tt.path, got, strings.Join(tt.cmd, " "), want)
			return got == want, ""
		})
		if !ok {
			t.Errorf("the API and the command differ:\n%s", last)
		}
	}
	if code, body := get(t, base+"/api/v1/jobs/999", auth...); code != 404 || !strings.Contains(body, `"code":15001`) {
		t.Errorf("unknown job: %d %s", code, body)
	}
}

// rootToken issues a web token for root and returns the header pair that
// presents it.
func rootToken(t *testing.T, c *testcluster.Cluster) []string {
	t.Helper()
	return []string{"Authorization", "Bearer " + strings.TrimSpace(c.MustRun("pbs_webtoken", "root"))}
}

// fieldsNotExercised are the documented job and node fields this test's
// workload does not produce, and why; every other documented field must
// appear, so that a field that disappears fails the test.
var fieldsNotExercised = map[string]string{
	"job.exec_gpus":    "needs GPUs",
	"job.interactive":  "needs a terminal (qsub -I)",
	"job.stagein_node": "needs an early stage-in, which waits for a start",
	"job.block":        "qsub -W block=true waits for the job's end",
	"job.jobdir":       "the server keeps OpenPBS's attribute but never sets it",
	// Node fields:
	"node.offline_by_check": "needs a failing node health check",
	"node.last_used_time":   "the server keeps OpenPBS's attribute but never sets it",
}

// Live documents hold to the released schema (api-v1.schema.json): every
// field documented, of its type and form (a time stays a ctime string, a
// walltime HH:MM:SS, a state one of the letters), none undocumented, the
// required ones present, and every documented job and node field seen in
// a workload that makes them.
func TestWebAPISchema(t *testing.T) {
	c, base := webCluster(t, "")
	auth := rootToken(t, c)
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	running := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:05:00", "-A", "acct", "-P", "proj",
		"-M", "root@localhost", "-m", "n", "-S", "/bin/sh", "-W", "sandbox=PRIVATE", "-W", "umask=022", "-W", "group_list=root",
		"-W", "tolerate_node_failures=none", "-W", "release_nodes_on_stageout=false", "-r", "y", "-p", "5", "-R", "oe", "-k", "oe", "-u", "root")
	c.MustRun("qrun", running)
	c.WaitJobState(running, "R", 20*time.Second)
	done := c.Submit("#!/bin/sh\nexit 3\n", "-l", "select=1:ncpus=1")
	c.MustRun("qrun", done)
	c.WaitJobState(done, "F", 30*time.Second)
	big := c.Submit("#!/bin/sh\n", "-l", "select=1:ncpus=2", "-l", "walltime=00:10:00")
	c.Submit("#!/bin/sh\n", "-W", "depend=afterok:"+running)
	c.Submit("#!/bin/sh\n", "-a", "2359", "-h", "-W", "stagein=/tmp/in@localhost:/tmp/in", "-W", "stageout=/tmp/out@localhost:/tmp/out")
	later := c.Submit("#!/bin/sh\n", "-h")
	c.MustRun("qalter", "-W", "hold_until="+time.Now().Add(time.Hour).Format("200601021504"), later)
	array := c.Submit("#!/bin/sh\nsleep 1\n", "-J", "1-3%1", "-l", "walltime=00:00:30")
	torque := append(c.Env(), "PBS_PERSONALITY=torque")
	if r := c.RunEnvAs(torque, nil, "#!/bin/sh\n", "qsub", "-h", "-d", "/tmp", "-F", "a b", "-T", "kind", "-K", "1"); r.Code != 0 {
		t.Fatalf("torque qsub: %s", r)
	}
	c.StartScheduler("pbs_sched")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	testcluster.WaitFor(t, "the big job's estimated start", 30*time.Second, func() (bool, string) {
		v, _ := c.JobAttr(big, "estimated.start_time")
		return v != "", c.MustRun("qstat", "-f", big) + c.MustRun("qstat", "-a")
	})
	subjob := strings.Replace(array, "[]", "[1]", 1)
	c.WaitJobState(subjob, "X", 30*time.Second)
	// Settable node attributes, once the scheduling above is done (the
	// loads would make the node busy).
	for _, set := range []string{"comment = web", "ideal_load = 1.5", "max_load = 3", "resv_enable = False", "properties = fast"} {
		c.MustRun("qmgr", "-c", "set node n1 "+set)
	}

	schema, err := apischema.Parse(web.SchemaV1())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tt := range []struct{ path, def string }{
		{"/api/v1/jobs", "jobs_document"},
		{"/api/v1/jobs?history=true", "jobs_document"},
		{"/api/v1/jobs/" + url.PathEscape(subjob), "jobs_document"},
		{"/api/v1/jobs/" + url.PathEscape(array), "jobs_document"},
		{"/api/v1/queues", "queues_document"},
		{"/api/v1/server", "server_document"},
		{"/api/v1/nodes", "nodes_document"},
		{"/api/v1/jobs/999", "error"},
	} {
		code, body := get(t, base+tt.path, auth...)
		if code != 200 && tt.def != "error" {
			t.Fatalf("GET %s: %d %s", tt.path, code, body)
		}
		res := schema.Check(tt.def, []byte(body))
		for _, p := range res.Problems {
			t.Errorf("GET %s: %s", tt.path, p)
		}
		for f := range res.Seen {
			seen[f] = true
		}
	}
	for _, def := range []string{"job", "node"} {
		for _, f := range schema.Properties(def) {
			name := def + "." + f
			if !seen[name] && fieldsNotExercised[name] == "" {
				t.Errorf("documented field %s appears in no document: gone, or renamed?", name)
			}
		}
	}
}
