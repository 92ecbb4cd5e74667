package core

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"gopbs/internal/place"
	"gopbs/resc"
)

// Forever stands for "no known end": a running job without a walltime
// whose queue and server set no resources_max.walltime holds its
// resources until then.
var Forever = time.Unix(math.MaxInt64/4, 0)

var forever = Forever.Unix()

// Calendar is the time axis of a World: for every node that is up, the
// spans of time during which running jobs and reservations hold its
// resources, and windows (dedicated time) that only their own jobs may
// use. It answers where a job fits at a given time and the earliest time
// it fits, and takes reservations. Times are whole seconds.
//
// It is built once per cycle (NewCalendar) and belongs to that cycle.
type Calendar struct {
	now    int64
	nodes  []*calNode
	byName map[string]*calNode // nil for a few nodes: see node
	// cands are the place.Node views of nodes, in order (cands[i] is
	// nodes[i]); their Free maps are set per query. candsAt is the time
	// they were last set for: at now, a node without future spans shows
	// its freeNow map itself, so a placement now touches only the nodes
	// that have reservations ahead (future).
	cands   []*place.Node
	candsAt int64
	future  []int // indexes of nodes with spans starting after now
	cursor  int   // next fit for placements now
	// freeTotal sums freeNow over the nodes: a job asking for more in all
	// cannot start now, which PlaceAt says without a search.
	freeTotal Amounts
	blocks    []window
	// ends are every span end and window end after now, sorted and
	// unique: the times at which more may fit (built lazily).
	ends      []int64
	endsDirty bool
	maxWall   func(queue string) time.Duration
	// byHost groups the nodes by host, for place=exclhost (made when
	// first needed: hosts()).
	byHost map[string][]*calNode
	// deferred, when set, is a world whose running jobs (but those
	// placed exclusively) have no spans yet: its Assigned is exactly what
	// they hold (World.HeldByRunning), so what is free now comes from
	// Assigned, and the spans are needed only to look past now
	// (addDeferred).
	deferred *World
}

type window struct{ from, to int64 }

type calNode struct {
	index int // in Calendar.nodes
	node  *Node
	host  string
	cap   Amounts // what the node has (consumables)
	spans []span
	// freeNow is cap less every span holding now, kept current as spans
	// are added; future is set once a span starts after now (a
	// reservation), the only case where free over a window is less than
	// free now.
	freeNow Amounts
	future  bool
	// free and peak are freeOver's scratch maps; usage caches the amounts
	// in use at a moment (cleared when a span is added).
	free, peak Amounts
	usage      map[int64]Amounts
	// fall, while Earliest goes through the ends, follows the node's
	// usage when all its spans hold now (usageFall).
	fall *usageFall
}

type span struct {
	from, to int64
	amt      Amounts
}

