package qsubopt

import (
	"fmt"
	"strings"

	"github.com/gopbs/gopbs/internal/getopt"
	"github.com/gopbs/gopbs/proto"
)

// The server's default_qsub_arguments, as OpenPBS has them: qsub options
// every submission gets, below the script's directives and the command
// line (a job that names an attribute keeps its own).

// notDefaults are qsub's options that make no job attribute (they steer
// the qsub that runs, or need its environment): refused in
// default_qsub_arguments rather than taken and ignored.
const notDefaults = "bCdDEfFiIKnqRtTvVwXxz"

// ParseDefaults reads a default_qsub_arguments value into the attributes
// it gives a job, with c as the submitting qsub's context (the server
// checks a value with a context of its own when it is set).
func ParseDefaults(v string, c Context) ([]proto.Attr, error) {
	words, err := SplitWords(v)
	if err != nil {
		return nil, fmt.Errorf("default_qsub_arguments %q: %w", v, err)
	}
	opts, operands, err := getopt.Spec{Short: qsubOptions}.Parse(words)
	if err != nil {
		return nil, fmt.Errorf("default_qsub_arguments %q: %w", v, err)
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("default_qsub_arguments %q: options only (%q is not one)", v, operands[0])
	}
	s := newSource(false)
	for _, o := range opts {
		if strings.IndexByte(notDefaults, o.Name) >= 0 {
			return nil, fmt.Errorf("default_qsub_arguments %q: -%c gives a job no attribute, so it is not taken here", v, o.Name)
		}
		if err := s.apply(cmdSubmit, o, &c); err != nil {
			return nil, fmt.Errorf("default_qsub_arguments %q: %w", v, err)
		}
	}
	return s.attrs, nil
}

// ApplyDefaults gives req each attribute of defaults it does not name.
func ApplyDefaults(req *proto.SubmitRequest, defaults []proto.Attr) {
	have := make(map[string]bool, len(req.Attrs))
	for _, a := range req.Attrs {
		have[a.FullName()] = true
	}
	for _, a := range defaults {
		if !have[a.FullName()] {
			req.Attrs = append(req.Attrs, a)
		}
	}
}
