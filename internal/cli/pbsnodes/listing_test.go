package pbsnodes

import (
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/proto"
)

// Expected -a blocks. pbspro: the server's attributes with five blanks of
// indent and last_state_change_time as a ctime string; the note's newline
// and TAB escaped so that the block stays one line per attribute.
const (
	proN1 = `n1
     Mom = n1
     Port = 15002
     pbs_version = 23.06.06
     ntype = PBS
     state = free
     pcpus = 2
     resources_available.arch = linux
     resources_available.host = n1
     resources_available.mem = 24684096kb
     resources_available.ncpus = 2
     resources_available.vnode = n1
     resources_assigned.mem = 0kb
     resources_assigned.ncpus = 0
     loadave = 0.22
     resv_enable = True
     sharing = default_shared
     last_state_change_time = Mon Jan  1 00:00:00 2024

`
	proN2 = `n2
     Mom = n2.example.org
     Port = 15002
     pbs_version = 23.06.06
     ntype = PBS
     state = job-busy
     pcpus = 4
     jobs = 7.srv/0, 7.srv/1, 12.srv/2, 13.other/3
     resources_available.arch = linux
     resources_available.host = n2
     resources_available.mem = 8gb
     resources_available.ncpus = 4
     resources_available.ngpus = 1
     resources_assigned.mem = 3145728kb
     resources_assigned.ncpus = 4
     loadave = 3.90
     ideal_load = 4
     max_load = 4.5
     resv_enable = True
     sharing = default_shared
     last_state_change_time = Mon Jan  1 01:00:00 2024

`
	proN3 = `n3
     Mom = n3
     Port = 15010
     ntype = PBS
     state = offline,state-unknown,down
     properties = bigmem,ssd
     resources_assigned.mem = 0kb
     resources_assigned.ncpus = 0
     comment = disk "full"\n^Isee <ticket> & \\share, retry
     resv_enable = True
     sharing = default_shared
     last_state_change_time = Mon Jan  1 23:59:59 2024

`
	// torque: the Torque view derived from the same replies.
	torqueN1 = `n1
     state = free
     power_state = Running
     np = 2
     ntype = cluster
     status = opsys=linux,physmem=24684096kb,ncpus=2,loadave=0.22
     mom_service_port = 15002

`
	torqueN2 = `n2
     state = job-exclusive
     power_state = Running
     np = 4
     ntype = cluster
     jobs = 0/7.srv,1/7.srv,2/12.srv,3/13.other
     status = opsys=linux,physmem=8gb,ncpus=4,loadave=3.90
     mom_service_port = 15002
     gpus = 1

`
	torqueN3 = `n3
     state = offline,state-unknown,down
     power_state = Running
     properties = bigmem,ssd
     ntype = cluster
     note = disk "full"\n^Isee <ticket> & \\share, retry
     mom_service_port = 15010

`
)

