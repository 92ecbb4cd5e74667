package model

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/gopbs/gopbs/internal/msgp"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func TestNormalizeHolds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"u", "u", true}, {"sou", "uos", true}, {"n", "", true}, {"", "", true}, {"uu", "u", true}, {"x", "", false}, {"up", "", false},
	}
	for _, tt := range tests {
		got, ok := NormalizeHolds(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeHolds(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestHoldAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		holds                    string
		owner, operator, manager bool
		want                     bool
	}{
		{"u", true, false, false, true},
		{"u", false, false, false, false},
		{"o", true, false, false, false},
		{"o", false, true, false, true},
		{"s", false, true, false, false},
		{"s", false, false, true, true},
		{"uos", false, false, true, true},
		{"uo", true, false, false, false},
	}
	for _, tt := range tests {
		if got := HoldAllowed(tt.holds, tt.owner, tt.operator, tt.manager); got != tt.want {
			t.Errorf("HoldAllowed(%q, owner=%v op=%v mgr=%v) = %v", tt.holds, tt.owner, tt.operator, tt.manager, got)
		}
	}
}

func TestEvalState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		job  Job
		want JobState
		sub  int
	}{
		{"plain", Job{State: StateTransit}, StateQueued, SubQueued},
		{"held", Job{State: StateQueued, Holds: "u"}, StateHeld, SubHeld},
		{"held and waiting", Job{State: StateQueued, Holds: "o", ExecutionTime: 2000}, StateHeld, SubHeld},
		{"waiting", Job{State: StateQueued, ExecutionTime: 2000}, StateWaiting, SubWaiting},
		{"wait over", Job{State: StateWaiting, ExecutionTime: 1000}, StateQueued, SubQueued},
		{"running untouched", Job{State: StateRunning, Holds: "u", Substate: SubRunning}, StateRunning, SubRunning},
		{"finished untouched", Job{State: StateFinished, Substate: SubFinished}, StateFinished, SubFinished},
	}
	for _, tt := range tests {
		j := tt.job
		j.EvalState(1500)
		if j.State != tt.want || j.Substate != tt.sub {
			t.Errorf("%s: state %c/%d, want %c/%d", tt.name, j.State, j.Substate, tt.want, tt.sub)
		}
	}
}

