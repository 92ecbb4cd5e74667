package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr string
	}{
		{"empty", "", map[string]string{}, ""},
		{"comments and blanks", "# c\n\nPBS_HOME=/x\n", map[string]string{"PBS_HOME": "/x"}, ""},
		{"spaces and quotes", " PBS_SERVER = \"head\" \nPBS_EXEC='/opt/pbs'", map[string]string{"PBS_SERVER": "head", "PBS_EXEC": "/opt/pbs"}, ""},
		{"value with equals", "A=b=c", map[string]string{"A": "b=c"}, ""},
		{"no equals", "PBS_HOME\n", nil, "line 1"},
		{"empty key", "=x", nil, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestLoadEnvOverridesFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "pbs.conf")
	os.WriteFile(conf, []byte("PBS_HOME=/from/file\nPBS_SERVER=head.example.org\nPBS_BATCH_SERVICE_PORT=17001\n"), 0o644)
	env := map[string]string{KeyConfFile: conf, KeyBatchPort: "18001", KeyPersonality: "Torque"}
	c, err := LoadEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/from/file" || c.BatchPort != 18001 || c.ServerName() != "head" || c.Personality != Torque {
		t.Fatalf("got %+v", c)
	}
	if c.MomPort != DefaultMomPort || c.SchedPort != DefaultSchedPort {
		t.Fatalf("default ports not applied: %+v", c)
	}
	if c.Sendmail != DefaultSendmail {
		t.Fatalf("Sendmail %q, want the default %s", c.Sendmail, DefaultSendmail)
	}
	if c.ServerMetrics != "" || c.SchedMetrics != "" || c.MomMetrics != "" {
		t.Fatalf("metrics listeners on by default: %+v", c)
	}
	env[KeyMomMetrics] = "127.0.0.1:9103"
	os.WriteFile(conf, []byte("PBS_SERVER_METRICS=:9101\nPBS_SCHED_METRICS=[::1]:9102\nPBS_MOM_METRICS=0.0.0.0:1\n"), 0o644)
	if c, err = LoadEnv(func(k string) string { return env[k] }); err != nil || c.ServerMetrics != ":9101" || c.SchedMetrics != "[::1]:9102" || c.MomMetrics != "127.0.0.1:9103" {
		t.Fatalf("metrics listeners from the file and the environment: %+v, %v", c, err)
	}
	delete(env, KeyMomMetrics)
	os.WriteFile(conf, []byte("PBS_SENDMAIL=/opt/mail/sendmail\n"), 0o644)
	if c, err = LoadEnv(func(k string) string { return env[k] }); err != nil || c.Sendmail != "/opt/mail/sendmail" {
		t.Fatalf("PBS_SENDMAIL from the file: %+v, %v", c, err)
	}
	os.WriteFile(conf, []byte("PBS_PYTHON=/opt/python/bin/python3\n"), 0o644)
	if c, err = LoadEnv(func(k string) string { return env[k] }); err != nil || c.Python != "/opt/python/bin/python3" {
		t.Fatalf("PBS_PYTHON from the file: %+v, %v", c, err)
	}
}

func TestLoadEnvErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"missing explicit file", map[string]string{KeyConfFile: filepath.Join(dir, "nope")}, "pbs.conf"},
		{"bad port", map[string]string{KeyConfFile: "", KeyMomPort: "abc"}, KeyMomPort},
		{"port out of range", map[string]string{KeyBatchPort: "70000"}, KeyBatchPort},
		{"bad personality", map[string]string{KeyPersonality: "slurm"}, KeyPersonality},
		{"relative mailer", map[string]string{KeySendmail: "sendmail"}, KeySendmail},
		{"relative python", map[string]string{KeyPython: "python3"}, KeyPython},
		{"metrics without a port", map[string]string{KeyServerMetrics: "localhost"}, KeyServerMetrics},
		{"metrics port zero", map[string]string{KeySchedMetrics: "localhost:0"}, KeySchedMetrics},
		{"metrics port not a number", map[string]string{KeyMomMetrics: ":http"}, KeyMomMetrics},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadEnv(func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %s", err, tt.want)
			}
		})
	}
}