func TestListing(t *testing.T) {
	t.Parallel()
	pro, tq := config.PBSPro, config.Torque
	tests := []struct {
		p    config.Personality
		args []string
		want string
		ids  []string // the StatusRequest's IDs
	}{
		{pro, []string{"-a"}, proN1 + proN2 + proN3, nil},
		{pro, nil, proN1 + proN2 + proN3, nil},
		{pro, []string{"-av"}, proN1 + proN2 + proN3, nil},
		{pro, []string{"n3", "n1"}, proN3 + proN1, []string{"n3", "n1"}},
		{pro, []string{"-a", "n2"}, proN2, []string{"n2"}},
		{pro, []string{"-H", "n2"}, proN2, []string{"n2"}},
		{pro, []string{" n1\n", "n2@srv"}, proN1 + proN2, []string{"n1", "n2@srv"}},
		{pro, []string{"n1", "-a"}, proN1, []string{"n1"}}, // options may follow operands
		{pro, []string{"-s", "srv", "n1"}, proN1, []string{"n1"}},
		{pro, []string{"-s", "srv.example.org:15001", "n1"}, proN1, []string{"n1"}},
		{tq, []string{"-a"}, torqueN1 + torqueN2 + torqueN3, nil},
		{tq, nil, torqueN1 + torqueN2 + torqueN3, nil},
		{tq, []string{"n2", "n3"}, torqueN2 + torqueN3, []string{"n2", "n3"}},
	}
	for _, tt := range tests {
		f := cluster()
		r := runPbsnodes(t, tt.p, f, tt.args...)
		if r.rc != 0 || r.stderr != "" || r.stdout != tt.want {
			t.Errorf("%s %q: rc %d stderr %q\n got:\n%s\nwant:\n%s", tt.p, tt.args, r.rc, r.stderr, r.stdout, tt.want)
		}
		if len(f.reqs) != 1 || !reflect.DeepEqual(f.reqs[0].IDs, tt.ids) {
			t.Errorf("%s %q: requests %+v, want IDs %q", tt.p, tt.args, f.reqs, tt.ids)
		}
		if len(f.mgr) != 0 {
			t.Errorf("%s %q: listing sent manager requests %+v", tt.p, tt.args, f.mgr)
		}
	}
}

func TestUnknownNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p        config.Personality
		args     []string
		stdout   string
		stderr   string
		rc       int
		statErr  error
		jsonKeys []string
	}{
		{config.PBSPro, []string{"n3", "nope", "n1"}, proN3 + proN1, "pbsnodes: Unknown node nope\n", 214, nil, nil},
		{config.Torque, []string{"n3", "nope", "n1"}, torqueN3 + torqueN1, "pbsnodes: Unknown node nope\n", 1, nil, nil},
		{config.PBSPro, []string{"x", "y"}, "", "pbsnodes: Unknown node x\npbsnodes: Unknown node y\n", 214, nil, nil},
		// A server rejecting a one-operand request names that operand.
		{config.PBSPro, []string{"nope"}, "", "pbsnodes: Unknown node nope\n", 214,
			proto.Errorf(proto.PBSE_UNKNODE, "nope"), nil},
		// -q keeps the status but not the message.
		{config.PBSPro, []string{"-q", "nope", "n1"}, proN1, "", 214, nil, nil},
		// In JSON the unknown node is left out; the document stays valid.
		{config.PBSPro, []string{"-F", "json", "nope", "n2"}, "", "pbsnodes: Unknown node nope\n", 214, nil, []string{"n2"}},
		{config.PBSPro, []string{"-l", "n1", "nope"}, "n1                   free\n", "pbsnodes: Unknown node nope\n", 214, nil, nil},
	}
	for _, tt := range tests {
		f := cluster()
		f.statErr = tt.statErr
		r := runPbsnodes(t, tt.p, f, tt.args...)
		if r.rc != tt.rc || r.stderr != tt.stderr {
			t.Errorf("%s %q: rc %d stderr %q, want %d %q", tt.p, tt.args, r.rc, r.stderr, tt.rc, tt.stderr)
		}
		if tt.jsonKeys != nil {
			var doc struct{ Nodes map[string]any }
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("%q: invalid JSON %v:\n%s", tt.args, err, r.stdout)
			}
			var keys []string
			for k := range doc.Nodes {
				keys = append(keys, k)
			}
			if !reflect.DeepEqual(keys, tt.jsonKeys) {
				t.Errorf("%q: nodes %q, want %q", tt.args, keys, tt.jsonKeys)
			}
		} else if r.stdout != tt.stdout {
			t.Errorf("%s %q: stdout\n%s\nwant\n%s", tt.p, tt.args, r.stdout, tt.stdout)
		}
	}
}

