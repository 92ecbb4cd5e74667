package qmgrparse

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"l s; p s", `s s comment="a;b" # c`, "a\\\nb", "'unterminated; x", "#", ";;", "x#y z #w\nq",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, comments bool) {
		for _, c := range Split(text, comments) {
			if c == "" || c != trimWhite(c) {
				t.Errorf("Split(%q) gave %q", text, c)
			}
			if !strings.Contains(text, c) {
				t.Errorf("Split(%q) gave %q, not part of the input", text, c)
			}
		}
		var in Input
		for _, line := range strings.Split(text, "\n") {
			cmds, _ := in.Line(line)
			for _, c := range cmds {
				if c == "" || c != trimWhite(c) {
					t.Errorf("Input gave %q", c)
				}
			}
		}
		in.End()
	})
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseCases() {
		f.Add(tt.text)
	}
	for _, s := range []string{
		"set server comment = \"abc", "s q a@b@c x=1", "set", "list =", "set server a=1,",
		"s s a.b.c-=\"x\"'y'", "\x00", "h \xff", "set queue a\"b c=d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cmd, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T", text, err)
			}
			if se.Pos < 0 || se.Pos > len(se.Input) || se.Input != trimWhite(text) || se.Msg == "" {
				t.Fatalf("Parse(%q) bad error %+v", text, se)
			}
			if !strings.HasSuffix(se.Error(), "^") {
				t.Fatalf("Parse(%q) error has no caret: %q", text, se.Error())
			}
			return
		}
		if cmd == nil {
			if trimWhite(text) != "" {
				t.Fatalf("Parse(%q) gave nothing", text)
			}
			return
		}
		// A parsed command written in canonical form parses the same.
		canon := cmd.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its canonical form %q fails: %v", text, canon, err)
		}
		again.Text, cmd.Text = "", ""
		if !reflect.DeepEqual(again, cmd) {
			t.Fatalf("Parse(%q) = %+v, but canonical %q gives %+v", text, cmd, canon, again)
		}
	})
}
