package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/testcluster"
	"github.com/gopbs/gopbs/proto"
)

// qmgrSamples are valid values for the attributes whose checks the
// values by kind (qmgrSample) would not pass; lists are written without
// quotes, as OpenPBS's qmgr takes them.
var qmgrSamples = map[proto.ObjectType]map[string]string{
	proto.ObjServer: {
		proto.AttrDefaultQueue:         "workq",
		proto.AttrMailFrom:             "pbsadmin@example.com",
		proto.AttrManagers:             "root@*,pbsmgr@example.com",
		proto.AttrOperators:            "alice@*,bob@example.com",
		proto.AttrAclRoots:             "root@*,admin@example.com",
		proto.AttrSubmissionFilters:    "/usr/local/filters/a,/usr/local/filters/b",
		proto.AttrDefaultQsubArguments: "-rn",
		proto.AttrEligibleTimeEnable:   "False",
	},
	proto.ObjQueue: {
		proto.AttrQueueTypeQ:        "Route",
		proto.AttrRouteDestinations: "workq,qtab2",
		proto.AttrActivationFilters: "/usr/local/filters/a,/usr/local/filters/b",
		proto.AttrSubmissionFilters: "/usr/local/filters/a,/usr/local/filters/b",
		proto.AttrAclGroups:         "staff,users",
		proto.AttrAclUsers:          "alice,bob",
	},
	proto.ObjNode: {
		proto.AttrNodeMom:        "localhost",
		proto.AttrNodeNtype:      "time-shared",
		proto.AttrNodeState:      "offline",
		proto.AttrNodeIdealLoad:  "1.5",
		proto.AttrNodeMaxLoad:    "3.5",
		proto.AttrNodeProperties: "big,fast",
	},
}

// qmgrKindSamples are valid values by kind.
var qmgrKindSamples = map[model.Kind]string{
	model.KindString: "a_value", model.KindBool: "True", model.KindLong: "7",
	model.KindList: "h1.example.com,h2.example.com", model.KindResources: "4",
	model.KindDuration: "01:30:00", model.KindSize: "10mb",
	model.KindEntity: "[u:PBS_GENERIC=10]", model.KindEntityRes: "[g:PBS_GENERIC=4]",
}

// qmgrSample is a valid value of attribute d of obj, and the attribute's
// full name (a resources attribute takes ncpus).
func qmgrSample(obj proto.ObjectType, d model.Def) (full, resource, value string) {
	full = d.Name
	if d.Kind.PerResource() {
		full, resource = d.Name+".ncpus", "ncpus"
	}
	if v, ok := qmgrSamples[obj][d.Name]; ok {
		return full, resource, v
	}
	value = qmgrKindSamples[d.Kind]
	return full, resource, value
}

// qmgrListed is what "qmgr -c 'list <obj> <name> <attr>'" shows, by
// attribute.
func qmgrListed(t *testing.T, c *testcluster.Cluster, target, attr string) map[string]string {
	t.Helper()
	out := c.MustRun("qmgr", "-c", "list "+target+" "+attr)
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok {
			got[k] = v
		}
	}
	return got
}

// Every attribute a manager may set, on the server, a queue and a node,
// goes through qmgr set (comma lists unquoted), list and unset against a
// real server: qmgr's grammar and the server read one table (issue 19
// item 12, issue 20 item 7).
func TestQmgrSetListUnsetEveryAttribute(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{})
	for _, cmd := range []string{
		"create queue qtab queue_type = execution",
		"create queue qtab2 queue_type = execution",
		fmt.Sprintf("create node ntab Mom=localhost,Port=%d", testcluster.FreePort(t)),
	} {
		c.MustRun("qmgr", "-c", cmd)
	}
	tested := 0
	for _, tgt := range []struct {
		obj    proto.ObjectType
		target string
	}{{proto.ObjServer, "server"}, {proto.ObjQueue, "queue qtab"}, {proto.ObjNode, "node ntab"}} {
		for _, d := range model.Defs(tgt.obj).Defs {
			if !d.Settable() || d.Name == proto.AttrNextJobNumber {
				// next_job_number is the store's sequence, never moved
				// back: TestQmgrOpenPBSObjects has it.
				continue
			}
			full, res, value := qmgrSample(tgt.obj, d)
			want, err := d.Canonical(res, value)
			if err != nil {
				t.Fatalf("%s %s: the test's value %q is not valid: %v", tgt.target, full, value, err)
			}
			// A node's state shows the server's view of its mom besides
			// what a manager set: offline is one of its words.
			nodeState := tgt.obj == proto.ObjNode && d.Name == proto.AttrNodeState
			shows := func(got string, ok bool) bool {
				if nodeState {
					return strings.Contains(got, want)
				}
				return ok && got == want
			}
			before, had := qmgrListed(t, c, tgt.target, full)[full]
			if r := c.Run("qmgr", "-c", "set "+tgt.target+" "+full+" = "+value); r.Code != 0 {
				t.Errorf("set %s %s = %s: %s", tgt.target, full, value, r)
				continue
			}
			if got, ok := qmgrListed(t, c, tgt.target, full)[full]; !shows(got, ok) {
				t.Errorf("after set %s %s = %s, list shows %q, want %q", tgt.target, full, value, got, want)
			}
			if r := c.Run("qmgr", "-c", "unset "+tgt.target+" "+full); r.Code != 0 {
				t.Errorf("unset %s %s: %s", tgt.target, full, r)
				continue
			}
			if got, ok := qmgrListed(t, c, tgt.target, full)[full]; shows(got, ok) {
				t.Errorf("after unset %s %s, list shows %q", tgt.target, full, got)
			}
			if had && !nodeState {
				// Put back what the server or the test set up had.
				c.MustRun("qmgr", "-c", "set "+tgt.target+" "+full+" = "+before)
			}
			tested++
		}
	}
	t.Logf("%d attributes set, listed and unset", tested)
}
