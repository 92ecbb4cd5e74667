package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/hostaddr"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/internal/web"
	"github.com/gopbs/gopbs/internal/web/apischema"
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
	t.Parallel()
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
	"job.exec_gpus":     "needs GPUs",
	"job.interactive":   "needs a terminal (qsub -I)",
	"job.stagein_node":  "needs an early stage-in, which waits for a start",
	"job.block":         "qsub -W block=true waits for the job's end",
	"job.jobdir":        "the server keeps OpenPBS's attribute but never sets it",
	"job.accrue_type":   "shown only while eligible_time_enable is True (TestEligibleTime)",
	"job.eligible_time": "shown only while eligible_time_enable is True (TestEligibleTime)",
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
	t.Parallel()
	c, base := webCluster(t, "")
	auth := rootToken(t, c)
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	running := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:05:00", "-A", "acct", "-P", "proj",
		"-M", "root@localhost", "-m", "n", "-S", "/bin/sh", "-W", "sandbox=PRIVATE", "-W", "umask=022", "-W", "group_list=root",
		"-W", "tolerate_node_failures=none", "-W", "release_nodes_on_stageout=false", "-W", "resize_signal=USR1", "-r", "y", "-p", "5", "-R", "oe", "-k", "oe", "-u", "root")
	c.MustRun("qrun", running)
	// A maintenance reservation, so that the nodes document shows its resv.
	c.MustRun("pbs_rsub", "-R", rsubTime(time.Now().Add(2*time.Hour)), "-D", "00:10:00", "--hosts", "n1")
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

// fromAddr is an HTTP client whose connections come from the local IP
// address local (127.0.0.2 is loopback too on Linux: any local user can
// connect from it).
func fromAddr(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// unixHTTP is an HTTP client whose connections go to the Unix socket
// path, as a proxy on the server's host connects (PBS_WEB_PROXY_UID).
func unixHTTP(path string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", path) },
	}}
}

