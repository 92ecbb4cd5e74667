package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// qsub -I's session is taken with the job, which is then not
// rerunnable; the status shows interactive = True and nothing of the port
// or the secret; an array, an explicit -r y, the attribute sent as such
// and a malformed session are refused.
func TestInteractiveSubmission(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	cookie := bytes.Repeat([]byte{0xab}, proto.InteractiveCookieLen)
	session := func() *proto.InteractiveSession { return &proto.InteractiveSession{Port: 40123, Cookie: cookie} }
	id, err := c.Submit(&proto.SubmitRequest{Interactive: session()})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := c.StatusJobs(&proto.StatusRequest{IDs: []string{id}})
	if err != nil || len(st) != 1 {
		t.Fatalf("status: %v %v", st, err)
	}
	if v, _ := st[0].Get(proto.AttrInteractive); v != "True" {
		t.Errorf("interactive = %q, want True", v)
	}
	if v, _ := st[0].Get(proto.AttrRerunable); v != "False" {
		t.Errorf("Rerunable = %q, want False", v)
	}
	for _, a := range st[0].Attrs {
		if strings.Contains(a.Value, "40123") || strings.Contains(strings.ToLower(a.Value), "abab") || strings.Contains(a.Value, string(cookie)) {
			t.Errorf("status shows the session in %s = %q", a.FullName(), a.Value)
		}
	}
	for name, req := range map[string]*proto.SubmitRequest{
		"array":        {Interactive: session(), Attrs: []proto.Attr{{Name: proto.AttrArrayIndices, Value: "1-2"}}},
		"rerunnable":   {Interactive: session(), Attrs: []proto.Attr{{Name: proto.AttrRerunable, Value: "y"}}},
		"attribute":    {Attrs: []proto.Attr{{Name: proto.AttrInteractive, Value: "40123"}}},
		"short secret": {Interactive: &proto.InteractiveSession{Port: 40123, Cookie: cookie[:8]}},
		"no port":      {Interactive: &proto.InteractiveSession{Cookie: cookie}},
	} {
		if id, err := c.Submit(req); err == nil {
			t.Errorf("%s: submitted as %s", name, id)
		}
	}
}

// The shepherd dials the session's port as root: a privileged port is
// refused at submission, with a message that says so; the first
// unprivileged port is taken.
func TestInteractivePrivilegedPortRefused(t *testing.T) {
	t.Parallel()
	_, c := newTestServer(t, store.Options{})
	cookie := bytes.Repeat([]byte{0xcd}, proto.InteractiveCookieLen)
	for _, tt := range []struct {
		port int
		ok   bool
	}{{1, false}, {22, false}, {proto.MinInteractivePort - 1, false}, {proto.MinInteractivePort, true}, {65535, true}} {
		id, err := c.Submit(&proto.SubmitRequest{Interactive: &proto.InteractiveSession{Port: tt.port, Cookie: cookie}})
		switch {
		case tt.ok && err != nil:
			t.Errorf("port %d: %v", tt.port, err)
		case !tt.ok && err == nil:
			t.Errorf("port %d: submitted as %s", tt.port, id)
		case !tt.ok && (proto.CodeOf(err) != proto.PBSE_BADATVAL || !strings.Contains(err.Error(), "privileged")):
			t.Errorf("port %d: %v; want PBSE_BADATVAL saying the port is privileged", tt.port, err)
		}
	}
}
