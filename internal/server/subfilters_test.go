package server

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// filterBed is a test server with a directory of filter scripts that log
// their calls to one file.
type filterBed struct {
	t    *testing.T
	c    *proto.Client
	dir  string
	log  string
	sock string
}

func newFilterBed(t *testing.T) *filterBed {
	home, err := os.MkdirTemp("", "srvt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	_, c := newTestServerAt(t, home, func(*Config) {})
	dir := t.TempDir()
	return &filterBed{t: t, c: c, dir: dir, log: filepath.Join(dir, "calls"), sock: filepath.Join(home, "s.sock")}
}

// client is another connection to the server.
func (b *filterBed) client() *proto.Client {
	c, err := proto.Dial(proto.DialOptions{Network: "unix", Address: b.sock})
	if err != nil {
		b.t.Error(err)
		return nil
	}
	b.t.Cleanup(func() { c.Close() })
	return c
}

// filter writes a script that logs "name $2" and then runs body.
func (b *filterBed) filter(name, body string) string {
	b.t.Helper()
	p := filepath.Join(b.dir, name)
	text := "#!/bin/sh\necho \"" + name + " $2\" >> " + b.log + "\n" + body
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		b.t.Fatal(err)
	}
	return p
}

func (b *filterBed) set(obj proto.ObjectType, name string, attrs ...proto.Attr) {
	b.t.Helper()
	if err := b.c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: obj, Name: name, Attrs: attrs}); err != nil {
		b.t.Fatalf("set %v: %v", attrs, err)
	}
}

func (b *filterBed) serverFilters(paths ...string) {
	b.set(proto.ObjServer, "", proto.Attr{Name: proto.AttrSubmissionFilters, Value: strings.Join(paths, ",")})
}

// calls returns the logged calls and clears the log.
func (b *filterBed) calls() string {
	data, _ := os.ReadFile(b.log)
	os.Remove(b.log)
	return strings.TrimSpace(string(data))
}

func (b *filterBed) attr(id, name, resource string) string {
	b.t.Helper()
	jobs, _, err := b.c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
	if err != nil || len(jobs) != 1 {
		b.t.Fatalf("status %s: %v", id, err)
	}
	for _, a := range jobs[0].Attrs {
		if a.Name == name && a.Resource == resource {
			return a.Value
		}
	}
	return ""
}

// sed edits the job file in place: exit 1 with a rewrite.
func sed(expr string) string { return "sed -i '" + expr + "' \"$1\"\n" }

