package proto

import "strings"

// Var is one entry of a Variable_List.
type Var struct {
	Name, Value string
}

// EncodeVariableList formats vars as a Variable_List value,
// "NAME=value,...", escaping ',' and '\' inside names and values with a
// backslash (DecodeVariableList unescapes both).
func EncodeVariableList(vars []Var) string {
	var b strings.Builder
	escaped := func(s string) {
		for k := 0; k < len(s); k++ {
			if c := s[k]; c == ',' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[k])
		}
	}
	for i, v := range vars {
		if i > 0 {
			b.WriteByte(',')
		}
		escaped(v.Name)
		b.WriteByte('=')
		escaped(v.Value)
	}
	return b.String()
}

// DecodeVariableList is the inverse of EncodeVariableList.
func DecodeVariableList(s string) []Var {
	if s == "" {
		return nil
	}
	var out []Var
	var cur strings.Builder
	flush := func() {
		name, val, _ := strings.Cut(cur.String(), "=")
		out = append(out, Var{Name: name, Value: val})
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == ',':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// MergeVariableList returns list with every variable of add set, replacing
// same-named entries in place and appending new ones (qalter -v).
func MergeVariableList(list, add string) string {
	vars := DecodeVariableList(list)
	for _, v := range DecodeVariableList(add) {
		found := false
		for i := range vars {
			if vars[i].Name == v.Name {
				vars[i].Value = v.Value
				found = true
			}
		}
		if !found {
			vars = append(vars, v)
		}
	}
	return EncodeVariableList(vars)
}
