package stage

import (
	"strings"
	"testing"
)

func TestParseCpRule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want CpRule
		err  string
	}{
		{"head:/home /nfs/home", CpRule{"head", "/home", "/nfs/home"}, ""},
		{"*.Example.org:/data/ /mnt/data", CpRule{"*.example.org", "/data", "/mnt/data"}, ""},
		{"*:/ /", CpRule{"*", "/", "/"}, ""},
		{"head:/home", CpRule{}, "want host:/from /to"},
		{"/home /nfs", CpRule{}, "is not host:/path"},
		{"head:home /nfs", CpRule{}, "absolute"},
		{"head:/home nfs", CpRule{}, "absolute"},
		{"a*b:/x /y", CpRule{}, "wildcard"},
		{"u@h:/x /y", CpRule{}, "is not host:/path"},
	} {
		got, err := ParseCpRule(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseCpRule(%q) = %+v, %v; want error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCpRule(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestTranslateCp(t *testing.T) {
	t.Parallel()
	rules := []CpRule{
		{"head", "/home", "/nfs/home"},
		{"*.example.org", "/data", "/mnt/data"},
		{"*", "/scratch", "/scratch"},
	}
	for _, tt := range []struct {
		host, file string
		want       string
		ok         bool
	}{
		{"head", "/home/u/in.dat", "/nfs/home/u/in.dat", true},
		{"HEAD.example.org", "/home/u/in.dat", "/nfs/home/u/in.dat", true}, // short name of a rule without domain
		{"head", "/homework/x", "", false},                                 // whole path elements only
		{"head", "/home", "/nfs/home", true},
		{"other", "/home/u/in.dat", "", false},
		{"fs1.example.org", "/data/a/../b", "/mnt/data/b", true},
		{"example.org", "/data/b", "", false},
		{"anyhost", "/scratch/j/out", "/scratch/j/out", true},
		{"head", "rel/path", "", false},
	} {
		got, ok := TranslateCp(rules, tt.host, tt.file)
		if got != tt.want || ok != tt.ok {
			t.Errorf("TranslateCp(%s:%s) = %q, %v; want %q, %v", tt.host, tt.file, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := TranslateCp([]CpRule{{"*", "/", "/local"}}, "h", "/a/b"); !ok || got != "/local/a/b" {
		t.Errorf("root prefix: %q %v", got, ok)
	}
}

// FuzzParseCpRule: a rule that parses maps its own prefix, and anything
// under it, into its destination, and never maps a relative path.
func FuzzParseCpRule(f *testing.F) {
	f.Add("head:/home /nfs/home", "u/in.dat")
	f.Add("*.example.org:/ /mnt", "x")
	f.Fuzz(func(t *testing.T, v, rest string) {
		r, err := ParseCpRule(v)
		if err != nil {
			return
		}
		host := r.Host
		if strings.HasPrefix(host, "*") {
			host = "h" + host[1:]
		}
		if got, ok := TranslateCp([]CpRule{r}, host, r.From); !ok || got != r.To {
			t.Fatalf("%+v maps its own prefix to %q, %v", r, got, ok)
		}
		if _, ok := TranslateCp([]CpRule{r}, host, rest); ok && !strings.HasPrefix(rest, "/") {
			t.Fatalf("%+v maps relative %q", r, rest)
		}
		if got, ok := TranslateCp([]CpRule{r}, host, r.From+"/"+rest); ok && !strings.HasPrefix(got, r.To) {
			t.Fatalf("%+v maps %q outside its destination: %q", r, rest, got)
		}
	})
}