// Exit 0 accepts the job as submitted, even when the program changed the
// file; exit 1 accepts the rewrite, which the next filter sees and qstat
// shows. The chain runs in order, with the job's context.
func TestSubmissionFilterAcceptAndRewrite(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	ignored := b.filter("a", sed(`s/"Job_Name":"[^"]*"/"Job_Name":"ignored"/`)+"exit 0\n")
	walltime := b.filter("b", sed(`s/"Resource_List":{/"Resource_List":{"walltime":"00:42:00",/`)+"exit 1\n")
	// c accepts only when it sees b's rewrite and the context.
	check := b.filter("c", `grep -q '"walltime":"00:42:00"' "$1" || exit 7
[ "$PBS_FILTER_KIND" = submission ] && [ "$PBS_FILTER_USER" = "$(id -un)" ] && [ "$PBS_FILTER_QUEUE" = workq ] || exit 8
grep -q "\"$PBS_FILTER_JOB_ID\":{" "$1" || exit 9
exit 0
`)
	b.serverFilters(ignored, walltime, check)
	id, err := submit(b.c, proto.Attr{Name: proto.AttrJobName, Value: "mine"}, proto.Attr{Name: proto.AttrResourceList, Resource: "ncpus", Value: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.calls(); got != "a \nb \nc" {
		t.Errorf("calls %q", got)
	}
	if got := b.attr(id, proto.AttrJobName, ""); got != "mine" {
		t.Errorf("Job_Name %q: exit 0 must keep the job as submitted", got)
	}
	if got := b.attr(id, proto.AttrResourceList, "walltime"); got != "00:42:00" {
		t.Errorf("walltime %q: the rewrite of exit 1 was not kept", got)
	}
}

// A filter may move the job to another queue.
func TestSubmissionFilterChangesQueue(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	if err := b.c.Manager(&proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjQueue, Name: "big", Attrs: []proto.Attr{
		{Name: "queue_type", Value: "e"}, {Name: "enabled", Value: "t"}, {Name: "started", Value: "t"}}}); err != nil {
		t.Fatal(err)
	}
	b.serverFilters(b.filter("mover", sed(`s/"queue":"workq"/"queue":"big"/`)+"exit 1\n"))
	id, err := submit(b.c)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.attr(id, proto.AttrQueue, ""); got != "big" {
		t.Errorf("queue %q", got)
	}
}

// A job for a queue that does not exist is refused before any filter
// runs (filters run as root and take an id each): the filter is never
// called, no id is used, and the error names the queue.
func TestSubmissionFilterNotRunForUnknownQueue(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	b.serverFilters(b.filter("f", "exit 0\n"))
	first, err := submit(b.c)
	if err != nil {
		t.Fatal(err)
	}
	b.calls()
	_, err = b.c.Submit(&proto.SubmitRequest{Script: []byte("#!/bin/sh\n"), Queue: "nosuchq"})
	if proto.CodeOf(err) != proto.PBSE_UNKQUE || !strings.Contains(err.Error(), "nosuchq") {
		t.Fatalf("submission to an unknown queue: %v, want PBSE_UNKQUE naming it", err)
	}
	if got := b.calls(); got != "" {
		t.Errorf("filters ran for a job to an unknown queue: %q", got)
	}
	second, err := submit(b.c)
	if err != nil {
		t.Fatal(err)
	}
	if a, z := seqOf(first), seqOf(second); z != a+1 {
		t.Errorf("jobs %s then %s around the refusal: the refused one used an id", first, second)
	}
}

// seqOf is the sequence number of a job id.
func seqOf(id string) int {
	n, _ := strconv.Atoi(strings.SplitN(id, ".", 2)[0])
	return n
}

// Every way a filter refuses: the message names the filter and why, and
// the filters that accepted before it are called again, last first, with
// --revert.
func TestSubmissionFilterRefusals(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	first := b.filter("first", "exit 0\n")
	second := b.filter("second", sed(`s/"Resource_List":{/"Resource_List":{"walltime":"00:01:00",/`)+"exit 1\n")
	missing := filepath.Join(b.dir, "missing")
	b.set(proto.ObjServer, "", proto.Attr{Name: proto.AttrSubmissionFilterTimeout, Value: "1"})
	for _, tc := range []struct {
		name, body string
		want       string
	}{
		{"code3", "echo 'more than 4 cpus' >&2\necho more >&2\nexit 3\n", "exit 3: more than 4 cpus"},
		{"code2", "exit 2\n", "exit 2"},
		{"timeout", "sleep 10\n", "timed out after 1s"},
		{"badjson", "echo '{' > \"$1\"\nexit 1\n", "exit 1 with a rewrite that is refused: not a JSON object"},
		{"owner", sed(`s/"Job_Owner":"[^"]*"/"Job_Owner":"eve@h"/`) + "exit 1\n", "Job_Owner changed, which a filter may not change"},
		{"jobid", sed(`s/"\([0-9]*\)\.srv":{/"9\1.srv":{/`) + "exit 1\n", "the job id changed from"},
		{"badvalue", sed(`s/"Resource_List":{/"Resource_List":{"mem":"lots",/`) + "exit 1\n", "Resource_List.mem"},
		{"missing", "", "not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last := missing
			if tc.name != "missing" {
				last = b.filter(tc.name, tc.body)
			}
			b.serverFilters(first, second, last)
			start := time.Now()
			_, err := submit(b.c, proto.Attr{Name: proto.AttrResourceList, Resource: "ncpus", Value: "1"})
			if err == nil {
				t.Fatal("the job was accepted")
			}
			if proto.CodeOf(err) != proto.PBSE_PERM || !strings.Contains(err.Error(), "submission filter "+last+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s and %q", err, last, tc.want)
			}
			want := "first \nsecond \n" + tc.name + " \nsecond --revert\nfirst --revert"
			if tc.name == "missing" {
				want = "first \nsecond \nsecond --revert\nfirst --revert"
			}
			if got := b.calls(); got != want {
				t.Errorf("calls:\n%s\nwant:\n%s", got, want)
			}
			if took := time.Since(start); took > 6*time.Second {
				t.Errorf("refusal took %v", took)
			}
		})
	}
	jobs, _, _ := b.c.StatusJobs(&proto.StatusRequest{})
	if len(jobs) != 0 {
		t.Errorf("refused jobs are visible: %v", jobs)
	}
}

// A queue's filters run before the server's; a job refused by admission
// after every filter accepted it is reverted with all of them.
func TestSubmissionFilterQueueFirstAndAdmissionRevert(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	b.set(proto.ObjQueue, "workq", proto.Attr{Name: proto.AttrSubmissionFilters, Value: b.filter("queue1", "exit 0\n") + "," + b.filter("queue2", "exit 0\n")})
	b.serverFilters(b.filter("server1", "exit 0\n"))
	if _, err := submit(b.c); err != nil {
		t.Fatal(err)
	}
	if got := b.calls(); got != "queue1 \nqueue2 \nserver1" {
		t.Errorf("calls %q", got)
	}
	b.set(proto.ObjQueue, "workq", proto.Attr{Name: proto.AttrMaxQueuable, Value: "1"})
	if _, err := submit(b.c); proto.CodeOf(err) != proto.PBSE_MAXQUED {
		t.Fatalf("submit past max_queuable: %v", err)
	}
	if got := b.calls(); got != "queue1 \nqueue2 \nserver1 \nserver1 --revert\nqueue2 --revert\nqueue1 --revert" {
		t.Errorf("calls %q", got)
	}
}