// jsonN2 is n2 in "-F json": OpenPBS's layout, plain integers as numbers
// (Port, pcpus, ncpus, ideal_load, the time in Unix seconds), everything
// else as strings, resources nested and jobs a list of distinct ids.
const jsonN2 = `{
    "timestamp":1704153600,
    "pbs_version":"23.06.06",
    "pbs_server":"srv.example.org",
    "nodes":{
        "n2":{
            "Mom":"n2.example.org",
            "Port":15002,
            "pbs_version":"23.06.06",
            "ntype":"PBS",
            "state":"job-busy",
            "pcpus":4,
            "jobs":[
                "7.srv",
                "12.srv",
                "13.other"
            ],
            "resources_available":{
                "arch":"linux",
                "host":"n2",
                "mem":"8gb",
                "ncpus":4,
                "ngpus":1
            },
            "resources_assigned":{
                "mem":"3145728kb",
                "ncpus":4
            },
            "loadave":"3.90",
            "ideal_load":4,
            "max_load":"4.5",
            "resv_enable":"True",
            "sharing":"default_shared",
            "last_state_change_time":1704070800
        }
    }
}
`

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, p := range []config.Personality{config.PBSPro, config.Torque} {
		for _, args := range [][]string{{"-F", "json", "n2"}, {"-a", "-Fjson", "n2"}, {"-av", "-F", "JSON", "n2"}} {
			r := runPbsnodes(t, p, cluster(), args...)
			if r.rc != 0 || r.stderr != "" || r.stdout != jsonN2 {
				t.Errorf("%s %q: rc %d stderr %q\n%s", p, args, r.rc, r.stderr, r.stdout)
			}
		}
	}

	r := runPbsnodes(t, config.PBSPro, cluster(), "-a", "-F", "json")
	var doc struct {
		Timestamp  int64  `json:"timestamp"`
		PBSVersion string `json:"pbs_version"`
		PBSServer  string `json:"pbs_server"`
		Nodes      map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, r.stdout)
	}
	if doc.Timestamp != testNow.Unix() || doc.PBSVersion != "23.06.06" || doc.PBSServer != "srv.example.org" || len(doc.Nodes) != 3 {
		t.Errorf("prologue %+v", doc)
	}
	n3 := doc.Nodes["n3"]
	if n3["comment"] != hostileNote || n3["state"] != "offline,state-unknown,down" || n3["Port"] != 15010.0 {
		t.Errorf("n3 = %#v", n3)
	}
	n1 := doc.Nodes["n1"]
	avail, _ := n1["resources_available"].(map[string]any)
	if avail["ncpus"] != 2.0 || avail["mem"] != "24684096kb" || n1["last_state_change_time"] != 1704067200.0 {
		t.Errorf("n1 = %#v", n1)
	}
	if _, ok := n1["jobs"]; ok {
		t.Error("a node without jobs has no jobs member")
	}
}

// JSON must parse whatever the server's values hold, and keep distinct
// keys when the reply repeats an attribute.
func TestJSONHostileValues(t *testing.T) {
	t.Parallel()
	odd := []string{"\x00\x1f\x7f", "\xff\xfe bad utf8", "\u2028\u2029", `"}]{[`, "-0", "007", "1e3", "9223372036854775808", ""}
	var attrs []proto.Attr
	for i, v := range odd {
		attrs = append(attrs, attr("comment", "", v), attr("resources_available", "x"+string(rune('a'+i)), v))
	}
	attrs = append(attrs, attr("jobs", "", "/, ,a/b/c,\"q\"/1"), attr("resources_available", "xa", "dup"))
	f := &fakeServer{nodes: []proto.Status{{Name: "n\"\n\\", Attrs: attrs}}}
	r := runPbsnodes(t, config.PBSPro, f, "-a", "-F", "json")
	var doc struct{ Nodes map[string]map[string]any }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, r.stdout)
	}
	n := doc.Nodes["n\"\n\\"]
	if n == nil || n["comment"] != odd[0] {
		t.Fatalf("node %#v", doc.Nodes)
	}
	if got := strings.Count(r.stdout, `"comment":`); got != 1 {
		t.Errorf("comment printed %d times", got)
	}
	avail := n["resources_available"].(map[string]any)
	if avail["xa"] != odd[0] || avail["xb"] != "\ufffd\ufffd bad utf8" || avail["xe"] != "-0" && avail["xe"] != 0.0 ||
		avail["xf"] != "007" || avail["xg"] != "1e3" || avail["xh"] != "9223372036854775808" || avail["xi"] != "" {
		t.Errorf("resources_available %#v", avail)
	}
	if jobs := n["jobs"].([]any); !reflect.DeepEqual(jobs, []any{"a/b", `"q"`}) {
		t.Errorf("jobs %#v", jobs)
	}
}

