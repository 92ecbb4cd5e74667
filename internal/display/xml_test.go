package display

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestJobsXML(t *testing.T) {
	t.Parallel()
	got := render(t, func(b *bytes.Buffer) error { return JobsXML(b, []proto.Status{finishedJob()}, torque()) })
	want := `<?xml version="1.0"?>` + "\n" +
		`<Data><Job><Job_Id>3.srv</Job_Id><Job_Name>sleep</Job_Name><Job_Owner>carol@h</Job_Owner>` +
		`<resources_used><cput>00:01:02</cput></resources_used><job_state>C</job_state><queue>workq</queue>` +
		`<start_time>1704067260</start_time><exit_status>0</exit_status></Job></Data>` + "\n"
	check(t, got, want)
}

func TestJobsXMLEmpty(t *testing.T) {
	t.Parallel()
	got := render(t, func(b *bytes.Buffer) error { return JobsXML(b, nil, torque()) })
	check(t, got, `<?xml version="1.0"?>`+"\n<Data></Data>\n")
}

// xmlJob is the generic shape a client decodes a <Job> into.
type xmlNode struct {
	XMLName  xml.Name
	Text     string    `xml:",chardata"`
	Children []xmlNode `xml:",any"`
}

func decodeXML(t *testing.T, doc string) xmlNode {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	var n xmlNode
	if err := d.Decode(&n); err != nil {
		t.Fatalf("XML does not parse: %v\n%s", err, doc)
	}
	return n
}

func TestJobsXMLParsesAndRoundTrips(t *testing.T) {
	t.Parallel()
	nasty := "a<b>&c\"d'e\nf\tg\rh"
	j := job("8.srv",
		"Job_Name", "x&y",
		"comment", nasty,
		"Variable_List", "A=1,B=<2>",
		"Resource_List.nodes", "1:ppn=2",
		"Resource_List.walltime", "01:00:00",
		"resources_used.mem", "5kb",
		"ctl", "bell\x07nul\x00bad\xff",
		"9bad name:x", "v",
	)
	got := render(t, func(b *bytes.Buffer) error { return JobsXML(b, []proto.Status{runningJob(), j}, torque()) })
	ls := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(ls) != 2 || ls[0] != `<?xml version="1.0"?>` || !strings.HasPrefix(ls[1], "<Data>") {
		t.Fatalf("want the declaration and one <Data> line, got %d lines:\n%s", len(ls), got)
	}
	data := decodeXML(t, got)
	if data.XMLName.Local != "Data" || len(data.Children) != 2 {
		t.Fatalf("want <Data> with 2 jobs, got %s with %d", data.XMLName.Local, len(data.Children))
	}
	values := map[string]string{}
	var walk func(prefix string, n xmlNode)
	walk = func(prefix string, n xmlNode) {
		for _, c := range n.Children {
			if len(c.Children) > 0 {
				walk(prefix+c.XMLName.Local+".", c)
			} else {
				values[prefix+c.XMLName.Local] = c.Text
			}
		}
	}
	walk("", data.Children[1])
	want := map[string]string{
		"Job_Id": "8.srv", "Job_Name": "x&y", "comment": nasty, "Variable_List": "A=1,B=<2>",
		"Resource_List.nodes": "1:ppn=2", "Resource_List.walltime": "01:00:00",
		"resources_used.mem": "5kb", "ctl": "bell\ufffdnul\ufffdbad\ufffd", "_9bad_name_x": "v",
	}
	for k, v := range want {
		if values[k] != v {
			t.Errorf("%s = %q, want %q", k, values[k], v)
		}
	}
	first := map[string]string{}
	for _, c := range data.Children[0].Children {
		first[c.XMLName.Local] = c.Text
	}
	if first["job_state"] != "R" || first["ctime"] != jan1 || first["start_time"] != jan1m1 {
		t.Errorf("running job: state %q ctime %q start_time %q", first["job_state"], first["ctime"], first["start_time"])
	}
	if eh := first["exec_host"]; eh != "node01/0-1" {
		t.Errorf("exec_host %q, want Torque's slot range node01/0-1", eh)
	}
}

func TestXMLName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ncpus": "ncpus", "Job_Id": "Job_Id", "a.b-c": "a.b-c", "": "_", "1x": "_1x", "a b": "a_b",
		"é": "__", "-x": "_-x", "x:y": "x_y",
	} {
		if got := xmlName(in); got != want {
			t.Errorf("xmlName(%q) = %q, want %q", in, got, want)
		}
	}
}

// allTokens reads every token, which is where encoding/xml reports
// malformed documents.
func allTokens(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
