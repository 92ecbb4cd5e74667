package pbsnodes

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

func set(node string, attrs ...proto.Attr) proto.ManagerRequest {
	return proto.ManagerRequest{Command: proto.MgrSet, Object: proto.ObjNode, Name: node, Attrs: attrs}
}

func unsetNote(node string) proto.ManagerRequest {
	return proto.ManagerRequest{Command: proto.MgrUnset, Object: proto.ObjNode, Name: node,
		Attrs: []proto.Attr{{Name: "comment", Op: proto.OpUnset}}}
}

var (
	offline = proto.Attr{Name: "state", Value: "offline"}
	free    = proto.Attr{Name: "state", Value: "free"}
)

func note(v string) proto.Attr { return proto.Attr{Name: "comment", Value: v} }

func TestChanges(t *testing.T) {
	t.Parallel()
	pro, tq := config.PBSPro, config.Torque
	tests := []struct {
		p    config.Personality
		args []string
		want []proto.ManagerRequest
	}{
		{pro, []string{"-o", "n1", "n2"}, []proto.ManagerRequest{set("n1", offline), set("n2", offline)}},
		{tq, []string{"-o", "n1"}, []proto.ManagerRequest{set("n1", offline)}},
		{pro, []string{"-c", "n3"}, []proto.ManagerRequest{set("n3", free)}},
		{pro, []string{"-r", "n3"}, []proto.ManagerRequest{set("n3", free)}},
		{tq, []string{"-r", "n3", "n1"}, []proto.ManagerRequest{set("n3", free), set("n1", free)}},
		{pro, []string{"-c", "-r", "n3"}, []proto.ManagerRequest{set("n3", free)}}, // the same action twice
		// A note alone, with either letter; spaces and quotes kept.
		{tq, []string{"-N", `bad "dimm" slot 3`, "n1"}, []proto.ManagerRequest{set("n1", note(`bad "dimm" slot 3`))}},
		{pro, []string{"-C", "maintenance", "n1", "n2"}, []proto.ManagerRequest{set("n1", note("maintenance")), set("n2", note("maintenance"))}},
		{pro, []string{"-Cmaint", "n1"}, []proto.ManagerRequest{set("n1", note("maint"))}},
		// With a state change: one request.
		{pro, []string{"-o", "-C", "disk", "n1"}, []proto.ManagerRequest{set("n1", offline, note("disk"))}},
		{tq, []string{"-N", "disk", "-o", "n1"}, []proto.ManagerRequest{set("n1", offline, note("disk"))}},
		// An empty note clears; Torque's "-N n" clears too, OpenPBS's is a note.
		{pro, []string{"-N", "", "n1"}, []proto.ManagerRequest{unsetNote("n1")}},
		{tq, []string{"-N", "", "n1"}, []proto.ManagerRequest{unsetNote("n1")}},
		{tq, []string{"-N", "n", "n1"}, []proto.ManagerRequest{unsetNote("n1")}},
		{pro, []string{"-N", "n", "n1"}, []proto.ManagerRequest{set("n1", note("n"))}},
		{pro, []string{"-c", "-C", "", "n1"}, []proto.ManagerRequest{set("n1", free), unsetNote("n1")}},
		// Operands are trimmed of the blanks tools leave.
		{pro, []string{"-o", "n1\n"}, []proto.ManagerRequest{set("n1", offline)}},
	}
	for _, tt := range tests {
		f := cluster()
		r := runPbsnodes(t, tt.p, f, tt.args...)
		if r.rc != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%s %q: rc %d stdout %q stderr %q", tt.p, tt.args, r.rc, r.stdout, r.stderr)
		}
		if !reflect.DeepEqual(f.mgr, tt.want) {
			t.Errorf("%s %q: requests\n got %+v\nwant %+v", tt.p, tt.args, f.mgr, tt.want)
		}
		if len(f.reqs) != 0 {
			t.Errorf("%s %q: a change asked for status", tt.p, tt.args)
		}
	}
}

