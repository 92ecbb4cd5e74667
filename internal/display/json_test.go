package display

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

func TestJobsJSON(t *testing.T) {
	t.Parallel()
	got := render(t, func(b *bytes.Buffer) error { return JobsJSON(b, []proto.Status{runningJob(), finishedJob()}, pro()) })
	want := lines(
		`{`,
		`    "timestamp":1704067300,`,
		`    "pbs_version":"23.06.06",`,
		`    "pbs_server":"srv",`,
		`    "Jobs":{`,
		`        "1.srv":{`,
		`            "Job_Name":"STDIN",`,
		`            "Job_Owner":"alice@submithost",`,
		`            "resources_used":{`,
		`                "cput":"00:00:00",`,
		`                "mem":"0kb",`,
		`                "walltime":"00:00:05"`,
		`            },`,
		`            "job_state":"R",`,
		`            "queue":"workq",`,
		`            "server":"srv",`,
		`            "ctime":"Mon Jan  1 00:00:00 2024",`,
		`            "exec_host":"node01/0*2",`,
		`            "Resource_List":{`,
		`                "mem":"1gb",`,
		`                "ncpus":2,`,
		`                "nodect":1,`,
		`                "walltime":"01:00:00"`,
		`            },`,
		`            "session_id":4242,`,
		`            "stime":"Mon Jan  1 00:01:00 2024",`,
		`            "Variable_List":{`,
		`                "PBS_O_HOME":"/home/alice",`,
		`                "PBS_O_WORKDIR":"/home/alice/w"`,
		`            }`,
		`        },`,
		`        "3.srv":{`,
		`            "Job_Name":"sleep",`,
		`            "Job_Owner":"carol@h",`,
		`            "resources_used":{`,
		`                "cput":"00:01:02"`,
		`            },`,
		`            "job_state":"F",`,
		`            "queue":"workq",`,
		`            "stime":"Mon Jan  1 00:01:00 2024",`,
		`            "Exit_status":0`,
		`        }`,
		`    }`,
		`}`,
	)
	check(t, got, want)
}

func TestJobsJSONEmpty(t *testing.T) {
	t.Parallel()
	got := render(t, func(b *bytes.Buffer) error { return JobsJSON(b, nil, pro()) })
	check(t, got, lines(
		`{`,
		`    "timestamp":1704067300,`,
		`    "pbs_version":"23.06.06",`,
		`    "pbs_server":"srv",`,
		`    "Jobs":{}`,
		`}`,
	))
	var doc map[string]any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if jobs, ok := doc["Jobs"].(map[string]any); !ok || len(jobs) != 0 {
		t.Fatalf(`"Jobs" = %#v, want an empty object`, doc["Jobs"])
	}
}

// TestJobsJSONHostileValues is the Parsl #3793 class of bug: values with
// quotes, backslashes, newlines, control characters and invalid UTF-8
// must come out as valid JSON and decode to what was sent.
func TestJobsJSONHostileValues(t *testing.T) {
	t.Parallel()
	nasty := "say \"hi\"\\ now\nnext\tline\x00\x01\x1f\x7f \u2028 end"
	j := job("7.srv",
		"Job_Name", `we"ird\name`,
		"comment", nasty,
		"Variable_List", `QUOTE=a"b,BACK=c\\d,COMMA=e\,f,NL=g`+"\n"+`h,EMPTY=,NOEQ,NUM=42,ZERO=0123,FLOAT=0.5,BAD=1.`,
		"Resource_List.odd\"name", "x\x02y",
		"broken\xffkey", "v\xfe",
	)
	got := render(t, func(b *bytes.Buffer) error { return JobsJSON(b, []proto.Status{j}, pro()) })
	var doc struct {
		Jobs map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, got)
	}
	g := doc.Jobs["7.srv"]
	if g == nil {
		t.Fatalf("job missing:\n%s", got)
	}
	if g["Job_Name"] != `we"ird\name` {
		t.Errorf("Job_Name = %q", g["Job_Name"])
	}
	if g["comment"] != nasty {
		t.Errorf("comment = %q, want %q", g["comment"], nasty)
	}
	vars, _ := g["Variable_List"].(map[string]any)
	wantVars := map[string]any{
		"QUOTE": `a"b`, "BACK": `c\d`, "COMMA": "e,f", "NL": "g\nh", "EMPTY": "", "NOEQ": "",
		"NUM": float64(42), "ZERO": "0123", "FLOAT": 0.5, "BAD": "1.",
	}
	for k, v := range wantVars {
		if vars[k] != v {
			t.Errorf("Variable_List[%s] = %#v, want %#v", k, vars[k], v)
		}
	}
	rl, _ := g["Resource_List"].(map[string]any)
	if rl["odd\"name"] != "x\x02y" {
		t.Errorf("Resource_List = %#v", rl)
	}
	if g["broken\ufffdkey"] != "v\ufffd" {
		t.Errorf("invalid UTF-8 not replaced: %#v", g)
	}
	if strings.Contains(got, "\u2028") {
		t.Error("raw U+2028 in output")
	}
}

func TestJSONValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"0": "0", "42": "42", "-1": "-1", "271": "271", "0.5": "0.5", "1e5": "1e5",
		"0123": `"0123"`, "1.": `"1."`, ".5": `".5"`, "inf": `"inf"`, "NaN": `"NaN"`, "0x1f": `"0x1f"`,
		"00": `"00"`, "+5": `"+5"`, " 5": `" 5"`, "": `""`, "1e999": `"1e999"`, "True": `"True"`,
		"01:00:00": `"01:00:00"`, "1gb": `"1gb"`,
	} {
		if got := jsonValue(in); got != want {
			t.Errorf("jsonValue(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestQueuesAndServersJSON(t *testing.T) {
	t.Parallel()
	q := job("workq", "queue_type", "Execution", "total_jobs", "3", "resources_max.walltime", "24:00:00", "enabled", "True")
	got := render(t, func(b *bytes.Buffer) error { return QueuesJSON(b, []proto.Status{q}, pro()) })
	check(t, got, lines(
		`{`,
		`    "timestamp":1704067300,`,
		`    "pbs_version":"23.06.06",`,
		`    "pbs_server":"srv",`,
		`    "Queue":{`,
		`        "workq":{`,
		`            "queue_type":"Execution",`,
		`            "total_jobs":3,`,
		`            "resources_max":{`,
		`                "walltime":"24:00:00"`,
		`            },`,
		`            "enabled":"True"`,
		`        }`,
		`    }`,
		`}`,
	))
	s := job("srv", "server_state", "Active")
	got = render(t, func(b *bytes.Buffer) error { return ServersJSON(b, []proto.Status{s}, pro()) })
	var doc struct{ Server map[string]map[string]any }
	if err := json.Unmarshal([]byte(got), &doc); err != nil || doc.Server["srv"]["server_state"] != "Active" {
		t.Fatalf("server JSON wrong (%v):\n%s", err, got)
	}
}
