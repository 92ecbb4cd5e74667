package accounting

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEachKV: values bare, double-quoted with escapes (what
// Format writes) and single-quoted (what OpenPBS writes).
func TestEachKV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string // key, value, key, value...
		err  string
	}{
		{`a=1 b=x`, []string{"a", "1", "b", "x"}, ""},
		{`  a=1    b=  `, []string{"a", "1", "b", ""}, ""},
		{`a="x y" b="say \"hi\"" c="c:\\d\e"`, []string{"a", "x y", "b", `say "hi"`, "c", `c:\d\e`}, ""},
		{`d='{}' e='x f=it's'`, []string{"d", "'{}'", "e", "'x", "f", "it's'"}, ""},
		{`a=b=c`, []string{"a", "b=c"}, ""},
		{`a="x`, nil, "a: unterminated quoted value"},
		{`a="x\"`, nil, "a: unterminated quoted value"},
		{`a="x"y`, nil, "a: text after the closing quote"},
		{`novalue b=1`, nil, `want key=value, got "novalue"`},
		{`=1`, nil, `want key=value, got "=1"`},
		{`a"b=1`, nil, `want key=value`},
	}
	for _, tc := range tests {
		var got []string
		var scratch []byte
		err := EachKV([]byte(tc.in), &scratch, func(k, v []byte) error {
			got = append(got, string(k), string(v))
			return nil
		})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

// Split reads the frame of a record, with or without OpenPBS's trailing
// blank, and names what is wrong with a line that is not one.
func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, kind, id, body, err string
	}{
		{"12/21/2024 18:28:15;E;1.s;user=a run_count=1", "E", "1.s", "user=a run_count=1", ""},
		{"12/21/2024 18:28:15;Q;1.s;queue=workq \n", "Q", "1.s", "queue=workq", ""},
		{"12/21/2024 18:00:00;L;license;floating license hour:0", "L", "license", "floating license hour:0", ""},
		{"12/21/2024 18:28:15;E;1.s", "E", "1.s", "", ""},
		{"12/21/2024;E", "", "", "", "not an accounting record"},
		{"12/21/2024 18:28:15;EE;1.s;a=b", "", "", "", "not an accounting record"},
		{"21/12/2024 18:28:15;E;1.s;a=b", "", "", "", `bad date "21/12/2024 18:28:15"`},
		{"garbage", "", "", "", "not an accounting record"},
	}
	for _, tc := range tests {
		l, err := Split([]byte(tc.in), time.UTC)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(l.Kind) != tc.kind || string(l.ID) != tc.id || string(l.Body) != tc.body || l.At.Hour() != 18 && tc.kind != "" {
			t.Errorf("%q: %+v %v", tc.in, l, err)
		}
	}
}

// A free-text record (OpenPBS's A) is one line, whatever its text holds,
// and reads back through Split.
func TestFormatText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 8, 1, 2, 3, 0, time.UTC)
	line := FormatText(at, Aborted, "7.s;x", "Job deleted: dependency afterok:6.s\ncan never be met")
	if line != "12/08/2026 01:02:03;A;7.s_x;Job deleted: dependency afterok:6.s can never be met\n" {
		t.Fatalf("FormatText: %q", line)
	}
	l, err := Split([]byte(line), time.UTC)
	if err != nil || l.Kind != Aborted || string(l.ID) != "7.s_x" || !strings.HasPrefix(string(l.Body), "Job deleted") {
		t.Errorf("Split: %+v %v", l, err)
	}
}
