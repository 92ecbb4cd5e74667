package integration

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopbs/internal/testcluster"
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
	auth := []string{"Authorization", "Bearer " + strings.TrimSpace(c.MustRun("pbs_webtoken", "root"))}
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