func TestChangeErrors(t *testing.T) {
	t.Parallel()
	perm := &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}
	tests := []struct {
		p      config.Personality
		args   []string
		errs   map[string]error
		stderr string
		rc     int
		sent   int
	}{
		// Each node is tried; the failing ones are reported.
		{config.PBSPro, []string{"-o", "n1", "n2", "n3"}, map[string]error{"n2": perm},
			"pbsnodes: Unauthorized Request n2\n", 159, 3},
		{config.Torque, []string{"-o", "n1", "n2"}, map[string]error{"n1": perm},
			"pbsnodes: Unauthorized Request n1\n", 1, 2},
		{config.PBSPro, []string{"-c", "nope"}, map[string]error{"nope": proto.Errorf(proto.PBSE_UNKNODE, "nope")},
			"pbsnodes: Unknown node nope\n", 214, 1},
		{config.PBSPro, []string{"-N", "x", "n1"}, map[string]error{"n1": errors.New("connection reset")},
			"pbsnodes: connection reset n1\n", proto.PBSE_SYSTEM.ExitStatus(), 1},
		// A failed state change does not go on to clear the note.
		{config.PBSPro, []string{"-c", "-N", "", "n1"}, map[string]error{"n1": perm},
			"pbsnodes: Unauthorized Request n1\n", 159, 1},
		{config.PBSPro, []string{"-q", "-o", "n1"}, map[string]error{"n1": perm}, "", 159, 1},
	}
	for _, tt := range tests {
		f := cluster()
		f.mgrErr = tt.errs
		r := runPbsnodes(t, tt.p, f, tt.args...)
		if r.rc != tt.rc || r.stderr != tt.stderr || r.stdout != "" || len(f.mgr) != tt.sent {
			t.Errorf("%s %q: rc %d stderr %q stdout %q sent %d, want rc %d stderr %q sent %d",
				tt.p, tt.args, r.rc, r.stderr, r.stdout, len(f.mgr), tt.rc, tt.stderr, tt.sent)
		}
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-Z"}, {"--help"}, {"-o"}, {"-c"}, {"-r"}, {"-N", "x"}, {"-C"}, {"-N"},
		{"-a", "-l"}, {"-l", "-o", "n1"}, {"-o", "-c", "n1"}, {"-a", "-o", "n1"},
		{"-a", "-N", "x", "n1"}, {"-l", "-N", "x"}, {"-l", "-S"}, {"-l", "-F", "json"}, {"-l", "-x"},
		{"-o", "-S", "n1"}, {"-o", "-F", "json", "n1"}, {"-n"}, {"-n", "-a"}, {"-F", "xml"}, {"-F"},
		{"-x", "-F", "json"}, {"-xS"}, {"-H"}, {"-a", ""}, {"-o", " "},
	} {
		for _, p := range []config.Personality{config.PBSPro, config.Torque} {
			r := runPbsnodes(t, p, cluster(), args...)
			if r.rc != 2 || r.connected || r.stdout != "" || !strings.HasPrefix(r.stderr, "pbsnodes: ") ||
				!strings.Contains(r.stderr, "usage: pbsnodes") {
				t.Errorf("%s %q: rc %d connected %v stdout %q stderr %q", p, args, r.rc, r.connected, r.stdout, r.stderr)
			}
		}
	}
}

func TestServerFailures(t *testing.T) {
	t.Parallel()
	// No connection.
	for p, rc := range map[config.Personality]int{config.PBSPro: 186, config.Torque: 1} {
		r := runPbsnodes(t, p, nil, "-a")
		if r.rc != rc || r.stdout != "" || r.stderr != "pbsnodes: cannot connect to server at /x/pbs_server.sock: refused\n" {
			t.Errorf("%s no server: rc %d stdout %q stderr %q", p, r.rc, r.stdout, r.stderr)
		}
	}
	// The whole status request refused.
	f := cluster()
	f.statErr = &proto.Error{Code: proto.PBSE_PERM, Text: "Unauthorized Request "}
	for _, args := range [][]string{{"-a"}, {"-l"}, {"n1", "n2"}, {"-aSj", "-F", "json"}} {
		r := runPbsnodes(t, config.PBSPro, f, args...)
		if r.rc != 159 || r.stdout != "" || r.stderr != "pbsnodes: Unauthorized Request\n" {
			t.Errorf("%q refused: rc %d stdout %q stderr %q", args, r.rc, r.stdout, r.stderr)
		}
	}
	// -s must name the server the command reaches.
	r := runPbsnodes(t, config.PBSPro, cluster(), "-s", "elsewhere", "-a")
	if r.rc != 186 || r.stdout != "" || !strings.Contains(r.stderr, "cannot connect to server elsewhere") {
		t.Errorf("-s elsewhere: rc %d stdout %q stderr %q", r.rc, r.stdout, r.stderr)
	}
}
