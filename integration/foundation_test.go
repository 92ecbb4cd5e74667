package integration

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

var jobIDLine = regexp.MustCompile(`^[0-9]+\.localhost\n$`)

func TestQsubPrintsOnlyTheIDAndQstatShowsTheJob(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	r := c.RunStdin("#!/bin/sh\n#PBS -N hello\necho hi\n", "qsub", "-l", "walltime=1:00:00")
	if r.Code != 0 || !jobIDLine.MatchString(r.Stdout) || r.Stderr != "" {
		t.Fatalf("qsub: want exactly one id line and nothing on stderr, got %s", r)
	}
	id := strings.TrimSuffix(r.Stdout, "\n")

	table := c.MustRun("qstat")
	if !strings.Contains(table, id) || !strings.Contains(table, "hello") || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(id)+`\s+hello\s+\S+\s+\S+\s+Q\s+workq`).MatchString(table) {
		t.Fatalf("qstat does not show the queued job:\n%s", table)
	}
	full := c.MustRun("qstat", "-f", id)
	for _, want := range []string{"Job Id: " + id, "    Job_Name = hello", "    job_state = Q", "    queue = workq", "    Resource_List.walltime = 01:00:00"} {
		if !strings.Contains(full, want+"\n") {
			t.Errorf("qstat -f lacks %q:\n%s", want, full)
		}
	}
	// The bare sequence number names the same job.
	bare := strings.SplitN(id, ".", 2)[0]
	if out := c.MustRun("qstat", "-f", bare); !strings.Contains(out, "Job Id: "+id) {
		t.Errorf("qstat -f %s does not show %s:\n%s", bare, id, out)
	}
}

func TestUnknownJobExitStatus(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	r := c.Run("qstat", "999.localhost")
	if r.Code != 153 || !strings.Contains(r.Stderr, "Unknown Job Id 999.localhost") {
		t.Fatalf("qstat of an unknown job: %s", r)
	}
	r = c.Run("qdel", "999")
	if r.Code != 153 || !strings.Contains(r.Stderr, "Unknown Job Id") {
		t.Fatalf("qdel of an unknown job: %s", r)
	}
}

// Kill -9 the server while 50 clients submit 1,000 jobs: every id a qsub
// printed survives with its script, and no id is ever handed out twice.
func TestKill9DuringConcurrentSubmissions(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	const clients, perClient = 50, 20
	var mu sync.Mutex
	printed := map[string]string{} // id -> script
	var dup []string
	var wg sync.WaitGroup
	var accepted sync.WaitGroup
	accepted.Add(300)
	var acceptedCount int
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perClient; {
				script := fmt.Sprintf("#!/bin/sh\necho client %d job %d\n", w, i)
				r := c.RunStdin(script, "qsub")
				if r.Code != 0 {
					time.Sleep(20 * time.Millisecond) // server down: retry
					continue
				}
				id := strings.TrimSpace(r.Stdout)
				mu.Lock()
				if _, seen := printed[id]; seen {
					dup = append(dup, id)
				}
				printed[id] = script
				acceptedCount++
				if acceptedCount <= 300 {
					accepted.Done()
				}
				mu.Unlock()
				i++
			}
		}(w)
	}
	accepted.Wait()
	c.KillServer(syscall.SIGKILL)
	c.StartServer()
	wg.Wait()
	if len(dup) > 0 {
		t.Fatalf("ids printed twice: %v", dup)
	}
	if len(printed) != clients*perClient {
		t.Fatalf("%d distinct ids printed, want %d", len(printed), clients*perClient)
	}
	// Crash again right after the last acknowledgement, then read the
	// store the way the restarted server does.
	c.KillServer(syscall.SIGKILL)
	st, fresh, err := store.Open(filepath.Join(c.Home, "server_priv"), store.Options{})
	if err != nil || fresh {
		t.Fatalf("store after crash: %v (fresh %v)", err, fresh)
	}
	snap, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int64{}
	for _, j := range snap.Jobs {
		byID[j.ID] = j.Seq
	}
	for id, script := range printed {
		seq, ok := byID[id]
		if !ok {
			t.Errorf("job %s was acknowledged but is not in the store", id)
			continue
		}
		got, err := st.Script(seq)
		if err != nil || string(got) != script {
			t.Errorf("job %s: script %q, %v; want %q", id, got, err, script)
		}
	}
	st.Close()
	// After restart the server knows every job and continues numbering.
	c.StartServer()
	// Jobs whose qsub died with the server may exist too (committed, never
	// acknowledged); every acknowledged one must.
	listed := map[string]bool{}
	for _, id := range strings.Fields(c.MustRun("qselect")) {
		listed[id] = true
	}
	for id := range printed {
		if !listed[id] {
			t.Errorf("qselect after restart lacks acknowledged job %s", id)
		}
	}
	if len(listed) > len(printed)+clients {
		t.Errorf("qselect lists %d jobs; at most %d were submitted", len(listed), len(printed)+clients)
	}
	id := c.Submit("#!/bin/sh\n")
	for old := range printed {
		if testcluster.Seq(old) >= testcluster.Seq(id) {
			t.Fatalf("new job %s does not number after %s", id, old)
		}
	}
}

