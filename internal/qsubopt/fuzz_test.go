package qsubopt

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzDirectives feeds arbitrary scripts through the scanner, the word
// splitter and the whole of ParseSubmit.
func FuzzDirectives(f *testing.F) {
	f.Add("#!/bin/bash\n\n#PBS -N galaxy\n#PBS -l walltime=1:00:00\necho\n", "#PBS")
	f.Add("#PBS -o \"/a\\ b/x.log\" -e '/c'\r\n#PBS \\\n -j oe\n", "#PBS")
	f.Add("#PBS -v \"A='1,2'\",B\n#PBS -W depend=afterok:1,before:2\n", "#PBS")
	f.Add("\xef\xbb\xbf#XX -N a # c\n:\n#XX -l x\n", "#XX")
	f.Add("#PBS -a 01011200.30 -p -3 -rn\n", "#PBS")
	f.Fuzz(func(t *testing.T, script, prefix string) {
		dirs := ScanDirectives([]byte(script), prefix)
		nlines := strings.Count(script, "\n") + 1
		last := 0
		for _, d := range dirs {
			if d.Line <= last || d.Line > nlines {
				t.Fatalf("directive line %d after %d (of %d lines)", d.Line, last, nlines)
			}
			last = d.Line
			if strings.ContainsRune(d.Text, '\n') {
				t.Fatalf("directive text %q spans lines", d.Text)
			}
			words, err := SplitWords(d.Text)
			if err != nil {
				continue
			}
			// Quoting the words and splitting again gives them back.
			quoted := make([]string, len(words))
			for i, w := range words {
				quoted[i] = ShellQuote(w)
			}
			again, err := SplitWords(strings.Join(quoted, " "))
			if err != nil || !reflect.DeepEqual(again, words) {
				t.Fatalf("re-split of %q: %q, %v", words, again, err)
			}
		}
		if prefix == "" && dirs != nil {
			t.Fatal("directives found with an empty prefix")
		}

		c := testContext(map[string]string{"s": script}, "")
		c.Environ = append(c.Environ, "PBS_DPREFIX="+prefix)
		s, err := ParseSubmit([]string{"s"}, c)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) && !errors.Is(err, ErrDOSScript) {
				t.Fatalf("unexpected kind of error %T %v", err, err)
			}
			return
		}
		checkSubmission(t, s, script)
	})
}

// FuzzParseArgs feeds arbitrary argument vectors (split at NUL) to
// ParseSubmit and ParseAlter.
func FuzzParseArgs(f *testing.F) {
	f.Add("-rn\x00-Nname\x00-lwalltime=1:0:0\x00-hz\x00job.sh")
	f.Add("-q\x00@\x00-v\x00A=1,B\x00-V\x00-j\x00oe\x00job.sh")
	f.Add("-W\x00depend=afterok:1:2\x00-o\x00logs/\x00--\x00/bin/echo\x00a b")
	f.Add("-C\x00\x00-a\x000101\x00-p\x00-1024")
	f.Add("-l\x00x='a,b',wd\x00-t\x001-3\x00--version")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		script := "#!/bin/sh\n#PBS -N fromdirective\n#PBS -l ncpus=1\necho\n"
		c := testContext(map[string]string{"job.sh": script}, "stdin script\n")
		s, err := ParseSubmit(args, c)
		if err == nil && !s.Version {
			checkSubmission(t, s, "")
			got := string(s.Request.Script)
			// An interactive job has no script (its standard input is
			// the shell's, read by qsub later) unless one was named.
			interactiveNone := s.Interactive && got == ""
			if got != script && got != "stdin script\n" && !strings.HasPrefix(got, "#!/bin/sh\nexec ") && !interactiveNone {
				t.Fatalf("script %q came from nowhere", got)
			}
		}
		a, err := ParseAlter(args, c)
		if err == nil {
			if len(a.Attrs) == 0 || len(a.JobIDs) == 0 {
				t.Fatalf("alteration without attributes or ids: %+v", a)
			}
			seen := map[string]bool{}
			for _, at := range a.Attrs {
				if seen[at.FullName()] {
					t.Fatalf("qalter attribute %s twice", at.FullName())
				}
				seen[at.FullName()] = true
			}
		}
	})
}

// checkSubmission asserts what every successful parse must hold. When
// script is non-empty the request must carry exactly it.
func checkSubmission(t *testing.T, s *Submission, script string) {
	t.Helper()
	if s == nil || s.Request == nil {
		t.Fatal("success without a request")
	}
	if script != "" && string(s.Request.Script) != script {
		t.Fatalf("script %q, want %q", s.Request.Script, script)
	}
	if strings.Contains(s.Request.Queue, "@") {
		t.Fatalf("queue %q keeps a server part", s.Request.Queue)
	}
	seen := map[string]bool{}
	for _, a := range s.Request.Attrs {
		if a.Name == "" {
			t.Fatal("attribute without a name")
		}
		if seen[a.FullName()] {
			t.Fatalf("attribute %s twice", a.FullName())
		}
		seen[a.FullName()] = true
	}
	m := attrMap(s.Request.Attrs)
	if _, ok := m["Job_Name"]; !ok {
		t.Fatal("no Job_Name")
	}
	vm := varMap(DecodeVariableList(m["Variable_List"]))
	if vm["PBS_O_WORKDIR"] != "/home/alice/w" || vm["PBS_O_HOST"] != "submit1" {
		t.Fatalf("PBS_O_ variables lost: %v", vm)
	}
	for _, k := range []string{"Output_Path", "Error_Path"} {
		if v, ok := m[k]; ok && !strings.Contains(v, ":") {
			t.Fatalf("%s = %q has no host", k, v)
		}
	}
}
