package mom

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/vnodedef"

	"github.com/gopbs/gopbs/internal/stage"
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
	// UseCp are the $usecp lines, in order: files of those hosts and
	// prefixes are local files here (stage.CpRule).
	UseCp []stage.CpRule
	// TmpDir is $tmpdir: where each job's TMPDIR is made ("" for the
	// system's temporary directory).
	TmpDir string
	// CputMult and WallMult are $cputmult and $wallmult: the factors by
	// which this host's cpu time and wall time count (1 when unset), in
	// resources_used and, for the walltime, against the job's limit.
	CputMult float64
	WallMult float64
	// PrologAlarm is $prologalarm: how long the prologue and the
	// epilogue may each run before they are killed (0: the default, 30
	// seconds).
	PrologAlarm time.Duration
	// PBSServer are the $pbsserver names; the mom checks that they name
	// its server (PBS_SERVER in pbs.conf).
	PBSServer []string
	// NodeCheck is the node health check: $node_check_script and
	// $node_check_interval (see nodecheck.go).
	NodeCheck NodeCheckConfig
	// GPUs is $gpus: the GPUs this mom hands out, overriding discovery
	// (see gpus.go).
	GPUs GPUSetting
	// Checkpoint is $action checkpoint_abort: the site's program that
	// checkpoints a job here so that a preemption may requeue it (see
	// checkpoint.go); no Path when there is none.
	Checkpoint CheckpointAction
	// Vnodes are what mom_priv/config.d defines: this host's vnodes and
	// its own (natural) node's overrides, in the order first named
	// (configd.go). Not from mom_priv/config itself.
	Vnodes []*vnodedef.Vnode
	// Warnings name lines that were understood but ignored.
	Warnings []string
}

// knownIgnored are directives of OpenPBS and Torque moms this mom accepts
// without acting on them, each with the reason it gives: none asks for
// something a job would miss.
var knownIgnored = map[string]string{
	"$clienthost":      "every peer of this mom needs the cluster key; host lists add nothing",
	"$restricted":      "this mom answers no resource-monitor queries",
	"$logevent":        "the log level is pbs_mom's -log-level flag",
	"$timeout":         "connections have fixed bounds here; $stage_timeout bounds staging copies",
	"$alps_client":     "Cray ALPS is not supported",
	"$checkpoint_path": "checkpoint files are where the $action checkpoint_abort program puts them",
}

// floatDirectives are the directives whose value is one number.
var floatDirectives = map[string]struct {
	field func(*MomConfig) *float64
	ok    func(float64) bool
	want  string
}{
	"$ideal_load": {func(c *MomConfig) *float64 { return &c.IdealLoad }, nonNegative, "a non-negative number"},
	"$max_load":   {func(c *MomConfig) *float64 { return &c.MaxLoad }, nonNegative, "a non-negative number"},
	"$cputmult":   {func(c *MomConfig) *float64 { return &c.CputMult }, factor, "a factor above 0 (at most 1000)"},
	"$wallmult":   {func(c *MomConfig) *float64 { return &c.WallMult }, factor, "a factor above 0 (at most 1000)"},
}

func nonNegative(f float64) bool { return f >= 0 && !math.IsInf(f, 1) }
func factor(f float64) bool      { return f > 0 && f <= 1000 }

// refusedDirectives ask for something this mom does not do, which a job
// would miss: the mom refuses to start with them, saying so.
var refusedDirectives = map[string]string{
	"$enforce": "only walltime is enforced by the mom itself; memory limits are enforced with cgroups (mom_priv/cgroups), cpu time limits not at all",
}

// DefaultMomConfig is the configuration of a mom without mom_priv/config.
func DefaultMomConfig() *MomConfig {
	return &MomConfig{IdealLoad: -1, MaxLoad: -1, Resources: map[string]string{}, CputMult: 1, WallMult: 1,
		NodeCheck: NodeCheckConfig{Every: 1}}
}

// ParseMomConfig reads mom_priv/config. Blank lines and # comments are
// skipped; a malformed line is an error naming its number.
func ParseMomConfig(r io.Reader) (*MomConfig, error) {
	c := DefaultMomConfig()
	sc := bufio.NewScanner(r)
	line := 0
	intervalLine := 0 // of $node_check_interval
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
		case floatDirectives[name].field != nil:
			d := floatDirectives[name]
			f, err := strconv.ParseFloat(value, 64)
			if err != nil || !d.ok(f) {
				return nil, fmt.Errorf("line %d: %s %q is not %s", line, name, value, d.want)
			}
			*d.field(c) = f
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
		case name == "$usecp":
			r, err := stage.ParseCpRule(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			c.UseCp = append(c.UseCp, r)
		case name == "$prologalarm":
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 || n > 86400 {
				return nil, fmt.Errorf("line %d: $prologalarm %q is not a number of seconds from 1 to 86400", line, value)
			}
			c.PrologAlarm = time.Duration(n) * time.Second
		case name == "$tmpdir":
			if !filepath.IsAbs(value) {
				return nil, fmt.Errorf("line %d: $tmpdir %q is not an absolute path", line, value)
			}
			c.TmpDir = filepath.Clean(value)
		case name == "$gpus":
			g, err := parseGPUSetting(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			c.GPUs = g
		case name == "$action":
			a, ok, err := parseAction(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if !ok {
				c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: $action %s is ignored: only checkpoint_abort is run (a preemption's checkpoint)", line, strings.Fields(value)[0]))
				continue
			}
			c.Checkpoint = a
		case name == "$pbsserver":
			c.PBSServer = append(c.PBSServer, value)
		case name == "$node_check_script":
			if !filepath.IsAbs(value) {
				return nil, fmt.Errorf("line %d: $node_check_script %q is not an absolute path", line, value)
			}
			c.NodeCheck.Script = filepath.Clean(value)
		case name == "$node_check_interval":
			every, start, end, err := parseNodeCheckInterval(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			c.NodeCheck.Every, c.NodeCheck.JobStart, c.NodeCheck.JobEnd = every, start, end
			intervalLine = line
		case strings.HasPrefix(name, "$"):
			if why, ok := refusedDirectives[name]; ok {
				return nil, fmt.Errorf("line %d: %s is not supported: %s", line, name, why)
			}
			why, ok := knownIgnored[name]
			if !ok {
				return nil, fmt.Errorf("line %d: unknown directive %s", line, name)
			}
			c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: %s is ignored: %s", line, name, why))
		case strings.HasPrefix(value, "!"):
			c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: shell escapes (%s) are not run", line, name))
		default:
			c.Resources[name] = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if intervalLine > 0 && c.NodeCheck.Script == "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: $node_check_interval does nothing without $node_check_script", intervalLine))
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