// NewCalendar builds the calendar of w: every running job holds what it
// runs on from now until its start + walltime (a job past its walltime
// until a second from now; a job without one until its queue's or the
// server's resources_max.walltime after its start, else Forever).
// Resources assigned on a node that no running job accounts for are held
// Forever.
//
// The calendar of a world whose Assigned is exactly what its running jobs
// hold (World.HeldByRunning) takes what is free now from Assigned and adds
// the spans of running jobs that take only their chunks when a question
// first looks past now: a cycle that only starts jobs now (FCFS) then
// costs nothing per running job but a look at it.
func NewCalendar(w *World) *Calendar {
	c := &Calendar{now: w.Now.Unix(), candsAt: w.Now.Unix(), maxWall: w.MaxWalltime, freeTotal: Amounts{}}
	if len(w.Nodes) > fewNodes {
		c.byName = make(map[string]*calNode, len(w.Nodes))
	}
	// The nodes and their placement views, allocated together.
	calNodes := make([]calNode, 0, len(w.Nodes))
	views := make([]place.Node, 0, len(w.Nodes))
	c.nodes = make([]*calNode, 0, len(w.Nodes))
	c.cands = make([]*place.Node, 0, len(w.Nodes))
	for _, n := range w.Nodes {
		if !n.Up() {
			continue
		}
		// cap is read only: the node's own map serves.
		calNodes = append(calNodes, calNode{index: len(c.nodes), node: n, host: n.Host, cap: n.Avail, freeNow: n.Avail.Clone()})
		cn := &calNodes[len(calNodes)-1]
		if cn.host == "" {
			cn.host = n.Name
		}
		c.nodes = append(c.nodes, cn)
		if c.byName != nil {
			c.byName[n.Name] = cn
		}
		views = append(views, place.Node{Name: n.Name, Avail: n.Props, Free: cn.freeNow})
		c.cands = append(c.cands, &views[len(views)-1])
		for r, v := range n.Avail {
			c.freeTotal[r] += v
		}
	}
	var accounted map[string]Amounts // per node, what the spans added hold
	for _, j := range w.Jobs {
		if w.Ordered && j.Queued() {
			break // the rest are queued too
		}
		if !j.Running() || len(j.Where) == 0 {
			continue
		}
		if w.HeldByRunning && !j.Place.Exclusive() {
			c.deferred = w
			continue
		}
		end := c.expectedEnd(j)
		c.holdWhole(j, j.Where, c.now, end)
		for _, ch := range j.Where {
			amt := ch.Amounts()
			if !j.Place.Exclusive() {
				c.addSpan(ch.Node, span{from: c.now, to: end, amt: amt})
			}
			a := accounted[ch.Node]
			if accounted == nil {
				accounted = map[string]Amounts{}
			}
			if a == nil {
				a = Amounts{}
				accounted[ch.Node] = a
			}
			for r, v := range amt {
				a[r] += v
			}
		}
	}
	for _, cn := range c.nodes {
		if w.HeldByRunning {
			// The deferred jobs hold what Assigned has beyond the jobs
			// taken above.
			for r, v := range cn.node.Assigned {
				if d := v - accounted[cn.node.Name][r]; d != 0 {
					cn.freeNow[r] -= d
					c.freeTotal[r] -= d
				}
			}
			continue
		}
		rest := Amounts{}
		for r, v := range cn.node.Assigned {
			if d := v - accounted[cn.node.Name][r]; d > 0 {
				rest[r] = d
			}
		}
		if len(rest) > 0 {
			c.addSpan(cn.node.Name, span{from: c.now, to: forever, amt: rest})
		}
	}
	return c
}

// fewNodes is how many nodes a calendar finds by name without a map.
const fewNodes = 8

// node returns the calendar's node of that name (nil: none up).
func (c *Calendar) node(name string) *calNode {
	if c.byName != nil {
		return c.byName[name]
	}
	for _, cn := range c.nodes {
		if cn.node.Name == name {
			return cn
		}
	}
	return nil
}

// hosts groups the nodes by host.
func (c *Calendar) hosts() map[string][]*calNode {
	if c.byHost == nil {
		c.byHost = make(map[string][]*calNode, len(c.nodes))
		for _, cn := range c.nodes {
			c.byHost[cn.host] = append(c.byHost[cn.host], cn)
		}
	}
	return c.byHost
}

// addDeferred adds the spans of the running jobs NewCalendar deferred,
// before anything reads the spans. What they hold now is already taken
// from freeNow.
func (c *Calendar) addDeferred() {
	w := c.deferred
	if w == nil {
		return
	}
	c.deferred = nil
	for _, j := range w.Jobs {
		if w.Ordered && j.Queued() {
			break
		}
		if !j.Running() || len(j.Where) == 0 || j.Place.Exclusive() {
			continue
		}
		end := c.expectedEnd(j)
		for _, ch := range j.Where {
			if cn := c.node(ch.Node); cn != nil && end > c.now {
				cn.spans = append(cn.spans, span{from: c.now, to: end, amt: ch.Amounts()})
				clear(cn.usage)
			}
		}
	}
	c.endsDirty = true
}

// wallOf is how long j may run: its walltime, else its queue's or the
// server's resources_max.walltime; 0 when nothing bounds it.
func (c *Calendar) wallOf(j *Job) time.Duration {
	if j.Walltime > 0 {
		return j.Walltime
	}
	return c.maxWall(j.Queue)
}

// expectedEnd is when a running job will have released its resources.
func (c *Calendar) expectedEnd(j *Job) int64 {
	wall := c.wallOf(j)
	if wall <= 0 {
		return forever
	}
	start := j.Stime.Unix()
	if j.Stime.IsZero() {
		start = c.now
	}
	return max(start+int64(wall/time.Second), c.now+1)
}

// duration is how long a job would hold what it is given, in seconds.
func (c *Calendar) duration(j *Job) int64 {
	wall := c.wallOf(j)
	if wall <= 0 {
		return forever
	}
	return max(int64(wall/time.Second), 1)
}

