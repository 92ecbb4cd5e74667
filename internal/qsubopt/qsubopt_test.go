package qsubopt

import (
	"errors"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/proto"
)

// testZone is a fixed zone so that -a results do not depend on the machine.
var testNow = time.Date(2024, time.March, 15, 12, 30, 0, 0, time.FixedZone("T", 2*3600))

func testContext(files map[string]string, stdin string) Context {
	return Context{
		Environ: []string{
			"HOME=/home/alice", "LOGNAME=alice", "PATH=/usr/bin:/bin", "SHELL=/bin/bash",
			"LANG=C.UTF-8", "FOO=foo value", "COMMA=a,b", "BACK=c:\\d",
		},
		Cwd:  "/home/alice/w",
		Host: "submit1",
		Now:  testNow,
		ReadFile: func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		},
		Stdin: strings.NewReader(stdin),
	}
}

func attrMap(attrs []proto.Attr) map[string]string {
	m := map[string]string{}
	for _, a := range attrs {
		m[a.FullName()] = a.Value
	}
	return m
}

func submit(t *testing.T, args []string, files map[string]string, stdin string) (*Submission, map[string]string) {
	t.Helper()
	s, err := ParseSubmit(args, testContext(files, stdin))
	if err != nil {
		t.Fatalf("ParseSubmit(%q): %v", args, err)
	}
	if s.Request == nil {
		t.Fatalf("ParseSubmit(%q): no request", args)
	}
	return s, attrMap(s.Request.Attrs)
}

const plainScript = "#!/bin/sh\necho hi\n"

func TestSubmitOptions(t *testing.T) {
	t.Parallel()
	files := map[string]string{"job.sh": plainScript}
	tests := []struct {
		name string
		args []string
		want map[string]string // attributes that must be present with these values
		none []string          // attributes that must be absent
	}{
		{"defaults", []string{"job.sh"}, map[string]string{"Job_Name": "job.sh"},
			[]string{"Hold_Types", "Resource_List.walltime", "Rerunable"}},
		{"name", []string{"-N", "myjob", "job.sh"}, map[string]string{"Job_Name": "myjob"}, nil},
		{"attached name", []string{"-Nmyjob", "job.sh"}, map[string]string{"Job_Name": "myjob"}, nil},
		{"rerun cluster", []string{"-rn", "job.sh"}, map[string]string{"Rerunable": "False"}, nil},
		{"rerun yes", []string{"-r", "y", "job.sh"}, map[string]string{"Rerunable": "True"}, nil},
		{"attached resource", []string{"-lwalltime=1:0:0", "job.sh"}, map[string]string{"Resource_List.walltime": "1:0:0"}, nil},
		{"hold quiet cluster", []string{"-hz", "job.sh"}, map[string]string{"Hold_Types": "u"}, nil},
		{"resource list", []string{"-l", "nodes=2:ppn=4,mem=27GB", "-l", "walltime=54:10:00", "job.sh"},
			map[string]string{"Resource_List.nodes": "2:ppn=4", "Resource_List.mem": "27GB", "Resource_List.walltime": "54:10:00"}, nil},
		{"select", []string{"-l", "select=2:ncpus=8:mem=2048mb:mpiprocs=8", "job.sh"},
			map[string]string{"Resource_List.select": "2:ncpus=8:mem=2048mb:mpiprocs=8"}, nil},
		{"bare resource", []string{"-l", "wd", "job.sh"}, map[string]string{"Resource_List.wd": "True"}, nil},
		{"repeated resource last wins", []string{"-l", "walltime=1:00:00", "-l", "walltime=2:00:00", "job.sh"},
			map[string]string{"Resource_List.walltime": "2:00:00"}, nil},
		{"quoted resource value", []string{"-l", `software="a,b",ncpus=2`, "job.sh"},
			map[string]string{"Resource_List.software": "a,b", "Resource_List.ncpus": "2"}, nil},
		{"trailing comma", []string{"-l", "ncpus=2,", "job.sh"}, map[string]string{"Resource_List.ncpus": "2"}, nil},
		{"join", []string{"-j", "oe", "job.sh"}, map[string]string{"Join_Path": "oe"}, nil},
		{"account project", []string{"-A", "acct1", "-P", "proj", "job.sh"}, map[string]string{"Account_Name": "acct1", "project": "proj"}, nil},
		{"priority", []string{"-p", "-1024", "job.sh"}, map[string]string{"Priority": "-1024"}, nil},
		{"priority plus", []string{"-p", "+7", "job.sh"}, map[string]string{"Priority": "7"}, nil},
		{"mail", []string{"-m", "abe", "-M", "a@b.c,d@e.f", "job.sh"}, map[string]string{"Mail_Points": "abe", "Mail_Users": "a@b.c,d@e.f"}, nil},
		{"shell checkpoint keep user", []string{"-S", "/bin/bash", "-c", "n", "-k", "oe", "-u", "bob", "job.sh"},
			map[string]string{"Shell_Path_List": "/bin/bash", "Checkpoint": "n", "Keep_Files": "oe", "User_List": "bob"}, nil},
		{"workdir relative", []string{"-d", "sub/dir", "job.sh"}, map[string]string{"init_work_dir": "/home/alice/w/sub/dir"}, nil},
		{"workdir -w absolute", []string{"-w", "/scratch/x", "job.sh"}, map[string]string{"init_work_dir": "/scratch/x"}, nil},
		{"depend", []string{"-W", "depend=afterok:12.srv:13.srv", "job.sh"}, map[string]string{"depend": "afterok:12.srv:13.srv"}, nil},
		{"depend with several types and group", []string{"-W", "depend=afterok:1,before:2,group_list=grp", "job.sh"},
			map[string]string{"depend": "afterok:1,before:2", "group_list": "grp"}, nil},
		{"stagein list", []string{"-W", "stagein=a@h:/x,b@h:/y", "-W", "stageout=c@h:/z", "job.sh"},
			map[string]string{"stagein": "a@h:/x,b@h:/y", "stageout": "c@h:/z"}, nil},
		{"other -W", []string{"-W", "x=NACCESSPOLICY:SINGLEJOB", "-W", "sandbox=PRIVATE", "job.sh"},
			map[string]string{"x": "NACCESSPOLICY:SINGLEJOB", "sandbox": "PRIVATE"}, nil},
		{"-W resource", []string{"-W", "Resource_List.ncpus=3", "job.sh"}, map[string]string{"Resource_List.ncpus": "3"}, nil},
		{"array -J", []string{"-J", "1-10:2", "job.sh"}, map[string]string{"array_indices_submitted": "1-10:2"}, nil},
		{"array -t", []string{"-t", "1-100%5", "job.sh"}, map[string]string{"array_indices_submitted": "1-100%5"}, nil},
		{"execution time", []string{"-a", "1400", "job.sh"},
			map[string]string{"Execution_Time": strconv.FormatInt(time.Date(2024, 3, 15, 14, 0, 0, 0, testNow.Location()).Unix(), 10)}, nil},
		{"node exclusive", []string{"-n", "job.sh"}, map[string]string{"Resource_List.place": "excl"}, nil},
		{"node exclusive beside an arrangement", []string{"-n", "-l", "place=scatter", "job.sh"}, map[string]string{"Resource_List.place": "scatter:excl"}, nil},
		{"node exclusive with exclhost", []string{"-n", "-l", "place=pack:exclhost", "job.sh"}, map[string]string{"Resource_List.place": "pack:exclhost"}, nil},
		{"torque options that act", []string{"-b", "10", "-f", "-K", "5", "-T", "gpu", "job.sh"},
			map[string]string{"Job_Name": "job.sh", "kill_delay": "5", "jobtype": "gpu"}, nil},
		{"root dir args remove", []string{"-D", "/r", "-F", "a b", "-R", "oe", "job.sh"},
			map[string]string{"init_root_dir": "/r", "job_arguments": "a b", "Remove_Files": "oe"}, nil},
		{"C before script", []string{"-C", "#XX", "job.sh"}, map[string]string{"Job_Name": "job.sh"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := submit(t, tt.args, files, "")
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			for _, k := range tt.none {
				if _, ok := got[k]; ok {
					t.Errorf("%s set to %q, want absent", k, got[k])
				}
			}
		})
	}
}