func TestWebKeys(t *testing.T) {
	ok := map[string]string{KeyWeb: "127.0.0.1:8080", KeyWebProxyHeader: "X-Remote-User", KeyWebProxyAddr: "10.0.0.5, 192.168.0.0/24,::1"}
	c, err := resolve("", ok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Web != "127.0.0.1:8080" || c.WebProxyHeader != "X-Remote-User" || len(c.WebProxyAddrs) != 3 ||
		c.WebProxyAddrs[0].String() != "10.0.0.5/32" || c.WebProxyAddrs[1].String() != "192.168.0.0/24" || c.WebProxyAddrs[2].String() != "::1/128" {
		t.Fatalf("resolved %+v", c)
	}
	if c, err := resolve("", map[string]string{}); err != nil || c.Web != "" || c.WebProxyHeader != "" || c.WebProxySocket != "" {
		t.Fatalf("unset: %+v %v", c, err)
	}
	// A proxy on this host: its uid, and the socket it connects to.
	c, err = resolve("", map[string]string{KeyHome: "/var/spool/pbs", KeyWeb: ":8080", KeyWebProxyHeader: "X-Remote-User", KeyWebProxyUID: "33"})
	if err != nil || c.WebProxyUID != 33 || c.WebProxySocket != "/var/spool/pbs/pbs_web.sock" || len(c.WebProxyAddrs) != 0 {
		t.Fatalf("PBS_WEB_PROXY_UID: %+v %v", c, err)
	}
	for _, bad := range []map[string]string{
		{KeyWeb: "8080"},
		{KeyWeb: "host:http"},
		{KeyWeb: "host:70000"},
		{KeyWebProxyHeader: "X-Remote-User"},
		{KeyWebProxyAddr: "127.0.0.1"},
		{KeyWebProxyHeader: "X Remote", KeyWebProxyAddr: "127.0.0.1"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyAddr: "proxy.example"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyAddr: " , "},
		{KeyWebProxyUID: "33"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyUID: "www-data"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyUID: "-1"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyUID: "4294967295"},
		{KeyWebProxyHeader: "X-User", KeyWebProxyUID: "4294967296"},
		{KeyWebHosts: "pbs.example.org:8080"},
		{KeyWebHosts: "*.example.org"},
	} {
		if _, err := resolve("", bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// PBS_WEB_HOSTS: names and addresses, no ports or wildcards; names as
// DNS compares them.
func TestParseHostList(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // joined with commas; "error" for a refusal
	}{
		{"", ""},
		{"pbs.example.org", "pbs.example.org"},
		{" PBS.Example.ORG. , head ,10.0.0.5, ::1 ,::ffff:10.0.0.6", "pbs.example.org,head,10.0.0.5,::1,10.0.0.6"},
		{"pbs_web.example", "pbs_web.example"},
		{",,", ""},
		{"pbs.example.org:8080", "error"},
		{"[::1]", "error"},
		{"*.example.org", "error"},
		{"a..b", "error"},
		{"bad host", "error"},
		{strings.Repeat("a", 64) + ".org", "error"},
		{"http://pbs.example.org", "error"},
	} {
		got, err := ParseHostList(tt.in)
		s := strings.Join(got, ",")
		if err != nil {
			s = "error"
		}
		if s != tt.want {
			t.Errorf("ParseHostList(%q) = %q (%v), want %q", tt.in, s, err, tt.want)
		}
	}
}

// ParseHostList never panics; what it gives parses again to itself.
func FuzzParseHostList(f *testing.F) {
	for _, s := range []string{"pbs.example.org", "A.b.,10.0.0.1", "::1,x", "a:1", "*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseHostList(s)
		if err != nil {
			return
		}
		again, err := ParseHostList(strings.Join(got, ","))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%q gave %q, which gives %q %v", s, got, again, err)
		}
	})
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		old  string
		set  map[string]string
		keys []string
		want string
	}{
		{"", map[string]string{KeyHome: "/h", KeyServer: "s"}, []string{KeyHome, KeyServer}, "PBS_HOME=/h\nPBS_SERVER=s\n"},
		{"# site\nPBS_WEB=:8080\nPBS_SERVER=old\n", map[string]string{KeyServer: "new", KeyHome: "/h"}, []string{KeyHome, KeyServer},
			"# site\nPBS_WEB=:8080\nPBS_SERVER=new\nPBS_HOME=/h\n"},
		{"PBS_SERVER=a\nPBS_SERVER = b\n", map[string]string{KeyServer: "c"}, []string{KeyServer}, "PBS_SERVER=c\n"},
		{"PBS_HOME=/h\n", map[string]string{}, nil, "PBS_HOME=/h\n"},
	}
	for _, tt := range tests {
		got := string(Update([]byte(tt.old), tt.set, tt.keys))
		if got != tt.want {
			t.Errorf("Update(%q, %v) =\n%q\nwant\n%q", tt.old, tt.set, got, tt.want)
		}
		// Updating again with the same keys changes nothing.
		if again := string(Update([]byte(got), tt.set, tt.keys)); again != got {
			t.Errorf("Update is not idempotent: %q then %q", got, again)
		}
	}
}