func (c *Calendar) addSpan(node string, s span) {
	cn := c.node(node)
	if cn == nil || s.to <= s.from {
		return
	}
	cn.spans = append(cn.spans, s)
	// The usage cached at moments the span holds grows by it.
	for t, u := range cn.usage {
		if s.from <= t && t < s.to {
			for r, v := range s.amt {
				u[r] += v
			}
		}
	}
	if s.from <= c.now && s.to > c.now {
		for r, v := range s.amt {
			cn.freeNow[r] -= v
			c.freeTotal[r] -= v
		}
	}
	if s.from > c.now && !cn.future {
		cn.future = true
		c.future = append(c.future, cn.index)
	}
	c.endsDirty = true
}

// Add holds where from from to to: a job started now (Run), or a
// reservation for a job expected to start later.
func (c *Calendar) Add(where []Chunk, from, to time.Time) {
	f, t := max(from.Unix(), c.now), to.Unix()
	for _, ch := range where {
		c.addSpan(ch.Node, span{from: f, to: t, amt: ch.Amounts()})
	}
}

// holdWhole holds from from to to everything of the nodes an exclusive
// job takes on where (place=excl: those nodes; exclhost: every node of
// their hosts); it does nothing for other jobs.
func (c *Calendar) holdWhole(j *Job, where []Chunk, from, to int64) {
	if !j.Place.Exclusive() {
		return
	}
	held := map[*calNode]bool{}
	for _, ch := range where {
		cn := c.node(ch.Node)
		if cn == nil {
			continue
		}
		nodes := []*calNode{cn}
		if j.Place.Sharing == resc.SharingExclHost {
			nodes = c.hosts()[cn.host]
		}
		for _, n := range nodes {
			if !held[n] {
				held[n] = true
				c.addSpan(n.node.Name, span{from: from, to: to, amt: n.cap.Clone()})
			}
		}
	}
}

// hold holds where for j from from for as long as j may run.
func (c *Calendar) hold(j *Job, where []Chunk, from int64) {
	to := from + c.duration(j)
	if to < from { // overflow past Forever
		to = forever
	}
	if j.Place.Exclusive() {
		c.holdWhole(j, where, from, to)
		return
	}
	c.Add(where, time.Unix(from, 0), time.Unix(to, 0))
}

// Start records that j starts now on where, for as long as it may run.
func (c *Calendar) Start(j *Job, where []Chunk) { c.hold(j, where, c.now) }

// Reserve holds where for j from start for as long as it may run.
func (c *Calendar) Reserve(j *Job, start time.Time, where []Chunk) {
	c.hold(j, where, max(start.Unix(), c.now))
}

// Block keeps [from, to) for the jobs allowed in it (dedicated time): a
// placement that does not ignore blocks never overlaps it.
func (c *Calendar) Block(from, to time.Time) {
	if to.Unix() > c.now {
		c.blocks = append(c.blocks, window{from.Unix(), to.Unix()})
		c.endsDirty = true
	}
}

// blocked reports whether [from, to) overlaps a block.
func (c *Calendar) blocked(from, to int64) bool {
	for _, b := range c.blocks {
		if from < b.to && b.from < to {
			return true
		}
	}
	return false
}

// freeOver is what node cn has free during all of [from, to).
func (c *Calendar) freeOver(cn *calNode, from, to int64) Amounts {
	if from <= c.now && !cn.future {
		// Nothing starts later: usage only falls from now on.
		return cn.freeNow
	}
	// Usage peaks at from or where a span starts inside the window. Usage
	// at a moment is cached per node until its spans change; the result
	// is the node's own scratch map, valid until the next query about it.
	c.addDeferred()
	if len(cn.spans) == 0 {
		return cn.cap // nothing holds any of it, ever
	}
	if cn.free == nil {
		cn.free, cn.peak, cn.usage = Amounts{}, Amounts{}, map[int64]Amounts{}
	}
	if f := cn.fall; f != nil && f.at == from {
		// Earliest follows this node's usage: it is the fall's at from,
		// and only falls after.
		clear(cn.free)
		for r, v := range cn.cap {
			cn.free[r] = v - max(0, f.cur[r])
		}
		return cn.free
	}
	clear(cn.peak)
	peakWith := func(t int64) {
		u, ok := cn.usage[t]
		if !ok {
			u = Amounts{}
			for _, s := range cn.spans {
				if s.from <= t && t < s.to {
					for r, v := range s.amt {
						u[r] += v
					}
				}
			}
			cn.usage[t] = u
		}
		for r, v := range u {
			if v > cn.peak[r] {
				cn.peak[r] = v
			}
		}
	}
	peakWith(from)
	for _, s := range cn.spans {
		if s.from > from && s.from < to {
			peakWith(s.from)
		}
	}
	clear(cn.free)
	for r, v := range cn.cap {
		cn.free[r] = v - cn.peak[r]
	}
	return cn.free
}

