package accounting

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// parseRecord is what a reader of accounting files does with one line:
// date;type;id;key=value ..., values optionally "quoted" with \" inside.
func parseRecord(line string) (kind byte, id string, kvs []KV, ok bool) {
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		return 0, "", nil, false
	}
	parts := strings.SplitN(strings.TrimSuffix(line, "\n"), ";", 4)
	if len(parts) != 4 || len(parts[1]) != 1 {
		return 0, "", nil, false
	}
	rest := strings.TrimSuffix(parts[3], " ")
	for rest != "" {
		key, after, found := strings.Cut(rest, "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return 0, "", nil, false
		}
		var val strings.Builder
		if strings.HasPrefix(after, `"`) {
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) && (after[i+1] == '"' || after[i+1] == '\\') {
					i++
				}
				val.WriteByte(after[i])
			}
			if i >= len(after) {
				return 0, "", nil, false // unterminated
			}
			after = after[i+1:]
		} else {
			v, _, _ := strings.Cut(after, " ")
			val.WriteString(v)
			after = after[len(v):]
		}
		kvs = append(kvs, KV{key, val.String()})
		if after != "" && !strings.HasPrefix(after, " ") {
			return 0, "", nil, false
		}
		rest = strings.TrimPrefix(after, " ")
	}
	return parts[1][0], parts[2], kvs, true
}

// FuzzFormat: every record is one line from which a reader gets back the
// type, the id and every key=value: values exactly (line breaks read as
// blanks), ids and keys with their unsafe characters as '_'. No value can
// forge a second record.
func FuzzFormat(f *testing.F) {
	f.Add("7.srv", "jobname", "my job", "Resource_List.ncpus", "2")
	f.Add("7.srv", "comment", `say "hi"`, "exec_host", "n1/0*2+n2/0")
	f.Add("7.srv", "x=1 \n12/21/2024 17:58:09;E;99.srv;user=root Exit_status=0 resources_used.cput", "1", "jobname", "a\nb=c")
	f.Add("8.srv;E", "path", `x \`, "k", "\r\n")
	f.Fuzz(func(t *testing.T, id, k1, v1, k2, v2 string) {
		if k1 == "" || k2 == "" {
			t.Skip("the server never writes an empty key")
		}
		kvs := []KV{{"user", "alice"}, {k1, v1}, {k2, v2}, {"run_count", "1"}}
		line := Format(time.Date(2024, 12, 21, 17, 58, 9, 0, time.UTC), Ended, id, kvs)
		if ref := formatReference(time.Date(2024, 12, 21, 17, 58, 9, 0, time.UTC), Ended, id, kvs); line != ref {
			t.Fatalf("record %q, the reference writes %q", line, ref)
		}
		kind, gotID, got, ok := parseRecord(line)
		if !ok || kind != Ended || gotID != fieldSafe.Replace(id) || len(got) != len(kvs) {
			t.Fatalf("record %q does not read back (%v %q %q)", line, ok, gotID, got)
		}
		for i := range kvs {
			want := KV{keySafe.Replace(kvs[i].Key), lineBreaks.Replace(kvs[i].Value)}
			if got[i] != want {
				t.Fatalf("record %q: field %d reads as %q, want %q", line, i, got[i], want)
			}
		}
		// The readers' own parser (Split, EachKV) reads it the same.
		l, err := Split([]byte(line), time.UTC)
		if err != nil || l.Kind != Ended || string(l.ID) != gotID {
			t.Fatalf("Split(%q): %+v %v", line, l, err)
		}
		n := 0
		var scratch []byte
		err = EachKV(l.Body, &scratch, func(k, v []byte) error {
			if n >= len(got) || (KV{string(k), string(v)}) != got[n] {
				return fmt.Errorf("field %d reads as %q=%q", n, k, v)
			}
			n++
			return nil
		})
		if err != nil || n != len(got) {
			t.Fatalf("EachKV of %q: %v (%d fields)", line, err, n)
		}
	})
}

// FuzzSplit: any line is a record or an error, never a panic; a record's
// body is read by EachKV or refused.
func FuzzSplit(f *testing.F) {
	f.Add([]byte("12/21/2024 18:28:15;E;1.s;user=a run_count=1 "))
	f.Add([]byte(`12/21/2024 18:28:15;Q;1.s;a="x \" y" b='{}'`))
	f.Add([]byte(";;;"))
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := Split(line, time.UTC)
		if err != nil {
			return
		}
		var scratch []byte
		EachKV(l.Body, &scratch, func(k, v []byte) error {
			if len(k) == 0 {
				t.Fatalf("an empty key from %q", line)
			}
			return nil
		})
	})
}

// formatReference is Format as first written, every field through its
// replacer: the fast paths must write the same bytes.
func formatReference(at time.Time, kind byte, id string, kvs []KV) string {
	var b strings.Builder
	b.WriteString(at.Format("01/02/2006 15:04:05"))
	b.WriteByte(';')
	b.WriteByte(kind)
	b.WriteByte(';')
	b.WriteString(fieldSafe.Replace(id))
	b.WriteByte(';')
	for i, kv := range kvs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(keySafe.Replace(kv.Key))
		b.WriteByte('=')
		v := lineBreaks.Replace(kv.Value)
		if strings.ContainsAny(v, ` "\`) {
			v = `"` + quoted.Replace(v) + `"`
		}
		b.WriteString(v)
	}
	if kind != Ended {
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	return b.String()
}