func TestSubmitAttrsUnique(t *testing.T) {
	t.Parallel()
	s, _ := submit(t, []string{"-l", "ncpus=1", "-l", "ncpus=2", "-N", "a", "-N", "b", "-W", "Job_Name=c", "job.sh"},
		map[string]string{"job.sh": "#PBS -N d\n#PBS -l ncpus=3\n"}, "")
	seen := map[string]bool{}
	for _, a := range s.Request.Attrs {
		if seen[a.FullName()] {
			t.Errorf("attribute %s sent twice", a.FullName())
		}
		seen[a.FullName()] = true
	}
	m := attrMap(s.Request.Attrs)
	if m["Job_Name"] != "c" || m["Resource_List.ncpus"] != "2" {
		t.Errorf("got %v", m)
	}
}

func TestSubmitFlags(t *testing.T) {
	t.Parallel()
	files := map[string]string{"job.sh": plainScript}
	s, _ := submit(t, []string{"-hz", "job.sh"}, files, "")
	if !s.Quiet {
		t.Error("-hz: Quiet not set")
	}
	s, _ = submit(t, []string{"job.sh"}, files, "")
	if s.Quiet {
		t.Error("Quiet set without -z")
	}
	s, _ = submit(t, []string{"job.sh"}, map[string]string{"job.sh": "#PBS -z\n"}, "")
	if !s.Quiet {
		t.Error("#PBS -z: Quiet not set")
	}
	for _, tt := range []struct {
		args   []string
		script string
		block  bool
	}{
		{[]string{"-W", "block=true", "job.sh"}, plainScript, true},
		{[]string{"-W", "block=y", "job.sh"}, plainScript, true},
		{[]string{"-W", "block=false", "job.sh"}, plainScript, false},
		{[]string{"job.sh"}, "#PBS -W block=true\n", true},
		{[]string{"-W", "block=false", "job.sh"}, "#PBS -W block=true\n", false},
		{[]string{"job.sh"}, plainScript, false},
	} {
		s, _ := submit(t, tt.args, map[string]string{"job.sh": tt.script}, "")
		if s.Block != tt.block {
			t.Errorf("%v with script %q: Block %v, want %v", tt.args, tt.script, s.Block, tt.block)
		}
		if v, ok := attrMap(s.Request.Attrs)["block"]; ok && v != "True" && v != "False" {
			t.Errorf("%v: block sent as %q, want True or False", tt.args, v)
		}
	}
	// Torque's -b: how long qsub keeps trying to reach the server; the
	// command line over directives, the first directive over later ones.
	for _, tt := range []struct {
		args   []string
		script string
		wait   time.Duration
	}{
		{[]string{"job.sh"}, plainScript, 0},
		{[]string{"-b", "30", "job.sh"}, plainScript, 30 * time.Second},
		{[]string{"job.sh"}, "#PBS -b 5\n#PBS -b 9\n", 5 * time.Second},
		{[]string{"-b", "0", "job.sh"}, "#PBS -b 5\n", 0},
	} {
		s, _ := submit(t, tt.args, map[string]string{"job.sh": tt.script}, "")
		if s.ConnectWait != tt.wait {
			t.Errorf("%v with script %q: ConnectWait %v, want %v", tt.args, tt.script, s.ConnectWait, tt.wait)
		}
	}
	for _, args := range [][]string{{"--version"}, {"-N", "x", "--version"}, {"--version", "nonexistent.sh"}} {
		s, err := ParseSubmit(args, testContext(nil, ""))
		if err != nil || !s.Version || s.Request != nil {
			t.Errorf("%q: got %+v, %v; want Version only", args, s, err)
		}
	}
}

func TestSubmitArguments(t *testing.T) {
	t.Parallel()
	args := []string{"-A", "a b", "-lwalltime=1:00:00", "job.sh"}
	_, m := submit(t, args, map[string]string{"job.sh": plainScript}, "")
	if m["Submit_arguments"] != "-A a b -lwalltime=1:00:00 job.sh" {
		t.Errorf("Submit_arguments = %q", m["Submit_arguments"])
	}
}

func TestQueue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"job.sh"}, ""},
		{[]string{"-q", "batch", "job.sh"}, "batch"},
		{[]string{"-q", "batch@server.example", "job.sh"}, "batch"},
		{[]string{"-q", "@server", "job.sh"}, ""},
		{[]string{"-q", "@", "job.sh"}, ""},
		{[]string{"-qdebug", "job.sh"}, "debug"},
	}
	for _, tt := range tests {
		s, _ := submit(t, tt.args, map[string]string{"job.sh": plainScript}, "")
		if s.Request.Queue != tt.want {
			t.Errorf("%q: queue %q, want %q", tt.args, s.Request.Queue, tt.want)
		}
	}
	// Directive -q is used unless the command line names a queue; the
	// first directive wins.
	files := map[string]string{"job.sh": "#PBS -q first\n#PBS -q second\n"}
	if s, _ := submit(t, []string{"job.sh"}, files, ""); s.Request.Queue != "first" {
		t.Errorf("directive queue %q, want first", s.Request.Queue)
	}
	if s, _ := submit(t, []string{"-q", "cli", "job.sh"}, files, ""); s.Request.Queue != "cli" {
		t.Errorf("queue %q, want cli", s.Request.Queue)
	}
	if s, _ := submit(t, []string{"-q", "@", "job.sh"}, files, ""); s.Request.Queue != "" {
		t.Errorf("-q @ with directive: queue %q, want the default", s.Request.Queue)
	}
}