// A user who is not a manager cannot change the server or delete another
// user's job, but can manage their own.
func TestNonManagerPermissions(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run commands as another user")
	}
	c := testcluster.New(t, testcluster.Options{})
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	rootJob := c.Submit("#!/bin/sh\n")

	r := c.RunAs(nobody, "", "qmgr", "-c", "set server scheduling = False")
	if r.Code == 0 || !strings.Contains(r.Stderr, "Unauthorized Request") {
		t.Fatalf("qmgr by a non-manager: %s", r)
	}
	if v, _ := c.JobAttr(rootJob, "job_state"); v != "Q" {
		t.Fatalf("root's job state %q", v)
	}
	r = c.RunAs(nobody, "", "qdel", rootJob)
	if r.Code != int(proto.PBSE_PERM)%256 || !strings.Contains(r.Stderr, "Unauthorized Request") {
		t.Fatalf("qdel of another user's job: %s", r)
	}
	if v, _ := c.JobAttr(rootJob, "job_state"); v != "Q" {
		t.Fatalf("root's job was changed by a non-owner: state %q", v)
	}
	r = c.RunAs(nobody, "", "qhold", rootJob)
	if r.Code == 0 {
		t.Fatalf("qhold of another user's job succeeded: %s", r)
	}
	out := c.MustRun("qmgr", "-c", "list server")
	if !strings.Contains(out, "scheduling = True") {
		t.Fatalf("server changed by a non-manager:\n%s", out)
	}
	// Their own job is theirs to hold, release and delete.
	r = c.RunAs(nobody, "#!/bin/sh\n", "qsub")
	if r.Code != 0 {
		t.Fatalf("qsub as nobody: %s", r)
	}
	own := strings.TrimSpace(r.Stdout)
	for _, cmd := range []string{"qhold", "qrls", "qdel"} {
		if r := c.RunAs(nobody, "", cmd, own); r.Code != 0 {
			t.Fatalf("%s of own job: %s", cmd, r)
		}
	}
	// A user hold cannot be replaced by a system hold by a user.
	r = c.RunAs(nobody, "#!/bin/sh\n", "qsub")
	own = strings.TrimSpace(r.Stdout)
	if r := c.RunAs(nobody, "", "qhold", "-h", "s", own); r.Code == 0 {
		t.Fatalf("user set a system hold: %s", r)
	}
}

