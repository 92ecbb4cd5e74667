package integration

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/internal/x11"
)

// qsub -I -X: an X client in the job (Debian's xdpyinfo) reaches the
// user's display (Xvfb, which checks cookies) through qsub; the job's
// DISPLAY is its own localhost:N and the user's cookie never reaches it:
// a client in the job without the job's one-job cookie is refused.
func TestInteractiveX11(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"Xvfb", "xdpyinfo"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (scripts/test.sh installs xvfb and x11-utils as root)", prog)
		}
	}
	// The user's display: Xvfb with a cookie of its own.
	n := 0
	for d := 50; d < 300; d++ {
		if _, err := os.Stat(x11.SocketPath(d)); os.IsNotExist(err) {
			if _, err := os.Stat("/tmp/.X" + strconv.Itoa(d) + "-lock"); os.IsNotExist(err) {
				n = d
				break
			}
		}
	}
	if n == 0 {
		t.Skip("no free X display number")
	}
	cookie := make([]byte, x11.CookieLen)
	rand.Read(cookie)
	host, _ := os.Hostname()
	var auth []byte
	for _, e := range x11.LocalEntries(host, n, cookie) {
		auth, _ = x11.AppendAuthority(auth, e)
	}
	authFile := filepath.Join(t.TempDir(), "user.Xauthority")
	if err := os.WriteFile(authFile, auth, 0o600); err != nil {
		t.Fatal(err)
	}
	display := ":" + strconv.Itoa(n)
	xvfb := exec.Command("Xvfb", display, "-auth", authFile, "-nolisten", "tcp")
	var xlog bytes.Buffer
	xvfb.Stdout, xvfb.Stderr = &xlog, &xlog
	if err := xvfb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xvfb.Process.Kill(); xvfb.Wait() })
	userEnv := func(xauth string) []string {
		return append(os.Environ(), "DISPLAY="+display, "XAUTHORITY="+xauth)
	}
	testcluster.WaitFor(t, "Xvfb to take connections", 20*time.Second, func() (bool, string) {
		cmd := exec.Command("xdpyinfo")
		cmd.Env = userEnv(authFile)
		return cmd.Run() == nil, xlog.String()
	})
	noCookie := exec.Command("xdpyinfo")
	noCookie.Env = userEnv(os.DevNull)
	if noCookie.Run() == nil {
		t.Fatal("Xvfb let a client without the cookie in: the test would prove nothing")
	}

	c := testcluster.New(t, testcluster.Options{})
	c.MustRun("qmgr", "-c", "set server scheduling = False")
	c.AddMom("n1", testcluster.MomOptions{})
	script := "xdpyinfo | grep -E '^(name of display|vendor string)'\n" +
		"XAUTHORITY=/dev/null xdpyinfo >/dev/null 2>&1; echo noauth=$?\n" +
		"test -r \"$XAUTHORITY\" && echo own-cookie\n" +
		"exit 0\n"
	qsub := exec.Command(filepath.Join(c.Bin, "qsub"), "-I", "-X", "-N", "ix11")
	qsub.Env = append(c.Env(), "DISPLAY="+display, "XAUTHORITY="+authFile)
	qsub.Dir = c.Home
	qsub.Stdin = strings.NewReader(script)
	var out, errOut bytes.Buffer
	qsub.Stdout, qsub.Stderr = &out, &errOut
	if err := qsub.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- qsub.Wait() }()
	id := waitJobNamed(t, c, "ix11")
	c.MustRun("qrun", id)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("qsub -I -X: %v\n%s\n%s", err, out.String(), errOut.String())
		}
	case <-time.After(60 * time.Second):
		qsub.Process.Kill()
		t.Fatalf("qsub -I -X did not end:\n%s\n%s", out.String(), errOut.String())
	}
	got := out.String()
	if !regexp.MustCompile(`name of display:\s+localhost:\d+\.0`).MatchString(got) || !strings.Contains(got, "vendor string:") {
		t.Errorf("the job's X client did not reach the user's display through its own DISPLAY:\n%s\n%s", got, errOut.String())
	}
	if !strings.Contains(got, "noauth=1") {
		t.Errorf("a client in the job without the job's cookie was let through:\n%s", got)
	}
	if !strings.Contains(got, "own-cookie") {
		t.Errorf("the job's XAUTHORITY is not readable by it:\n%s", got)
	}
	c.WaitJobState(id, "F", 30*time.Second)
}