func TestSetJobAttr(t *testing.T) {
	t.Parallel()
	user := Privilege{Owner: true}
	oper := Privilege{Operator: true}
	tests := []struct {
		name  string
		state JobState
		attr  proto.Attr
		priv  Privilege
		phase Phase
		code  proto.Code
		check func(*Job) bool
	}{
		{"name", StateQueued, proto.Attr{Name: "Job_Name", Value: "my.job-1_x+y"}, user, AtSubmit, 0, func(j *Job) bool { return j.Name == "my.job-1_x+y" }},
		// As OpenPBS: a digit first at submission (a script's file
		// name), a letter first in an alteration; never '-' (it would
		// reach root's epilogue as an option), '=' or a blank.
		{"name from a script", StateQueued, proto.Attr{Name: "Job_Name", Value: "1run.sh"}, user, AtSubmit, 0, func(j *Job) bool { return j.Name == "1run.sh" }},
		{"altered name digit first", StateQueued, proto.Attr{Name: "Job_Name", Value: "1run.sh"}, user, AtAlter, proto.PBSE_BADATVAL, nil},
		{"altered name", StateQueued, proto.Attr{Name: "Job_Name", Value: "run2"}, user, AtAlter, 0, func(j *Job) bool { return j.Name == "run2" }},
		{"name like options", StateQueued, proto.Attr{Name: "Job_Name", Value: "-rf"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"name with equals", StateQueued, proto.Attr{Name: "Job_Name", Value: "=name"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"name with blank", StateQueued, proto.Attr{Name: "Job_Name", Value: "my job"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"name too long", StateQueued, proto.Attr{Name: "Job_Name", Value: strings.Repeat("n", 237)}, user, AtSubmit, proto.PBSE_JOBNBIG, nil},
		{"name with slash", StateQueued, proto.Attr{Name: "Job_Name", Value: "a/b"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"walltime canonical", StateQueued, proto.Attr{Name: "Resource_List", Resource: "walltime", Value: "1:0:0"}, user, AtSubmit, 0, func(j *Job) bool { v, _ := j.ResourceList.Get("walltime"); return v == "01:00:00" }},
		{"bad size", StateQueued, proto.Attr{Name: "Resource_List", Resource: "mem", Value: "lots"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"read only owner", StateQueued, proto.Attr{Name: "Job_Owner", Value: "x@y"}, oper, AtAlter, proto.PBSE_ATTRRO, nil},
		{"unknown", StateQueued, proto.Attr{Name: "Nonsense", Value: "1"}, user, AtSubmit, proto.PBSE_NOATTR, nil},
		{"mail points", StateQueued, proto.Attr{Name: "Mail_Points", Value: "abej"}, user, AtSubmit, 0, func(j *Job) bool { return j.MailPoints == "abej" }},
		{"mail points j alone", StateQueued, proto.Attr{Name: "Mail_Points", Value: "j"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"mail points repeated", StateQueued, proto.Attr{Name: "Mail_Points", Value: "aa"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"mail points n and a", StateQueued, proto.Attr{Name: "Mail_Points", Value: "na"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"mail users", StateQueued, proto.Attr{Name: "Mail_Users", Value: "a@x.org, b"}, user, AtSubmit, 0, func(j *Job) bool { return j.MailUsers == "a@x.org,b" }},
		{"mail users option", StateQueued, proto.Attr{Name: "Mail_Users", Value: "a@x,-oQ/tmp"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"mail users blank inside", StateQueued, proto.Attr{Name: "Mail_Users", Value: "a b@x"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		// sendmail's program and file forms would run or write as root.
		{"mail users program", StateQueued, proto.Attr{Name: "Mail_Users", Value: "a@x,|/tmp/prog"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"mail users file", StateQueued, proto.Attr{Name: "Mail_Users", Value: "/tmp/file"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"refused x", StateQueued, proto.Attr{Name: "x", Value: "NACCESSPOLICY:SINGLEJOB"}, user, AtSubmit, proto.PBSE_NOSUP, nil},
		{"refused x at qalter", StateQueued, proto.Attr{Name: "x", Value: "FLAGS:ADVRES"}, user, AtAlter, proto.PBSE_NOSUP, nil},
		{"refused init_root_dir", StateQueued, proto.Attr{Name: "init_root_dir", Value: "/r"}, user, AtSubmit, proto.PBSE_NOSUP, nil},
		{"tolerate none", StateQueued, proto.Attr{Name: "tolerate_node_failures", Value: "none"}, user, AtSubmit, 0, func(j *Job) bool { v, _ := j.Extra.Get("tolerate_node_failures"); return v == "none" }},
		{"tolerate all refused", StateQueued, proto.Attr{Name: "tolerate_node_failures", Value: "all"}, user, AtSubmit, proto.PBSE_NOSUP, nil},
		{"tolerate nonsense", StateQueued, proto.Attr{Name: "tolerate_node_failures", Value: "some"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"release nodes false", StateQueued, proto.Attr{Name: "release_nodes_on_stageout", Value: "false"}, user, AtSubmit, 0, func(j *Job) bool { v, _ := j.Extra.Get("release_nodes_on_stageout"); return v == "False" }},
		{"release nodes true refused", StateQueued, proto.Attr{Name: "release_nodes_on_stageout", Value: "true"}, user, AtSubmit, proto.PBSE_NOSUP, nil},
		{"umask", StateQueued, proto.Attr{Name: "umask", Value: "22"}, user, AtSubmit, 0, func(j *Job) bool { return j.Umask == "022" }},
		{"umask four digits", StateQueued, proto.Attr{Name: "umask", Value: "0077"}, user, AtSubmit, 0, func(j *Job) bool { return j.Umask == "077" }},
		{"umask not octal", StateQueued, proto.Attr{Name: "umask", Value: "089"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"umask too large", StateQueued, proto.Attr{Name: "umask", Value: "1777"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"umask while running", StateRunning, proto.Attr{Name: "umask", Value: "022"}, user, AtAlter, proto.PBSE_MODATRRUN, nil},
		{"job arguments", StateQueued, proto.Attr{Name: "job_arguments", Value: "a  b=c"}, user, AtSubmit, 0, func(j *Job) bool { return j.JobArgs == "a  b=c" }},
		{"job arguments blank", StateQueued, proto.Attr{Name: "job_arguments", Value: "  "}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"remove files", StateQueued, proto.Attr{Name: "Remove_Files", Value: "eo"}, user, AtSubmit, 0, func(j *Job) bool { return j.RemoveFiles == "eo" }},
		{"remove files bad", StateQueued, proto.Attr{Name: "Remove_Files", Value: "oo"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"keep files", StateQueued, proto.Attr{Name: "Keep_Files", Value: "oe"}, user, AtSubmit, 0, func(j *Job) bool { return j.KeepFiles == "oe" }},
		{"keep files direct", StateQueued, proto.Attr{Name: "Keep_Files", Value: "do"}, user, AtSubmit, 0, func(j *Job) bool { return j.KeepFiles == "do" }},
		{"keep files n", StateQueued, proto.Attr{Name: "Keep_Files", Value: "n"}, user, AtSubmit, 0, func(j *Job) bool { return j.KeepFiles == "n" }},
		{"keep files n with o", StateQueued, proto.Attr{Name: "Keep_Files", Value: "no"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"keep files unknown letter", StateQueued, proto.Attr{Name: "Keep_Files", Value: "ox"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"keep files repeated", StateQueued, proto.Attr{Name: "Keep_Files", Value: "oo"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"keep files empty", StateQueued, proto.Attr{Name: "Keep_Files", Value: ""}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"jobtype", StateQueued, proto.Attr{Name: "jobtype", Value: "gpu-1.x"}, user, AtSubmit, 0, func(j *Job) bool { return j.JobType == "gpu-1.x" }},
		{"jobtype path", StateQueued, proto.Attr{Name: "jobtype", Value: "../x"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"jobtype torque variant", StateQueued, proto.Attr{Name: "jobtype", Value: "user"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"jobtype dot", StateQueued, proto.Attr{Name: "jobtype", Value: ".hidden"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"kill delay", StateQueued, proto.Attr{Name: "kill_delay", Value: " 0"}, user, AtSubmit, 0, func(j *Job) bool { return j.HasKillDelay && j.KillDelay == 0 }},
		{"kill delay negative", StateQueued, proto.Attr{Name: "kill_delay", Value: "-5"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"kill delay while running", StateRunning, proto.Attr{Name: "kill_delay", Value: "5"}, user, AtAlter, proto.PBSE_MODATRRUN, nil},
		{"block", StateQueued, proto.Attr{Name: "block", Value: "true"}, user, AtSubmit, 0, func(j *Job) bool { return j.Block }},
		{"block bad", StateQueued, proto.Attr{Name: "block", Value: "maybe"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"block at qalter", StateQueued, proto.Attr{Name: "block", Value: "true"}, user, AtAlter, proto.PBSE_ATTRRO, nil},
		{"user sets system hold", StateQueued, proto.Attr{Name: "Hold_Types", Value: "s"}, user, AtSubmit, proto.PBSE_PERM, nil},
		{"user hold", StateQueued, proto.Attr{Name: "Hold_Types", Value: "u"}, user, AtSubmit, 0, func(j *Job) bool { return j.Holds == "u" }},
		{"hold_until by user", StateQueued, proto.Attr{Name: "hold_until", Value: "1700000000"}, user, AtAlter, proto.PBSE_PERM, nil},
		{"hold_until by operator", StateQueued, proto.Attr{Name: "hold_until", Value: "1700000000"}, oper, AtAlter, 0, func(j *Job) bool { return j.HoldUntil == 1700000000 }},
		{"comment by user", StateQueued, proto.Attr{Name: "comment", Value: "hi"}, user, AtAlter, proto.PBSE_PERM, nil},
		{"comment by operator while running", StateRunning, proto.Attr{Name: "comment", Value: "hi"}, oper, AtAlter, 0, func(j *Job) bool { return j.Comment == "hi" }},
		{"resources while running", StateRunning, proto.Attr{Name: "Resource_List", Resource: "ncpus", Value: "2"}, user, AtAlter, proto.PBSE_MODATRRUN, nil},
		{"priority range", StateQueued, proto.Attr{Name: "Priority", Value: "2000"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"join path", StateQueued, proto.Attr{Name: "Join_Path", Value: "oe"}, user, AtSubmit, 0, func(j *Job) bool { return j.JoinPath == "oe" }},
		{"bad join path", StateQueued, proto.Attr{Name: "Join_Path", Value: "xo"}, user, AtSubmit, proto.PBSE_BADATVAL, nil},
		{"rerunable n", StateQueued, proto.Attr{Name: "Rerunable", Value: "n"}, user, AtSubmit, 0, func(j *Job) bool { return !j.Rerunable }},
		{"variable merge", StateQueued, proto.Attr{Name: "Variable_List", Value: "B=2", Op: proto.OpIncr}, user, AtAlter, 0, func(j *Job) bool { return j.VariableList == "A=1,B=2" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &Job{State: tt.state, Rerunable: true, VariableList: "A=1"}
			err := SetJobAttr(nil, j, tt.attr, tt.priv, tt.phase)
			if got := proto.CodeOf(err); got != tt.code {
				t.Fatalf("code %d (%v), want %d", got, err, tt.code)
			}
			if tt.check != nil && !tt.check(j) {
				t.Fatalf("job after set: %+v", j)
			}
		})
	}
}

func TestJobStatusOrder(t *testing.T) {
	t.Parallel()
	j := &Job{ID: "1.srv", Name: "n", Owner: "u@h", State: StateQueued, Queue: "workq", Ctime: 5}
	j.ResourceList = j.ResourceList.Set("ncpus", "1").Set("mem", "1gb")
	var names []string
	for _, a := range JobStatus(j, nil) {
		names = append(names, a.FullName())
	}
	got := strings.Join(names, " ")
	for _, seq := range []string{"Job_Name Job_Owner job_state queue server", "Resource_List.mem Resource_List.ncpus"} {
		if !strings.Contains(got, seq) {
			t.Errorf("status order %q lacks %q", got, seq)
		}
	}
	if strings.Contains(got, "Exit_status") {
		t.Error("Exit_status shown before the job finished")
	}
}

func TestDefTableApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		table *DefTable
		ops   []proto.Attr
		attr  string
		res   string
		want  string
		code  proto.Code
	}{
		{"list incr", ServerDefs, []proto.Attr{{Name: "managers", Value: "a@*"}, {Name: "managers", Value: "b@*", Op: proto.OpIncr}}, "managers", "", "a@*,b@*", 0},
		{"list decr", ServerDefs, []proto.Attr{{Name: "managers", Value: "a@*,b@*"}, {Name: "managers", Value: "a@*", Op: proto.OpDecr}}, "managers", "", "b@*", 0},
		{"list incr no dup", ServerDefs, []proto.Attr{{Name: "managers", Value: "a@*"}, {Name: "managers", Value: "a@*", Op: proto.OpIncr}}, "managers", "", "a@*", 0},
		{"bool", QueueDefs, []proto.Attr{{Name: "enabled", Value: "t"}}, "enabled", "", "True", 0},
		{"bad bool", QueueDefs, []proto.Attr{{Name: "enabled", Value: "maybe"}}, "", "", "", proto.PBSE_BADATVAL},
		{"queue type prefix", QueueDefs, []proto.Attr{{Name: "queue_type", Value: "e"}}, "queue_type", "", "Execution", 0},
		{"queue type bad", QueueDefs, []proto.Attr{{Name: "queue_type", Value: "x"}}, "", "", "", proto.PBSE_BADATVAL},
		{"resource", QueueDefs, []proto.Attr{{Name: "resources_max", Resource: "mem", Value: "4GB"}}, "resources_max", "mem", "4gb", 0},
		{"resource incr", QueueDefs, []proto.Attr{{Name: "resources_available", Resource: "ncpus", Value: "4"}, {Name: "resources_available", Resource: "ncpus", Value: "2", Op: proto.OpIncr}}, "resources_available", "ncpus", "6", 0},
		{"unknown", QueueDefs, []proto.Attr{{Name: "bogus", Value: "1"}}, "", "", "", proto.PBSE_NOATTR},
		{"iteration positive", ServerDefs, []proto.Attr{{Name: "scheduler_iteration", Value: "0"}}, "", "", "", proto.PBSE_BADATVAL},
		{"mail_from", ServerDefs, []proto.Attr{{Name: "mail_from", Value: "pbs@head"}}, "mail_from", "", "pbs@head", 0},
		{"mail_from option", ServerDefs, []proto.Attr{{Name: "mail_from", Value: "-oQ/tmp"}}, "", "", "", proto.PBSE_BADATVAL},
		{"unset", ServerDefs, []proto.Attr{{Name: "comment", Value: "x"}, {Name: "comment", Op: proto.OpUnset}}, "comment", "", "", 0},
		{"history duration", ServerDefs, []proto.Attr{{Name: "job_history_duration", Value: "1:0:0"}}, "job_history_duration", "", "01:00:00", 0},
		{"node state", NodeDefs, []proto.Attr{{Name: "state", Value: "down"}}, "", "", "", proto.PBSE_BADNDATVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewObject("x")
			var err error
			for _, a := range tt.ops {
				if err = tt.table.Apply(o, a); err != nil {
					break
				}
			}
			if got := proto.CodeOf(err); got != tt.code {
				t.Fatalf("code %d (%v), want %d", got, err, tt.code)
			}
			if tt.code != 0 {
				return
			}
			got, _ := o.Get(tt.attr)
			if tt.res != "" {
				got, _ = o.Resource(tt.attr, tt.res)
			}
			if got != tt.want {
				t.Fatalf("%s = %q, want %q", tt.attr, got, tt.want)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"workq": true, "q1.a-b_c": true, "1q": false, "": false, "a b": false, "a/b": false, strings.Repeat("a", 65): false} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}

func TestJobCodecRoundTrip(t *testing.T) {
	t.Parallel()
	j := &Job{Seq: 42, ID: "42.srv", Name: "n", Owner: "u@h", UID: 1000, State: StateRunning, Substate: SubRunning,
		Suspended: true, Queue: "workq", Priority: -5, Rerunable: true, HasExit: true, ExitStatus: -29, Ctime: 1700000000,
		VariableList: "A=1,B=x\\,y", ResourceList: Resources{}.Set("ncpus", "2").Set("mem", "1gb"), Extra: Resources{}.Set("tolerate_node_failures", "none"), Umask: "077", JobArgs: "x y", RemoveFiles: "o", Block: true}
	got := codecRoundTrip(t, j)
	if !reflect.DeepEqual(*j, got) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, *j)
	}
	// An older record (fewer fields) and a newer one (more) both decode.
	var old bytes.Buffer
	e := msgpack.NewEncoder(&old)
	e.EncodeArrayLen(3)
	e.EncodeInt(7)
	e.EncodeString("7.srv")
	e.EncodeString("old")
	var o Job
	if err := msgpack.Unmarshal(old.Bytes(), &o); err != nil || o.Seq != 7 || o.Name != "old" || o.ResourceList != nil {
		t.Fatalf("older record: %+v, %v", o, err)
	}
	var newer bytes.Buffer
	rec := msgp.AppendArrayLen(nil, len(jobFields)+2)
	for i := range jobFields {
		rec = jobFields[i].app(rec, j)
	}
	newer.Write(rec)
	e = msgpack.NewEncoder(&newer)
	e.EncodeString("future")
	e.Encode(map[string]int{"x": 1})
	var nw Job
	if err := msgpack.Unmarshal(newer.Bytes(), &nw); err != nil || nw.ID != "42.srv" {
		t.Fatalf("newer record: %v", err)
	}
}

// Every field of Job must be stored: a field added to the struct and not
// to jobFields would silently be lost at restart.
func TestJobCodecCoversEveryField(t *testing.T) {
	t.Parallel()
	// The one field of what is derived from the others (parsed) is not stored.
	if n := reflect.TypeOf(Job{}).NumField() - 1; n+retiredJobFields != len(jobFields) {
		t.Fatalf("Job has %d fields (+%d retired), jobFields stores %d", n, retiredJobFields, len(jobFields))
	}
}

// TestMigrateExtra: a job stored by an earlier version kept umask,
// job_arguments, Remove_Files and block in Extra; loading it moves them
// into the fields the mom and qsub act on (a bad value is dropped), and
// leaves what stays stored only.
func TestMigrateExtra(t *testing.T) {
	t.Parallel()
	j := &Job{Seq: 1, ID: "1.srv", Extra: Resources{}.Set("umask", "22").Set("job_arguments", "a b").
		Set("Remove_Files", "x").Set("block", "True").Set("x", "NACCESSPOLICY:SINGLEJOB")}
	got := codecRoundTrip(t, j)
	if got.Umask != "022" || got.JobArgs != "a b" || got.RemoveFiles != "" || !got.Block {
		t.Fatalf("migrated fields: umask %q args %q remove %q block %v", got.Umask, got.JobArgs, got.RemoveFiles, got.Block)
	}
	if want := (Resources{}.Set("x", "NACCESSPOLICY:SINGLEJOB")); !reflect.DeepEqual(got.Extra, want) {
		t.Fatalf("Extra after migration: %v, want %v", got.Extra, want)
	}
}

// codecRoundTrip encodes j as the store does and decodes it again.
func codecRoundTrip(t *testing.T, j *Job) Job {
	t.Helper()
	b, err := msgpack.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var got Job
	if err := msgpack.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// Keep_Files o and e keep those streams on the execution host, under the
// job's default file names; with d they go straight to their paths.
func TestKeptStreams(t *testing.T) {
	t.Parallel()
	for keep, want := range map[string][2]bool{"": {}, "n": {}, "o": {true, false}, "e": {false, true}, "eo": {true, true}, "od": {}, "d": {}} {
		if out, err := KeptStreams(keep); out != want[0] || err != want[1] {
			t.Errorf("Keep_Files %q: kept %v %v, want %v", keep, out, err, want)
		}
	}
	j := &Job{Name: "sim", Seq: 12}
	if got := j.StdFileName('o'); got != "sim.o12" {
		t.Errorf("job: %s", got)
	}
	j.IsSubjob, j.Index = true, 3
	if got := j.StdFileName('e'); got != "sim.e12.3" {
		t.Errorf("subjob: %s", got)
	}
	a := &Job{Name: "sim", Seq: 12, Array: &Array{}}
	if got := a.StdFileName('o'); got != "sim.o12."+ArrayIndexTag {
		t.Errorf("array: %s", got)
	}
}

// The typed request and assignment follow the text they come from: parsed
// once by CacheRequest, and never stale when the list or exec_vnode
// changes after it (even in place, as Resources.Set does).
func TestRequestFollowsItsText(t *testing.T) {
	t.Parallel()
	j := &Job{ResourceList: Resources{}.Set("select", "2:ncpus=4").Set("place", "scatter:excl").Set("walltime", "01:00:00")}
	j.Alloc = resc.ParseAlloc("", "(n1:ncpus=4)+(n2:ncpus=4:mem=1gb)")
	j.CacheRequest(nil)
	req, err := j.Request()
	if err != nil || req.Select.NodeCount() != 2 || req.Totals["ncpus"] != 8 || req.Place.Sharing != resc.SharingExcl || req.Walltime() != 3600 {
		t.Fatalf("request %+v %v", req, err)
	}
	if a := j.Assigned(); len(a) != 2 || a[1].Node != "n2" || a[1].Amounts["mem"] != 1<<30 {
		t.Fatalf("assigned %+v", a)
	}
	if got := j.ExecVnode(); got != "(n1:ncpus=4)+(n2:ncpus=4:mem=1gb)" || j.ExecHost() != "n1/0*4+n2/0*4" {
		t.Fatalf("exec_vnode %q exec_host %q", got, j.ExecHost())
	}
	j.ResourceList = j.ResourceList.Set("select", "3:ncpus=1") // in place: same backing array
	j.Alloc = resc.ParseAlloc("", "(n3:ncpus=1)")
	if req, _ := j.Request(); req.Totals["ncpus"] != 3 {
		t.Errorf("request after the select changed: totals %v", req.Totals)
	}
	if a := j.Assigned(); len(a) != 1 || a[0].Node != "n3" {
		t.Errorf("assigned after exec_vnode changed: %+v", a)
	}
	if got := j.ExecVnode(); got != "(n3:ncpus=1)" || j.ExecHost() != "n3/0" {
		t.Errorf("exec_vnode %q exec_host %q rendered after the allocation changed", got, j.ExecHost())
	}
	j.ResourceList = j.ResourceList.Set("select", "bad:")
	if _, err := j.Request(); err == nil {
		t.Errorf("a select that does not parse gave no error")
	}
}

// An interactive job's session is stored (its qsub's port and secret
// survive a restart) but shown only as interactive = True, to everyone;
// it cannot be set as an attribute, and the job cannot be made
// rerunnable.
func TestInteractiveHidden(t *testing.T) {
	t.Parallel()
	cookie := []byte("0123456789abcdef0123456789abcdef")
	j := &Job{Seq: 1, ID: "1.srv", Interactive: &proto.InteractiveSession{Port: 40000, Cookie: cookie}}
	got := codecRoundTrip(t, j)
	if got.Interactive == nil || got.Interactive.Port != 40000 || string(got.Interactive.Cookie) != string(cookie) {
		t.Fatalf("stored session: %+v", got.Interactive)
	}
	shown := ""
	for _, a := range JobStatus(j, nil) {
		if strings.Contains(a.Value, "40000") || strings.Contains(a.Value, string(cookie)) || strings.Contains(a.Value, fmt.Sprintf("%x", cookie)) {
			t.Errorf("status shows the session in %s = %q", a.FullName(), a.Value)
		}
		if a.Name == proto.AttrInteractive {
			shown = a.Value
		}
	}
	if shown != "True" {
		t.Errorf("interactive = %q, want True", shown)
	}
	user := Privilege{Owner: true}
	if err := SetJobAttr(nil, &Job{}, proto.Attr{Name: proto.AttrInteractive, Value: "40000"}, user, AtSubmit); err == nil {
		t.Error("the interactive attribute was set by a request")
	}
	if err := SetJobAttr(nil, j, proto.Attr{Name: proto.AttrRerunable, Value: "y"}, Privilege{Owner: true, Manager: true}, AtAlter); err == nil || j.Rerunable {
		t.Errorf("an interactive job made rerunnable: %v", err)
	}
}

// A site's resources with flag r or i are set on a job by managers and
// operators only, and one with flag i is left out of what others see;
// a resource's value is checked as its type.
func TestCustomResourceFlagsOnJobs(t *testing.T) {
	t.Parallel()
	var cs []resc.Custom
	for _, d := range []struct {
		name  string
		flags resc.Flag
	}{{"ro", resc.FlagReadOnly}, {"secret", resc.FlagInvisible}, {"open", 0}} {
		c, err := resc.NewCustom(d.name, resc.TypeLong, d.flags)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	rt := resc.NewTable(cs)
	user, oper := Privilege{Owner: true}, Privilege{Owner: true, Operator: true}
	set := func(p Privilege, res, v string) (*Job, error) {
		j := &Job{}
		return j, SetJobAttr(rt, j, proto.Attr{Name: proto.AttrResourceList, Resource: res, Value: v}, p, AtSubmit)
	}
	for _, res := range []string{"ro", "secret"} {
		if _, err := set(user, res, "1"); proto.CodeOf(err) != proto.PBSE_ATTRRO {
			t.Errorf("a user set %s: %v", res, err)
		}
		if _, err := set(oper, res, "1"); err != nil {
			t.Errorf("an operator set %s: %v", res, err)
		}
	}
	if _, err := set(user, "open", "many"); proto.CodeOf(err) != proto.PBSE_BADATVAL || !strings.Contains(err.Error(), "open") {
		t.Errorf("open=many: %v", err)
	}
	j, _ := set(oper, "secret", "3")
	j.ResourceList = j.ResourceList.Set("open", "2")
	r := NewJobRenderer(nil)
	r.Hidden = rt.Invisible()
	for _, a := range r.Render(j) {
		if a.Resource == "secret" {
			t.Errorf("a user sees %s", a.FullName())
		}
	}
	if !slices.ContainsFunc(NewJobRenderer(nil).Render(j), func(a proto.Attr) bool { return a.Resource == "secret" }) {
		t.Error("a manager does not see Resource_List.secret")
	}
}

// A job's Releasing is stored typed (storage version 7); a record of an
// older store holds its text form, which reads as the same release.
func TestReleasingStoredTyped(t *testing.T) {
	t.Parallel()
	for _, r := range []Release{{}, {Nodes: []string{"n2"}}, {Nodes: []string{"n2", "n3"}, GiveBack: true}} {
		j := &Job{Seq: 1, ID: "1.srv", Releasing: r}
		if got := codecRoundTrip(t, j); !reflect.DeepEqual(got.Releasing, r) {
			t.Errorf("round trip of %+v: %+v", r, got.Releasing)
		}
	}
	marker := &Job{Seq: 1, ID: "1.srv", Releasing: Release{Nodes: []string{"RELX"}, GiveBack: true}}
	rec, err := msgpack.Marshal(marker)
	if err != nil {
		t.Fatal(err)
	}
	typed := []byte("\x92\x91\xa4RELX\xc3")
	if bytes.Count(rec, typed) != 1 {
		t.Fatalf("the typed release is not in the record once: %q", rec)
	}
	for text, want := range map[string]Release{
		"":           {},
		"n2+n3":      {Nodes: []string{"n2", "n3"}},
		"give:n1":    {Nodes: []string{"n1"}, GiveBack: true},
		"give:n1+n4": {Nodes: []string{"n1", "n4"}, GiveBack: true},
	} {
		old := bytes.Replace(rec, typed, msgp.AppendString(nil, text), 1)
		var got Job
		if err := msgpack.Unmarshal(old, &got); err != nil || !reflect.DeepEqual(got.Releasing, want) {
			t.Errorf("an older record's Releasing %q: %+v, %v; want %+v", text, got.Releasing, err, want)
		}
	}
	for _, bad := range [][]byte{[]byte("\x93\x90\xc2\xc2"), []byte("\x92\xa1x\xc2"), []byte("\x92\x91\x01\xc2")} {
		var got Job
		if err := msgpack.Unmarshal(bytes.Replace(rec, typed, bad, 1), &got); err == nil {
			t.Errorf("a damaged release %q read as %+v", bad, got.Releasing)
		}
	}
}
