package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// chromium is the path of a Chromium to drive, or the test is skipped:
// scripts/test.sh installs Debian's as root when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium (apt-get install chromium): the browser test needs one")
	return ""
}

// artifactDir is where the browser tests keep their screenshots:
// $GOPBS_ARTIFACTS, else integration/testdata/artifacts (not in git).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GOPBS_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless Chromium and returns a context for one tab,
// and the URLs the tab requested (guarded by the mutex).
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1400, 1100),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox to root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	var mu sync.Mutex
	var urls []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			urls = append(urls, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), urls...)
	}
}

// waitPage polls the JavaScript predicate in the page for up to timeout
// and reports how long it took to hold.
func waitPage(t *testing.T, ctx context.Context, what, predicate string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		t.Fatalf("%s: not on the page within %v: %v", what, timeout, err)
	}
	return time.Since(start)
}

// jobStateJS is a predicate: the jobs table shows job id in state st.
func jobStateJS(id, st string) string {
	return fmt.Sprintf(`(() => { const r = document.querySelector('#jobs tbody tr[data-id=%q] td.state'); return !!r && r.textContent === %q; })()`, id, st)
}

// The status page in a real browser: it shows the queues, the node grid,
// the jobs and the plan; a job's state changes on screen within 2 s of
// the command that changed it (qsub, qrls, qdel), over the live event
// stream; a job's full record opens from its row; and the page fetches
// nothing but from the server that served it. Screenshots are kept in
// artifactDir.
func TestWebPageInBrowser(t *testing.T) {
	t.Parallel()
	ctx, requested := browser(t)
	c, base := webCluster(t, "")
	c.AddMom("n1", testcluster.MomOptions{})
	c.MustRun("qmgr", "-c", "set node n1 resources_available.ncpus = 2")
	c.StartScheduler("pbs_sched")
	// Dedicated time two hours from now, for the timeline to shade.
	from := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
	ded := fmt.Sprintf("%s %s\n", from.Format("01/02/2006 15:04"), from.Add(time.Hour).Format("01/02/2006 15:04"))
	if err := os.WriteFile(filepath.Join(c.Home, "sched_priv", "dedicated_time"), []byte(ded), 0o644); err != nil {
		t.Fatal(err)
	}
	running := c.Submit("#!/bin/sh\n#PBS -N longrun\nsleep 300\n", "-l", "walltime=00:20:00", "-l", "select=1:ncpus=1")
	c.WaitJobState(running, "R", 20*time.Second)
	// The blocker keeps the big job waiting (and so with an estimated
	// start) after the running job is deleted below: without it the big
	// job could start, and end, before its full record is opened.
	blocker := c.Submit("#!/bin/sh\n#PBS -N blocker\nsleep 300\n", "-l", "walltime=00:25:00", "-l", "select=1:ncpus=1")
	c.WaitJobState(blocker, "R", 20*time.Second)
	waiting := c.Submit("#!/bin/sh\n#PBS -N bigone\n", "-l", "walltime=00:30:00", "-l", "select=1:ncpus=2")
	testcluster.WaitFor(t, "the big job's reservation", 30*time.Second, func() (bool, string) {
		v, _ := c.JobAttr(waiting, "estimated.start_time")
		return v != "", v
	})

	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("open %s: %v", base, err)
	}
	waitPage(t, ctx, "the live stream", `document.getElementById('live').classList.contains('on')`, 15*time.Second)
	waitPage(t, ctx, "the running job", jobStateJS(running, "R"), 10*time.Second)
	waitPage(t, ctx, "node n1 in the grid", `!!document.querySelector('#nodes .node[data-name="n1"]')`, 5*time.Second)
	waitPage(t, ctx, "the queue", `!!document.querySelector('#queues tr[data-queue="workq"]')`, 5*time.Second)
	waitPage(t, ctx, "the running job's bar", fmt.Sprintf(`!!document.querySelector('#plan g[data-kind="running"][data-id=%q]')`, running), 5*time.Second)
	waitPage(t, ctx, "the reservation's bar", fmt.Sprintf(`!!document.querySelector('#plan g[data-kind="estimated"][data-id=%q]')`, waiting), 5*time.Second)
	waitPage(t, ctx, "the dedicated time", `!!document.querySelector('#plan rect.ded')`, 5*time.Second)

	// A new job appears, then changes state, within 2 s of each command.
	held := c.Submit("#!/bin/sh\n#PBS -N webheld\nsleep 1\n", "-h", "-l", "walltime=00:01:00", "-l", "select=1:ncpus=1")
	if d := waitPage(t, ctx, "the new held job", jobStateJS(held, "H"), 2*time.Second); d > 2*time.Second {
		t.Errorf("the held job showed after %v", d)
	}
	shot(t, ctx, "web-status.png")
	c.MustRun("qrls", held)
	waitPage(t, ctx, "the released job leaving H", fmt.Sprintf(`(() => { const r = document.querySelector('#jobs tbody tr[data-id=%q] td.state'); return !!r && r.textContent !== 'H'; })()`, held), 2*time.Second)
	c.MustRun("qdel", running)
	waitPage(t, ctx, "the deleted job leaving R", fmt.Sprintf(`(() => { const r = document.querySelector('#jobs tbody tr[data-id=%q] td.state'); return !!r && r.textContent !== 'R'; })()`, running), 2*time.Second)
	waitPage(t, ctx, "the change in the events list", fmt.Sprintf(`!!document.querySelector('#events li[data-job=%q]')`, running), 2*time.Second)
	// The listings follow: the node lets go of the job, the plan drops it.
	waitPage(t, ctx, "the node without the deleted job", fmt.Sprintf(`!document.querySelector('#nodes .node[data-name="n1"] .jobs').textContent.includes(%q)`, running), 2*time.Second)
	waitPage(t, ctx, "the plan without the deleted job", fmt.Sprintf(`!document.querySelector('#plan g[data-kind="running"][data-id=%q]')`, running), 2*time.Second)

	// Filter, then a job's full record.
	if err := chromedp.Do(ctx, chromedp.SendKeys("#job-filter", "bigone")); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "the filter", fmt.Sprintf(`document.querySelectorAll('#jobs tbody tr').length === 1 && !!document.querySelector('#jobs tbody tr[data-id=%q]')`, waiting), 2*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(fmt.Sprintf(`#jobs tbody tr[data-id=%q]`, waiting))); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, "the job's full record", `(() => { const d = document.getElementById('job-detail'); return !d.hidden && d.textContent.includes('Resource_List.walltime') && d.textContent.includes('estimated.start_time'); })()`, 5*time.Second)
	shot(t, ctx, "web-job-record.png")

	for _, u := range requested() {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s, outside the server", u)
		}
	}
}

// shot saves a screenshot of the whole page as name in artifactDir.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot: %s", abs)
}
