package stage

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []Pair
	}{
		{"in.dat@n2:/data/in.dat", []Pair{{"in.dat", "n2", "/data/in.dat"}}},
		{" a@h:/x , b@h2.example.com:/y ", []Pair{{"a", "h", "/x"}, {"b", "h2.example.com", "/y"}}},
		{`-odd "q" name@n2:/tmp/-odd "q" name`, []Pair{{`-odd "q" name`, "n2", `/tmp/-odd "q" name`}}},
		{`a\,b@h:/c\,d`, []Pair{{"a,b", "h", "/c,d"}}},
		{"x@h:c:d", []Pair{{"x", "h", "c:d"}}},
	} {
		got, err := ParseList(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
		again, err := ParseList(FormatList(got))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("%q: formatted %q reads back as %+v, %v", tc.in, FormatList(got), again, err)
		}
	}
}

func TestParseListRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, why string }{
		{"", "empty list"},
		{"  ", "empty list"},
		{"a@h:/x,", "trailing comma"},
		{",a@h:/x", "empty item"},
		{"a@h:/x,,b@h:/y", "empty item"},
		{"nohost", "want local_file@host:remote_file"},
		{"a@h", "no ':'"},
		{"@h:/x", "no local file"},
		{"a@:/x", "no host"},
		{"a@h:", "no remote file"},
		{"a@h:/x@y", "more than one '@'"},
		{"a@h b:/x", "blank"},
		{"a\n@h:/x", "control character"},
		{"a@" + strings.Repeat("h", MaxHost+1) + ":/x", "host name longer"},
		{"a@h:/" + strings.Repeat("x", MaxPath), "file name longer"},
		{"a@h:/x\xff", "UTF-8"},
	} {
		_, err := ParseList(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.why)
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"a@h:/x", `a\,b@h:/c,d@e:f`, " x @ h : y ", "a@h:/x,", `-o "q"@n:/p`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := ParseList(s)
		if err != nil {
			return
		}
		if len(pairs) == 0 || len(pairs) > MaxItems {
			t.Fatalf("%q: %d pairs", s, len(pairs))
		}
		for _, p := range pairs {
			if p.Local == "" || p.Host == "" || p.Remote == "" || strings.ContainsAny(p.Host, "@: \t") {
				t.Fatalf("%q: bad pair %+v", s, p)
			}
		}
		// What the server stores reads back the same.
		again, err := ParseList(FormatList(pairs))
		if err != nil {
			t.Fatalf("%q: formatted %q: %v", s, FormatList(pairs), err)
		}
		if !reflect.DeepEqual(again, pairs) {
			t.Fatalf("%q: %+v read back as %+v", s, pairs, again)
		}
	})
}