func TestScriptSource(t *testing.T) {
	t.Parallel()
	script := "#!/bin/bash\n#PBS -l ncpus=2\nhostname\n"
	s, m := submit(t, nil, nil, script)
	if string(s.Request.Script) != script || m["Job_Name"] != "STDIN" || m["Resource_List.ncpus"] != "2" {
		t.Errorf("stdin: script %q, attrs %v", s.Request.Script, m)
	}
	s, m = submit(t, []string{"/work/abc/.command.run"}, map[string]string{"/work/abc/.command.run": script}, "ignored")
	if string(s.Request.Script) != script || m["Job_Name"] != ".command.run" {
		t.Errorf("file: script %q, attrs %v", s.Request.Script, m)
	}
	// Stdin given but empty: still a job, named STDIN.
	s, m = submit(t, nil, nil, "")
	if len(s.Request.Script) != 0 || m["Job_Name"] != "STDIN" {
		t.Errorf("empty stdin: %q %v", s.Request.Script, m)
	}
}

func TestExecMode(t *testing.T) {
	t.Parallel()
	s, m := submit(t, []string{"-N", "e", "-l", "ncpus=1", "--", "/bin/echo", "it's", "a b", "$HOME", ""}, nil, "")
	want := "#!/bin/sh\nexec /bin/echo 'it'\\''s' 'a b' '$HOME' ''\n"
	if string(s.Request.Script) != want {
		t.Errorf("script %q, want %q", s.Request.Script, want)
	}
	if m["Job_Name"] != "e" || m["Resource_List.ncpus"] != "1" {
		t.Errorf("attrs %v", m)
	}
	// -S names a script's shell: the program runs directly (issue 30:
	// qsub -S /usr/bin/python3 -- /bin/echo hi ran python on the two
	// lines that start it).
	_, m = submit(t, []string{"-S", "/usr/bin/python3", "--", "/bin/echo", "hi"}, nil, "")
	if v, ok := m["Shell_Path_List"]; ok {
		t.Errorf("-S with an executable: Shell_Path_List %q sent", v)
	}
	_, m = submit(t, []string{"--", "/bin/sleep", "10"}, nil, "")
	if m["Job_Name"] != "sleep" {
		t.Errorf("default name %q, want sleep", m["Job_Name"])
	}
	// A "--" that is an option's value is no terminator.
	s, m = submit(t, []string{"-A", "--", "job.sh"}, map[string]string{"job.sh": plainScript}, "")
	if m["Account_Name"] != "--" || string(s.Request.Script) != plainScript {
		t.Errorf("-A --: %v %q", m, s.Request.Script)
	}
	// The generated script is not scanned for directives.
	_, m = submit(t, []string{"-N", "y", "--", "#PBS", "-N", "x"}, nil, "")
	if m["Job_Name"] != "y" {
		t.Errorf("exec mode name %q", m["Job_Name"])
	}
}

