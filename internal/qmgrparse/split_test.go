package qmgrparse

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		text     string
		comments bool
		want     []string
	}{
		{"one", "list server", true, []string{"list server"}},
		{"trimmed", "  list server \t", true, []string{"list server"}},
		{"semicolons", "l s; p q workq ;set server scheduling=true", true,
			[]string{"l s", "p q workq", "set server scheduling=true"}},
		{"empty commands dropped", ";; l s ;  ; ", true, []string{"l s"}},
		{"double quotes protect semicolon", `s s comment="a;b"; l s`, true,
			[]string{`s s comment="a;b"`, "l s"}},
		{"single quotes protect semicolon", `s s comment='a;b' ; l s`, true,
			[]string{`s s comment='a;b'`, "l s"}},
		{"other quote inside quotes", `s s comment="it's;x"; l s`, true,
			[]string{`s s comment="it's;x"`, "l s"}},
		{"comment at start", "# nothing here; l s", true, nil},
		{"comment after white space", "l s # list it; p s", true, []string{"l s"}},
		{"comment after semicolon", "l s;# p s", true, []string{"l s"}},
		{"hash inside a word is not a comment", "s s comment=a#b; l s", true,
			[]string{"s s comment=a#b", "l s"}},
		{"hash in quotes is not a comment", `s s comment="a #b"`, true, []string{`s s comment="a #b"`}},
		{"comment ends at newline", "l s # x; y\np s", true, []string{"l s", "p s"}},
		{"newline separates", "l s\np s", false, []string{"l s", "p s"}},
		{"quoted newline kept", "s s comment=\"a\nb\"\nl s", false, []string{"s s comment=\"a\nb\"", "l s"}},
		{"no comments for -c", "l s # x", false, []string{"l s # x"}},
		{"unterminated quote keeps the rest", `s s comment="a;b; l s`, true, []string{`s s comment="a;b; l s`}},
		{"blank", "   ", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text, tt.comments)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q, %v) = %q, want %q", tt.text, tt.comments, got, tt.want)
			}
		})
	}
}

func TestInput(t *testing.T) {
	t.Parallel()
	type step struct {
		line string
		cmds []string
		more bool
	}
	tests := []struct {
		name  string
		steps []step
		end   []string
	}{
		{"single lines", []step{
			{"list server", []string{"list server"}, false},
			{"p q workq; l n", []string{"p q workq", "l n"}, false},
		}, nil},
		{"continuation", []step{
			{"set server \\", nil, true},
			{"scheduling=true,\\", nil, true},
			{"  comment = x", []string{"set server  scheduling=true,   comment = x"}, false},
		}, nil},
		{"comment and blank lines inside a continuation", []step{
			{"set queue workq \\", nil, true},
			{"# enabled=false", nil, true},
			{"", nil, true},
			{"started=true", []string{"set queue workq  started=true"}, false},
		}, nil},
		{"comment line alone", []step{
			{"   # a comment", nil, false},
		}, nil},
		{"crlf", []step{
			{"list server\r", []string{"list server"}, false},
		}, nil},
		{"backslash at end of input", []step{
			{"list \\", nil, true},
		}, []string{"list"}},
		{"continuation inside quotes", []step{
			{`set server comment = "a \`, nil, true},
			{`b"`, []string{`set server comment = "a  b"`}, false},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in Input
			for i, s := range tt.steps {
				cmds, more := in.Line(s.line)
				if !reflect.DeepEqual(cmds, s.cmds) || more != s.more {
					t.Fatalf("step %d Line(%q) = %q, %v; want %q, %v", i, s.line, cmds, more, s.cmds, s.more)
				}
			}
			if got := in.End(); !reflect.DeepEqual(got, tt.end) {
				t.Errorf("End() = %q, want %q", got, tt.end)
			}
			if got := in.End(); got != nil {
				t.Errorf("second End() = %q, want nothing", got)
			}
		})
	}
}
