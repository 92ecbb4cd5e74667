package mom

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MomConfig is mom_priv/config: initialisation directives ($name value)
// and static resources (name value) reported verbatim.
type MomConfig struct {
	IdealLoad float64 // -1 when unset
	MaxLoad   float64 // -1 when unset
	// Resources are the static "name value" lines.
	Resources map[string]string
	// Rcp is $rcpcmd: the scp program a staged file on a host that runs
	// no pbs_mom is copied with ("" when such hosts are refused).
	Rcp string
	// StageTimeout is $stage_timeout: how long a staging copy may make no
	// progress before it fails (0: the default, a minute).
	StageTimeout time.Duration
	// Warnings name lines that were understood but ignored.
	Warnings []string
}

// knownIgnored are directives of OpenPBS and Torque moms this mom accepts
// without acting on them.
var knownIgnored = map[string]bool{
	"$clienthost": true, "$pbsserver": true, "$restricted": true, "$logevent": true,
	"$cputmult": true, "$wallmult": true, "$usecp": true, "$timeout": true, "$tmpdir": true,
	"$prologalarm": true, "$enforce": true, "$alps_client": true, "$checkpoint_path": true,
}

// ParseMomConfig reads mom_priv/config. Blank lines and # comments are
// skipped; a malformed line is an error naming its number.
func ParseMomConfig(r io.Reader) (*MomConfig, error) {
	c := &MomConfig{IdealLoad: -1, MaxLoad: -1, Resources: map[string]string{}}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		name, value, _ := strings.Cut(text, " ")
		if i := strings.IndexByte(text, '\t'); i >= 0 && (i < len(name)) {
			name, value = text[:i], text[i+1:]
		}
		value = strings.TrimSpace(value)
		if value == "" {
			return nil, fmt.Errorf("line %d: %q has no value", line, text)
		}
		switch {
		case name == "$ideal_load" || name == "$max_load":
			f, err := strconv.ParseFloat(value, 64)
			if err != nil || f < 0 {
				return nil, fmt.Errorf("line %d: %s %q is not a non-negative number", line, name, value)
			}
			if name == "$ideal_load" {
				c.IdealLoad = f
			} else {
				c.MaxLoad = f
			}
		case name == "$rcpcmd":
			// PBS moms take any rcp-like command here; this one runs
			// only scp, with the options it needs (batch mode, timeouts).
			prog, _, _ := strings.Cut(value, " ")
			if !strings.HasPrefix(prog, "/") || filepath.Base(prog) != "scp" {
				return nil, fmt.Errorf("line %d: $rcpcmd %q: want the absolute path of scp", line, value)
			}
			if prog != value {
				c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: $rcpcmd arguments are ignored: scp runs with -B -q -p and batch-mode timeouts", line))
			}
			c.Rcp = prog
		case name == "$stage_timeout":
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 || n > 86400 {
				return nil, fmt.Errorf("line %d: $stage_timeout %q is not a number of seconds from 1 to 86400", line, value)
			}
			c.StageTimeout = time.Duration(n) * time.Second
		case strings.HasPrefix(name, "$"):
			if !knownIgnored[name] {
				return nil, fmt.Errorf("line %d: unknown directive %s", line, name)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: %s is accepted but has no effect", line, name))
		case strings.HasPrefix(value, "!"):
			c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: shell escapes (%s) are not run", line, name))
		default:
			c.Resources[name] = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Setting ideal_load alone also sets max_load (reference §6).
	if c.IdealLoad >= 0 && c.MaxLoad < 0 {
		c.MaxLoad = c.IdealLoad
	}
	if c.MaxLoad >= 0 && c.IdealLoad > c.MaxLoad {
		return nil, fmt.Errorf("$ideal_load %g is above $max_load %g", c.IdealLoad, c.MaxLoad)
	}
	return c, nil
}
