package sched

import (
	"strconv"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/core"
)

// The edge between the wire and the pure core: status answers become a
// typed core.World once per cycle; nothing past here parses attribute
// strings again.

// NewWorld builds the core world from status answers (the live runner's
// edge; tests and tools with status objects of their own use it too).
// Resources are read as the built-ins alone.
func NewWorld(now time.Time, server proto.Status, queues, nodes, jobs []proto.Status) *core.World {
	js := make([]*core.Job, len(jobs))
	for i := range jobs {
		js[i] = NewCoreJob(jobs[i])
	}
	ns := make([]*core.Node, len(nodes))
	for i := range nodes {
		ns[i] = coreNode(nil, nodes[i])
	}
	return worldOf(nil, now, server, queues, ns, js)
}

// worldOf builds the world from statuses already converted where the
// runner converts them as they arrive (nodes, jobs).
// Resources' values are read as their types in rt.
func worldOf(rt *resc.Table, now time.Time, server proto.Status, queues []proto.Status, ns []*core.Node, jobs []*core.Job) *core.World {
	plain, res := split(server.Attrs)
	srv := &core.Server{
		Name: server.Name, Limits: coreLimits(plain), ResLimits: resLimits(rt, res, proto.AttrMaxUserRes, proto.AttrMaxGroupRes),
		Soft: softLimits(rt, plain, res), Ent: entityLimits(rt, plain, res, proto.AttrMaxRun, proto.AttrMaxRunRes), DefaultQueue: plain[proto.AttrDefaultQueue],
		ResourcesAvailable: amounts(rt, res[proto.AttrResourcesAvail]), ResourcesMax: amounts(rt, res[proto.AttrResourcesMax]),
		MaxWalltime:        durationOf(res[proto.AttrResourcesMax][proto.ResWalltime]),
		EligibleTimeEnable: plain[proto.AttrEligibleTimeEnable] == "True",
	}
	srv.BackfillDepth, srv.BackfillDepthSet = depthOf(plain)
	qs := make([]*core.Queue, 0, len(queues))
	for _, st := range queues {
		plain, res := split(st.Attrs)
		qs = append(qs, &core.Queue{
			Name: st.Name, Execution: plain[proto.AttrQueueTypeQ] == "Execution",
			Enabled: plain[proto.AttrEnabled] == "True", Started: plain[proto.AttrStarted] == "True",
			Priority: num(plain, proto.AttrQPriority, 0), Limits: coreLimits(plain), Soft: softLimits(rt, plain, res),
			Ent:                entityLimits(rt, plain, res, proto.AttrMaxRun, proto.AttrMaxRunRes),
			ResLimits:          resLimits(rt, res, proto.AttrMaxUserRes, proto.AttrMaxGroupRes),
			ResourcesAvailable: amounts(rt, res[proto.AttrResourcesAvail]), ResourcesMax: amounts(rt, res[proto.AttrResourcesMax]),
			MaxWalltime:       durationOf(res[proto.AttrResourcesMax][proto.ResWalltime]),
			ActivationFilters: model.SplitList(plain[proto.AttrActivationFilters]),
		})
		qs[len(qs)-1].BackfillDepth, qs[len(qs)-1].BackfillDepthSet = depthOf(plain)
	}
	return core.NewWorld(now, srv, qs, ns, expandArrays(jobs, ns))
}

// depthOf reads an object's backfill_depth, and whether it sets one.
func depthOf(plain map[string]string) (int, bool) {
	v, ok := plain[proto.AttrBackfillDepth]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return max(n, 0), err == nil
}

