package hookrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/testcluster"
)

func python(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(DefaultPython); err != nil {
		t.Skipf("no %s (scripts/test.sh installs Debian's python3)", DefaultPython)
	}
}

func newRunner(t *testing.T) *Runner {
	python(t)
	r := New(Config{Dir: t.TempDir()})
	t.Cleanup(r.Close)
	return r
}

func mkHook(t *testing.T, script string, alarm int) *hook.Hook {
	h, err := hook.New("h1")
	if err != nil {
		t.Fatal(err)
	}
	h.Events, h.Alarm, h.Script = hook.Events(hook.QueueJob), alarm, []byte(script)
	return h
}

func queuejob(h *hook.Hook) Request {
	return Request{
		Hook: h,
		Event: map[string]any{"type": int(hook.QueueJob), "requestor": "alice", "requestor_host": "login1",
			"job": map[string]any{"id": nil, "attrs": map[string]any{
				"Job_Name": "sim", "queue": "workq", "Priority": "3",
				"Resource_List": map[string]any{"walltime": "00:10:00", "mem": "2gb", "ncpus": "4", "select": "1:ncpus=4"},
				"Variable_List": [][2]string{{"PBS_O_HOME", "/home/alice"}},
			}}},
		Settable:      map[string]any{"job": "*"},
		Server:        map[string]any{"name": "srv", "attrs": map[string]any{"default_queue": "workq"}},
		ResourceTypes: map[string]string{"walltime": "duration", "mem": "size", "ncpus": "long"},
	}
}

// Each way a run can end, and what comes back of it.
func TestRun(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	cases := []struct {
		name, script string
		alarm        int
		outcome      Outcome
		message      string // a part of Message
		changes      string // the changes, rendered
	}{
		{"accept untouched", "import pbs\npbs.event().accept()\n", 5, Accepted, "", ""},
		{"no verdict is an accept", "x = 1\n", 5, Accepted, "", ""},
		{"typed reads and writes", `import pbs
e = pbs.event()
j = e.job
assert j.Resource_List["walltime"] == 600, j.Resource_List["walltime"]
assert str(j.Resource_List["walltime"]) == "00:10:00"
assert str(pbs.size("10gb") + pbs.size("10mb")) == "10250mb" and str(pbs.size(100)) == "100b" and str(pbs.size("7m")) == "7mb"
assert str(pbs.duration("1:00:00")) == "1:00:00" and pbs.duration("1:00:00") == 3600
assert j.Resource_List["mem"] == pbs.size("2048mb")
assert j.Resource_List["ncpus"] == 4
assert str(j.Resource_List["select"]) == "1:ncpus=4"
assert j.Resource_List["nosuch"] is None
assert j.Priority == 3 and j.Job_Name == "sim" and j.queue.name == "workq"
assert e.requestor == "alice" and e.type == pbs.QUEUEJOB and j.id is None
assert pbs.server().name == "srv"
j.Resource_List["walltime"] = pbs.duration("1:00:00")
j.Resource_List["mem"] = j.Resource_List["mem"] + pbs.size("1gb")
j.Job_Name = "renamed"
j.Variable_List["SITE"] = "x"
e.accept()
`, 5, Accepted, "", "Resource_List.walltime=1:00:00 Resource_List.mem=3gb Job_Name=renamed Variable_List=[[PBS_O_HOME /home/alice] [SITE x]]"},
		{"reject", "import pbs\npbs.event().reject('walltime is too long')\n", 5, Rejected, "walltime is too long", ""},
		{"reject without a message", "import pbs\npbs.event().reject()\n", 5, Rejected, "", ""},
		{"exception", "import pbs\nraise ValueError('bad site config')\n", 5, Failed, "ValueError: bad site config", ""},
		{"syntax error at run", "def (:\n", 5, Failed, "SyntaxError", ""},
		{"alarm", "while True:\n    pass\n", 1, Alarm, "alarm", ""},
		{"exit of its own", "import os\nos._exit(3)\n", 5, Crashed, "without a verdict", ""},
		{"memory bomb", "x = bytearray(8 << 30)\n", 5, Failed, "MemoryError", ""},
		{"flood", "import pbs\nwhile True:\n    pbs.logmsg(pbs.LOG_DEBUG, 'x' * 100000)\n", 10, Crashed, "output limit", ""},
		{"read-only", "import pbs\npbs.event().job.euser = 'root'\n", 5, Failed, "BadAttributeValueError", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := queuejob(mkHook(t, c.script, c.alarm))
			if c.name == "read-only" {
				req.Settable = map[string]any{"job": []string{"Job_Name"}}
			}
			res := r.Run(context.Background(), req)
			if res.Outcome != c.outcome || !strings.Contains(res.Message, c.message) {
				t.Fatalf("%s %q (traceback %s), want %s with %q", res.Outcome, res.Message, res.Traceback, c.outcome, c.message)
			}
			var got []string
			for _, ch := range res.Changes {
				n := ch.Name
				if ch.Resource != "" {
					n += "." + ch.Resource
				}
				if ch.Vars != nil {
					got = append(got, n+"="+strings.ReplaceAll(strings.Trim(strings.ReplaceAll(fmtVars(ch.Vars), "\n", " "), " "), "  ", " "))
				} else {
					got = append(got, n+"="+ch.Value)
				}
			}
			if g := strings.Join(got, " "); g != c.changes {
				t.Errorf("changes %q, want %q", g, c.changes)
			}
		})
	}
}

