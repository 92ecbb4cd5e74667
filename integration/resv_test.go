package integration

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
)

// resvCluster is a server with moms n1 and n2 of 2 cpus each and
// pbs_sched, cycling every second; conf adds pbs.conf lines.
func resvCluster(t *testing.T, conf ...string) *testcluster.Cluster {
	t.Helper()
	return resvClusterWith(t, testcluster.Options{Conf: strings.Join(conf, "")})
}

// resvClusterWith is resvCluster made with opts.
func resvClusterWith(t *testing.T, opts testcluster.Options) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, opts)
	for _, cmd := range []string{"set server node_check_rate = 3", "set server kill_delay = 2", "set server scheduler_iteration = 1"} {
		c.MustRun("qmgr", "-c", cmd)
	}
	for _, n := range []string{"n1", "n2"} {
		c.AddMom(n, testcluster.MomOptions{})
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 2")
	}
	c.StartScheduler("pbs_sched")
	return c
}

// rsubTime is t as pbs_rsub -R and -E read it (to the second).
func rsubTime(t time.Time) string { return t.Format("200601021504.05") }

var resvIDRE = regexp.MustCompile(`^([RSM]\d+)\.localhost (\w+)$`)

// rsub makes a reservation and returns its id and queue.
func rsub(t *testing.T, c *testcluster.Cluster, args ...string) (id, queue string) {
	t.Helper()
	out := strings.TrimSpace(c.MustRun("pbs_rsub", args...))
	m := resvIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pbs_rsub %v printed %q, not an id and a state", args, out)
	}
	return m[1] + ".localhost", m[1]
}

// resvAttr is an attribute of a reservation as pbs_rstat -f shows it
// ("" when the reservation or the attribute is not there).
func resvAttr(c *testcluster.Cluster, id, name string) string {
	r := c.Run("pbs_rstat", "-f", id)
	for _, line := range strings.Split(r.Stdout, "\n") {
		if k, v, ok := strings.Cut(line, " = "); ok && k == name {
			return v
		}
	}
	return ""
}

func waitResvAttr(t *testing.T, c *testcluster.Cluster, id, name, want string, timeout time.Duration) {
	t.Helper()
	testcluster.WaitFor(t, id+" "+name+" "+want, timeout, func() (bool, string) {
		got := resvAttr(c, id, name)
		return got == want, got
	})
}

// A reservation is confirmed by the scheduler on nodes; a job of its queue
// waits for its window, runs on its nodes, and a job still running at its
// end is killed with it; then the reservation and its queue are gone. A
// user it does not name may not submit to its queue.
func TestReservationConfirmedRunsItsJobInItsWindow(t *testing.T) {
	t.Parallel()
	c := resvCluster(t)
	start := time.Now().Add(6 * time.Second).Truncate(time.Second)
	id, queue := rsub(t, c, "-R", rsubTime(start), "-D", "00:00:14", "-l", "select=1:ncpus=2", "-N", "course")
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	nodes := resvAttr(c, id, "resv_nodes")
	if !regexp.MustCompile(`^\(n[12]:ncpus=2\)$`).MatchString(nodes) {
		t.Fatalf("resv_nodes %q", nodes)
	}
	node := nodes[1:3]
	if out := c.MustRun("pbs_rstat"); !strings.Contains(out, queue) || !regexp.MustCompile(`(?m)^`+queue+`\.\S*\s+`+queue+`\s+root\s+CO\s`).MatchString(out) {
		t.Errorf("pbs_rstat:\n%s", out)
	}
	if out := c.MustRun("pbs_rstat", "-B"); strings.TrimSpace(out) != "Resv ID: "+id {
		t.Errorf("pbs_rstat -B: %q", out)
	}
	if out := c.MustRun("pbsnodes", node); !strings.Contains(out, "resv = "+id) {
		t.Errorf("pbsnodes %s does not show the reservation:\n%s", node, out)
	}
	// Only Authorized_Users (the owner by default) may submit to it.
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "#!/bin/sh\n", "qsub", "-q", queue); r.Code == 0 || !strings.Contains(r.Stderr, "acl_users") {
		t.Errorf("nobody submitted to %s: %s", queue, r)
	}
	short := c.Submit("#!/bin/sh\nsleep 2\n", "-q", queue, "-l", "select=1:ncpus=1", "-l", "walltime=00:00:05")
	long := c.Submit("#!/bin/sh\nsleep 300\n", "-q", queue, "-l", "select=1:ncpus=1")
	// Before the window nothing of it runs.
	if st := attr(t, c, short, "job_state"); st != "Q" || time.Now().After(start) {
		t.Fatalf("job %s is %s before the window (test too slow: %v)", short, st, time.Now().After(start))
	}
	c.WaitJobState(short, "R", 15*time.Second)
	if time.Now().Before(start) {
		t.Fatalf("job %s started before the window %s", short, start)
	}
	waitResvAttr(t, c, id, "reserve_state", "RESV_RUNNING", 5*time.Second)
	for _, j := range []string{short, long} {
		c.WaitJobState(j, "R", 10*time.Second)
		if ev := attr(t, c, j, "exec_vnode"); !strings.HasPrefix(ev, "("+node+":") {
			t.Errorf("job %s ran on %s, not the reservation's %s", j, ev, node)
		}
	}
	c.WaitJobState(short, "F", 15*time.Second)
	// At the end the running job is killed and the reservation goes.
	c.WaitJobState(long, "F", 25*time.Second)
	if time.Now().Before(start.Add(14 * time.Second)) {
		t.Errorf("job %s ended before the reservation's end", long)
	}
	if got := attr(t, c, long, "comment"); !strings.Contains(got, "reservation ended") {
		t.Errorf("comment of %s: %q", long, got)
	}
	testcluster.WaitFor(t, id+" gone", 15*time.Second, func() (bool, string) {
		r := c.Run("pbs_rstat", id)
		return r.Code != 0 && strings.Contains(r.Stderr, "Unknown Reservation Id"), r.String()
	})
	if r := c.Run("qstat", "-Q", queue); r.Code == 0 {
		t.Errorf("queue %s outlived its reservation:\n%s", queue, r)
	}
}

