package mom

import (
	"strings"
	"testing"
)

func TestParseMomConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		ideal     float64
		max       float64
		resources map[string]string
		err       string
	}{
		{"empty", "", -1, -1, map[string]string{}, ""},
		{"loads and statics", "# comment\n$ideal_load 1.5\n$max_load 2\ntape3480 4\nscratch\t100gb\n", 1.5, 2, map[string]string{"tape3480": "4", "scratch": "100gb"}, ""},
		{"ideal sets max", "$ideal_load 3\n", 3, 3, map[string]string{}, ""},
		{"ignored directives", "$clienthost head\n$logevent 0x1ff\n", -1, -1, map[string]string{}, ""},
		{"bad load", "$max_load high\n", 0, 0, nil, "line 1"},
		{"unknown directive", "$frobnicate 1\n", 0, 0, nil, "unknown directive $frobnicate"},
		{"no value", "tape3480\n", 0, 0, nil, "no value"},
		{"ideal above max", "$ideal_load 4\n$max_load 2\n", 0, 0, nil, "above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseWant(t, tt.in, tt.err)
			if c == nil {
				return
			}
			if c.IdealLoad != tt.ideal || c.MaxLoad != tt.max || len(c.Resources) != len(tt.resources) {
				t.Fatalf("got %+v", c)
			}
			for k, v := range tt.resources {
				if c.Resources[k] != v {
					t.Errorf("%s = %q, want %q", k, c.Resources[k], v)
				}
			}
		})
	}
}

// parseWant parses in as mom_priv/config. With wantErr it fails t unless
// the error says so, and returns nil.
func parseWant(t *testing.T, in, wantErr string) *MomConfig {
	t.Helper()
	c, err := ParseMomConfig(strings.NewReader(in))
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseMemAndLoad(t *testing.T) {
	t.Parallel()
	mem, err := parseMemTotal(strings.NewReader("MemTotal:       24519904 kB\nMemFree: 1 kB\n"))
	if err != nil || mem != 24519904*1024 {
		t.Fatalf("mem %d %v", mem, err)
	}
	if _, err := parseMemTotal(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Error("missing MemTotal accepted")
	}
	l, err := parseLoadavg("0.52 0.58 0.59 1/467 12345\n")
	if err != nil || l != 0.52 {
		t.Fatalf("load %v %v", l, err)
	}
}

func FuzzParseMomConfig(f *testing.F) {
	f.Add("$ideal_load 1\n$max_load 2\nfoo bar\n")
	f.Add("$rcpcmd /usr/bin/scp\n$stage_timeout 30\n")
	f.Add("$usecp h:/a /b\n$tmpdir /t\n$wallmult 2\n$cputmult 0.5\n$pbsserver h\n")
	f.Add("$prologalarm 5\n")
	f.Add("$action checkpoint_abort 60 !/c %jobid %sid\n$action restart 5 /r\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseMomConfig(strings.NewReader(s))
		if err == nil && c.MaxLoad >= 0 && c.IdealLoad > c.MaxLoad {
			t.Fatalf("ideal %g above max %g accepted", c.IdealLoad, c.MaxLoad)
		}
	})
}