// PlaceAt places j's chunks on nodes free during all of [at, at + its
// walltime), trying nodes in order (nil: the calendar's, with next fit
// for placements now). It reports false when j does not fit then.
func (c *Calendar) PlaceAt(j *Job, at time.Time, order []*Node, ignoreBlocks bool) ([]Chunk, bool) {
	from := max(at.Unix(), c.now)
	to := from + c.duration(j)
	if to < from { // overflow past Forever
		to = forever
	}
	if !ignoreBlocks && c.blocked(from, to) {
		return nil, false
	}
	if from == c.now && !c.freeTotal.Fits(j.Totals) {
		return nil, false // more than all nodes have free now together
	}
	cands := c.cands
	if order != nil {
		cands = make([]*place.Node, 0, len(order))
		for _, n := range order {
			if cn := c.node(n.Name); cn != nil {
				cands = append(cands, &place.Node{Name: n.Name, Avail: n.Props, Free: c.freeOver(cn, from, to)})
			}
		}
	} else {
		c.setFree(from, to)
	}
	if j.Place.Exclusive() {
		c.markIdle(cands, from, to)
	}
	start := 0
	if order == nil && from == c.now {
		start = c.cursor
	}
	p, last, err := place.ChunksFrom(j.Select, j.Place, cands, nil, start)
	if err != nil {
		return nil, false
	}
	if order == nil && from == c.now {
		c.cursor = last
	}
	out := make([]Chunk, len(p))
	for i, pc := range p {
		out[i] = Chunk{Node: pc.Node, Chunk: pc.Chunk}
	}
	return out, true
}

// markIdle sets, for an exclusive placement over [from, to), which
// candidates nothing holds any of (Idle) and which are on hosts nothing
// holds any node of (HostIdle).
func (c *Calendar) markIdle(cands []*place.Node, from, to int64) {
	idle := func(cn *calNode) bool {
		free := c.freeOver(cn, from, to)
		for r, v := range cn.cap {
			if free[r] < v {
				return false
			}
		}
		return true
	}
	hostIdle := map[string]bool{}
	for host, nodes := range c.hosts() {
		all := true
		for _, cn := range nodes {
			all = all && idle(cn)
		}
		hostIdle[host] = all
	}
	for _, nd := range cands {
		if cn := c.node(nd.Name); cn != nil {
			nd.Idle, nd.HostIdle = idle(cn), hostIdle[cn.host]
		}
	}
}

// setFree points every candidate's Free at what its node has free during
// [from, to). At now only the nodes with reservations ahead need work;
// the others show freeNow, which is kept current.
func (c *Calendar) setFree(from, to int64) {
	if from != c.now || c.candsAt != c.now {
		for i, cn := range c.nodes {
			c.cands[i].Free = c.freeOver(cn, from, to)
		}
		c.candsAt = from
		return
	}
	for _, i := range c.future {
		c.cands[i].Free = c.freeOver(c.nodes[i], from, to)
	}
}