// pbs_rsub -H: only the hosts named may submit to the reservation's
// queue (Authorized_Hosts, its acl_hosts), as OpenPBS's.
func TestReservationAuthorizedHosts(t *testing.T) {
	t.Parallel()
	c := resvCluster(t)
	probe := c.Submit("#!/bin/sh\n", "-h")
	host := attr(t, c, probe, "Submit_Host")
	start := rsubTime(time.Now().Add(time.Hour).Truncate(time.Second))
	elsewhere, elsewhereQ := rsub(t, c, "-R", start, "-D", "00:10:00", "-l", "select=1:ncpus=1", "-H", "elsewhere.example.org")
	if got := resvAttr(c, elsewhere, "Authorized_Hosts"); got != "elsewhere.example.org" {
		t.Errorf("pbs_rstat -f Authorized_Hosts = %q", got)
	}
	if r := c.Run("qsub", "-q", elsewhereQ, "-h"); r.Code == 0 || !strings.Contains(r.Stderr, "Access from host not allowed") {
		t.Errorf("qsub from %s to a reservation for elsewhere.example.org: %s", host, r)
	}
	_, hereQ := rsub(t, c, "-R", start, "-D", "00:10:00", "-l", "select=1:ncpus=1", "-H", "elsewhere.example.org,"+host)
	c.Submit("#!/bin/sh\n", "-q", hereQ, "-h")
	if r := c.Run("pbs_rsub", "-R", start, "-D", "00:10:00", "-l", "select=1:ncpus=1", "-H", ""); r.Code == 0 {
		t.Errorf("pbs_rsub -H \"\": %s, want it refused", r)
	}
}

