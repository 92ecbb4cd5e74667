package fifo

import (
	"sort"

	"github.com/gopbs/gopbs/sched/core"
	"github.com/gopbs/gopbs/sched/formula"
)

// byFormula orders jobs by sched_config's job_sort_formula, highest value
// first, as OpenPBS sorts: the formula comes before fair share and the
// sort keys, which only order jobs of equal value (jobs arrive sorted by
// the keys; the sort is stable). With fair share on, each run of equal
// values is ordered through the share tree as it would be without a
// formula. Values are worked out once per cycle, so a job started in the
// cycle does not change the others' (OpenPBS: "calculated once at the
// start of the cycle").
func byFormula(cx *Context, f *formula.Expr, jobs []*core.Job, fairShare bool) {
	vals := formulaValues(cx, f, jobs)
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	sorted := make([]*core.Job, len(jobs))
	for i, k := range idx {
		sorted[i] = jobs[k]
	}
	copy(jobs, sorted)
	if !fairShare {
		return
	}
	for i := 0; i < len(idx); {
		k := i + 1
		for k < len(idx) && vals[idx[k]] == vals[idx[i]] {
			k++
		}
		if k-i > 1 {
			copy(jobs[i:k], cx.Inputs.Standing.Order(jobs[i:k], expectedUsage))
		}
		i = k
	}
}

// formulaValues evaluates the formula for each job.
func formulaValues(cx *Context, f *formula.Expr, jobs []*core.Job) []float64 {
	vars := f.Vars()
	in := make([]float64, len(vars))
	out := make([]float64, len(jobs))
	owners := map[string]*ownerTerms{}
	for i, j := range jobs {
		for k, v := range vars {
			in[k] = termValue(cx, v, j, owners)
		}
		out[i] = f.Eval(in)
	}
	return out
}

// ownerTerms are a fair-share entity's terms, worked out once a cycle.
type ownerTerms struct{ perc, treeUsage, factor float64 }

// termValue is the value of one formula input for job j.
func termValue(cx *Context, v formula.Var, j *core.Job, owners map[string]*ownerTerms) float64 {
	switch v.Term {
	case formula.Resource:
		x, _ := j.RequestNumber(v.Resource)
		return v.FromRequest(x)
	case formula.EligibleTime:
		if cx.World.Server.EligibleTimeEnable {
			// OpenPBS's: the eligible time the job has accrued.
			return j.EligibleAt(cx.World.Now).Seconds()
		}
		// The server keeps no eligible time: the time since the job
		// last became eligible (etime) stands for it.
		since := j.Etime
		if since.IsZero() {
			since = j.Qtime
		}
		return max(0, cx.World.Now.Sub(since).Seconds())
	case formula.QueuePriority:
		if q := cx.World.Queue(j.Queue); q != nil {
			return float64(q.Priority)
		}
		return 0
	case formula.JobPriority:
		return float64(j.Priority)
	case formula.AccrueType:
		return float64(j.Accrue)
	}
	st := cx.Inputs.Standing
	if st == nil {
		return 0 // no fair-share standing: the policy keeps none
	}
	o := owners[j.Owner]
	if o == nil {
		g := st.Group(j.Owner)
		o = &ownerTerms{perc: g.Percentage, treeUsage: st.TreeUsage(g), factor: st.FormulaFactor(j.Owner)}
		owners[j.Owner] = o
	}
	switch v.Term {
	case formula.FairsharePerc:
		return o.perc
	case formula.FairshareTreeUsage:
		return o.treeUsage
	}
	return o.factor
}
