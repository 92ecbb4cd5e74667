package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// A login host runs neither a server nor a mom: its commands reach the
// server through pbs_login alone (issue 33, item 4). A user's job is
// theirs at the login host; no user claims another's uid (qdel of
// another's job is refused), root there is not the server's root; the
// agent's key is good for nothing but relaying (not as a mom, not as
// another login host, not for a request of its own); a wrong key is
// named in the agent's log and the command's error.
func TestLoginHost(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	c.AddMom("n1", testcluster.MomOptions{})
	l := c.AddLogin("login1")
	nobody := testcluster.Cred{UID: 65534, GID: 65534}
	out := filepath.Join(c.Home, "login-out")
	os.MkdirAll(out, 0o777)
	os.Chmod(out, 0o777)

	// A user's job from the login host runs, and is theirs there.
	r := l.RunAs(nobody, "#!/bin/sh\necho from-login\n", "qsub", "-o", "localhost:"+out+"/o", "-e", "localhost:"+out+"/e")
	if r.Code != 0 {
		t.Fatalf("qsub on the login host: %s\n%s", r, l.Log())
	}
	id := strings.TrimSpace(r.Stdout)
	if owner, _ := c.JobAttr(id, "Job_Owner"); owner != "nobody@login1" {
		t.Errorf("Job_Owner = %q, want nobody@login1", owner)
	}
	c.MustRun("qrun", id)
	c.WaitJobState(id, "F", 60*time.Second)
	waitFor(t, "the job's output", 20*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(out, "o"))
		return strings.Contains(string(b), "from-login")
	})
	if r := l.RunAs(nobody, "", "qstat", "-x", "-f", id); r.Code != 0 || !strings.Contains(r.Stdout, "job_state = F") {
		t.Errorf("qstat -x on the login host: %s", r)
	}

	// Another user's job: the kernel names the caller, whatever it sends.
	other := c.Submit("#!/bin/sh\nsleep 60\n", "-h")
	if r := l.RunAs(nobody, "", "qdel", other); r.Code == 0 || !strings.Contains(r.Stderr, "Unauthorized Request") {
		t.Errorf("nobody's qdel of root's job from the login host: %s", r)
	}
	if st, _ := c.JobAttr(other, "job_state"); st != "H" {
		t.Errorf("root's job after nobody's qdel: %q", st)
	}
	// Root of the login host is root@login1, not a manager.
	if r := l.Run("qmgr", "-c", "set server comment = from-login"); r.Code == 0 {
		t.Errorf("root of the login host changed the server: %s", r)
	}
	if r := l.Run("qdel", other); r.Code != 0 {
		t.Errorf("root's qdel of root's job from the login host: %s", r)
	}

	// The login key is good for relaying only.
	cluster, err := proto.LoadKey(filepath.Join(c.Home, "auth", "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	key := proto.LoginKey(cluster, "login1")
	addr := fmt.Sprintf("localhost:%d", c.BatchPort)
	if cl, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: addr, Role: proto.RoleMom, Name: "n1", Key: key}); err == nil {
		cl.Close()
		t.Errorf("the login key let a mom in")
	}
	if cl, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: addr, Role: proto.RoleLogin, Name: "login2", Key: key}); err == nil {
		cl.Close()
		t.Errorf("login1's key let login2 in")
	}
	cl, err := proto.Dial(proto.DialOptions{Network: "tcp", Address: addr, Role: proto.RoleLogin, Name: "login1", Key: key})
	if err != nil {
		t.Fatalf("login1's key as login1: %v", err)
	}
	var st proto.StatusReply
	err = cl.Call(proto.MsgStatusServer, &proto.StatusRequest{}, &st)
	cl.Close()
	if err == nil || !strings.Contains(err.Error(), "only relays its users' commands") {
		t.Errorf("a login agent's request of its own: %v", err)
	}

	// A wrong key: the agent says so, the command fails with the reason.
	l.Kill(syscall.SIGTERM)
	l.WriteKey(bytes.Repeat([]byte{5}, proto.KeySize))
	l.Start()
	if r := l.Run("qstat", "-B"); r.Code == 0 || !strings.Contains(r.Stderr, "the server does not take this host's login key") {
		t.Errorf("qstat through an agent with a wrong key: %s", r)
	}
	waitFor(t, "the agent's log naming the key", 10*time.Second, func() bool {
		return strings.Contains(l.Log(), "the server does not take this host's login key")
	})
	l.Kill(syscall.SIGTERM)
	l.WriteKey(key)
	l.Start()
	if r := l.Run("qstat", "-B"); r.Code != 0 {
		t.Errorf("qstat -B once the key is right: %s", r)
	}
}
