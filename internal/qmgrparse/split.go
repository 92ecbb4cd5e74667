package qmgrparse

import "strings"

// isWhite is C's isspace for the bytes qmgr input can hold.
func isWhite(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimWhite(s string) string {
	i, j := 0, len(s)
	for i < j && isWhite(s[i]) {
		i++
	}
	for j > i && isWhite(s[j-1]) {
		j--
	}
	return s[i:j]
}

// Split cuts text into commands at ';' and newlines outside quotes. With
// comments, '#' outside quotes at the start of a command or after white
// space ends the command and skips to the next newline; qmgr -c passes
// comments=false because PBS hands that string to the parser untouched.
// Each command is trimmed of white space; empty ones are dropped.
func Split(text string, comments bool) []string {
	var cmds []string
	add := func(s string) {
		if s = trimWhite(s); s != "" {
			cmds = append(cmds, s)
		}
	}
	start := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ';' || c == '\n':
			add(text[start:i])
			start = i + 1
		case c == '#' && comments && (i == start || isWhite(text[i-1])):
			add(text[start:i])
			nl := strings.IndexByte(text[i:], '\n')
			if nl < 0 {
				return cmds
			}
			i += nl
			start = i + 1
		}
	}
	add(text[start:])
	return cmds
}

// Input assembles the physical lines of qmgr's standard input into
// commands. The zero value is ready to use.
type Input struct {
	buf  strings.Builder
	cont bool
}

// Line takes one physical line (its newline already removed) and returns
// the commands it completes. more reports that the logical line goes on, so
// that an interactive caller shows the continuation prompt.
func (in *Input) Line(line string) (cmds []string, more bool) {
	line = strings.TrimSuffix(line, "\r")
	lead := trimWhite(line)
	// PBS skips comment and blank lines without ending a continuation, so a
	// commented-out line inside a backslash-continued command is harmless.
	if lead == "" || lead[0] == '#' {
		return nil, in.cont
	}
	if strings.HasSuffix(line, "\\") {
		in.buf.WriteString(line[:len(line)-1])
		in.buf.WriteByte(' ')
		in.cont = true
		return nil, true
	}
	in.buf.WriteString(line)
	text := in.buf.String()
	in.buf.Reset()
	in.cont = false
	return Split(text, true), false
}

// End returns the commands of a logical line left open when input ended
// (its last line ended with a backslash).
func (in *Input) End() []string {
	text := in.buf.String()
	in.buf.Reset()
	in.cont = false
	return Split(text, true)
}
