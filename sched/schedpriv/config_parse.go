package schedpriv

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/sched/formula"
)

// ParseConfig reads a sched_config. name is used in messages only.
//
// On success it returns the configuration, whose Warnings hold findings that
// did not stop it from being used. Otherwise it returns a nil *Config and an
// Errors listing every problem in the file ("name:line: message"), so that a
// scheduler keeps its previous configuration instead of running a
// half-understood one.
func ParseConfig(r io.Reader, name string) (*Config, error) {
	p := configParser{
		rep:   report{file: name},
		cfg:   NewConfig(),
		opts:  optionIndex(),
		names: OptionNames(),
		lines: map[string]*[2]int{},
	}
	eachLine(r, &p.rep, p.line)
	p.check()
	if err := p.rep.err(); err != nil {
		return nil, err
	}
	p.cfg.Warnings = p.rep.warnings
	return p.cfg, nil
}

type configParser struct {
	rep  report
	cfg  *Config
	opts map[string]option
	// names are the known option names in a fixed order, for suggesting
	// the closest one to an unknown name.
	names []string
	// lines remembers where each option was last set, per side ([0] prime,
	// [1] non-prime; options without a suffix use [0]), so that the
	// cross-option checks can point at the line to change.
	lines map[string]*[2]int
	// keyLine is the first key line per side, for the warning about keys
	// that no multi_sort uses.
	keyLine [2]int
}

// Which settings a line applies to: the optional third word.
type primeSel int

const (
	selAll primeSel = iota
	selPrime
	selNonPrime
	selNone
)

// parsePrimeSel reads the third word in any case. non-prime is the admin
// guide's spelling, non_prime the sample file's; both work.
func parsePrimeSel(s string) (primeSel, bool) {
	switch strings.ToLower(s) {
	case "all":
		return selAll, true
	case "prime":
		return selPrime, true
	case "non_prime", "non-prime":
		return selNonPrime, true
	case "none":
		return selNone, true
	}
	return 0, false
}

type token struct {
	text   string
	quoted bool
}

// splitOptionLine cuts "name[:] value [prime|non_prime|all|none]". The name
// ends at ':' or white space (so the colon is optional, as in PBS). A value
// in double quotes may contain white space (OpenPBS writes
// resources: "ncpus, mem"). A word starting with '#' ends the line.
func splitOptionLine(line string) (name string, words []token, err error) {
	s := strings.TrimLeft(line, " \t\v\f\r")
	i := 0
	for i < len(s) && s[i] != ':' && !isBlank(s[i]) {
		i++
	}
	name, s = s[:i], s[i:]
	// Allow "name : value" as well as "name: value" and "name value".
	s = strings.TrimLeft(s, " \t\v\f\r")
	if strings.HasPrefix(s, ":") {
		s = s[1:]
	}
	for {
		s = strings.TrimLeft(s, " \t\v\f\r")
		if s == "" || s[0] == '#' {
			return name, words, nil
		}
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return name, words, fmt.Errorf("unterminated quoted value")
			}
			words = append(words, token{text: s[1 : 1+end], quoted: true})
			s = s[2+end:]
			if s != "" && !isBlank(s[0]) {
				return name, words, fmt.Errorf("text right after a closing quote")
			}
			continue
		}
		j := 0
		for j < len(s) && !isBlank(s[j]) {
			j++
		}
		words = append(words, token{text: s[:j]})
		s = s[j:]
	}
}

