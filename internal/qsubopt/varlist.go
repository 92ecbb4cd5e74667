package qsubopt

import (
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// Var is one entry of a Variable_List.
type Var = proto.Var

// EncodeVariableList formats vars as a Variable_List value (proto/doc.go).
func EncodeVariableList(vars []Var) string { return proto.EncodeVariableList(vars) }

// DecodeVariableList is the inverse of EncodeVariableList.
func DecodeVariableList(s string) []Var { return proto.DecodeVariableList(s) }

// validVarName rejects names that cannot survive the Variable_List
// encoding (which escapes values only) or a process environment.
func validVarName(n string) bool {
	return n != "" && !strings.ContainsAny(n, "=,\\\x00 \t\n")
}

// lookupEnv finds name in environ ("NAME=value" entries); the first entry
// wins, as for the Go runtime.
func lookupEnv(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