// expandArrays replaces each job array's parent by its subjobs that wait
// in its queued indices with nothing of their own, as many as could start
// this cycle: as many as the free cpus of the usable nodes hold, one more
// (the one backfilling may reserve for), and no more than
// max_run_subjobs allows beside those running. Subjobs that are jobs of
// their own (held alone, requeued, running) come from the server as jobs.
func expandArrays(jobs []*core.Job, nodes []*core.Node) []*core.Job {
	var parents []*core.Job
	for _, j := range jobs {
		if j.Attrs[proto.AttrArray] == "True" {
			parents = append(parents, j)
		}
	}
	if len(parents) == 0 {
		return jobs
	}
	free := 0.0
	for _, n := range nodes {
		if n.Up() {
			free += max(0, n.Avail[proto.ResNcpus]-n.Assigned[proto.ResNcpus])
		}
	}
	live := map[string]bool{}   // subjobs that are jobs of their own
	running := map[string]int{} // by array id
	for _, j := range jobs {
		if array := j.Attrs[proto.AttrArrayID]; array != "" {
			live[j.ID] = true
			if j.Running() {
				running[array]++
			}
		}
	}
	out := make([]*core.Job, 0, len(jobs))
	for _, j := range jobs {
		if j.Attrs[proto.AttrArray] != "True" {
			out = append(out, j)
			continue
		}
		if j.State != core.JobQueued && j.State != core.JobBegun || j.Holds != "" && j.Holds != "n" {
			continue // held or waiting: so are its waiting subjobs
		}
		waiting, err := model.ParseIndexSet(j.Attrs[proto.AttrArrayRemaining])
		if err != nil {
			continue // "-": none left
		}
		cpus := max(1, j.Totals[proto.ResNcpus])
		n := int(free/cpus) + 1
		if maxRun := int(num(j.Attrs, proto.AttrMaxRunSubjobs, 0)); maxRun > 0 {
			n = min(n, maxRun-running[j.ID])
		}
		prefix, suffix, _ := strings.Cut(j.ID, "[]")
		waiting.Each(func(i int) bool {
			if n <= 0 {
				return false
			}
			id := prefix + "[" + strconv.Itoa(i) + "]" + suffix
			if live[id] {
				return true
			}
			sub := *j
			sub.ID, sub.State, sub.FromArray = id, core.JobQueued, j.ID
			out = append(out, &sub)
			n--
			return true
		})
	}
	return out
}

func coreLimits(m map[string]string) core.Limits {
	return core.Limits{
		MaxRunning:  num(m, proto.AttrMaxRunning, -1),
		MaxUserRun:  num(m, proto.AttrMaxUserRun, -1),
		MaxGroupRun: num(m, proto.AttrMaxGroupRun, -1),
	}
}

func softLimits(rt *resc.Table, m map[string]string, res map[string]map[string]string) core.SoftLimits {
	return core.SoftLimits{
		MaxUserRun:  num(m, proto.AttrMaxUserRunSoft, 0),
		MaxGroupRun: num(m, proto.AttrMaxGroupRunSoft, 0),
		Res:         resLimits(rt, res, proto.AttrMaxUserResSoft, proto.AttrMaxGroupResSoft),
		Ent:         entityLimits(rt, m, res, proto.AttrMaxRunSoft, proto.AttrMaxRunResSoft),
	}
}

// entityLimits reads an entity limit of counts (run) and its _res form
// (runRes); a value this scheduler cannot read (a newer server's) is
// left out rather than read wrongly.
func entityLimits(rt *resc.Table, m map[string]string, res map[string]map[string]string, run, runRes string) core.EntityLimits {
	var l core.EntityLimits
	if v := m[run]; v != "" {
		l.Run, _ = entlim.Parse(v, model.EntityCount)
	}
	for r, v := range res[runRes] {
		if lim, err := entlim.Parse(v, model.EntityAmount(rt, r)); err == nil {
			if l.RunRes == nil {
				l.RunRes = map[string]entlim.Limits{}
			}
			l.RunRes[r] = lim
		}
	}
	return l
}

// resLimits reads per-user and per-group resource limits (nil when not
// set).
func resLimits(rt *resc.Table, res map[string]map[string]string, user, group string) core.ResLimits {
	var l core.ResLimits
	if m := res[user]; len(m) > 0 {
		l.User = amounts(rt, m)
	}
	if m := res[group]; len(m) > 0 {
		l.Group = amounts(rt, m)
	}
	return l
}

// amounts keeps the numeric values of a resource list.
func amounts(rt *resc.Table, m map[string]string) core.Amounts {
	out := core.Amounts{}
	for r, v := range m {
		if x, ok := rt.Number(r, v); ok {
			out[r] = x
		}
	}
	return out
}