func TestSubmitErrors(t *testing.T) {
	t.Parallel()
	files := map[string]string{"job.sh": plainScript}
	tests := []struct {
		name  string
		args  []string
		usage bool
		msg   string
	}{
		{"unknown option", []string{"-Q", "job.sh"}, true, "invalid option -- 'Q'"},
		{"missing value", []string{"job.sh", "-N"}, true, "unexpected argument \"-N\""},
		{"missing value at end", []string{"-N"}, true, "requires an argument -- 'N'"},
		{"empty name", []string{"-N", "", "job.sh"}, true, `illegal -N value ""`},
		// Job names (issue 19 item 7): a letter first, then letters,
		// digits and - _ + . as OpenPBS; "-rf" would reach root's
		// epilogue as an argument.
		{"name like options", []string{"-N", "-rf", "job.sh"}, true, `illegal -N value "-rf": the first character must be a letter`},
		{"name with a digit first", []string{"-N", "1abc", "job.sh"}, true, `illegal -N value "1abc": the first character must be a letter`},
		{"name with blank", []string{"-N", "a b", "job.sh"}, true, `illegal -N value "a b": ' ' is not allowed`},
		{"name too long", []string{"-N", "a" + strings.Repeat("b", 236), "job.sh"}, true, "longer than 236 characters"},
		{"PSI/J name", []string{"psij.sh"}, true, `directive on line 2: illegal -N value "=psij": '=' is not allowed`},
		{"script name as job name", []string{"x y.sh"}, true, `illegal -N value "x y.sh": ' ' is not allowed (letters, digits, '-', '_', '+' and '.' are) (the job is named after its script unless -N names it)`},
		{"script name like options", []string{"./-rf"}, true, `illegal -N value "-rf": the first character may not be '-'`},
		// Mail addresses (issue 19 item 6): sendmail would run a
		// program or write a file as root.
		{"mail to a program", []string{"-M", "|/tmp/x", "job.sh"}, true, `illegal -M value "|/tmp/x": "|/tmp/x" is not a mail address (user or user@host)`},
		{"mail to a file", []string{"-M", "alice@h,/tmp/f", "job.sh"}, true, `illegal -M value "alice@h,/tmp/f": "/tmp/f" is not a mail address`},
		{"mail in a directive", []string{"mail.sh"}, true, `directive on line 1: illegal -M value ":include:/etc/x"`},
		{"bad join", []string{"-j", "oo", "job.sh"}, true, `illegal -j value "oo"`},
		{"priority range", []string{"-p", "1024", "job.sh"}, true, `illegal -p value "1024"`},
		{"priority text", []string{"-p", "high", "job.sh"}, true, `illegal -p value "high"`},
		{"rerun", []string{"-r", "maybe", "job.sh"}, true, `illegal -r value "maybe"`},
		{"date", []string{"-a", "2560", "job.sh"}, true, `illegal -a value "2560"`},
		{"date format", []string{"-a", "tomorrow", "job.sh"}, true, `illegal -a value "tomorrow"`},
		{"resource name", []string{"-l", "=5", "job.sh"}, true, `illegal -l value "=5"`},
		{"resource value", []string{"-l", "mem=", "job.sh"}, true, `no value for resource "mem"`},
		{"resource quote", []string{"-l", `x="a`, "job.sh"}, true, "unterminated double quote"},
		{"W without =", []string{"-W", "depend", "job.sh"}, true, `illegal -W value "depend"`},
		{"W bad name", []string{"-W", "a b=c", "job.sh"}, true, `bad attribute name "a b"`},
		{"stagein without host", []string{"-W", "stagein=in.dat:/data/in.dat", "job.sh"}, true, `illegal -W value "stagein=in.dat:/data/in.dat": stagein: item 1`},
		{"stageout trailing comma", []string{"-W", "stageout=a@h:/x,", "job.sh"}, true, "stageout: trailing comma"},
		{"v bad name", []string{"-v", "=x", "job.sh"}, true, `illegal -v value "=x"`},
		{"two scripts", []string{"a.sh", "b.sh"}, true, `unexpected argument "b.sh"`},
		{"no executable", []string{"--"}, true, "no executable"},
		{"empty output", []string{"-o", "", "job.sh"}, true, `illegal -o value ""`},
		{"host without path", []string{"-e", "host:", "job.sh"}, true, "no path after the host name"},
		{"bad -b", []string{"-b", "soon", "job.sh"}, true, `illegal -b value "soon"`},
		{"bad block", []string{"-W", "block=sometimes", "job.sh"}, true, `illegal -W value "block=sometimes": block: want true or false`},
		{"interactive array", []string{"-I", "-J", "1-3"}, true, "interactive and array job submission cannot be used together"},
		{"interactive array directive", []string{"-I", "array.sh"}, true, "interactive and array job submission cannot be used together"},
		{"interactive rerunnable", []string{"-I", "-r", "y"}, true, `illegal -r value "y": interactive jobs are not rerunnable`},
		{"interactive executable", []string{"-I", "--", "/bin/true"}, true, "-I starts a shell"},
		{"Moab variables", []string{"-E", "job.sh"}, true, "-E is not supported: it has Moab add MOAB_* variables"},
		{"idle slot limit", []string{"-i", "2", "job.sh"}, true, "-i is not supported: Torque's idle slot limit"},
		{"NUMA request", []string{"-L", "tasks=1:lprocs=2", "job.sh"}, true, "-L is not supported: Torque's NUMA-aware resource request"},
		{"node exclusive and shared", []string{"-n", "-l", "place=scatter:shared", "job.sh"}, true, "-n (node exclusive) conflicts with place=scatter:shared"},
		{"X11 without -I", []string{"-X", "job.sh"}, true, "-X forwards an interactive job's X11 clients: use it with -I"},
		{"X11 without DISPLAY", []string{"-I", "-X"}, true, "-X needs DISPLAY set"},
		{"interactive script", []string{"-x", "job.sh"}, true, "-x is not supported: running the script in an interactive job"},
		{"missing script", []string{"nope.sh"}, false, "cannot read script file nope.sh: file does not exist"},
		{"bad directive", []string{"bad.sh"}, true, `directive on line 2: illegal -j value "x"`},
		{"directive quote", []string{"quote.sh"}, true, "directive on line 1: unterminated single quote"},
		{"directive operand", []string{"operand.sh"}, true, `directive on line 1: unexpected argument "extra"`},
		{"directive unknown option", []string{"unknown.sh"}, true, "directive on line 1: invalid option -- 'Q'"},
		{"directive interactive rerunnable", []string{"-r", "y", "inter.sh"}, true, "interactive jobs are not rerunnable"},
	}
	files["bad.sh"] = "#!/bin/sh\n#PBS -j x\n"
	files["quote.sh"] = "#PBS -N 'abc\n"
	files["operand.sh"] = "#PBS -N name extra\n"
	files["unknown.sh"] = "#PBS -Q\n"
	files["inter.sh"] = "#PBS -I\n"
	files["array.sh"] = "#PBS -J 1-2\n"
	files["psij.sh"] = "#!/bin/sh\n#PBS -N=\"psij\"\n"
	files["x y.sh"] = plainScript
	files["./-rf"] = plainScript
	files["mail.sh"] = "#PBS -M :include:/etc/x\n"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSubmit(tt.args, testContext(files, ""))
			if err == nil {
				t.Fatalf("no error; got %+v", s)
			}
			var ue *UsageError
			if errors.As(err, &ue) != tt.usage {
				t.Errorf("usage error = %v, want %v (%v)", !tt.usage, tt.usage, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

// qsub -I -X takes the user's DISPLAY; a DISPLAY that does not parse
// is refused naming it.
func TestX11(t *testing.T) {
	t.Parallel()
	c := testContext(nil, "")
	c.Environ = append(c.Environ, "DISPLAY=localhost:10.0")
	s, err := ParseSubmit([]string{"-I", "-X"}, c)
	if err != nil || !s.X11 || !s.Interactive || s.Display.Host != "localhost" || s.Display.Number != 10 {
		t.Fatalf("ParseSubmit -I -X = %+v, %v", s, err)
	}
	if s, err := ParseSubmit([]string{"-I"}, c); err != nil || s.X11 {
		t.Errorf("-I alone: X11 %v, %v", s.X11, err)
	}
	c = testContext(nil, "")
	c.Environ = append(c.Environ, "DISPLAY=nohost")
	if _, err := ParseSubmit([]string{"-I", "-X"}, c); err == nil || !strings.Contains(err.Error(), `DISPLAY "nohost"`) {
		t.Errorf("bad DISPLAY: %v", err)
	}
}

func TestOutputPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"/abs/out.log", "submit1:/abs/out.log"},
		{"out.log", "submit1:/home/alice/w/out.log"},
		{"./logs/../out.log", "submit1:/home/alice/w/out.log"},
		{"logs/", "submit1:/home/alice/w/logs/"},
		{"/abs/dir/", "submit1:/abs/dir/"},
		{".", "submit1:/home/alice/w/"},
		{"other:/x/y.log", "other:/x/y.log"},
		{"other.example.org:rel.log", "other.example.org:rel.log"},
		{"logs/${PBS_JOBID}.out", "submit1:/home/alice/w/logs/${PBS_JOBID}.out"},
		{"/a:b/c", "submit1:/a:b/c"},
		{"/a b/x.log", "submit1:/a b/x.log"},
	}
	for _, tt := range tests {
		_, m := submit(t, []string{"-o", tt.in, "-e", tt.in, "job.sh"}, map[string]string{"job.sh": plainScript}, "")
		if m["Output_Path"] != tt.want || m["Error_Path"] != tt.want {
			t.Errorf("-o/-e %q: got %q / %q, want %q", tt.in, m["Output_Path"], m["Error_Path"], tt.want)
		}
	}
}

func vars(t *testing.T, m map[string]string) []Var {
	t.Helper()
	return DecodeVariableList(m["Variable_List"])
}

func varMap(vs []Var) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.Name] = v.Value
	}
	return out
}