func (p *configParser) line(n int, line string) {
	if isComment(line) {
		return
	}
	name, words, err := splitOptionLine(line)
	if name == "" {
		p.rep.errorf(n, "missing option name")
		return
	}
	if err != nil {
		p.rep.errorf(n, "%s: %v", name, err)
		return
	}
	opt, ok := p.opts[name]
	if !ok {
		if near := closest(name, p.names); near != "" {
			p.rep.errorf(n, "unknown option %q; did you mean %s?", name, near)
		} else {
			p.rep.errorf(n, "unknown option %q", name)
		}
		return
	}
	if opt.ignored {
		p.rep.warnf(n, "%s is an OpenPBS option this scheduler does not implement; ignored", name)
		return
	}
	if opt.obsolete {
		p.rep.warnf(n, "%s is an option of the old scheduler that means nothing now (%s); ignored", name, opt.hint)
		return
	}
	if len(words) == 0 {
		p.rep.errorf(n, "%s: missing value", name)
		return
	}
	// OpenPBS quotes "resource HIGH"; accept it unquoted too, since the
	// direction word can never be a prime suffix.
	if opt.twoWord && len(words) >= 2 && !words[0].quoted {
		if d := strings.ToUpper(words[1].text); d == "HIGH" || d == "LOW" {
			words = append([]token{{text: words[0].text + " " + words[1].text}}, words[2:]...)
		}
	}
	value := words[0].text
	sel := selAll
	if len(words) > 1 {
		s, ok := parsePrimeSel(words[1].text)
		if !ok && opt.spaced && !words[0].quoted {
			p.rep.errorf(n, "%s: a value with white space goes in double quotes (%s: \"%s ...\")", name, name, value)
			return
		}
		if !ok {
			p.rep.errorf(n, "%s: %q is not prime, non_prime, all or none", name, words[1].text)
			return
		}
		sel = s
	}
	if len(words) > 2 {
		p.rep.errorf(n, "%s: unexpected %q after the value", name, words[2].text)
		return
	}
	canon := opt.name
	if opt.aliasOf != "" {
		canon = opt.aliasOf
	}
	at := p.lines[canon]
	if at == nil {
		at = new([2]int)
		p.lines[canon] = at
	}

	if opt.setS == nil { // an option without a prime suffix
		if sel == selPrime || sel == selNonPrime {
			p.rep.errorf(n, "%s has no prime/non-prime setting", name)
			return
		}
		target := p.cfg
		if sel == selNone {
			// Applied to neither, but still checked: a bad value is a
			// mistake whatever the suffix.
			target = NewConfig()
		}
		if err := opt.setC(target, value); err != nil {
			p.rep.errorf(n, "%s: %v", name, err)
			return
		}
		if sel != selNone {
			at[0] = n
		}
		return
	}

	apply, err := opt.setS(value)
	if err != nil {
		p.rep.errorf(n, "%s: %v", name, err)
		return
	}
	if sel == selAll || sel == selPrime {
		apply(&p.cfg.Prime)
		at[0] = n
	}
	if sel == selAll || sel == selNonPrime {
		apply(&p.cfg.NonPrime)
		at[1] = n
	}
	if canon == "key" {
		for side, on := range [2]bool{sel == selAll || sel == selPrime, sel == selAll || sel == selNonPrime} {
			if on && p.keyLine[side] == 0 {
				p.keyLine[side] = n
			}
		}
	}
}