func getWith(t *testing.T, client *http.Client, url string, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A proxy address any local user can connect from makes pbs_server
// refuse to start, naming the key and why: loopback (the issue's
// PBS_WEB_PROXY_ADDR=127.0.0.2, from which "curl --interface 127.0.0.2
// -H 'X-Remote-User: root'" was a manager) and this host's own address.
func TestWebProxyOnThisHostRefused(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.KillServer(syscall.SIGTERM)
	orig, err := os.ReadFile(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{"127.0.0.2": "loopback", "127.0.0.0/8": "loopback", "::1": "loopback"}
	if own, err := hostaddr.Read(); err == nil {
		for _, a := range own {
			if !a.IsLoopback() && !a.IsLinkLocalUnicast() {
				bad[a.String()] = "an address of this host"
				break
			}
		}
	}
	for addr, why := range bad {
		conf := fmt.Sprintf("%sPBS_WEB=127.0.0.1:%d\nPBS_WEB_PROXY_HEADER=X-Remote-User\nPBS_WEB_PROXY_ADDR=%s\n", orig, testcluster.FreePort(t), addr)
		if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := c.StartServerExpectFailure(20 * time.Second)
		if err == nil || !strings.Contains(out, "PBS_WEB_PROXY_ADDR") || !strings.Contains(out, why) || !strings.Contains(out, "PBS_WEB_PROXY_UID") {
			t.Errorf("PBS_WEB_PROXY_ADDR=%s: err %v, want a refusal naming the key and %q:\n%s", addr, err, why, out)
		}
	}
	if err := os.WriteFile(c.Conf, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	c.StartServer() // the cluster's own cleanup stops it
}

// Who sees what through the web port, end to end: anonymous viewers the
// public fields while query_other_jobs is true and nothing when false; a
// user named by the trusted proxy (on this host: from its uid on its
// socket, nowhere else) what qstat shows that user; root's token
// everything; the event stream as the rights allow.
func TestWebAccess(t *testing.T) {
	t.Parallel()
	// The proxy is this test's process (root, uid 0) on the socket.
	c, base := webCluster(t, "PBS_WEB_PROXY_HEADER=X-Remote-User\nPBS_WEB_PROXY_UID=0\nPBS_WEB_HOSTS=pbs.example.org\n")
	root := rootToken(t, c)
	rootJob := c.Submit("#!/bin/sh\nsleep 60\n", "-h", "-v", "SECRET=rootsecret")
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	r := c.RunAs(nobody, "#!/bin/sh\nsleep 60\n", "qsub", "-h", "-v", "MINE=nobodysecret")
	if r.Code != 0 {
		t.Fatalf("qsub as nobody: %s", r)
	}
	nobodyJob := strings.TrimSpace(r.Stdout)
	sock := filepath.Join(c.Home, "pbs_web.sock")
	proxy, proxyBase := unixHTTP(sock), "http://localhost"
	asNobody := []string{"X-Remote-User", "nobody"}

	code, body := get(t, base+"/api/v1/jobs")
	if code != 200 || !strings.Contains(body, `"`+rootJob+`"`) || !strings.Contains(body, `"`+nobodyJob+`"`) ||
		strings.Contains(body, "secret") || strings.Contains(body, "Variable_List") || strings.Contains(body, "Output_Path") {
		t.Fatalf("anonymous, query_other_jobs true: %d %s", code, body)
	}
	if code, body := getWith(t, proxy, proxyBase+"/api/v1/jobs/"+nobodyJob, asNobody...); code != 200 || !strings.Contains(body, `"MINE":"nobodysecret"`) {
		t.Fatalf("nobody through the proxy, own job: %d %s", code, body)
	}
	if code, body := get(t, base+"/api/v1/jobs", asNobody...); code != 403 || !strings.Contains(body, "PBS_WEB_PROXY_UID") {
		t.Fatalf("the proxy's header from elsewhere: %d %s", code, body)
	}
	// The attack: a local user on another loopback address.
	if code, body := getWith(t, fromAddr("127.0.0.2"), base+"/ui/whoami", "X-Remote-User", "root"); code != 403 || strings.Contains(body, `"manager":true`) {
		t.Fatalf("X-Remote-User: root from 127.0.0.2: %d %s", code, body)
	}
	// DNS rebinding: a name that is not this server's, pointed at its
	// address, reads nothing; a configured one (PBS_WEB_HOSTS) does.
	addr := strings.TrimPrefix(base, "http://")
	for host, want := range map[string]string{"rebind.evil.example:80": "421", "pbs.example.org": "200", addr: "200"} {
		for _, path := range []string{"/api/v1/jobs", "/ui/events", "/"} {
			nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host)
			line, _ := bufio.NewReader(nc).ReadString('\n')
			nc.Close()
			if !strings.HasPrefix(line, "HTTP/1.1 "+want) {
				t.Errorf("Host %s, %s: %q, want %s", host, path, line, want)
			}
		}
	}
	if code, _ := get(t, base+"/api/v1/jobs", "Authorization", "Bearer pbsw_forged"); code != 401 {
		t.Fatalf("a forged token: %d", code)
	}
	if info, err := os.Stat(sock); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the proxy's socket: %v %v", info, err)
	}
	// Another local user on the proxy's socket is refused by its uid,
	// even with the socket's mode opened to everyone.
	if curl, err := exec.LookPath("curl"); err != nil {
		t.Log("no curl: another uid on the socket not tried")
	} else {
		os.Chmod(sock, 0o666)
		cmd := exec.Command(curl, "-sS", "--max-time", "10", "--unix-socket", sock, "-H", "X-Remote-User: root", "http://localhost/ui/whoami")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody.UID, Gid: nobody.GID}}
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "for the proxy (PBS_WEB_PROXY_UID) only") || strings.Contains(string(out), "manager") {
			t.Fatalf("nobody on the proxy's socket as root: %s", out)
		}
		os.Chmod(sock, 0o600)
	}

	// A stream as nobody sees only nobody's changes once others' jobs are
	// hidden.
	c.MustRun("qmgr", "-c", "set server query_other_jobs = False")
	req, _ := http.NewRequest("GET", proxyBase+"/ui/events", nil)
	req.Header.Set("X-Remote-User", "nobody")
	resp, err := proxy.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("nobody's stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	c.MustRun("qrls", rootJob)
	c.MustRun("qrls", nobodyJob)
	stream := bufio.NewReader(resp.Body)
	for {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("nobody's stream ended: %v", err)
		}
		if strings.Contains(line, rootJob) {
			t.Fatalf("nobody saw root's job change: %s", line)
		}
		if strings.Contains(line, nobodyJob) {
			break
		}
	}

	for _, path := range []string{"/api/v1/jobs", "/api/v1/nodes", "/api/v1/queues", "/api/v1/server", "/ui/events", "/ui/plan"} {
		if code, body := get(t, base+path); code != 403 {
			t.Errorf("anonymous %s, query_other_jobs false: %d %.200s", path, code, body)
		}
	}
	code, body = getWith(t, proxy, proxyBase+"/api/v1/jobs", asNobody...)
	if code != 200 || !strings.Contains(body, nobodyJob) || strings.Contains(body, `"`+rootJob+`"`) {
		t.Fatalf("nobody, query_other_jobs false: %d %s", code, body)
	}
	if code, _ := getWith(t, proxy, proxyBase+"/api/v1/jobs/"+rootJob, asNobody...); code != 403 {
		t.Fatalf("nobody asking for root's job: %d", code)
	}
	if code, body := get(t, base+"/api/v1/jobs", root...); code != 200 || !strings.Contains(body, "rootsecret") || !strings.Contains(body, "nobodysecret") {
		t.Fatalf("root's token: %d %s", code, body)
	}
	// Revoked: refused at once, no restart.
	c.MustRun("pbs_webtoken", "-d", "root")
	if code, _ := get(t, base+"/api/v1/jobs", root...); code != 401 {
		t.Fatalf("a revoked token: %d", code)
	}
}

