package mom

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/proto"
)

// $usecp and the other mom_priv/config settings that change how a job's
// files and usage are handled here.

// applyUseCp rewrites the files of a job that $usecp makes local: a
// staged file of a matching host and prefix is copied here from or to
// its local path, and an output or error path becomes the local path
// the job's output is written to (mom_priv/config order, first match).
func applyUseCp(job *proto.MomJob, rules []stage.CpRule) {
	if len(rules) == 0 {
		return
	}
	for _, list := range [][]proto.StageFile{job.StageIn, job.StageOut} {
		for i := range list {
			f := &list[i]
			if p, ok := stage.TranslateCp(rules, f.Host, f.Remote); ok {
				f.Here, f.Remote = true, p
				f.Node, f.Addr, f.Token = "", "", nil
			}
		}
	}
	for _, p := range []*string{&job.OutputPath, &job.ErrorPath} {
		host, file, ok := strings.Cut(*p, ":")
		if !ok || strings.Contains(host, "/") {
			continue
		}
		if local, ok := stage.TranslateCp(rules, host, file); ok {
			*p = local
		}
	}
}

// useCpHosts are the host patterns of the $usecp rules, for the server's
// check of staging hosts at submission.
func useCpHosts(rules []stage.CpRule) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rules {
		if !seen[r.Host] {
			seen[r.Host] = true
			out = append(out, r.Host)
		}
	}
	return out
}

// checkMomConfig checks what mom_priv/config says against this host and
// pbs.conf: $tmpdir must be a directory, $pbsserver must name the server
// of PBS_SERVER (serverAddr is its host:port).
func checkMomConfig(c *MomConfig, serverAddr string) error {
	if c.TmpDir != "" {
		st, err := os.Stat(c.TmpDir)
		if err != nil || !st.IsDir() {
			return fmt.Errorf("$tmpdir %s is not a directory (%v)", c.TmpDir, err)
		}
	}
	server, _, err := net.SplitHostPort(serverAddr)
	if err != nil {
		server = serverAddr
	}
	for _, name := range c.PBSServer {
		if !stage.HostMatches(shortName(name), server) && !stage.HostMatches(shortName(server), name) {
			return fmt.Errorf("$pbsserver %s is not this mom's server %s (PBS_SERVER in pbs.conf)", name, server)
		}
	}
	return nil
}

func shortName(h string) string {
	s, _, _ := strings.Cut(h, ".")
	return s
}

// shepherd.Settings is what a job's shepherd takes from mom_priv/config.
func (m *Mom) shepherdSettings() shepherd.Settings {
	return shepherd.Settings{TmpDir: m.mc().TmpDir, WallMult: m.mc().WallMult, CputMult: m.mc().CputMult,
		PelogDir: filepath.Join(m.cfg.Home, "mom_priv"), PrologAlarm: int(m.mc().PrologAlarm / time.Second), Node: m.cfg.NodeName}
}

// scaleUsage applies $cputmult and $wallmult to usage reported to the
// server: this host's seconds in the site's reference seconds.
func (m *Mom) scaleUsage(u proto.Usage) proto.Usage {
	u.CPUSecs = shepherd.ScaleSecs(u.CPUSecs, m.mc().CputMult)
	u.WallSecs = shepherd.ScaleSecs(u.WallSecs, m.mc().WallMult)
	return u
}
