package mom

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/stagecopy"
	"github.com/gopbs/gopbs/proto"
)

// fetch asks m, over an in-memory connection, for path as a mom would for
// job 7.srv of the current user, and returns what came back.
func fetch(t *testing.T, m *Mom, path string, token []byte) (string, *proto.Error) {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		defer b.Close()
		c := proto.NewConn(b, 0)
		h, body, err := c.Recv()
		if err == nil {
			m.serveFile(c, "n2", h, body)
		}
	}()
	c := proto.NewConn(a, 0)
	a.SetDeadline(time.Now().Add(10 * time.Second))
	req := &proto.FileRequest{JobID: "7.srv", User: me.Username, Path: path, Token: token}
	if err := c.Send(proto.Header{Type: proto.MsgMomFileGet, Seq: 1}, req); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for {
		h, raw, err := c.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if h.Code != proto.PBSE_NONE {
			return got.String(), &proto.Error{Code: h.Code, Text: h.Text}
		}
		var ch proto.FileChunk
		if err := proto.DecodeBody(raw, &ch); err != nil {
			t.Fatal(err)
		}
		got.Write(ch.Data)
		if !h.More {
			return got.String(), nil
		}
	}
}

// The mom-to-mom channel serves a file only with the server's token for
// that job, owner, direction and path (SECURITY.md §8): no token, a token
// for another file or for the other direction, or one made with another
// key is refused before the file is opened. A granted file streams in
// chunks of at most stagecopy.ChunkSize bytes.
func TestServeFileNeedsTheServersToken(t *testing.T) {
	t.Parallel()
	m := newTestMom(t)
	me, _ := user.Current()
	dir := t.TempDir()
	secret, other := filepath.Join(dir, "secret"), filepath.Join(dir, "granted")
	os.WriteFile(secret, []byte("not for you\n"), 0o600)
	big := strings.Repeat("0123456789abcdef", 3*stagecopy.ChunkSize/16+7)
	os.WriteFile(other, []byte(big), 0o644)
	for name, token := range map[string][]byte{
		"no token":        nil,
		"another file":    proto.StageToken(m.key, "7.srv", me.Username, proto.StageGet, other),
		"other direction": proto.StageToken(m.key, "7.srv", me.Username, proto.StagePut, secret),
		"another job":     proto.StageToken(m.key, "8.srv", me.Username, proto.StageGet, secret),
		"another user":    proto.StageToken(m.key, "7.srv", "nobody", proto.StageGet, secret),
		"another key":     proto.StageToken([]byte("not the cluster key"), "7.srv", me.Username, proto.StageGet, secret),
	} {
		got, err := fetch(t, m, secret, token)
		if err == nil || err.Code != proto.PBSE_PERM || got != "" {
			t.Errorf("%s: got %q, error %v; want PBSE_PERM and nothing", name, got, err)
		}
	}
	got, err := fetch(t, m, other, proto.StageToken(m.key, "7.srv", me.Username, proto.StageGet, other))
	if err != nil || got != big {
		t.Fatalf("granted file: %d bytes, error %v", len(got), err)
	}
}

func TestParseStageConfig(t *testing.T) {
	t.Parallel()
	c, err := ParseMomConfig(strings.NewReader("$rcpcmd /usr/bin/scp -r\n$stage_timeout 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Rcp != "/usr/bin/scp" || c.StageTimeout != 30*time.Second || len(c.Warnings) != 1 {
		t.Fatalf("%+v", c)
	}
	for _, bad := range []string{"$rcpcmd rcp\n", "$rcpcmd /bin/sh\n", "$stage_timeout 0\n", "$stage_timeout x\n"} {
		if _, err := ParseMomConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Another mom asking for a FIFO (or a directory) is answered at once that
// it is not a regular file: the serving mom never waits in its open (it
// used to, forever, holding a connection and a slot of its budget).
func TestServeFileRefusesAFifo(t *testing.T) {
	t.Parallel()
	m := newTestMom(t)
	me, _ := user.Current()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "fifo", dir: "directory"} {
		got, err := fetch(t, m, path, proto.StageToken(m.key, "7.srv", me.Username, proto.StageGet, path))
		if err == nil || !strings.Contains(err.Text, "not a regular file: "+kind) || got != "" {
			t.Errorf("%s: got %q, error %v; want it refused as a %s", path, got, err, kind)
		}
	}
}