// qsubLatencies submits n held jobs one after the other and returns how
// long each qsub took.
func qsubLatencies(t *testing.T, c *testcluster.Cluster, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		r := c.RunStdin("#!/bin/sh\ntrue\n", "qsub", "-h")
		if r.Code != 0 {
			t.Fatalf("qsub during the flood: %s", r)
		}
		out = append(out, time.Since(start))
		if r := c.Run("qstat", strings.TrimSpace(r.Stdout)); r.Code != 0 {
			t.Fatalf("qstat during the flood: %s", r)
		}
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[len(s)/2]
}

// A flood on the web port — silent connections past its budget, huge
// headers, malformed requests, clients that never read their listings,
// and a storm of listings — gets 4xx or 503 there, crashes nothing, and
// leaves the batch ports serving: qsub and qstat all succeed meanwhile,
// and the web port answers again once it ends.
func TestWebFloodBatchUnaffected(t *testing.T) {
	t.Parallel()
	c, base := webCluster(t, "")
	for i := 0; i < 300; i++ { // listings worth sending
		c.RunStdin("#!/bin/sh\ntrue\n", "qsub", "-h", "-N", fmt.Sprintf("filler%d", i))
	}
	quiet := qsubLatencies(t, c, 10)
	addr := strings.TrimPrefix(base, "http://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	note := func(s string) {
		mu.Lock()
		statuses[s]++
		mu.Unlock()
	}
	var loopers []*sync.WaitGroup
	loop := func(f func()) { loopers = append(loopers, loops(1, stop, f)) }
	// raw sends bytes on a new connection and notes the status line.
	raw := func(data string, read bool) {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			note("dial error")
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(nc, data)
		if !read {
			<-stop // hold it, never reading
			return
		}
		line, _ := bufio.NewReader(nc).ReadString('\n')
		if f := strings.Fields(line); len(f) >= 2 {
			note(f[1])
		} else {
			note("closed")
		}
	}
	for i := 0; i < 100; i++ { // silent connections: more than the pending budget
		go func() {
			if nc, err := net.Dial("tcp", addr); err == nil {
				<-stop
				nc.Close()
			}
		}()
	}
	for i := 0; i < 8; i++ { // listings never read
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw("GET /api/v1/jobs?history=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", false)
		}()
	}
	big := "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n"
	loop(func() { raw(big, true) })
	loop(func() { raw("\x16\x03\x01\x02\x00garbage\r\n\r\n", true) })
	loop(func() { raw("GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n", true) })
	for i := 0; i < 6; i++ {
		loop(func() { raw("GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", true) })
	}
	testcluster.WaitFor(t, "the flood under way", 20*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return statuses["200"] >= 10 && statuses["400"] >= 10 && statuses["431"] >= 10, fmt.Sprint(statuses)
	})
	during := qsubLatencies(t, c, 10)
	close(stop)
	wg.Wait()
	for _, l := range loopers {
		l.Wait()
	}
	t.Logf("qsub median quiet %v, during the flood %v; web answers %v", median(quiet), median(during), statuses)
	for _, d := range during {
		if d > 3*time.Second {
			t.Errorf("a qsub took %v during the flood", d)
		}
	}
	for s, n := range statuses {
		if s != "200" && s != "dial error" && s != "closed" && !strings.HasPrefix(s, "4") && s != "503" {
			t.Errorf("the web port answered %s (%d times)", s, n)
		}
	}
	if statuses["400"] == 0 || statuses["431"] == 0 {
		t.Errorf("the bad requests were not refused with 400 and 431: %v", statuses)
	}
	if c.ServerPid() == 0 || c.Run("qstat", "-B").Code != 0 {
		t.Fatalf("the server is gone:\n%s", c.ServerLog())
	}
	testcluster.WaitFor(t, "the web port answering again", 20*time.Second, func() (bool, string) {
		code, _ := get(t, base+"/api/v1/server")
		return code == 200, fmt.Sprint(code)
	})
}