// Earliest is the earliest time at or after from at which j fits, and
// where: from itself, or a moment at which a running job, a reservation
// or a blocked window ends. It reports false when j fits at none of them
// (it asks for more than the nodes that are up have).
func (c *Calendar) Earliest(j *Job, from time.Time, ignoreBlocks bool) (time.Time, []Chunk, bool) {
	f := max(from.Unix(), c.now)
	if where, ok := c.PlaceAt(j, time.Unix(f, 0), nil, ignoreBlocks); ok {
		return time.Unix(f, 0), where, true
	}
	// Each end is asked about on every node, in time order. On a node
	// whose spans all hold now (nothing reserved ahead), usage at a
	// later moment is what the spans still unended then hold: it is
	// worked out end by end, each span taken off once, instead of span by
	// span at every end.
	c.addDeferred()
	var falls []usageFall
	allFall := true
	for _, cn := range c.nodes {
		switch {
		case len(cn.spans) == 0:
		case cn.future:
			allFall = false
		default:
			falls = append(falls, newUsageFall(cn))
		}
	}
	for k := range falls {
		falls[k].cn.fall = &falls[k]
	}
	defer func() {
		for k := range falls {
			falls[k].cn.fall = nil
		}
	}()
	var ends []int64
	if allFall && len(falls) == 1 && len(c.blocks) == 0 {
		// One node holds every span: its fall has their ends in order.
		ends = falls[0].ends(c.now)
	} else {
		ends = c.endTimes()
	}
	i := sort.Search(len(ends), func(k int) bool { return ends[k] > f })
	// When every node's usage only falls, what all of them have free at
	// an end is known before placing: a job asking for more in all does
	// not fit then (as PlaceAt says of now).
	var capTotal Amounts
	if allFall && len(falls) > 0 {
		capTotal = Amounts{}
		for _, cn := range c.nodes {
			for r, v := range cn.cap {
				capTotal[r] += v
			}
		}
	}
	for ; i < len(ends); i++ {
		for k := range falls {
			falls[k].advance(ends[i])
		}
		if capTotal != nil && !fitsFallen(capTotal, falls, j.Totals) {
			continue
		}
		t := time.Unix(ends[i], 0)
		if where, ok := c.PlaceAt(j, t, nil, ignoreBlocks); ok {
			return t, where, true
		}
	}
	return time.Time{}, nil, false
}

// endTimes lists every span and block end after now, sorted and unique.
func (c *Calendar) endTimes() []int64 {
	c.addDeferred()
	if !c.endsDirty && c.ends != nil {
		return c.ends
	}
	var out []int64
	add := func(t int64) {
		if t > c.now && t < forever {
			out = append(out, t)
		}
	}
	for _, cn := range c.nodes {
		for _, s := range cn.spans {
			add(s.to)
		}
	}
	for _, b := range c.blocks {
		add(b.to)
	}
	slices.Sort(out)
	c.ends, c.endsDirty = slices.Compact(out), false
	return c.ends
}

// Now is the calendar's present.
func (c *Calendar) Now() time.Time { return time.Unix(c.now, 0) }

// FreeNow is what node has free now, as the cycle's placements so far
// leave it (a copy; nil for a node the calendar does not know).
func (c *Calendar) FreeNow(node string) Amounts {
	cn := c.node(node)
	if cn == nil {
		return nil
	}
	return cn.freeNow.Clone()
}

// usageFall follows the usage of a node whose spans all hold now as time
// goes on: it only falls, as spans end.
type usageFall struct {
	cn    *calNode
	byEnd []span // the node's spans, by end
	next  int    // the first span of byEnd not ended yet
	at    int64  // the moment cur is the usage at (-1: none yet)
	cur   Amounts
}

func newUsageFall(cn *calNode) usageFall {
	f := usageFall{cn: cn, byEnd: slices.Clone(cn.spans), at: -1, cur: Amounts{}}
	slices.SortFunc(f.byEnd, func(a, b span) int { return cmp.Compare(a.to, b.to) })
	// Every span holds now: the usage now is what freeNow lacks of cap
	// (amounts are whole numbers, so this is their sum exactly).
	for r, v := range cn.cap {
		f.cur[r] = v - cn.freeNow[r]
	}
	for r, v := range cn.freeNow {
		if _, ok := cn.cap[r]; !ok {
			f.cur[r] = -v
		}
	}
	return f
}

// ends lists the ends of the node's spans after now, once each, in
// order (as endTimes would for this node alone).
func (f *usageFall) ends(now int64) []int64 {
	out := make([]int64, 0, len(f.byEnd))
	for _, s := range f.byEnd {
		if s.to > now && s.to < forever && (len(out) == 0 || out[len(out)-1] != s.to) {
			out = append(out, s.to)
		}
	}
	return out
}

// advance takes off the spans ended by t: cur is then the node's usage
// at t, what the spans ending after t hold. Calls come in increasing t.
func (f *usageFall) advance(t int64) {
	for ; f.next < len(f.byEnd) && f.byEnd[f.next].to <= t; f.next++ {
		for r, v := range f.byEnd[f.next].amt {
			f.cur[r] -= v
		}
	}
	f.at = t
}

// fitsFallen reports whether want fits in what nodes of capacity
// capTotal have free together when their usage is the falls' (nodes
// without spans use nothing).
func fitsFallen(capTotal Amounts, falls []usageFall, want Amounts) bool {
	for r, v := range want {
		if v <= 0 {
			continue
		}
		free := capTotal[r]
		for k := range falls {
			free -= falls[k].cur[r]
		}
		if free < v {
			return false
		}
	}
	return true
}
