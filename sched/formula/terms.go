package formula

import (
	"math"
	"slices"

	"github.com/gopbs/gopbs/resc"
)

// Term is what a name in a formula stands for.
type Term uint8

// The terms of OpenPBS's job_sort_formula.
const (
	// Resource is a numeric Resource_List value (Var.Resource names it).
	Resource Term = iota
	// EligibleTime is how long the job has been eligible to run, in
	// seconds: the eligible_time it accrued while the server's
	// eligible_time_enable is True, else the time since its etime.
	EligibleTime
	// QueuePriority is the priority of the job's queue.
	QueuePriority
	// JobPriority is the job's Priority attribute.
	JobPriority
	// FairsharePerc is the share of the machine the job's fair-share
	// entity has in the resource_group tree, between 0 and 1.
	FairsharePerc
	// FairshareTreeUsage is the entity's usage as a fraction of the
	// machine's, its groups' usage blended in along the tree, between 0
	// and 1: higher is less deserving.
	FairshareTreeUsage
	// FairshareFactor is 2^-(fairshare_tree_usage / fairshare_perc),
	// between 0 and 1: 0.5 for an entity using exactly its share, higher
	// below it (0 when the entity has no share).
	FairshareFactor
	// AccrueType is the job's accrue_type (OpenPBS's numbers: 1
	// ineligible, 2 eligible; 0 while the server's eligible_time_enable
	// is off).
	AccrueType
)

// termNames maps each special name to its term. fair_share_perc is
// OpenPBS's older spelling of fairshare_perc.
var termNames = map[string]Term{
	"eligible_time":        EligibleTime,
	"queue_priority":       QueuePriority,
	"job_priority":         JobPriority,
	"fairshare_perc":       FairsharePerc,
	"fair_share_perc":      FairsharePerc,
	"fairshare_tree_usage": FairshareTreeUsage,
	"fairshare_factor":     FairshareFactor,
	"accrue_type":          AccrueType,
}

// Fairshare reports whether the term reads the fair-share standing, which
// needs the users' usage to be counted.
func (t Term) Fairshare() bool {
	return t == FairsharePerc || t == FairshareTreeUsage || t == FairshareFactor
}

// Var is one input of a formula: a term, or a resource by name.
type Var struct {
	Term     Term
	Resource string // for Resource only
	// kb: the resource is a size, counted in kilobytes as in OpenPBS.
	kb bool
}

// FromRequest converts a Resource_List value as the scheduler holds it
// (bytes for sizes, seconds for times) to the formula's unit.
func (v Var) FromRequest(x float64) float64 {
	if v.kb {
		return x / 1024
	}
	return x
}

// function is a callable of the math module.
type function struct {
	min, max int // arguments; max -1: any number from min
	fn       func(args []float64) float64
}

func one(f func(float64) float64) function {
	return function{min: 1, max: 1, fn: func(a []float64) float64 { return f(a[0]) }}
}

var functions = map[string]function{
	"abs":   one(math.Abs),
	"fabs":  one(math.Abs),
	"ceil":  one(math.Ceil),
	"floor": one(math.Floor),
	"sqrt":  one(math.Sqrt),
	"exp":   one(math.Exp),
	"log2":  one(math.Log2),
	"log10": one(math.Log10),
	"log": {min: 1, max: 2, fn: func(a []float64) float64 {
		if len(a) == 2 {
			return math.Log(a[0]) / math.Log(a[1])
		}
		return math.Log(a[0])
	}},
	"pow": {min: 2, max: 2, fn: func(a []float64) float64 { return math.Pow(a[0], a[1]) }},
	"min": {min: 2, max: -1, fn: func(a []float64) float64 { return slices.Min(a) }},
	"max": {min: 2, max: -1, fn: func(a []float64) float64 { return slices.Max(a) }},
}

var constants = map[string]float64{"pi": math.Pi, "e": math.E}

// resolve says what a name stands for: a term or a numeric built-in
// resource, or why it cannot be used (unknown: the name means nothing
// here, as opposed to a known name that is not a number).
func resolve(name string) (v Var, why string, unknown bool) {
	if t, ok := termNames[name]; ok {
		return Var{Term: t}, "", false
	}
	if resc.Known(name) {
		switch resc.Lookup(name).Type {
		case resc.TypeLong, resc.TypeFloat, resc.TypeDuration:
			return Var{Term: Resource, Resource: name}, "", false
		case resc.TypeSize:
			return Var{Term: Resource, Resource: name, kb: true}, "", false
		}
		return Var{}, name + " is not a numeric resource", false
	}
	return Var{}, "unknown term " + quoteName(name), true
}

// Names lists every name a formula may use (terms, numeric resources,
// constants, functions), sorted: the vocabulary for suggestions.
func Names() []string {
	var out []string
	for n := range termNames {
		out = append(out, n)
	}
	for n := range functions {
		out = append(out, n)
	}
	for n := range constants {
		out = append(out, n)
	}
	for _, d := range resc.Builtin() {
		if _, why, _ := resolve(d.Name); why == "" {
			out = append(out, d.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
