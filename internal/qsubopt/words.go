package qsubopt

import "strings"

const (
	errUnterminatedSingle = constError("unterminated single quote")
	errUnterminatedDouble = constError("unterminated double quote")
)

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// SplitWords splits directive text into words the way a shell splits a
// simple command line, without expanding anything: blanks separate words,
// single quotes keep everything literally, inside double quotes a backslash
// escapes the next character, outside quotes a backslash escapes the next
// character, and a '#' that starts a word comments out the rest. A
// backslash at the very end is kept. An unterminated quote is an error.
func SplitWords(s string) ([]string, error) {
	return scanWords(s, true)
}

// unquote applies SplitWords' quoting rules to s as one word in which blanks
// and '#' are ordinary characters (the value part of "-v NAME=value").
func unquote(s string) (string, error) {
	w, err := scanWords(s, false)
	if err != nil {
		return "", err
	}
	if len(w) == 0 {
		return "", nil
	}
	return w[0], nil
}

func scanWords(s string, split bool) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case split && isBlank(c):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case split && c == '#' && !inWord:
			return words, nil
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
			}
			cur.WriteByte(s[i])
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errUnterminatedSingle
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, errUnterminatedDouble
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord || (!split && words == nil) {
		words = append(words, cur.String())
	}
	return words, nil
}

// splitList splits an option value at the commas that are outside quotes
// and not escaped by a backslash. Quotes and backslashes stay in the items,
// so each item can be cut at '=' before its value is unquoted.
func splitList(s string) ([]string, error) {
	var items []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == ',':
			items = append(items, s[start:i])
			start = i + 1
		}
	}
	switch quote {
	case '\'':
		return nil, errUnterminatedSingle
	case '"':
		return nil, errUnterminatedDouble
	}
	return append(items, s[start:]), nil
}

// stripQuotes removes one pair of matching quotes around the whole of v:
// resource and -W values are otherwise passed on exactly as given.
func stripQuotes(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// ShellQuote quotes s for /bin/sh as one literal word.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
