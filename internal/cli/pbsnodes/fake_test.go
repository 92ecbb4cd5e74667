package pbsnodes

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/cmdutil"
	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// fakeServer answers like pbs_server: all nodes sorted by name without
// operands; with operands the found ones in order and an ObjectError for
// each unknown one. Manager requests are recorded.
type fakeServer struct {
	nodes   []proto.Status
	reqs    []proto.StatusRequest
	mgr     []proto.ManagerRequest
	mgrErr  map[string]error // Manager failure by node name
	statErr error            // returned by every StatusNodes when set
	closed  bool
}

func (f *fakeServer) StatusNodes(r *proto.StatusRequest) ([]proto.Status, []proto.ObjectError, error) {
	f.reqs = append(f.reqs, *r)
	if f.statErr != nil {
		return nil, nil, f.statErr
	}
	if len(r.IDs) == 0 {
		return f.nodes, nil, nil
	}
	var out []proto.Status
	var errs []proto.ObjectError
	for _, id := range r.IDs {
		name, _, _ := strings.Cut(strings.TrimSpace(id), "@")
		found := false
		for _, n := range f.nodes {
			if n.Name == name {
				out = append(out, n)
				found = true
			}
		}
		if !found {
			errs = append(errs, proto.ObjectError{Name: id, Code: proto.PBSE_UNKNODE, Text: proto.PBSE_UNKNODE.Message()})
		}
	}
	return out, errs, nil
}

func (f *fakeServer) Manager(r *proto.ManagerRequest) error {
	f.mgr = append(f.mgr, *r)
	return f.mgrErr[r.Name]
}

func (f *fakeServer) ServerName() string { return "srv" }
func (f *fakeServer) Hello() error       { return nil }
func (f *fakeServer) Close() error       { f.closed = true; return nil }

// testNow is 2024-01-02 00:00:00 UTC.
var testNow = time.Unix(1704153600, 0)

type result struct {
	rc             int
	stdout, stderr string
	connected      bool
}

// runPbsnodes runs the command in personality p against f (nil: the
// connection fails with PBSE_NOSERVER).
func runPbsnodes(t *testing.T, p config.Personality, f *fakeServer, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdutil.Env{Name: "pbsnodes", Config: &config.Config{Personality: p, Server: "srv.example.org"}, Stdout: &out, Stderr: &errb}
	var res result
	res.rc = runWith(env, args, deps{
		connect: func() (client, error) {
			res.connected = true
			if f == nil {
				return nil, &proto.Error{Code: proto.PBSE_NOSERVER, Text: "cannot connect to server at /x/pbs_server.sock: refused"}
			}
			return f, nil
		},
		now: func() time.Time { return testNow },
		loc: time.UTC,
	})
	res.stdout, res.stderr = out.String(), errb.String()
	if f != nil && res.connected && !f.closed {
		t.Errorf("%q: connection not closed", args)
	}
	return res
}

func attr(name, res, value string) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Value: value}
}

// n1 is a free node whose mom reports, as the server shows it.
func n1() proto.Status {
	return proto.Status{Name: "n1", Attrs: []proto.Attr{
		attr("Mom", "", "n1"), attr("Port", "", "15002"), attr("pbs_version", "", "23.06.06"),
		attr("ntype", "", "PBS"), attr("state", "", "free"), attr("pcpus", "", "2"),
		attr("resources_available", "arch", "linux"), attr("resources_available", "host", "n1"),
		attr("resources_available", "mem", "24684096kb"), attr("resources_available", "ncpus", "2"),
		attr("resources_available", "vnode", "n1"),
		attr("resources_assigned", "mem", "0kb"), attr("resources_assigned", "ncpus", "0"),
		attr("loadave", "", "0.22"), attr("resv_enable", "", "True"), attr("sharing", "", "default_shared"),
		attr("last_state_change_time", "", "1704067200"),
	}}
}

// n2 runs two jobs, one of them on both cpus' slots: it is job-busy.
func n2() proto.Status {
	return proto.Status{Name: "n2", Attrs: []proto.Attr{
		attr("Mom", "", "n2.example.org"), attr("Port", "", "15002"), attr("pbs_version", "", "23.06.06"),
		attr("ntype", "", "PBS"), attr("state", "", "job-busy"), attr("pcpus", "", "4"),
		attr("jobs", "", "7.srv/0, 7.srv/1, 12.srv/2, 13.other/3"),
		attr("resources_available", "arch", "linux"), attr("resources_available", "host", "n2"),
		attr("resources_available", "mem", "8gb"), attr("resources_available", "ncpus", "4"),
		attr("resources_available", "ngpus", "1"),
		attr("resources_assigned", "mem", "3145728kb"), attr("resources_assigned", "ncpus", "4"),
		attr("loadave", "", "3.90"), attr("ideal_load", "", "4"), attr("max_load", "", "4.5"),
		attr("resv_enable", "", "True"), attr("sharing", "", "default_shared"),
		attr("last_state_change_time", "", "1704070800"),
	}}
}

// hostileNote holds everything that breaks naive text and JSON output.
const hostileNote = "disk \"full\"\n\tsee <ticket> & \\\\share, retry"

// n3 is offline and has never reported; it has properties and a note.
func n3() proto.Status {
	return proto.Status{Name: "n3", Attrs: []proto.Attr{
		attr("Mom", "", "n3"), attr("Port", "", "15010"), attr("ntype", "", "PBS"),
		attr("state", "", "offline,state-unknown,down"),
		attr("properties", "", "bigmem,ssd"),
		attr("resources_assigned", "mem", "0kb"), attr("resources_assigned", "ncpus", "0"),
		attr("comment", "", hostileNote),
		attr("resv_enable", "", "True"), attr("sharing", "", "default_shared"),
		attr("last_state_change_time", "", "1704153599"),
	}}
}

func cluster() *fakeServer {
	return &fakeServer{nodes: []proto.Status{n1(), n2(), n3()}}
}