// The flood: 64 event streams from each of five loopback
// addresses. Every local user is one peer of the web budget and one
// anonymous viewer of the event streams, so the flood holds at most 16
// streams and 64 connections; the proxy's users (and other hosts) are
// still served, streams included.
func TestWebLocalFloodSparesProxy(t *testing.T) {
	t.Parallel()
	c, base := webCluster(t, "PBS_WEB_PROXY_HEADER=X-Remote-User\nPBS_WEB_PROXY_UID=0\n")
	addr := strings.TrimPrefix(base, "http://")
	statuses := map[string]int{}
	for i := 2; i < 7; i++ {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(i))}, Timeout: 5 * time.Second}
		for j := 0; j < 64; j++ {
			nc, err := d.Dial("tcp", addr)
			if err != nil {
				statuses["dial error"]++
				continue
			}
			defer nc.Close() // held, as the attacker would
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(nc, "GET /ui/events HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			line, _ := bufio.NewReader(nc).ReadString('\n')
			if f := strings.Fields(line); len(f) >= 2 {
				statuses[f[1]]++
			} else {
				statuses["closed"]++
			}
		}
	}
	t.Logf("320 streams asked from 127.0.0.2-6: %v", statuses)
	if statuses["200"] != 16 || statuses["200"]+statuses["429"] > web.Budget.PerPeer {
		t.Fatalf("the local flood holds %d streams and %d connections answered (%v); want 16 streams and at most %d connections", statuses["200"], statuses["200"]+statuses["429"], statuses, web.Budget.PerPeer)
	}
	proxy := unixHTTP(filepath.Join(c.Home, "pbs_web.sock"))
	if code, body := getWith(t, proxy, "http://localhost/api/v1/server", "X-Remote-User", "nobody"); code != 200 {
		t.Fatalf("the proxy's user during the flood: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", "http://localhost/ui/events", nil)
	req.Header.Set("X-Remote-User", "nobody")
	resp, err := proxy.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the proxy's user's stream during the flood: %v %v", err, resp)
	}
	resp.Body.Close()
}
