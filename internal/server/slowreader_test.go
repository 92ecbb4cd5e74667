package server

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// A listing whose reader lags waits for it with the server's lock let go
// (proto.MaxUnsent): other requests go through meanwhile, and the listing
// then goes on where it was, with nothing repeated and nothing skipped
// that stayed, even when a record was inserted before that point.
func TestListingWaitsForReaderWithoutLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newTestServerAt(t, dir, func(*Config) {})
	array := mustSubmit(t, c, arrayAttr("0-9"))
	// Jobs of about 4 KiB each: the listing is several times MaxUnsent.
	big := proto.Attr{Name: proto.AttrVariableList, Value: "PAD=" + strings.Repeat("x", 4000)}
	var jobs []string
	for len(jobs)*4000 < 8*proto.MaxUnsent {
		jobs = append(jobs, mustSubmit(t, c, big))
	}

	nc, err := net.Dial("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	slow := proto.NewConn(nc, 0)
	if _, err := proto.ClientHandshake(slow, proto.RoleClient, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := slow.Send(proto.Header{Type: proto.MsgStatusJob, Seq: 1}, &proto.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	read := func() bool {
		h, body, err := slow.Recv()
		if err != nil || h.Code != proto.PBSE_NONE {
			t.Fatalf("listing: %+v %v", h, err)
		}
		var part proto.StatusReply
		if err := proto.DecodeStatusReply(body, &part); err != nil {
			t.Fatal(err)
		}
		for _, o := range part.Objects {
			names = append(names, o.Name)
		}
		return h.More
	}
	more := read() // the listing has begun; its reader now lags
	// A subjob held becomes a record of its own, inserted before the
	// jobs still to come; a new job comes after them. Both need the
	// lock the listing holds when it is not waiting.
	if err := c.HoldJob(strings.Replace(array, "[]", "[5]", 1), "u"); err != nil {
		t.Fatal(err)
	}
	late := mustSubmit(t, c)
	for more {
		more = read()
	}
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	for _, id := range append([]string{array, late}, jobs...) {
		if seen[id] != 1 {
			t.Errorf("%s listed %d times", id, seen[id])
		}
	}
	if len(names) != len(jobs)+2 {
		t.Errorf("listed %d jobs, want %d", len(names), len(jobs)+2)
	}
}