const (
	summaryTable = `vnode           state           OS       hardware host            queue        mem     ncpus   nmics   ngpus  comment
--------------- --------------- -------- -------- --------------- ---------- -------- ------- ------- ------- ---------
n1              free            --       --       n1              --             24gb       2       0       0 --
n2              job-busy        --       --       n2              --              8gb       4       0       1 --
n3              offline         --       --       --              --              0kb       0       0       0 disk "full"\n^Isee <ticket> & \\share, retry
`
	jobSummaryTable = `                                                        mem       ncpus   nmics   ngpus
vnode           state           njobs   run   susp      f/t        f/t     f/t     f/t   jobs
--------------- --------------- ------ ----- ------ ------------ ------- ------- ------- -------
n1              free                 0     0      0    24gb/24gb     2/2     0/0     0/0 --
n2              job-busy             3     3      0      5gb/8gb     0/4     0/0     1/1 7,12,13.other
n3              offline              0     0      0      0kb/0kb     0/0     0/0     0/0 --
`
	jobSummaryJSON = `{
    "timestamp":1704153600,
    "pbs_version":"23.06.06",
    "pbs_server":"srv.example.org",
    "nodes":{
        "n1":{
            "State":"free",
            "Total Jobs":0,
            "Running Jobs":0,
            "Suspended Jobs":0,
            "mem f/t":"24gb/24gb",
            "ncpus f/t":"2/2",
            "nmics f/t":"0/0",
            "ngpus f/t":"0/0",
            "jobs":[]
        },
        "n2":{
            "State":"job-busy",
            "Total Jobs":3,
            "Running Jobs":3,
            "Suspended Jobs":0,
            "mem f/t":"5gb/8gb",
            "ncpus f/t":"0/4",
            "nmics f/t":"0/0",
            "ngpus f/t":"1/1",
            "jobs":[
                "7.srv",
                "12.srv",
                "13.other"
            ]
        }
    }
}
`
	nodeSummaryJSON = `{
    "timestamp":1704153600,
    "pbs_version":"23.06.06",
    "pbs_server":"srv.example.org",
    "nodes":{
        "n3":{
            "State":"offline",
            "OS":"--",
            "hardware":"--",
            "host":"--",
            "queue":"--",
            "Memory":"0kb",
            "ncpus":0,
            "nmics":0,
            "ngpus":0,
            "comment":"disk \"full\"\n\tsee <ticket> & \\\\share, retry"
        }
    }
}
`
)