func TestVariableList(t *testing.T) {
	t.Parallel()
	files := map[string]string{"job.sh": plainScript}
	_, m := submit(t, []string{"job.sh"}, files, "")
	got := vars(t, m)
	want := []Var{
		{Name: "PBS_O_HOME", Value: "/home/alice"}, {Name: "PBS_O_LANG", Value: "C.UTF-8"}, {Name: "PBS_O_LOGNAME", Value: "alice"},
		{Name: "PBS_O_PATH", Value: "/usr/bin:/bin"}, {Name: "PBS_O_SHELL", Value: "/bin/bash"}, {Name: "PBS_O_WORKDIR", Value: "/home/alice/w"},
		{Name: "PBS_O_SYSTEM", Value: "Linux"}, {Name: "PBS_O_HOST", Value: "submit1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Variable_List\n got %v\nwant %v", got, want)
	}

	_, m = submit(t, []string{"-v", `FOO,A=1,B='x, y',C="q\"d",D=e\,f,NOTSET,COMMA,BACK`, "job.sh"}, files, "")
	vm := varMap(vars(t, m))
	for k, v := range map[string]string{"FOO": "foo value", "A": "1", "B": "x, y", "C": `q"d`, "D": "e,f", "COMMA": "a,b", "BACK": `c:\d`} {
		if vm[k] != v {
			t.Errorf("-v %s = %q, want %q", k, vm[k], v)
		}
	}
	if _, ok := vm["NOTSET"]; ok {
		t.Error("-v NOTSET: variable absent from the environment was sent")
	}
	// Escaping on the wire: ',' and '\' inside values get a backslash.
	if !strings.Contains(m["Variable_List"], `,COMMA=a\,b,`) || !strings.Contains(m["Variable_List"], `BACK=c:\\d`) {
		t.Errorf("Variable_List not escaped: %s", m["Variable_List"])
	}

	// -V exports everything, -v overrides a value, and neither replaces
	// the PBS_O_ variables qsub computed.
	c := testContext(files, "")
	c.Environ = append(c.Environ, "PBS_O_WORKDIR=/parent/job", "X=1")
	s, err := ParseSubmit([]string{"-V", "-v", "X=2,PBS_O_HOST=evil", "job.sh"}, c)
	if err != nil {
		t.Fatal(err)
	}
	vl := DecodeVariableList(attrMap(s.Request.Attrs)["Variable_List"])
	vm = varMap(vl)
	if vm["PBS_O_WORKDIR"] != "/home/alice/w" || vm["PBS_O_HOST"] != "submit1" || vm["X"] != "2" || vm["HOME"] != "/home/alice" || vm["COMMA"] != "a,b" {
		t.Errorf("-V: %v", vm)
	}
	count := map[string]int{}
	for _, v := range vl {
		count[v.Name]++
		if count[v.Name] > 1 {
			t.Errorf("%s listed twice", v.Name)
		}
	}

	// LOGNAME falls back to USER; MAIL is passed when set.
	c = testContext(files, "")
	c.Environ = []string{"USER=bob", "MAIL=/var/mail/bob"}
	s, err = ParseSubmit([]string{"job.sh"}, c)
	if err != nil {
		t.Fatal(err)
	}
	vm = varMap(DecodeVariableList(attrMap(s.Request.Attrs)["Variable_List"]))
	if vm["PBS_O_LOGNAME"] != "bob" || vm["PBS_O_MAIL"] != "/var/mail/bob" {
		t.Errorf("fallbacks: %v", vm)
	}
	if _, ok := vm["PBS_O_LANG"]; ok {
		t.Error("PBS_O_LANG sent though LANG is unset")
	}
}