// check applies the rules that involve more than one option. They name the
// line that switched the feature on, which is where an admin looks first.
func (p *configParser) check() {
	c := p.cfg
	sides := [2]*Settings{&c.Prime, &c.NonPrime}
	sideName := [2]string{"prime", "non-prime"}
	lineOf := func(opt string, side int) int {
		if at := p.lines[opt]; at != nil {
			return at[side]
		}
		return 0
	}
	reported := map[string]bool{}
	once := func(key string) bool {
		if reported[key] {
			return false
		}
		reported[key] = true
		return true
	}
	if lineOf("half_life", 0) == 0 && lineOf("fairshare_decay_time", 0) != 0 {
		// OpenPBS's option stands in for the classic one: the default
		// half_life must not override what the file says.
		c.HalfLife = 0
	}
	for i, s := range sides {
		if s.FairShare {
			if iv, _ := c.Decay(); iv <= 0 && once("fair_share") {
				p.rep.errorf(lineOf("fair_share", i), "fair_share is on but half_life is 0: usage could never decay; set half_life (or fairshare_decay_time) to a positive time")
			}
		}
		if s.HelpStarvingJobs && c.MaxStarve <= 0 && once("help_starving_jobs") {
			p.rep.errorf(lineOf("help_starving_jobs", i), "help_starving_jobs is on but max_starve is 0: every queued job would be starving; set max_starve to a positive time")
		}
		if s.SortBy == MultiSort && len(s.Keys) == 0 {
			p.rep.errorf(lineOf("sort_by", i), "sort_by multi_sort in %s time needs key lines for %s time", sideName[i], sideName[i])
		}
		if s.SortBy != MultiSort && len(s.Keys) > 0 {
			p.rep.warnf(p.keyLine[i], "key lines for %s time are unused: sort_by is %s there, not multi_sort", sideName[i], s.SortBy)
		}
	}
	if f := c.JobSortFormula; f != nil && f.UsesFairshare() {
		// The formula's fair-share terms make the scheduler count usage
		// whether or not fair_share is on, and usage must decay.
		if iv, _ := c.Decay(); iv <= 0 && !c.FairShareAny() {
			p.rep.errorf(lineOf("job_sort_formula", 0), "job_sort_formula reads the fair-share standing but half_life is 0: usage could never decay; set half_life (or fairshare_decay_time) to a positive time")
		}
	}
	if c.HalfLife > 0 && c.FairshareDecayTime > 0 && c.HalfLife != c.FairshareDecayTime {
		p.rep.warnf(lineOf("fairshare_decay_time", 0), "both half_life and fairshare_decay_time are set; half_life (%s) is used", formatDuration(c.HalfLife))
	}
}

// parseBool accepts true or false in any case and nothing else: the classic
// parser took any other word (no, off, a typo) as true, which silently turns
// features on.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (true or false)", s)
}

// parseCount reads a non-negative decimal integer.
func parseCount(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	v, err := strconv.ParseInt(s, 10, 0)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int(v), nil
}

// parseBackfillDepth reads backfill_depth: a positive number of jobs, or
// all (any case) for the whole queue. 0 is refused with a pointer to
// backfill: false, the one way to turn backfilling off.
func parseBackfillDepth(s string) (int, error) {
	if strings.EqualFold(s, "all") {
		return BackfillDepthAll, nil
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a positive number of jobs or all", s)
	}
	n, err := parseCount(s)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("0 jobs: to turn backfilling off write backfill: false; backfill_depth takes a positive number of jobs or all")
	}
	return n, nil
}

func parseName(s string) (string, error) {
	if !validName(s) {
		return "", fmt.Errorf("%q is not a valid name (no white space, quotes or commas)", s)
	}
	return s, nil
}

// parseFilterPath reads a filter program's path: absolute, since the
// scheduler runs filters from /, and without control characters or
// commas (queues list filters comma-separated).
func parseFilterPath(s string) (string, error) {
	if !strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("%q is not an absolute path", s)
	}
	if strings.ContainsAny(s, ",\x00\n\r") {
		return "", fmt.Errorf("%q contains a comma or a control character", s)
	}
	return s, nil
}

// parseNameList reads OpenPBS's comma-separated lists ("ncpus, mem").
func parseNameList(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.Trim(part, " \t")
		if part == "" {
			continue
		}
		if !validName(part) {
			return nil, fmt.Errorf("%q is not a valid resource name", part)
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

// parseFormula reads job_sort_formula, naming the closest known term
// when the formula uses an unknown one.
func parseFormula(s string) (*formula.Expr, error) {
	f, err := formula.Parse(s)
	var fe *formula.Error
	if errors.As(err, &fe) && fe.Name != "" {
		if near := closest(fe.Name, formula.Names()); near != "" {
			return nil, fmt.Errorf("%w; did you mean %s?", err, near)
		}
	}
	return f, err
}

func parseDecayFactor(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f >= 1 {
		return 0, fmt.Errorf("%q is not a number between 0 and 1 (exclusive)", s)
	}
	return f, nil
}