func durationOf(v string) time.Duration {
	if v == "" {
		return 0
	}
	secs, err := resc.ParseDuration(v)
	if err != nil {
		return 0
	}
	return time.Duration(secs) * time.Second
}

func coreNode(rt *resc.Table, st proto.Status) *core.Node {
	plain, res := split(st.Attrs)
	avail := orEmpty(res[proto.AttrResourcesAvail])
	n := &core.Node{Name: st.Name, Host: avail[proto.ResHost], Arch: avail[proto.ResArch], Props: avail,
		Avail: core.Amounts{}, Assigned: amounts(rt, res[proto.AttrResourcesAssigned]), IdealLoad: -1, MaxLoad: -1}
	for r, v := range avail {
		if rt.Consumable(r) {
			if x, ok := rt.Number(r, v); ok {
				n.Avail[r] = x
			}
		}
	}
	for _, s := range strings.Split(plain[proto.AttrNodeState], ",") {
		switch s {
		case model.NodeOffline:
			n.State |= core.NodeOffline
		case model.NodeDown, model.NodeStale:
			n.State |= core.NodeDown
		case model.NodeUnknown:
			n.State |= core.NodeUnknown
		case model.NodeJobBusy:
			n.State |= core.NodeJobBusy
		case model.NodeBusy:
			n.State |= core.NodeBusy
		}
	}
	n.Loadave, _ = strconv.ParseFloat(plain[proto.AttrNodeLoadave], 64)
	if v, err := strconv.ParseFloat(plain[proto.AttrNodeMaxLoad], 64); err == nil {
		n.MaxLoad = v
	}
	if v, err := strconv.ParseFloat(plain[proto.AttrNodeIdealLoad], 64); err == nil {
		n.IdealLoad = v
	}
	n.TimeShared = plain[proto.AttrNodeSharing] == "force_shared" || plain[proto.AttrNodeNtype] == "time-shared"
	return n
}

// NewCoreJob decodes one job's status into the core's typed job, its
// resources read as the built-ins alone.
func NewCoreJob(st proto.Status) *core.Job { return newCoreJob(nil, st) }