// EASY never starts a job whose walltime would overlap a confirmed
// reservation's nodes: with a top job reserved after the reservation, a
// backfill candidate that would run into the window waits, and one that
// ends before it starts. And the bad input pbs_rsub refuses: a
// reservation overlapping another on the same nodes is denied naming it,
// a start in the past, an end before the start, a recurrence without
// COUNT or UNTIL or without PBS_TZID, and a user the server's
// acl_resv_users does not name; nobody but the owner (or a manager,
// an operator) deletes it.
func TestReservationRefusesOverlappingBackfill(t *testing.T) {
	t.Parallel()
	c := resvCluster(t)
	start := time.Now().Add(40 * time.Second)
	id, _ := rsub(t, c, "-R", rsubTime(start), "-D", "00:01:00", "-l", "select=2:ncpus=2")
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	top := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=2:ncpus=2", "-l", "walltime=00:10:00")
	// Held until the others are in, so that it is the top job.
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	over := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:00")
	fits := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:00:10")
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	c.WaitJobState(fits, "F", 20*time.Second)
	testcluster.WaitFor(t, "the overlapping candidate refused", 10*time.Second, func() (bool, string) {
		got := attr(t, c, over, "comment")
		return strings.Contains(got, "Job would conflict with reservation or top job"), got
	})
	if st := attr(t, c, over, "job_state"); st != "Q" || time.Now().After(start) {
		t.Fatalf("job %s is %s: it would run into %s", over, st, id)
	}
	if got := attr(t, c, top, "estimated.start_time"); got == "" {
		t.Errorf("the top job has no estimate:\n%s", c.MustRun("qstat", "-f", top))
	}

	// A second reservation on the same nodes at the same time: denied,
	// naming the first.
	r := c.Run("pbs_rsub", "-I", "20", "-R", rsubTime(start.Add(10*time.Second)), "-D", "00:00:30", "-l", "select=1:ncpus=2")
	if r.Code == 0 || !strings.Contains(r.Stdout, "DENIED") || !strings.Contains(r.Stderr, "overlap "+id) {
		t.Errorf("an overlapping reservation: %s", r)
	}
	tz := append(c.Env(), "PBS_TZID=UTC")
	for _, bad := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"-R", "202001010000", "-D", "10", "-l", "ncpus=1"}, "in the past"},
		{nil, []string{"-R", rsubTime(start.Add(time.Hour)), "-E", rsubTime(start.Add(30 * time.Minute)), "-l", "ncpus=1"}, "not after the start"},
		{tz, []string{"-R", rsubTime(start.Add(time.Hour)), "-D", "10", "-r", "FREQ=WEEKLY;BYDAY=MO"}, "A valid COUNT or UNTIL is required"},
		{tz, []string{"-R", rsubTime(start.Add(time.Hour)), "-D", "10", "-r", "FREQ=WEEKLY;BYMONTHDAY=1;COUNT=2"}, "Undefined iCalendar syntax"},
		{tz, []string{"-R", rsubTime(start.Add(time.Hour)), "-D", "02:00:00", "-r", "FREQ=HOURLY;COUNT=2"}, "HOURLY recurrence duration cannot exceed 1 hour"},
		{nil, []string{"-R", rsubTime(start.Add(time.Hour)), "-D", "10", "-r", "FREQ=DAILY;COUNT=2"}, "PBS_TZID"},
	} {
		env := bad.env
		if env == nil {
			env = c.Env()
		}
		if r := c.RunEnv(env, "pbs_rsub", bad.args...); r.Code == 0 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("pbs_rsub %v: want a refusal saying %q: %s", bad.args, bad.want, r)
		}
	}
	// pbs_ralter: a new end waits for the scheduler, then stands.
	if out := strings.TrimSpace(c.MustRun("pbs_ralter", "-E", rsubTime(start.Add(2*time.Minute)), id)); out != id+" BEING_ALTERED" {
		t.Errorf("pbs_ralter printed %q", out)
	}
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	if got := resvAttr(c, id, "reserve_duration"); got != "120" {
		t.Errorf("reserve_duration after pbs_ralter: %q", got)
	}
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "pbs_rdel", id); r.Code == 0 || !strings.Contains(r.Stderr, "Unauthorized") {
		t.Errorf("nobody deleted %s: %s", id, r)
	}
	c.MustRun("qmgr", "-c", "set server acl_resv_user_enable = True")
	c.MustRun("qmgr", "-c", "set server acl_resv_users = root")
	if r := c.RunAs(nobody, "", "pbs_rsub", "-R", rsubTime(start.Add(time.Hour)), "-D", "10", "-l", "ncpus=1"); r.Code == 0 || !strings.Contains(r.Stderr, "not authorized to make reservations") {
		t.Errorf("a user acl_resv_users does not name: %s", r)
	}
}