func TestSummaries(t *testing.T) {
	t.Parallel()
	long := strings.Replace(jobSummaryTable, "n3              offline              0",
		"n3              offline,state-unknown,down      0", 1)
	tests := []struct {
		p    config.Personality
		args []string
		want string
	}{
		{config.PBSPro, []string{"-aS"}, summaryTable},
		{config.PBSPro, []string{"-S"}, summaryTable},
		{config.Torque, []string{"-aS"}, summaryTable}, // OpenPBS's format in both
		{config.PBSPro, []string{"-aSj"}, jobSummaryTable},
		{config.PBSPro, []string{"-aj"}, jobSummaryTable}, // -j implies -S
		{config.PBSPro, []string{"-aSjL"}, long},
		{config.PBSPro, []string{"-S", "n2"}, summaryTable[:strings.Index(summaryTable, "n1 ")] +
			"n2              job-busy        --       --       n2              --              8gb       4       0       1 --\n"},
		{config.PBSPro, []string{"-aSj", "-F", "json", "n1", "n2"}, jobSummaryJSON},
		{config.PBSPro, []string{"-S", "-F", "json", "n3"}, nodeSummaryJSON},
		{config.PBSPro, []string{"-aS", "-F", "dsv", "n1", "n3"},
			"vnode=n1|state=free|OS=--|hardware=--|host=n1|queue=--|mem=24gb|ncpus=2|nmics=0|ngpus=0|comment=--\n" +
				`vnode=n3|state=offline|OS=--|hardware=--|host=--|queue=--|mem=0kb|ncpus=0|nmics=0|ngpus=0|comment=disk "full"\n^Isee <ticket> & \\\\share, retry` + "\n"},
		{config.PBSPro, []string{"-aSj", "-F", "dsv", "-D", ";", "n2"},
			"vnode=n2;state=job-busy;njobs=3;run=3;susp=0;mem(f/t)=5gb/8gb;ncpus(f/t)=0/4;nmics(f/t)=0/0;ngpus(f/t)=1/1;jobs=7.srv,12.srv,13.other\n"},
	}
	for _, tt := range tests {
		r := runPbsnodes(t, tt.p, cluster(), tt.args...)
		if r.rc != 0 || r.stderr != "" || r.stdout != tt.want {
			t.Errorf("%s %q: rc %d stderr %q\n got:\n%s\nwant:\n%s", tt.p, tt.args, r.rc, r.stderr, r.stdout, tt.want)
		}
	}
	// The OOD call parses as JSON.
	r := runPbsnodes(t, config.PBSPro, cluster(), "-aSj", "-F", "json")
	var doc struct {
		Nodes map[string]struct {
			State string
			Jobs  []string `json:"jobs"`
			Total int      `json:"Total Jobs"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Nodes["n2"].Total != 3 || len(doc.Nodes["n2"].Jobs) != 3 ||
		doc.Nodes["n3"].State != "offline" || doc.Nodes["n1"].Jobs == nil {
		t.Errorf("-aSj -F json: %v %+v", err, doc)
	}
}

// Summary cells are cut to their columns (and -L keeps them whole);
// memory that cannot be read is shown as sent rather than as 0.
func TestSummaryCells(t *testing.T) {
	t.Parallel()
	f := &fakeServer{nodes: []proto.Status{{Name: "a-very-long-node-name.example.org", Attrs: []proto.Attr{
		attr("state", "", "free"), attr("queue", "", "workq"),
		attr("resources_available", "OS", "linux-gnu-long"), attr("resources_available", "hardware", "x86_64"),
		attr("resources_available", "host", "a-very-long-node-name"), attr("resources_available", "mem", "lots"),
		attr("resources_available", "ncpus", "128"), attr("resources_available", "nmics", "2"),
		attr("resources_assigned", "ncpus", "130"), attr("comment", "", "note with blanks"),
	}}}}
	r := runPbsnodes(t, config.PBSPro, f, "-S")
	want := "a-very-long-nod free            linux-gn x86_64   a-very-long-nod workq          lots     128       2       0 note with blanks\n"
	if !strings.HasSuffix(r.stdout, want) {
		t.Errorf("-S row\n got %q\nwant %q", r.stdout, want)
	}
	r = runPbsnodes(t, config.PBSPro, f, "-SjL")
	want = "a-very-long-node-name.example.org free                 0     0      0         lots  -2/128     2/2     0/0 --\n"
	if !strings.HasSuffix(r.stdout, want) {
		t.Errorf("-SjL row\n got %q\nwant %q", r.stdout, want)
	}
}

func TestFullDSV(t *testing.T) {
	t.Parallel()
	f := &fakeServer{nodes: []proto.Status{n2(), {Name: "n4", Attrs: []proto.Attr{attr("comment", "", "a;b|c")}}}}
	r := runPbsnodes(t, config.PBSPro, f, "-a", "-F", "dsv", "-D", ";")
	want := "Name=n2;Mom=n2.example.org;Port=15002;pbs_version=23.06.06;ntype=PBS;state=job-busy;pcpus=4;" +
		"jobs=7.srv/0,7.srv/1,12.srv/2,13.other/3;resources_available.arch=linux;resources_available.host=n2;" +
		"resources_available.mem=8gb;resources_available.ncpus=4;resources_available.ngpus=1;" +
		"resources_assigned.mem=3145728kb;resources_assigned.ncpus=4;loadave=3.90;ideal_load=4;max_load=4.5;" +
		"resv_enable=True;sharing=default_shared;last_state_change_time=1704070800\n" +
		`Name=n4;comment=a\;b|c` + "\n"
	if r.rc != 0 || r.stdout != want {
		t.Errorf("rc %d\n got %q\nwant %q", r.rc, r.stdout, want)
	}
}

func TestTorqueXML(t *testing.T) {
	t.Parallel()
	r := runPbsnodes(t, config.Torque, cluster(), "-x", "n1", "n3")
	want := "<Data><Node><name>n1</name><state>free</state><power_state>Running</power_state><np>2</np>" +
		"<ntype>cluster</ntype><status>opsys=linux,physmem=24684096kb,ncpus=2,loadave=0.22</status>" +
		"<mom_service_port>15002</mom_service_port></Node>" +
		"<Node><name>n3</name><state>offline,state-unknown,down</state><power_state>Running</power_state>" +
		"<properties>bigmem,ssd</properties><ntype>cluster</ntype>" +
		"<note>disk &#34;full&#34;&#xA;&#x9;see &lt;ticket&gt; &amp; \\\\share, retry</note>" +
		"<mom_service_port>15010</mom_service_port></Node></Data>\n"
	if r.rc != 0 || r.stdout != want {
		t.Fatalf("rc %d\n got %s\nwant %s", r.rc, r.stdout, want)
	}
	var doc struct {
		Nodes []struct {
			Name  string `xml:"name"`
			State string `xml:"state"`
			Note  string `xml:"note"`
		} `xml:"Node"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Nodes) != 2 || doc.Nodes[1].Note != hostileNote {
		t.Errorf("XML does not round-trip: %v %+v", err, doc)
	}
}

func TestMarked(t *testing.T) {
	t.Parallel()
	pro, tq := config.PBSPro, config.Torque
	noted := cluster()
	noted.nodes[1].Attrs = append(noted.nodes[1].Attrs, attr("comment", "", "draining"))
	tests := []struct {
		p    config.Personality
		f    *fakeServer
		args []string
		want string
		ids  []string
	}{
		{pro, cluster(), []string{"-l"}, "n3                   offline,state-unknown,down\n", nil},
		{tq, cluster(), []string{"-l"}, "n3                   offline,state-unknown,down\n", nil},
		// -n adds the note where there is one.
		{pro, noted, []string{"-l", "-n", "n1", "n2", "n3"}, "n1                   free\n" +
			"n2                   job-busy                   draining\n" +
			`n3                   offline,state-unknown,down disk "full"\n^Isee <ticket> & \\share, retry` + "\n",
			[]string{"n1", "n2", "n3"}},
		{tq, noted, []string{"-ln", "n2"}, "n2                   job-exclusive              draining\n", []string{"n2"}},
		// Named nodes are listed whatever their state, in the order named.
		{pro, cluster(), []string{"-l", "n2", "n1"}, "n2                   job-busy\nn1                   free\n", []string{"n2", "n1"}},
		// Torque's state keywords.
		{tq, cluster(), []string{"-l", "all"}, "n1                   free\nn2                   job-exclusive\nn3                   offline,state-unknown,down\n", nil},
		{tq, cluster(), []string{"-l", "free"}, "n1                   free\n", nil},
		{tq, cluster(), []string{"-l", "ACTIVE"}, "n2                   job-exclusive\n", nil},
		{pro, cluster(), []string{"-l", "job-exclusive"}, "n2                   job-busy\n", nil},
		{tq, cluster(), []string{"-l", "up"}, "n1                   free\nn2                   job-exclusive\n", nil},
		{tq, cluster(), []string{"-l", "down", "n1", "n3"}, "n3                   offline,state-unknown,down\n", []string{"n1", "n3"}},
		// Names and states are cut to their columns.
		{pro, &fakeServer{nodes: []proto.Status{{Name: "node-with-a-long-name-01", Attrs: []proto.Attr{
			attr("state", "", "job-busy,offline,state-unknown"), attr("comment", "", "n")}}}},
			[]string{"-ln"}, "node-with-a-long-nam job-busy,offline,state-unk n\n", nil},
	}
	for _, tt := range tests {
		r := runPbsnodes(t, tt.p, tt.f, tt.args...)
		if r.rc != 0 || r.stderr != "" || r.stdout != tt.want {
			t.Errorf("%s %q: rc %d stderr %q\n got %q\nwant %q", tt.p, tt.args, r.rc, r.stderr, r.stdout, tt.want)
		}
		if last := tt.f.reqs[len(tt.f.reqs)-1]; !reflect.DeepEqual(last.IDs, tt.ids) {
			t.Errorf("%s %q: IDs %q, want %q", tt.p, tt.args, last.IDs, tt.ids)
		}
	}
}

func TestNoNodes(t *testing.T) {
	t.Parallel()
	for _, p := range []config.Personality{config.PBSPro, config.Torque} {
		for _, args := range [][]string{nil, {"-a"}, {"-l"}, {"-aS"}, {"-x"}} {
			r := runPbsnodes(t, p, &fakeServer{}, args...)
			if r.rc != 1 || r.stdout != "" || r.stderr != "pbsnodes: Server has no node list\n" {
				t.Errorf("%s %q: rc %d stdout %q stderr %q", p, args, r.rc, r.stdout, r.stderr)
			}
		}
		// A server that answers PBSE_NONODES itself means the same.
		f := &fakeServer{statErr: proto.NewError(proto.PBSE_NONODES)}
		if r := runPbsnodes(t, p, f, "-a"); r.rc != 1 || r.stderr != "pbsnodes: Server has no node list\n" {
			t.Errorf("%s PBSE_NONODES: rc %d stderr %q", p, r.rc, r.stderr)
		}
		// JSON still prints a document.
		r := runPbsnodes(t, p, &fakeServer{}, "-a", "-F", "json")
		want := "{\n    \"timestamp\":1704153600,\n    \"pbs_version\":\"23.06.06\",\n    \"pbs_server\":\"srv.example.org\",\n    \"nodes\":{}\n}\n"
		if r.rc != 1 || r.stdout != want || r.stderr != "pbsnodes: Server has no node list\n" {
			t.Errorf("%s JSON: rc %d stdout %q stderr %q", p, r.rc, r.stdout, r.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for p, want := range map[config.Personality]string{config.PBSPro: "pbs_version = 23.06.06\n", config.Torque: "Version: 6.1.3\n"} {
		for _, args := range [][]string{{"--version"}, {"-a", "--version"}} {
			r := runPbsnodes(t, p, nil, args...)
			if r.rc != 0 || r.stdout != want || r.stderr != "" || r.connected {
				t.Errorf("%s %q: rc %d stdout %q stderr %q connected %v", p, args, r.rc, r.stdout, r.stderr, r.connected)
			}
		}
	}
}
