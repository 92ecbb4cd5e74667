package display

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// A finished job's full listing ends with its efficiencies; a part its
// attributes lack is left out, and a job still running shows none.
func TestFullJobsEfficiency(t *testing.T) {
	t.Parallel()
	attrs := []proto.Attr{{Name: "job_state", Value: "F"}, {Name: "Resource_List", Resource: "ncpus", Value: "4"},
		{Name: "Resource_List", Resource: "walltime", Value: "01:00:00"}, {Name: "resources_used", Resource: "cput", Value: "01:00:00"},
		{Name: "resources_used", Resource: "walltime", Value: "00:30:00"}, {Name: "resources_used", Resource: "mem", Value: "512mb"}}
	tests := []struct {
		name  string
		attrs []proto.Attr
		want  []string
		not   []string
	}{
		{"finished", attrs, []string{"    efficiency.cpu = 50.0%\n", "    efficiency.walltime = 50.0%\n"}, []string{"efficiency.mem"}},
		{"with mem asked", append(append([]proto.Attr{}, attrs...), proto.Attr{Name: "Resource_List", Resource: "mem", Value: "2gb"}), []string{"    efficiency.mem = 25.0%\n"}, nil},
		{"running", append([]proto.Attr{{Name: "job_state", Value: "R"}}, attrs[1:]...), nil, []string{"efficiency"}},
		{"no usage", []proto.Attr{{Name: "job_state", Value: "F"}}, nil, []string{"efficiency"}},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := FullJobs(&b, []proto.Status{{Name: "1.s", Attrs: tc.attrs}}, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, w, b.String())
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: shows %q:\n%s", tc.name, n, b.String())
			}
		}
	}
}