func TestVariableListRoundTrip(t *testing.T) {
	t.Parallel()
	in := []Var{{Name: "A", Value: ""}, {Name: "B", Value: `\`}, {Name: "C", Value: ",,"}, {Name: "D", Value: `a\,b=c`}, {Name: "E", Value: "x\ny"}}
	enc := EncodeVariableList(in)
	if enc != `A=,B=\\,C=\,\,,D=a\\\,b=c,E=x`+"\n"+`y` {
		t.Errorf("encoded %q", enc)
	}
	if out := DecodeVariableList(enc); !reflect.DeepEqual(out, in) {
		t.Errorf("round trip %v -> %q -> %v", in, enc, out)
	}
}

func TestDirectivePrecedence(t *testing.T) {
	t.Parallel()
	script := "#!/bin/bash\n" +
		"#PBS -N first\n" +
		"#PBS -l walltime=01:00:00,mem=1gb\n" +
		"#PBS -N second\n" +
		"#PBS -l walltime=02:00:00 -l ncpus=4\n" +
		"#PBS -v A=dir1,B=dir\n" +
		"#PBS -v A=dir2\n" +
		"#PBS -j oe\n" +
		"#PBS -C '#XX'\n" +
		"#PBS -o dir.log\n"
	files := map[string]string{"job.sh": script}

	_, m := submit(t, []string{"job.sh"}, files, "")
	want := map[string]string{
		"Job_Name": "first", "Resource_List.walltime": "01:00:00", "Resource_List.mem": "1gb",
		"Resource_List.ncpus": "4", "Join_Path": "oe", "Output_Path": "submit1:/home/alice/w/dir.log",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("directives only: %s = %q, want %q", k, m[k], v)
		}
	}
	vm := varMap(vars(t, m))
	if vm["A"] != "dir1" || vm["B"] != "dir" {
		t.Errorf("directive -v: %v", vm)
	}

	_, m = submit(t, []string{"-N", "cli", "-l", "mem=8gb", "-v", "A=cli", "-j", "n", "job.sh"}, files, "")
	want = map[string]string{
		"Job_Name": "cli", "Resource_List.walltime": "01:00:00", "Resource_List.mem": "8gb",
		"Resource_List.ncpus": "4", "Join_Path": "n",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("command line over directives: %s = %q, want %q", k, m[k], v)
		}
	}
	vm = varMap(vars(t, m))
	if vm["A"] != "cli" || vm["B"] != "dir" {
		t.Errorf("-v merge: %v", vm)
	}
}

func TestDirectivePrefix(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\n#PBS -N pbs\n#XX -N xx\n"
	files := map[string]string{"job.sh": script}
	tests := []struct {
		name    string
		args    []string
		dprefix string
		want    string
	}{
		{"default", []string{"job.sh"}, "", "pbs"},
		{"-C", []string{"-C", "#XX", "job.sh"}, "", "xx"},
		{"-C attached", []string{"-C#XX", "job.sh"}, "", "xx"},
		{"PBS_DPREFIX", []string{"job.sh"}, "#XX", "xx"},
		{"-C beats PBS_DPREFIX", []string{"-C", "#PBS", "job.sh"}, "#XX", "pbs"},
		{"-C empty disables", []string{"-C", "", "job.sh"}, "", "job.sh"},
		{"-C empty beats PBS_DPREFIX", []string{"-C", "", "job.sh"}, "#XX", "job.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testContext(files, "")
			if tt.dprefix != "" {
				c.Environ = append(c.Environ, "PBS_DPREFIX="+tt.dprefix)
			}
			s, err := ParseSubmit(tt.args, c)
			if err != nil {
				t.Fatal(err)
			}
			if got := attrMap(s.Request.Attrs)["Job_Name"]; got != tt.want {
				t.Errorf("Job_Name = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDirectiveScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   map[string]string
		none   []string
	}{
		{"galaxy blank line after shebang",
			"#!/bin/bash\n\n#PBS -N galaxy\n#PBS -l walltime=10:00:00\n\ncd /tmp\n#PBS -N late\n",
			map[string]string{"Job_Name": "galaxy", "Resource_List.walltime": "10:00:00"}, nil},
		{"parsl options after directives",
			"#!/bin/bash\n\n#PBS -S /bin/bash\n#PBS -N parsl.block-0\n#PBS -m n\n#PBS -l walltime=00:10:00\n" +
				"#PBS -l nodes=1:ppn=2\n#PBS -o /runinfo/000/submit_scripts/parsl.block-0.submit.stdout\n" +
				"#PBS -A proj1\n#PBS -q debug\n\nexport JOBNAME=\"parsl.block-0\"\n",
			map[string]string{"Shell_Path_List": "/bin/bash", "Job_Name": "parsl.block-0", "Mail_Points": "n",
				"Resource_List.nodes": "1:ppn=2", "Account_Name": "proj1",
				"Output_Path": "submit1:/runinfo/000/submit_scripts/parsl.block-0.submit.stdout"}, nil},
		{"parsl empty scheduler options",
			"#!/bin/bash\n\n#PBS -N p\n\n\nexport X=1\n", map[string]string{"Job_Name": "p"}, nil},
		{"nextflow command.run",
			// Nextflow's PBS executor drops parentheses from the task
			// name (they are not legal in PBS job names).
			"#!/bin/bash\n#PBS -N nf-hello_1\n#PBS -o /w/ab/cdef/.command.log\n#PBS -j oe\n" +
				"#PBS -l select=1:ncpus=2:mem=2048mb\n#PBS -l walltime=01:00:00\n#NEXTFLOW TASK: hello (1)\nset -e\n",
			map[string]string{"Job_Name": "nf-hello_1", "Output_Path": "submit1:/w/ab/cdef/.command.log",
				"Join_Path": "oe", "Resource_List.select": "1:ncpus=2:mem=2048mb", "Resource_List.walltime": "01:00:00"}, nil},
		{"bare directive (batchspawner)", "#!/bin/sh\n#PBS \n#PBS\n#PBS -N b\nexec jupyterhub-singleuser\n",
			map[string]string{"Job_Name": "b"}, nil},
		{"quoted values", "#PBS -o \"/a\\ b/x.log\" -e '/c d/y.log'\n#PBS -N \"q\"  # a comment -N no\n",
			map[string]string{"Output_Path": "submit1:/a b/x.log", "Error_Path": "submit1:/c d/y.log", "Job_Name": "q"}, nil},
		{"continuation", "#PBS -l nodes=1,\\\nwalltime=1:00:00 \\\n  -N cont\n",
			map[string]string{"Resource_List.nodes": "1", "Resource_List.walltime": "1:00:00", "Job_Name": "cont"}, nil},
		{"continuation repeating the prefix", "#PBS -l ncpus=1 \\\n#PBS -l mem=1gb\n",
			map[string]string{"Resource_List.ncpus": "1", "Resource_List.mem": "1gb"}, nil},
		{"colon and comment lines", "#!/bin/sh\n: noop\n# comment\n  \t\n   #PBS -N indented\n",
			map[string]string{"Job_Name": "indented"}, nil},
		{"stops at first executable line", "#!/bin/sh\necho start\n#PBS -N late\n",
			map[string]string{"Job_Name": "job.sh"}, nil},
		{"prefix must end the word", "#PBSPro settings follow\n#PBS_X\n#PBS -N ok\n",
			map[string]string{"Job_Name": "ok"}, nil},
		{"-C in directive ignored", "#PBS -C '#XX'\n#XX -N xx\n#PBS -N pbs\n",
			map[string]string{"Job_Name": "pbs"}, nil},
		{"byte order mark", "\xef\xbb\xbf#!/bin/sh\n#PBS -N bom\n",
			map[string]string{"Job_Name": "bom"}, nil},
		{"cluster in directive", "#PBS -hz -rn\n", map[string]string{"Hold_Types": "u", "Rerunable": "False"}, nil},
		{"toil jobid literal", "#PBS -o /logs/toil_job_${PBS_JOBID}.out\n",
			map[string]string{"Output_Path": "submit1:/logs/toil_job_${PBS_JOBID}.out"}, nil},
		{"heredoc after commands is not scanned", "cat <<EOF\n#PBS -N no\nEOF\n", map[string]string{"Job_Name": "job.sh"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := submit(t, []string{"job.sh"}, map[string]string{"job.sh": tt.script}, "")
			if string(s.Request.Script) != tt.script {
				t.Errorf("script changed: %q", s.Request.Script)
			}
			for k, v := range tt.want {
				if m[k] != v {
					t.Errorf("%s = %q, want %q", k, m[k], v)
				}
			}
			for _, k := range tt.none {
				if _, ok := m[k]; ok {
					t.Errorf("%s set", k)
				}
			}
		})
	}
}

func TestScanDirectives(t *testing.T) {
	t.Parallel()
	script := "#!/bin/sh\n\n#PBS -N a\n  #PBS   -l x=1 \\\n -j oe\n#PBS\n# c\n:\n#PBS -q b\nrun\n#PBS -N late\n"
	got := ScanDirectives([]byte(script), "#PBS")
	want := []Directive{{3, " -N a"}, {4, "   -l x=1  -j oe"}, {6, ""}, {9, " -q b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := ScanDirectives([]byte(script), ""); got != nil {
		t.Errorf("empty prefix found %v", got)
	}
	// A backslash on the last line has nothing to join.
	if got := ScanDirectives([]byte("#PBS -N x\\"), "#PBS"); !reflect.DeepEqual(got, []Directive{{1, " -N x\\"}}) {
		t.Errorf("trailing backslash: %+v", got)
	}
}

func TestSplitWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"  -N  name\t-j oe ", []string{"-N", "name", "-j", "oe"}, ""},
		{`-o "/a b/x.log"`, []string{"-o", "/a b/x.log"}, ""},
		{`-o "/a\ b/x.log"`, []string{"-o", "/a b/x.log"}, ""},
		{`-o '/a\ b'`, []string{"-o", `/a\ b`}, ""},
		{`a\ b c\\d`, []string{"a b", `c\d`}, ""},
		{`x"y z"'w'`, []string{"xy zw"}, ""},
		{`"" ''`, []string{"", ""}, ""},
		{"-N a#b # comment", []string{"-N", "a#b"}, ""},
		{"# all comment", nil, ""},
		{`-v "A='1,2'"`, []string{"-v", "A='1,2'"}, ""},
		{`end\`, []string{`end\`}, ""},
		{`"abc`, nil, "unterminated double quote"},
		{`'abc`, nil, "unterminated single quote"},
		{`"ab\"`, nil, "unterminated double quote"},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("SplitWords(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	t.Parallel()
	loc := testNow.Location() // now is 2024-03-15 12:30:00
	d := func(y int, m time.Month, day, h, min, s int) time.Time {
		return time.Date(y, m, day, h, min, s, 0, loc)
	}
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"1400", d(2024, 3, 15, 14, 0, 0), false},
		{"1230", d(2024, 3, 15, 12, 30, 0), false},   // exactly now: not past
		{"1229", d(2024, 3, 16, 12, 29, 0), false},   // past today: tomorrow
		{"0000.30", d(2024, 3, 16, 0, 0, 30), false}, // past today: tomorrow
		{"1230.05", d(2024, 3, 15, 12, 30, 5), false},
		{"200900", d(2024, 3, 20, 9, 0, 0), false},
		{"140900", d(2024, 4, 14, 9, 0, 0), false}, // past this month: next month
		{"310900", d(2024, 3, 31, 9, 0, 0), false},
		{"03011000", d(2025, 3, 1, 10, 0, 0), false}, // past this year: next year
		{"12251800", d(2024, 12, 25, 18, 0, 0), false},
		{"02291200", d(2028, 2, 29, 12, 0, 0), false}, // the next Feb 29 after now
		{"2501020304", d(2025, 1, 2, 3, 4, 0), false},
		{"7001020304", d(1970, 1, 2, 3, 4, 0), false},       // YY >= 69 is 19YY
		{"202001020304.59", d(2020, 1, 2, 3, 4, 59), false}, // explicit past date kept
		{"2402300000", time.Time{}, true},                   // Feb 30
		{"2400", time.Time{}, true},
		{"1260", time.Time{}, true},
		{"1200.60", time.Time{}, true},
		{"1200.5", time.Time{}, true},
		{"320900", time.Time{}, true},
		{"13011200", time.Time{}, true},
		{"123", time.Time{}, true},
		{"12a4", time.Time{}, true},
		{"", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := ParseDateTime(tt.in, testNow)
		if tt.err {
			if err == nil {
				t.Errorf("ParseDateTime(%q) = %v, want error", tt.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	// Day 31 in a 30-day month rolls to the next month that has it.
	apr := time.Date(2024, 4, 10, 8, 0, 0, 0, loc)
	if got, _ := ParseDateTime("311200", apr); !got.Equal(d(2024, 5, 31, 12, 0, 0)) {
		t.Errorf("311200 in April = %v", got)
	}
	// Rolling past December goes into next year.
	dec := time.Date(2024, 12, 20, 8, 0, 0, 0, loc)
	if got, _ := ParseDateTime("050800", dec); !got.Equal(d(2025, 1, 5, 8, 0, 0)) {
		t.Errorf("050800 in late December = %v", got)
	}
	// Rolling a time of day past the end of the month.
	eom := time.Date(2024, 2, 29, 23, 0, 0, 0, loc)
	if got, _ := ParseDateTime("0100", eom); !got.Equal(d(2024, 3, 1, 1, 0, 0)) {
		t.Errorf("0100 on Feb 29 late = %v", got)
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain": "plain", "/bin/echo": "/bin/echo", "": "''", "a b": "'a b'", "it's": `'it'\''s'`,
		"$x": "'$x'", "a*": "'a*'", "k=v,w": "k=v,w", "~": "'~'", "new\nline": "'new\nline'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseAlter(t *testing.T) {
	t.Parallel()
	c := testContext(nil, "")
	tests := []struct {
		name string
		args []string
		want []proto.Attr
		ids  []string
	}{
		{"walltime", []string{"-l", "walltime=2:00:00", "12"}, []proto.Attr{{Name: "Resource_List", Resource: "walltime", Value: "2:00:00"}}, []string{"12"}},
		{"several ids", []string{"-N", "new", "-p", "10", "12.srv", " 13\n"},
			[]proto.Attr{{Name: "Job_Name", Value: "new"}, {Name: "Priority", Value: "10"}}, []string{"12.srv", " 13\n"}},
		{"hold value", []string{"-h", "uo", "1"}, []proto.Attr{{Name: "Hold_Types", Value: "uo"}}, []string{"1"}},
		{"cluster attached", []string{"-rn", "-Nx", "-lncpus=2,mem=1gb", "1"},
			[]proto.Attr{{Name: "Rerunable", Value: "False"}, {Name: "Job_Name", Value: "x"},
				{Name: "Resource_List", Resource: "ncpus", Value: "2"}, {Name: "Resource_List", Resource: "mem", Value: "1gb"}}, []string{"1"}},
		{"paths", []string{"-o", "out", "-e", "h:/e", "-j", "eo", "1"},
			[]proto.Attr{{Name: "Output_Path", Value: "submit1:/home/alice/w/out"}, {Name: "Error_Path", Value: "h:/e"}, {Name: "Join_Path", Value: "eo"}}, []string{"1"}},
		{"variables only as given", []string{"-v", "A=1,FOO", "1"}, []proto.Attr{{Name: "Variable_List", Value: "A=1,FOO=foo value", Op: proto.OpIncr}}, []string{"1"}},
		{"depend and time", []string{"-W", "depend=afterany:3", "-a", "1300", "1"},
			[]proto.Attr{{Name: "depend", Value: "afterany:3"}, {Name: "Execution_Time", Value: strconv.FormatInt(time.Date(2024, 3, 15, 13, 0, 0, 0, testNow.Location()).Unix(), 10)}}, []string{"1"}},
		{"last wins", []string{"-N", "a", "-N", "b", "1"}, []proto.Attr{{Name: "Job_Name", Value: "b"}}, []string{"1"}},
		{"others", []string{"-A", "acc", "-c", "n", "-k", "n", "-m", "n", "-M", "u@h", "-P", "p", "-S", "/bin/sh", "-u", "u", "-R", "oe", "1"},
			[]proto.Attr{{Name: "Account_Name", Value: "acc"}, {Name: "Checkpoint", Value: "n"}, {Name: "Keep_Files", Value: "n"},
				{Name: "Mail_Points", Value: "n"}, {Name: "Mail_Users", Value: "u@h"}, {Name: "project", Value: "p"},
				{Name: "Shell_Path_List", Value: "/bin/sh"}, {Name: "User_List", Value: "u"}, {Name: "Remove_Files", Value: "oe"}}, []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAlter(tt.args, c)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Attrs, tt.want) || !reflect.DeepEqual(a.JobIDs, tt.ids) {
				t.Errorf("got %+v %q\nwant %+v %q", a.Attrs, a.JobIDs, tt.want, tt.ids)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"12"}, "no attribute to change"},
		{[]string{"-N", "x"}, "no job identifier"},
		{[]string{"-h", "x", "1"}, `illegal -h value "x"`},
		{[]string{"-h", "", "1"}, `illegal -h value ""`},
		{[]string{"-z", "1"}, "invalid option -- 'z'"},
		{[]string{"-q", "a", "1"}, "invalid option -- 'q'"},
		{[]string{"-p", "2000", "1"}, `illegal -p value "2000"`},
		{[]string{"-j", "x", "1"}, `illegal -j value "x"`},
		{[]string{"-v", "NOTSET", "1"}, "no attribute to change"},
		{[]string{"-N", "-rf", "1"}, `illegal -N value "-rf"`},
		{[]string{"-N", "=x", "1"}, `illegal -N value "=x"`},
		{[]string{"-M", "|/bin/sh", "1"}, `illegal -M value "|/bin/sh"`},
	} {
		_, err := ParseAlter(tt.args, c)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseAlter(%q) = %v, want usage error containing %q", tt.args, err, tt.msg)
		}
	}
}

func TestCwdRequired(t *testing.T) {
	t.Parallel()
	c := testContext(map[string]string{"job.sh": plainScript}, "")
	c.Cwd = ""
	if _, err := ParseSubmit([]string{"job.sh"}, c); err == nil {
		t.Error("qsub without a current directory: no error")
	}
	if _, err := ParseAlter([]string{"-o", "rel", "1"}, c); err == nil {
		t.Error("qalter -o relative without a current directory: no error")
	}
	if a, err := ParseAlter([]string{"-o", "/abs", "1"}, c); err != nil || a.Attrs[0].Value != "submit1:/abs" {
		t.Errorf("qalter -o absolute: %v %v", a, err)
	}
}

// qsub -I leaves standard input to the job (commands for its shell when
// it is not a terminal) and reads a script operand only for its
// directives; the job is named STDIN without one, and -W block=true
// means nothing beside it.
func TestSubmitInteractive(t *testing.T) {
	t.Parallel()
	files := map[string]string{"inter.sh": "#PBS -I\n#PBS -N shell\necho not run\n"}
	stdin := strings.NewReader("echo hi; exit 0\n")
	c := testContext(files, "")
	c.Stdin = stdin
	s, err := ParseSubmit([]string{"-I", "-W", "block=true", "-l", "walltime=5"}, c)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interactive || s.Block {
		t.Errorf("Interactive = %v, Block = %v; want true, false", s.Interactive, s.Block)
	}
	if stdin.Len() == 0 || len(s.Request.Script) != 0 {
		t.Errorf("qsub -I read standard input as the script (%d bytes left, script %q)", stdin.Len(), s.Request.Script)
	}
	if got := attrMap(s.Request.Attrs)[proto.AttrJobName]; got != "STDIN" {
		t.Errorf("Job_Name = %q, want STDIN", got)
	}
	s, err = ParseSubmit([]string{"inter.sh"}, testContext(files, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interactive || attrMap(s.Request.Attrs)[proto.AttrJobName] != "shell" {
		t.Errorf("#PBS -I: Interactive = %v, attrs %v", s.Interactive, s.Request.Attrs)
	}
}

// TestParseTimeAttr: -W hold_until and Execution_Time take PBS's
// datetime or Unix seconds (issue 30: 202612011846.13 was refused).
func TestParseTimeAttr(t *testing.T) {
	t.Parallel()
	loc := testNow.Location() // now is 2024-03-15 12:30:00
	unix := func(y int, m time.Month, day, h, min, s int) string {
		return strconv.FormatInt(time.Date(y, m, day, h, min, s, 0, loc).Unix(), 10)
	}
	for _, tt := range []struct {
		in, want string
		err      bool
	}{
		{"202612011846.13", unix(2026, 12, 1, 18, 46, 13), false},
		{"202612011846", unix(2026, 12, 1, 18, 46, 0), false},
		{"2612011846", unix(2026, 12, 1, 18, 46, 0), false},
		{"03201200", unix(2024, 3, 20, 12, 0, 0), false},
		{"1400.30", unix(2024, 3, 15, 14, 0, 30), false},
		{"0", "0", false},
		{"1710505800", "1710505800", false}, // Unix seconds: no such date
		{"1812011200", "1812011200", false}, // a date of 2018 is before now: Unix seconds
		{"12345", "12345", false},
		{"tomorrow", "", true},
		{"202613011846", "", true},
	} {
		got, err := ParseTimeAttr(tt.in, testNow)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseTimeAttr(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestDOSScriptRefused: a script with DOS line ends is refused, as
// OpenPBS's qsub refuses it (issue 30); a program run directly (qsub --
// prog) is not a script, and ScanDirectives still reads CR LF lines.
func TestDOSScriptRefused(t *testing.T) {
	t.Parallel()
	for _, script := range []string{"#!/bin/sh\r\n#PBS -N dos\r\necho\r\n", "#!/bin/sh\necho one\r\n"} {
		c := testContext(map[string]string{"job.sh": script}, "")
		if _, err := ParseSubmit([]string{"job.sh"}, c); !errors.Is(err, ErrDOSScript) {
			t.Errorf("%q: %v, want %v", script, err, ErrDOSScript)
		}
	}
	if d := ScanDirectives([]byte("#!/bin/bash\r\n\r\n#PBS -N crlf \\\r\n -j oe\r\n"), DefaultPrefix); len(d) != 1 || d[0].Text != " -N crlf  -j oe" {
		t.Errorf("CR LF directives: %+v", d)
	}
}

// TestDefaults: default_qsub_arguments become attributes a job gets when
// it names none of them; options that make no attribute are refused.
func TestDefaults(t *testing.T) {
	t.Parallel()
	c := testContext(nil, "")
	attrs, err := ParseDefaults("-r n -l walltime=00:10:00,mem=1gb -A acct", c)
	if err != nil {
		t.Fatal(err)
	}
	req := &proto.SubmitRequest{Attrs: []proto.Attr{{Name: "Account_Name", Value: "mine"}}}
	ApplyDefaults(req, attrs)
	got := map[string]string{}
	for _, a := range req.Attrs {
		got[a.FullName()] = a.Value
	}
	want := map[string]string{"Account_Name": "mine", "Rerunable": "False", "Resource_List.walltime": "00:10:00", "Resource_List.mem": "1gb"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the defaults: %v, want %v", got, want)
	}
	for _, bad := range []string{"-I", "-q other", "-V", "job.sh", "-l", "-r maybe", `"unclosed`} {
		if _, err := ParseDefaults(bad, c); err == nil {
			t.Errorf("ParseDefaults(%q) took it", bad)
		}
	}
}