// newCoreJob decodes one job's status, its resources read as their types
// in rt.
func newCoreJob(rt *resc.Table, st proto.Status) *core.Job {
	plain, res := split(st.Attrs)
	state := core.JobState('?')
	if v := plain[proto.AttrJobState]; v != "" {
		state = core.JobState(v[0])
	}
	rl := orEmpty(res[proto.AttrResourceList])
	j := &core.Job{
		ID: st.Name, Name: plain[proto.AttrJobName], Owner: plain[proto.AttrEuser], Group: plain[proto.AttrEgroup],
		Account: plain[proto.AttrAccountName], Project: plain[proto.AttrProject], Queue: plain[proto.AttrQueue], State: state,
		Priority: num(plain, proto.AttrPriority, 0), Holds: plain[proto.AttrHoldTypes],
		Qtime: unixOf(plain[proto.AttrQtime]), Etime: unixOf(plain[proto.AttrEtime]), Stime: unixOf(plain[proto.AttrStime]),
		HoldUntil: unixOf(plain[proto.AttrHoldUntil]),
		Comment:   plain[proto.AttrComment],
		Attrs:     plain,
		Accrue:    uint8(num(plain, proto.AttrAccrueType, 0)),
		Eligible:  durationOf(plain[proto.AttrEligibleTime]),
	}
	if j.Owner == "" {
		j.Owner, _, _ = strings.Cut(plain[proto.AttrJobOwner], "@")
	}
	if plain[proto.AttrStagein] != "" {
		// The substate says how far an early stage-in got (OpenPBS's
		// numbers: STAGEIN 14 copying, STAGECMP 16 done).
		j.StageIn, j.StageNode = core.StageInNeeded, plain[proto.AttrStageinNode]
		switch plain[proto.AttrSubstate] {
		case strconv.Itoa(model.SubStageIn):
			j.StageIn = core.StagingIn
		case strconv.Itoa(model.SubStageCmp):
			j.StageIn = core.StagedIn
		}
	}
	if ref, ok := model.ParseJobRef(j.ID); ok {
		j.Seq = ref.Seq
	}
	// Preemption: suspended by the scheduler (it holds nothing), on its
	// way off its nodes, and what a preemption may do to it.
	switch plain[proto.AttrSubstate] {
	case strconv.Itoa(model.SubSchedSusp):
		j.Released = state == core.JobSuspended
	case strconv.Itoa(model.SubRerun):
		j.Ending = true
	}
	j.Rerunable = plain[proto.AttrRerunable] == "True" && plain[proto.AttrInteractive] != "True"
	j.NoCheckpoint = strings.HasPrefix(plain[proto.AttrCheckpoint], "n")
	pairs := make([]resc.Pair, 0, len(rl))
	for name, v := range rl {
		pairs = append(pairs, resc.Pair{Name: name, Value: v})
	}
	if req, err := rt.ParseRequest(pairs); err == nil {
		j.Select, j.Place, j.Totals, j.Numbers = req.Select, req.Place, req.Totals, req.Numbers
		j.Walltime = time.Duration(req.Walltime()) * time.Second
		if v, stf := req.Numbers[proto.ResMinWalltime]; stf {
			j.MinWalltime = max(time.Duration(v)*time.Second, time.Second) // min_walltime=0: any
		}
		j.MaxWalltime = time.Duration(req.Numbers[proto.ResMaxWalltime]) * time.Second
	} else {
		// A request the server stored but this scheduler cannot read
		// (a newer server): the job is left out of placement, with
		// nothing to place, rather than placed wrongly.
		j.Totals, j.Numbers = core.Amounts{}, core.Amounts{}
	}
	used := res[proto.AttrResourcesUsed]
	j.UsedCPU = durationOf(used["cput"])
	j.UsedWall = durationOf(used["walltime"])
	if v, ok := resc.Number("mem", used["mem"]); ok {
		j.UsedMem = int64(v)
	}
	if len(st.Alloc) > 0 {
		j.Where = chunksHeld(rt, st.Alloc)
	} else if v := plain[proto.AttrExecVnode]; v != "" {
		j.Where = chunksOf(rt, v) // a server that sends no typed allocation
	}
	if j.Select.Elastic() >= 0 {
		// Resource_List's totals are the range's maximum (what the
		// job may hold); limits count what it holds, or its minimum
		// while it waits.
		j.Numbers = j.At(j.Holding()).Numbers
	}
	return j
}

func unixOf(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0)
}

// chunksOf reads an exec_vnode "(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)".
func chunksOf(rt *resc.Table, execVnode string) []core.Chunk {
	var out []core.Chunk
	for _, p := range resc.SplitExecVnode(execVnode) {
		node, spec := p.Node, p.Spec
		if node == "" {
			continue
		}
		c := rt.NewChunk(1, nil)
		if spec != "" {
			if sel, err := rt.ParseSelect("1:" + spec); err == nil && len(sel) == 1 {
				c = sel[0]
			}
		}
		out = append(out, core.Chunk{Node: node, Chunk: c})
	}
	return out
}

// chunksHeld reads a job's typed allocation (proto.Status.Alloc): each
// chunk's node and what it takes there, typed by rt.
func chunksHeld(rt *resc.Table, alloc []proto.Held) []core.Chunk {
	out := make([]core.Chunk, 0, len(alloc))
	for _, h := range alloc {
		pairs := make([]resc.Pair, len(h.Resources))
		for i, r := range h.Resources {
			pairs[i] = resc.Pair{Name: r.Name, Value: r.Value}
		}
		out = append(out, core.Chunk{Node: h.Vnode, Chunk: rt.NewChunk(1, pairs)})
	}
	return out
}

// ExecVnode renders a placement as the server reads it: one
// "(node:amounts)" part per chunk, in order.
func ExecVnode(where []core.Chunk) string {
	parts := make([]string, len(where))
	for i, c := range where {
		parts[i] = "(" + c.Node + ":" + place.ChunkText(c.Chunk) + ")"
	}
	return strings.Join(parts, "+")
}