// Garbage on the server's ports never takes it down, and other clients
// are served while it arrives.
func TestGarbageOnThePorts(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	socket := filepath.Join(c.Home, "pbs_server.sock")
	tcp := fmt.Sprintf("127.0.0.1:%d", c.BatchPort)
	attacks := []struct {
		name string
		data []byte
	}{
		{"random bytes", []byte("\x13\x37GET / HTTP/1.1\r\n\r\n\xff\xfe\x00\x01 random junk")},
		{"oversized frame", []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}},
		{"truncated frame", []byte{0, 0, 1, 0, 0x97, 1}},
		{"empty frame", []byte{0, 0, 0, 0}},
		{"bad msgpack", []byte{0, 0, 0, 5, 0xc1, 0xc1, 0xc1, 0xc1, 0xc1}},
		{"huge array header", []byte{0, 0, 0, 5, 0xdd, 0xff, 0xff, 0xff, 0xff}},
	}
	var stalled []net.Conn
	for _, network := range []struct{ kind, addr string }{{"unix", socket}, {"tcp", tcp}} {
		for _, a := range attacks {
			nc, err := net.Dial(network.kind, network.addr)
			if err != nil {
				t.Fatalf("%s %s: %v", network.kind, a.name, err)
			}
			nc.Write(a.data)
			stalled = append(stalled, nc) // leave it open mid-frame
		}
	}
	defer func() {
		for _, nc := range stalled {
			nc.Close()
		}
	}()
	// Everything keeps working while those connections hang.
	id := c.Submit("#!/bin/sh\n")
	if out := c.MustRun("qstat", id); !strings.Contains(out, id) {
		t.Fatalf("qstat after garbage:\n%s", out)
	}
	// A valid hello followed by garbage on an authenticated port.
	nc, err := net.Dial("tcp", tcp)
	if err == nil {
		conn := proto.NewConn(nc, 0)
		proto.ClientHandshake(conn, proto.RoleMom, "evil", make([]byte, proto.KeySize))
		nc.Write([]byte{0, 0, 0, 40})
		nc.Write(make([]byte, 40))
		nc.Close()
	}
	for _, nc := range stalled {
		nc.Close()
	}
	if r := c.Run("qstat", "-B"); r.Code != 0 {
		t.Fatalf("server down after garbage: %s\n%s", r, c.ServerLog())
	}
}

// qmgr -c "print server" fed into a fresh server reproduces its queues
// and settings.
func TestPrintServerRecreatesConfiguration(t *testing.T) {
	t.Parallel()
	a := testcluster.New(t, testcluster.Options{})
	for _, cmd := range []string{
		"create queue batch queue_type=execution",
		"set queue batch enabled = True, started = True",
		"set queue batch resources_max.ncpus = 8",
		"set queue batch resources_max.walltime = 24:00:00",
		"set queue batch resources_default.walltime = 1:00:00",
		"set queue batch max_user_queuable = 100",
		"set queue batch acl_user_enable = True",
		"set queue batch acl_users = alice",
		"set queue batch acl_users += bob",
		"create queue route queue_type = route",
		"set queue route route_destinations = batch",
		"set queue route route_destinations += workq",
		"set queue route enabled = true, started = true",
		"set server default_queue = route",
		"set server scheduler_iteration = 300",
		`set server comment = "a test site, with a comma"`,
		"set server operators += alice@*",
		"set server resources_default.mem = 1gb",
	} {
		a.MustRun("qmgr", "-c", cmd)
	}
	printed := a.MustRun("qmgr", "-c", "print server")
	for _, want := range []string{"create queue batch", "create queue route", "set queue batch resources_max.ncpus = 8", "set server default_queue = route"} {
		if !strings.Contains(printed, want) {
			t.Fatalf("print server lacks %q:\n%s", want, printed)
		}
	}
	b := testcluster.New(t, testcluster.Options{})
	// A fresh server already has workq, so its create fails, as in
	// OpenPBS; everything else must apply.
	r := b.RunStdin(printed, "qmgr")
	for _, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		if line != "" && !strings.Contains(line, "obj=workq") && !strings.Contains(line, "(15025)") {
			t.Fatalf("feeding print output to a fresh server: %s", r)
		}
	}
	again := b.MustRun("qmgr", "-c", "print server")
	if again != printed {
		t.Fatalf("configuration differs after replay.\nfirst:\n%s\nreplayed:\n%s", printed, again)
	}
}