// Filter paths must be absolute, and the timeout within bounds.
func TestSubmissionFilterSettings(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	for _, a := range []proto.Attr{
		{Name: proto.AttrSubmissionFilters, Value: "relative/f"},
		{Name: proto.AttrSubmissionFilterTimeout, Value: "0"},
		{Name: proto.AttrSubmissionFilterTimeout, Value: "46"},
	} {
		err := b.c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{a}})
		if proto.CodeOf(err) != proto.PBSE_BADATVAL {
			t.Errorf("set %s = %s: %v", a.Name, a.Value, err)
		}
	}
}

// A filter that sleeps does not hold up other clients: their qsub, qstat
// and qmgr answer while it runs.
func TestSlowSubmissionFilterDoesNotStallOthers(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	b.serverFilters(b.filter("slow", `grep -q '"Job_Name":"slow"' "$1" && sleep 10
exit 0
`))
	done := make(chan error, 1)
	slow := b.client()
	go func() {
		_, err := submit(slow, proto.Attr{Name: proto.AttrJobName, Value: "slow"})
		done <- err
	}()
	// Wait until the slow filter runs.
	testcluster.WaitFor(t, "the slow filter running", 5*time.Second, func() (bool, string) {
		log := readFile(b.log)
		return strings.Contains(log, "slow"), log
	})
	var wg sync.WaitGroup
	var worst time.Duration
	var mu sync.Mutex
	for i := 0; i < 3; i++ {
		c := b.client()
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if _, err := submit(c); err != nil {
				t.Error(err)
			}
			if err := c.Manager(&proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjServer, Attrs: []proto.Attr{{Name: proto.AttrComment, Value: "busy"}}}); err != nil {
				t.Error(err)
			}
			if _, _, err := c.StatusJobs(&proto.StatusRequest{}); err != nil {
				t.Error(err)
			}
			mu.Lock()
			worst = max(worst, time.Since(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if worst > 2*time.Second {
		t.Errorf("other clients waited %v while a filter slept", worst)
	}
	select {
	case err := <-done:
		t.Fatalf("the slow submission ended early: %v", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("the slow submission: %v", err)
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// qalter of a job that has not started runs the submission filters on the
// job as altered: the file shows the new request normalised (the select's
// total), PBS_FILTER_OPERATION says qalter, a rewrite is kept, a refusal
// refuses the alteration (the job keeps its request) and reverts the
// filters before it.
func TestSubmissionFiltersJudgeQalter(t *testing.T) {
	t.Parallel()
	b := newFilterBed(t)
	first := b.filter("first", `[ "$PBS_FILTER_OPERATION" = qalter ] || exit 0
grep -q '"ncpus":\(12\|99\),' "$1" || exit 5
`+sed(`s/"Resource_List":{/"Resource_List":{"walltime":"00:07:00",/`)+"exit 1\n")
	limit := b.filter("limit", `grep -q '"ncpus":99,' "$1" && { echo "too many" >&2; exit 2; }
exit 0
`)
	b.serverFilters(first, limit)
	id, err := submit(b.c, proto.Attr{Name: proto.AttrResourceList, Resource: "ncpus", Value: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.calls(); got != "first \nlimit" {
		t.Fatalf("calls at qsub %q", got)
	}
	if err := b.c.AlterJob(id, []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "3:ncpus=4"}}); err != nil {
		t.Fatalf("qalter the filters accept: %v", err)
	}
	if got := b.calls(); got != "first \nlimit" {
		t.Errorf("calls at qalter %q", got)
	}
	if got := b.attr(id, proto.AttrResourceList, "walltime"); got != "00:07:00" {
		t.Errorf("walltime %q: a qalter filter's rewrite was not kept", got)
	}
	if got := b.attr(id, proto.AttrResourceList, "ncpus"); got != "12" {
		t.Errorf("ncpus %q after qalter select=3:ncpus=4", got)
	}
	err = b.c.AlterJob(id, []proto.Attr{{Name: proto.AttrResourceList, Resource: "select", Value: "1:ncpus=99"}})
	if proto.CodeOf(err) != proto.PBSE_PERM || !strings.Contains(err.Error(), "submission filter "+limit+": exit 2: too many") {
		t.Fatalf("qalter the filters refuse: %v", err)
	}
	if got := b.calls(); got != "first \nlimit \nfirst --revert" {
		t.Errorf("calls at a refused qalter %q", got)
	}
	if got := b.attr(id, proto.AttrResourceList, "ncpus"); got != "12" {
		t.Errorf("ncpus %q after a refused qalter", got)
	}
}
