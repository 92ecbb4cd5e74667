package config

import (
	"bufio"
	"errors"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var lineErr = regexp.MustCompile(`^line ([0-9]+): `)

// FuzzParse feeds arbitrary pbs.conf contents to Parse and resolves what
// it accepts as LoadEnv does. Properties: an error names a line of the
// input; accepted settings written back as KEY="VALUE" lines parse to the
// same settings; CRLF line ends change nothing; and a resolved
// configuration has an absolute PBS_HOME, ports in 1-65535 and a known
// personality, or a non-empty error naming the offending key.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"PBS_HOME=/var/spool/pbs\nPBS_EXEC=/opt/pbs\nPBS_SERVER=head.example.org\nPBS_START_SERVER=1\n",
		"# comment\n\n  PBS_SERVER = \"head\" \nPBS_EXEC='/opt/pbs'\n",
		"PBS_BATCH_SERVICE_PORT=17001\nPBS_MOM_SERVICE_PORT=0\n",
		"PBS_SCHEDULER_SERVICE_PORT=+15004\r\nPBS_PERSONALITY=Torque\r\n",
		"PBS_HOME=relative/home\nPBS_PERSONALITY=slurm\n",
		"A=b=c\nA=\"\"\nB='\nC=\"x'\n",
		"PBS_HOME\n",
		"=x\n",
		"\xef\xbb\xbfPBS_HOME=/bom\n",
		"PBS_SERVER_METRICS=127.0.0.1:9101\nPBS_SCHED_METRICS=:9102\nPBS_MOM_METRICS=[::1]:9103\n",
		"PBS_SERVER_METRICS=9101\nPBS_MOM_METRICS=host:0\nPBS_SCHED_METRICS=h:+1\n",
		"PBS_WEB=:8080\nPBS_WEB_PROXY_HEADER=X-Remote-User\nPBS_WEB_PROXY_UID=33\nPBS_WEB_PROXY_ADDR=10.0.0.5\n",
		"PBS_WEB_PROXY_HEADER=X-U\nPBS_WEB_PROXY_UID=www-data\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, conf string) {
		vals, err := Parse(strings.NewReader(conf))
		if errors.Is(err, bufio.ErrTooLong) {
			return // a line over 64 KB: the scanner's own error
		}
		if err != nil {
			m := lineErr.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q does not name a line", err)
			}
			n, _ := strconv.Atoi(m[1])
			if lines := strings.Count(conf, "\n") + 1; n < 1 || n > lines {
				t.Fatalf("error %q names a line of a %d-line file", err, lines)
			}
			return
		}

		crlf, err := Parse(strings.NewReader(strings.ReplaceAll(conf, "\n", "\r\n")))
		if err != nil || !reflect.DeepEqual(crlf, vals) {
			t.Fatalf("with CRLF line ends: %v, %v; with LF: %v", crlf, err, vals)
		}

		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k + `="` + vals[k] + "\"\n")
		}
		again, err := Parse(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("settings %q written back do not parse: %v\n%s", vals, err, b.String())
		}
		if !reflect.DeepEqual(again, vals) {
			t.Fatalf("settings changed when written back:\nfirst  %q\nsecond %q", vals, again)
		}

		c, err := resolve("/etc/pbs.conf", vals)
		if err != nil {
			named := false
			for _, k := range []string{KeyHome, KeyBatchPort, KeyMomPort, KeySchedPort, KeyPersonality, KeySendmail, KeyServerMetrics, KeySchedMetrics, KeyMomMetrics, KeyWeb, KeyWebProxyHeader, KeyWebProxyAddr, KeyWebProxyUID} {
				named = named || strings.Contains(err.Error(), k)
			}
			if !named {
				t.Fatalf("error %q names no setting", err)
			}
			return
		}
		if !filepath.IsAbs(c.Home) {
			t.Fatalf("PBS_HOME %q is not absolute", c.Home)
		}
		for _, p := range []int{c.BatchPort, c.MomPort, c.SchedPort} {
			if p < 1 || p > 65535 {
				t.Fatalf("port %d accepted from %q", p, vals)
			}
		}
		for _, a := range []string{c.ServerMetrics, c.SchedMetrics, c.MomMetrics} {
			if a == "" {
				continue
			}
			_, p, err := net.SplitHostPort(a)
			if n, _ := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				t.Fatalf("metrics address %q accepted from %q", a, vals)
			}
		}
		if (c.WebProxyHeader != "") != (len(c.WebProxyAddrs) > 0 || c.WebProxySocket != "") {
			t.Fatalf("a proxy header without a proxy, or the reverse: %+v", c)
		}
		if c.Personality != PBSPro && c.Personality != Torque {
			t.Fatalf("personality %q accepted", c.Personality)
		}
		if c.Server == "" || c.MomNodeName == "" {
			t.Fatalf("empty server or node name: %+v", c)
		}
	})
}