// BaseJobAttrs are the job attributes every world carries: what the
// core.Job fields need. A policy that reads others (core.Job.Attrs) names
// them in Options.JobAttrs; fetching fewer attributes is what keeps a
// world of 100,000 jobs fast.
var BaseJobAttrs = []string{
	proto.AttrJobOwner, proto.AttrEuser, proto.AttrEgroup, proto.AttrJobState, proto.AttrQueue,
	proto.AttrPriority, proto.AttrQtime, proto.AttrComment, proto.AttrResourceList,
	proto.AttrStime, proto.AttrExecVnode, proto.AttrHoldTypes, proto.AttrHoldUntil,
	proto.AttrResourcesUsed, proto.AttrStagein, proto.AttrStageinNode, proto.AttrSubstate,
	proto.AttrArray, proto.AttrArrayRemaining, proto.AttrMaxRunSubjobs, proto.AttrArrayID,
	proto.AttrRerunable, proto.AttrCheckpoint, proto.AttrInteractive,
	proto.AttrProject, // project limits (max_run [p:...])
	proto.AttrAccrueType, proto.AttrEligibleTime,
}

// nodeAttrs are the node attributes a snapshot asks for.
var nodeAttrs = []string{
	proto.AttrNodeState, proto.AttrResourcesAvail, proto.AttrResourcesAssigned,
	proto.AttrNodeLoadave, proto.AttrNodeMaxLoad, proto.AttrNodeIdealLoad, proto.AttrNodeNtype, proto.AttrNodeSharing,
}

// split sorts a status object's attributes into plain ones and resource
// lists.
func split(attrs []proto.Attr) (plain map[string]string, res map[string]map[string]string) {
	plain = make(map[string]string, len(attrs))
	res = map[string]map[string]string{}
	for _, a := range attrs {
		if a.Resource == "" {
			plain[a.Name] = a.Value
			continue
		}
		m := res[a.Name]
		if m == nil {
			m = map[string]string{}
			res[a.Name] = m
		}
		m[a.Resource] = a.Value
	}
	return plain, res
}

func num(m map[string]string, name string, def int64) int64 {
	v, ok := m[name]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// resvStates are the server's reservation states a policy acts on.
var resvStates = map[proto.ResvState]core.ResvState{
	proto.ResvUnconfirmed: core.ResvUnconfirmed, proto.ResvConfirmed: core.ResvConfirmed,
	proto.ResvRunning: core.ResvRunning, proto.ResvDegraded: core.ResvDegraded,
	proto.ResvBeingAltered: core.ResvAltered, proto.ResvBeingDeleted: core.ResvEnding,
}

// coreResvs reads reservations from their status objects (those whose
// state is none a policy acts on are left out).
func coreResvs(rt *resc.Table, sts []proto.Status) []*core.Resv {
	var out []*core.Resv
	for _, st := range sts {
		plain, res := split(st.Attrs)
		state, ok := proto.ParseResvState(plain[proto.AttrResvState])
		if !ok {
			continue
		}
		r := &core.Resv{ID: st.Name, Queue: plain[proto.AttrQueue], Owner: plain[proto.AttrResvOwner],
			Maintenance: strings.HasPrefix(st.Name, "M")}
		if r.State, ok = resvStates[state]; !ok {
			continue
		}
		sel, err := rt.ParseSelect(res[proto.AttrResourceList][proto.ResSelect])
		if err != nil {
			continue
		}
		r.Select, r.Totals = sel, sel.Sums()
		r.Place, _ = resc.ParsePlace(res[proto.AttrResourceList][proto.ResPlace])
		if at, err := strconv.ParseInt(plain[proto.AttrResvRetry], 10, 64); err == nil && at > 0 {
			r.RetryAt = time.Unix(at, 0)
		}
		secs, _ := strconv.ParseInt(plain[proto.AttrResvDuration], 10, 64)
		r.Duration = time.Duration(secs) * time.Second
		occ, ok := model.ParseOccurrences(plain[proto.AttrResvOccurrences])
		if !ok || len(occ) == 0 {
			continue
		}
		for _, o := range occ {
			r.Occurrences = append(r.Occurrences, core.Occurrence{Start: time.Unix(o.Start, 0), Where: chunksOf(rt, o.Nodes)})
		}
		out = append(out, r)
	}
	return out
}
