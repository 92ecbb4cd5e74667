package web

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/web/apischema"
	"github.com/gopbs/gopbs/proto"
)

// The schema documents exactly the attributes the server has: an
// attribute removed or renamed in the model leaves a documented field
// that can no longer appear (a released field disappearing), and one
// added must be documented before it ships.
func TestSchemaCoversModel(t *testing.T) {
	s, err := apischema.Parse(schemaV1)
	if err != nil {
		t.Fatal(err)
	}
	names := func(defs *model.DefTable) []string {
		var out []string
		for _, d := range defs.Defs {
			out = append(out, d.Name)
		}
		return out
	}
	for _, tt := range []struct {
		def   string
		model []string
	}{
		{"job", model.JobAttrNames()},
		{"queue", names(model.QueueDefs)},
		{"server", names(model.ServerDefs)},
		{"node", names(model.NodeDefs)},
	} {
		want := slices.Clone(tt.model)
		sort.Strings(want)
		got := s.Properties(tt.def)
		for _, n := range want {
			if !slices.Contains(got, n) {
				t.Errorf("%s attribute %s is not in api-v1.schema.json", tt.def, n)
			}
		}
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("api-v1.schema.json documents %s.%s, which the server no longer has: a released field is gone", tt.def, n)
			}
		}
	}
}

// The schema's list of what anonymous viewers see is the one applied.
func TestSchemaAnonymousFields(t *testing.T) {
	s, err := apischema.Parse(schemaV1)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, f := range s.Def("anonymous_job")["const"].([]any) {
		documented = append(documented, f.(string))
	}
	var applied []string
	for name, members := range anonymousJob {
		if members == nil {
			applied = append(applied, name)
		}
		for m := range members {
			applied = append(applied, name+"."+m)
		}
	}
	sort.Strings(documented)
	sort.Strings(applied)
	if !slices.Equal(documented, applied) {
		t.Fatalf("anonymous fields: schema %v, applied %v", documented, applied)
	}
	// And what is stripped is what the contract names: no environment,
	// paths, script or comment.
	kept := anonymousAttrs([]proto.Attr{
		{Name: proto.AttrVariableList, Value: "HOME=/root"}, {Name: proto.AttrOutputPath, Value: "h:/x"},
		{Name: proto.AttrComment, Value: "c"}, {Name: proto.AttrSubmitArguments, Value: "-v X"},
		{Name: proto.AttrResourceList, Resource: "software", Value: "secret"},
		{Name: proto.AttrJobName, Value: "n"}, {Name: proto.AttrResourceList, Resource: "walltime", Value: "1:00:00"},
	})
	var got []string
	for _, a := range kept {
		got = append(got, strings.TrimSuffix(a.Name+"."+a.Resource, "."))
	}
	if !slices.Equal(got, []string{"Job_Name", "Resource_List.walltime"}) {
		t.Fatalf("anonymous attributes kept: %v", got)
	}
}

// The schema check fails on the changes v1 rules out: a field with
// another type or form (a time as Unix seconds, a walltime in seconds,
// a new state letter), a field gone, a field not documented.
func TestSchemaCatchesChanges(t *testing.T) {
	s, err := apischema.Parse(schemaV1)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(job string) []byte {
		return []byte(`{"timestamp":1,"pbs_version":"23.06.06","pbs_server":"s","Jobs":{"1.s":{` + job + `}}}`)
	}
	const ok = `"Job_Name":"n","Job_Owner":"u@h","job_state":"R","queue":"q","server":"s","Checkpoint":"u",
		"ctime":"Thu Nov 26 10:12:48 2026","Error_Path":"h:/e","Hold_Types":"n","Join_Path":"n","Keep_Files":"n",
		"Mail_Points":"a","mtime":"Thu Nov 26 10:12:48 2026","Output_Path":"h:/o","Priority":0,
		"qtime":"Thu Nov  5 10:12:48 2026","Rerunable":"True","Resource_List":{"walltime":"01:00:00","ncpus":2},
		"substate":42,"Variable_List":{"A":"b"},"euser":"u","egroup":"g","queue_rank":3,"queue_type":"Execution",
		"project":"p","Submit_Host":"h"`
	if r := s.Check("jobs_document", doc(ok)); len(r.Problems) != 0 || !r.Seen["job.Resource_List.walltime"] || !r.Seen["job.ctime"] {
		t.Fatalf("a good document: %v %v", r.Problems, r.Seen)
	}
	for _, change := range []struct{ from, to, want string }{
		{`"ctime":"Thu Nov 26 10:12:48 2026"`, `"ctime":1795000000`, "/Jobs/1.s/ctime"},
		{`"walltime":"01:00:00"`, `"walltime":3600`, "/Jobs/1.s/Resource_List/walltime"},
		{`"job_state":"R"`, `"job_state":"C"`, "/Jobs/1.s/job_state"},
		{`"Priority":0`, `"Priority":"high"`, "/Jobs/1.s/Priority"},
		{`"job_state":"R",`, ``, "required field job_state"},
		{`"Job_Name":"n"`, `"Job_Name":"n","jobName":"n"`, "/Jobs/1.s/jobName: field not in the schema"},
	} {
		r := s.Check("jobs_document", doc(strings.Replace(ok, change.from, change.to, 1)))
		if !strings.Contains(strings.Join(r.Problems, "\n"), change.want) {
			t.Errorf("%s -> %s: problems %v", change.from, change.to, r.Problems)
		}
	}
}

// Whatever a document holds, the check answers without panicking.
func FuzzSchemaCheck(f *testing.F) {
	s, err := apischema.Parse(schemaV1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`{"Jobs":{"1":{"Job_Name":1,"Resource_List":{"x":[1]}}}}`)
	f.Add(`[1,{"a":null}]`)
	f.Fuzz(func(t *testing.T, doc string) {
		for _, def := range []string{"jobs_document", "nodes_document", "queues_document", "server_document", "error"} {
			s.Check(def, []byte(doc))
		}
	})
}