func fmtVars(v [][2]string) string {
	var parts []string
	for _, p := range v {
		parts = append(parts, "["+p[0]+" "+p[1]+"]")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// A hook that forks a helper cannot leave it behind: the alarm kills the
// run's whole process group.
func TestAlarmKillsTheGroup(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := "import subprocess, time\np = subprocess.Popen(['sleep', '300'])\nopen(" + strconv.Quote(pidFile) + ", 'w').write(str(p.pid))\ntime.sleep(300)\n"
	res := r.Run(context.Background(), queuejob(mkHook(t, script, 1)))
	if res.Outcome != Alarm {
		t.Fatalf("%s %q", res.Outcome, res.Message)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(raw))
	testcluster.WaitFor(t, "the helper killed", 10*time.Second, func() (bool, string) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z "), string(b)
	})
}

// Lookups go to Query; log lines to the daemon's log; the config file is
// where pbs.hook_config_filename says.
func TestQueryAndConfig(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	h := mkHook(t, `import pbs, json
cfg = json.load(open(pbs.hook_config_filename))
q = pbs.server().queue("long")
if q is None or q.max_run != cfg["want"]:
    pbs.event().reject("queue long: %r" % (q and q.max_run))
if pbs.server().vnode("nosuch") is not None:
    pbs.event().reject("a vnode that does not exist")
pbs.logmsg(pbs.EVENT_DEBUG, "looked")
`, 5)
	h.Config, h.ConfigSuffix = []byte(`{"want": "[u:PBS_GENERIC=2]"}`), ".json"
	if err := r.Sync([]*hook.Hook{h}); err != nil {
		t.Fatal(err)
	}
	req := queuejob(h)
	req.Query = func(what, name string) (any, error) {
		if what == "queue" && name == "long" {
			return map[string]any{"max_run": "[u:PBS_GENERIC=2]"}, nil
		}
		return nil, nil
	}
	if res := r.Run(context.Background(), req); res.Outcome != Accepted {
		t.Fatalf("%s %q %s", res.Outcome, res.Message, res.Traceback)
	}
}

// A script that does not compile is refused with Python's message.
func TestCompile(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	if err := r.Compile(context.Background(), "good", []byte("import pbs\n"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	err := r.Compile(context.Background(), "bad", []byte("import pbs\nif True\n    pass\n"), 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "SyntaxError") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a script that does not compile: %v", err)
	}
}

// Runs at once share the interpreter; one that dies is started again.
func TestConcurrentAndRestart(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	h := mkHook(t, "import pbs\npbs.event().job.Job_Name = 'x'\n", 10)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := r.Run(context.Background(), queuejob(h)); res.Outcome != Accepted || len(res.Changes) != 1 {
				t.Errorf("%s %q", res.Outcome, res.Message)
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	r.zyg.cmd.Process.Kill()
	<-r.zyg.done
	r.mu.Unlock()
	if res := r.Run(context.Background(), queuejob(h)); res.Outcome != Accepted {
		t.Fatalf("after the interpreter died: %s %q", res.Outcome, res.Message)
	}
}

// BenchmarkRun is one trivial queuejob hook's run: a fork of the
// interpreter, the event there and the verdict back.
func BenchmarkRun(b *testing.B) {
	if _, err := exec.LookPath(DefaultPython); err != nil {
		b.Skip("no python3")
	}
	r := New(Config{Dir: b.TempDir()})
	defer r.Close()
	h, _ := hook.New("h1")
	h.Events, h.Script = hook.Events(hook.QueueJob), []byte("import pbs\npbs.event().accept()\n")
	req := queuejob(h)
	for b.Loop() {
		if res := r.Run(context.Background(), req); res.Outcome != Accepted {
			b.Fatal(res.Message)
		}
	}
}
