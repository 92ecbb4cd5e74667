// Package getopt parses command lines the POSIX way, as the PBS commands do
// with getopt(3): single-letter options, clusters ("-hz"), values attached
// ("-Nname", "-lwalltime=1:00:00") or in the next argument ("-N name"),
// "--" ending options, and option parsing stopping at the first operand.
// Long options are not supported except those a command lists in Long
// (such as "--version"), which must appear alone.
package getopt

import (
	"fmt"
	"strings"
)

// Option is one parsed option occurrence.
type Option struct {
	Name  byte   // the option letter; 0 for a long option
	Long  string // the long option without dashes, when Name is 0
	Value string // the value, for options that take one
}

// Spec describes the accepted options in getopt(3) syntax: "a:bc" accepts
// -a with a value and flags -b and -c.
type Spec struct {
	Short string
	Long  []string // long options without the leading "--", taking no value
	// Permute lets options follow operands (GNU style); PBS commands do
	// not, but some tools call "qstat -f 123 -x".
	Permute bool
}

// Error is a usage error naming the offending option.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func (s Spec) takes(c byte) (known, value bool) {
	i := strings.IndexByte(s.Short, c)
	if i < 0 || c == ':' {
		return false, false
	}
	return true, i+1 < len(s.Short) && s.Short[i+1] == ':'
}

// Parse splits args (without the program name) into options, in order, and
// operands.
func (s Spec) Parse(args []string) ([]Option, []string, error) {
	var opts []Option
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "--") {
			name := a[2:]
			found := false
			for _, l := range s.Long {
				if l == name {
					found = true
				}
			}
			if !found {
				return nil, nil, &Error{Msg: fmt.Sprintf("unrecognized option '%s'", a)}
			}
			opts = append(opts, Option{Long: name})
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			if !s.Permute {
				operands = append(operands, args[i:]...)
				break
			}
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			known, value := s.takes(c)
			if !known {
				return nil, nil, &Error{Msg: fmt.Sprintf("invalid option -- '%c'", c)}
			}
			if !value {
				opts = append(opts, Option{Name: c})
				continue
			}
			if j+1 < len(a) {
				opts = append(opts, Option{Name: c, Value: a[j+1:]})
			} else {
				if i+1 >= len(args) {
					return nil, nil, &Error{Msg: fmt.Sprintf("option requires an argument -- '%c'", c)}
				}
				i++
				opts = append(opts, Option{Name: c, Value: args[i]})
			}
			break
		}
	}
	return opts, operands, nil
}