// A manager reserves whole hosts for maintenance (--hosts): confirmed at
// once, even over a running job's expected end (the job keeps running);
// pbsnodes shows it; a new job that would overlap it does not start
// there; only a manager may make one.
func TestMaintenanceReservationOverRunningJob(t *testing.T) {
	t.Parallel()
	c := resvCluster(t)
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	running := c.Submit("#!/bin/sh\nsleep 300\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:05:00")
	c.MustRun("qrun", "-H", "n1", running)
	c.WaitJobState(running, "R", 10*time.Second)
	start := time.Now().Add(20 * time.Second)
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	if r := c.RunAs(nobody, "", "pbs_rsub", "-R", rsubTime(start), "-D", "00:01:00", "--hosts", "n1"); r.Code == 0 || !strings.Contains(r.Stderr, "only a manager") {
		t.Errorf("nobody reserved a host for maintenance: %s", r)
	}
	out := strings.TrimSpace(c.MustRun("pbs_rsub", "-R", rsubTime(start), "-D", "00:01:00", "--hosts", "n1"))
	m := resvIDRE.FindStringSubmatch(out)
	if m == nil || m[1][0] != 'M' || m[2] != "CONFIRMED" {
		t.Fatalf("pbs_rsub --hosts printed %q, want M<n>.localhost CONFIRMED", out)
	}
	id := m[1] + ".localhost"
	if got := resvAttr(c, id, "resv_nodes"); got != "(n1:ncpus=2)" {
		t.Errorf("resv_nodes %q", got)
	}
	if out := c.MustRun("pbsnodes", "n1"); !strings.Contains(out, "resv = "+id) {
		t.Errorf("pbsnodes n1 does not show %s:\n%s", id, out)
	}
	// n1 has a cpu free now, but a 1-minute job would overlap the window.
	c.MustRun("qmgr", "-c", "set server scheduling = True")
	next := c.Submit("#!/bin/sh\nsleep 1\n", "-l", "select=1:ncpus=1", "-l", "walltime=00:01:00")
	c.WaitJobState(next, "F", 20*time.Second)
	if ev := attr(t, c, next, "exec_vnode"); !strings.HasPrefix(ev, "(n2:") {
		t.Errorf("job %s ran on %s, into the maintenance window of n1", next, ev)
	}
	if st := attr(t, c, running, "job_state"); st != "R" {
		t.Errorf("the running job is %s: a maintenance reservation does not end it", st)
	}
	if r := c.Run("pbs_rdel", id); r.Code != 0 {
		t.Fatalf("pbs_rdel %s: %s", id, r)
	}
	testcluster.WaitFor(t, id+" gone", 10*time.Second, func() (bool, string) {
		r := c.Run("pbs_rstat", id)
		return r.Code != 0, r.String()
	})
}

// A node of a confirmed reservation goes down: the scheduler moves the
// reservation to another node and its owner hears of it by mail; with no
// node left to move to it is DEGRADED, with a comment saying why.
func TestDegradedReservationMoved(t *testing.T) {
	t.Parallel()
	record, mailer := fakeMailer(t)
	c := resvCluster(t, "PBS_SENDMAIL="+mailer+"\n")
	id, _ := rsub(t, c, "-R", rsubTime(time.Now().Add(10*time.Minute)), "-D", "00:10:00", "-l", "select=1:ncpus=2")
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	first := resvAttr(c, id, "resv_nodes")[1:3]
	other := map[string]string{"n1": "n2", "n2": "n1"}[first]
	c.Mom(first).Kill(syscall.SIGKILL)
	c.WaitNodeState(first, "down", 20*time.Second)
	waitResvAttr(t, c, id, "resv_nodes", "("+other+":ncpus=2)", 20*time.Second)
	if got := resvAttr(c, id, "reserve_state"); got != "RESV_CONFIRMED" {
		t.Errorf("a moved reservation is %s", got)
	}
	testcluster.WaitFor(t, "mail of the move", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(record)
		return strings.Contains(string(b), "PBS Reservation Id: "+id) && strings.Contains(string(b), "moved to nodes "+other), string(b)
	})
	c.Mom(other).Kill(syscall.SIGKILL)
	c.WaitNodeState(other, "down", 20*time.Second)
	waitResvAttr(t, c, id, "reserve_state", "RESV_DEGRADED", 20*time.Second)
	if got := resvAttr(c, id, "comment"); !strings.Contains(got, "no room for it") {
		t.Errorf("comment of a degraded reservation: %q", got)
	}
	testcluster.WaitFor(t, "mail of the degradation", 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(record)
		return strings.Contains(string(b), "Reservation degraded"), string(b)
	})
}

