package getopt

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	spec := Spec{Short: "a:hN:l:rz", Long: []string{"version"}}
	tests := []struct {
		name     string
		args     []string
		opts     []Option
		operands []string
		err      string
	}{
		{"empty", nil, nil, nil, ""},
		{"attached value", []string{"-Nname", "-lwalltime=1:0:0"}, []Option{{Name: 'N', Value: "name"}, {Name: 'l', Value: "walltime=1:0:0"}}, nil, ""},
		{"separate value", []string{"-N", "x", "s.sh"}, []Option{{Name: 'N', Value: "x"}}, []string{"s.sh"}, ""},
		{"cluster", []string{"-hz", "f"}, []Option{{Name: 'h'}, {Name: 'z'}}, []string{"f"}, ""},
		{"cluster ending in value", []string{"-hNjob"}, []Option{{Name: 'h'}, {Name: 'N', Value: "job"}}, nil, ""},
		{"value that looks like option", []string{"-N", "-x"}, []Option{{Name: 'N', Value: "-x"}}, nil, ""},
		{"double dash", []string{"-h", "--", "-r"}, []Option{{Name: 'h'}}, []string{"-r"}, ""},
		{"stops at operand", []string{"s.sh", "-h"}, nil, []string{"s.sh", "-h"}, ""},
		{"single dash operand", []string{"-"}, nil, []string{"-"}, ""},
		{"long", []string{"--version"}, []Option{{Long: "version"}}, nil, ""},
		{"unknown", []string{"-x"}, nil, nil, "invalid option -- 'x'"},
		{"missing value", []string{"-N"}, nil, nil, "requires an argument -- 'N'"},
		{"unknown long", []string{"--nope"}, nil, nil, "unrecognized option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, ops, err := spec.Parse(tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(opts, tt.opts) || !reflect.DeepEqual(ops, tt.operands) {
				t.Fatalf("got %v %v, want %v %v", opts, ops, tt.opts, tt.operands)
			}
		})
	}
}

func TestPermute(t *testing.T) {
	t.Parallel()
	spec := Spec{Short: "fx", Permute: true}
	opts, ops, err := spec.Parse([]string{"-f", "12", "-x"})
	if err != nil || len(opts) != 2 || !reflect.DeepEqual(ops, []string{"12"}) {
		t.Fatalf("got %v %v %v", opts, ops, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("-a x -hz -- y")
	f.Add("-Nname file -r")
	f.Fuzz(func(t *testing.T, line string) {
		spec := Spec{Short: "a:hN:l:rz", Long: []string{"version"}}
		args := strings.Fields(line)
		opts, ops, err := spec.Parse(args)
		if err != nil {
			return
		}
		// Every option comes from a letter of the input and every operand
		// from an argument.
		if len(opts) > len(line) || len(ops) > len(args) {
			t.Fatalf("%d options and %d operands from %q", len(opts), len(ops), line)
		}
		for _, o := range opts {
			if o.Name == 0 && o.Long == "" {
				t.Fatalf("option without a name from %q", line)
			}
		}
	})
}