// A DEGRADED reservation is tried again only reserve_retry_time after
// it was degraded (OpenPBS's; reserve_retry_init is its old name): with
// its nodes back it stays DEGRADED until then, and pbs_rstat -f shows
// when (reserve_retry).
func TestDegradedReservationRetryTime(t *testing.T) {
	t.Parallel()
	c := resvCluster(t)
	c.MustRun("qmgr", "-c", "set server reserve_retry_init = 3600")
	if got := c.MustRun("qmgr", "-c", "list server reserve_retry_time"); !strings.Contains(got, "reserve_retry_time = 3600\n") {
		t.Fatalf("reserve_retry_init did not set reserve_retry_time:\n%s", got)
	}
	id, _ := rsub(t, c, "-R", rsubTime(time.Now().Add(10*time.Minute)), "-D", "00:10:00", "-l", "select=1:ncpus=2")
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	for _, n := range []string{"n1", "n2"} {
		c.Mom(n).Kill(syscall.SIGKILL)
		c.WaitNodeState(n, "down", 20*time.Second)
	}
	waitResvAttr(t, c, id, "reserve_state", "RESV_DEGRADED", 20*time.Second)
	degraded := time.Now()
	full := c.MustRun("pbs_rstat", "-f", id)
	want := degraded.Add(time.Hour).Format("Mon Jan 02 15:04")
	if !strings.Contains(full, "reserve_retry = "+want) && !strings.Contains(full, "reserve_retry = "+degraded.Add(time.Hour-time.Minute).Format("Mon Jan 02 15:04")) {
		t.Errorf("pbs_rstat -f of a degraded reservation: no reserve_retry about %s:\n%s", want, full)
	}
	for _, n := range []string{"n1", "n2"} {
		c.Mom(n).Start()
		c.WaitNodeState(n, "free", 20*time.Second)
	}
	c.WaitCycles(t, 3)
	if got := resvAttr(c, id, "reserve_state"); got != "RESV_DEGRADED" {
		t.Errorf("with an hour's reserve_retry_time the reservation was tried again at once: %s", got)
	}
}

// A standing reservation (pbs_rsub -r, in PBS_TZID's time zone) has each
// occurrence confirmed; pbs_rstat shows the current one and its index;
// a job running at an occurrence's end is killed, a job queued between
// occurrences waits for the next, and after the last the reservation
// goes.
func TestStandingReservationOccurrences(t *testing.T) {
	t.Parallel()
	// The fault build, whose server and scheduler clock the test moves
	// past the minute between the occurrences.
	c := resvClusterWith(t, testcluster.Options{FaultBuild: true})
	start := time.Now().Add(5 * time.Second).Truncate(time.Second)
	tz := append(c.Env(), "PBS_TZID=Europe/Stockholm")
	r := c.RunEnv(tz, "pbs_rsub", "-R", rsubTime(start), "-D", "00:00:08", "-r", "FREQ=MINUTELY;COUNT=2", "-l", "select=1:ncpus=1")
	m := resvIDRE.FindStringSubmatch(strings.TrimSpace(r.Stdout))
	if r.Code != 0 || m == nil || m[1][0] != 'S' {
		t.Fatalf("pbs_rsub -r: %s", r)
	}
	id, queue := m[1]+".localhost", m[1]
	waitResvAttr(t, c, id, "reserve_state", "RESV_CONFIRMED", 15*time.Second)
	for name, want := range map[string]string{"reserve_count": "2", "reserve_index": "1", "reserve_rrule": "FREQ=MINUTELY;COUNT=2",
		"reserve_timezone": "Europe/Stockholm", "reserve_duration": "8"} {
		if got := resvAttr(c, id, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	long := c.Submit("#!/bin/sh\nsleep 300\n", "-q", queue)
	c.WaitJobState(long, "R", 15*time.Second)
	c.WaitJobState(long, "F", 20*time.Second)
	if got := attr(t, c, long, "comment"); !strings.Contains(got, "occurrence ended") {
		t.Errorf("comment of the job killed at the occurrence's end: %q", got)
	}
	waitResvAttr(t, c, id, "reserve_index", "2", 10*time.Second)
	if got := resvAttr(c, id, "reserve_state"); got != "RESV_CONFIRMED" {
		t.Errorf("between occurrences the reservation is %s", got)
	}
	next := c.Submit("#!/bin/sh\nsleep 1\n", "-q", queue, "-l", "walltime=00:00:05")
	second := start.Add(time.Minute)
	if st := attr(t, c, next, "job_state"); st != "Q" || c.Now().After(second) {
		t.Fatalf("job %s is %s between occurrences", next, st)
	}
	// To 3 s before the second occurrence: the job still waits for it.
	c.AdvanceClock(second.Sub(c.Now()) - 3*time.Second)
	c.WaitJobState(next, "R", 30*time.Second)
	if at := startTime(t, c, next); at.Before(second) {
		t.Errorf("job %s started at %s, before the second occurrence %s", next, at, second)
	}
	c.WaitJobState(next, "F", 15*time.Second)
	testcluster.WaitFor(t, id+" gone after its last occurrence", 20*time.Second, func() (bool, string) {
		r := c.Run("pbs_rstat", id)
		return r.Code != 0, r.String()
	})
}
