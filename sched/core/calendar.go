package core

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/resc"
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
// It is built once per cycle (NewCalendar) and belongs to that cycle; a
// driver that runs one cycle at a time may instead reset the calendar of
// the cycle before (Reset, Scratch), which keeps its memory.
type Calendar struct {
	now    int64
	world  *World
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
	// cannot start now, which PlaceAt says without a search. With one
	// node up it is that node's freeNow itself (totalIsNode), else
	// ownTotal.
	freeTotal   Amounts
	totalIsNode bool
	ownTotal    Amounts
	blocks      []window
	// ends are every span end and window end after now, sorted and
	// unique: the times at which more may fit (built lazily).
	ends      []int64
	endsDirty bool
	// byHost groups the nodes by host, for place=exclhost (made when
	// first needed: hosts()).
	byHost     map[string][]*calNode
	hostsKnown bool
	// deferred, when set, is a world whose running jobs (but those
	// placed exclusively) have no spans yet: its Assigned is exactly what
	// they hold (World.HeldByRunning), so what is free now comes from
	// Assigned, and the spans are needed only to look past now
	// (addDeferred).
	deferred *World

	// What Reset keeps from one cycle to the next: the nodes and their
	// placement views (nodes and cands point into them), the usage maps
	// no node caches any more, Earliest's followers of usage and what the
	// job it places needs (need, needAt), and the nodes' total capacity
	// (capTotal, valid when capKnown).
	store    []calNode
	views    []place.Node
	spare    []Amounts
	falls    []usageFall
	need     []fallNeed
	needAt   []int
	capTotal Amounts
	capKnown bool
	// mark tells the nodes holdWhole has held in its current call.
	mark int
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
	// usage when all its spans hold now (usageFall); byEnd and fallNums
	// keep the memory of the node's follower from cycle to cycle.
	fall     *usageFall
	byEnd    []span
	fallKeys []string
	fallNums []float64
	// starts are the indexes in spans of the spans that start after now:
	// only they can raise the usage over a window from its usage at the
	// window's start.
	starts []int
	// freeFor is the window free was last worked out for.
	freeFor freeKey
	// held is what the spans Reset added from running jobs hold, and
	// mark holdWhole's last mark on the node.
	held Amounts
	mark int
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
	c := &Calendar{}
	c.Reset(w)
	return c
}

// Reset makes c the calendar of w, as NewCalendar would make it, keeping
// the memory c has (its nodes' maps and slices): a driver that runs many
// cycles one after another (a simulator) does not allocate a calendar per
// cycle. Whatever c answered before is no longer valid.
func (c *Calendar) Reset(w *World) {
	c.now, c.candsAt, c.world = w.Now.Unix(), w.Now.Unix(), w
	c.future, c.cursor, c.blocks = c.future[:0], 0, c.blocks[:0]
	c.ends, c.endsDirty = c.ends[:0], true
	c.hostsKnown, c.deferred, c.capKnown = false, nil, false
	if len(w.Nodes) > fewNodes {
		if c.byName == nil {
			c.byName = make(map[string]*calNode, len(w.Nodes))
		}
		clear(c.byName)
	} else {
		c.byName = nil
	}
	// The nodes and their placement views, allocated together: the
	// pointers of nodes and cands go into them, so they never grow while
	// those are made.
	if cap(c.store) < len(w.Nodes) {
		c.store = make([]calNode, 0, len(w.Nodes))
		c.views = make([]place.Node, 0, len(w.Nodes))
	}
	c.store, c.views = c.store[:0], c.views[:0]
	c.nodes, c.cands = c.nodes[:0], c.cands[:0]
	for _, n := range w.Nodes {
		if !n.Up() {
			continue
		}
		c.store = c.store[:len(c.store)+1]
		cn := &c.store[len(c.store)-1]
		c.resetNode(cn, n)
		c.nodes = append(c.nodes, cn)
		if c.byName != nil {
			c.byName[n.Name] = cn
		}
		c.views = append(c.views, place.Node{Name: n.Name, Avail: n.Props, Free: cn.freeNow})
		c.cands = append(c.cands, &c.views[len(c.views)-1])
	}
	if len(c.nodes) == 1 {
		c.freeTotal, c.totalIsNode = c.nodes[0].freeNow, true
	} else {
		c.ownTotal = c.sumCaps(c.ownTotal)
		c.freeTotal, c.totalIsNode = c.ownTotal, false
	}
	for _, j := range w.Jobs {
		if w.Ordered && j.Queued() {
			break // the rest are queued too
		}
		if !j.Running() || len(j.Where) == 0 {
			continue
		}
		if w.resvHeld(j) {
			// Its open reservation holds its chunks (HoldResv): counted
			// as held, so that what it takes is not held Forever, with
			// no span of its own.
			for _, ch := range j.Where {
				if cn := c.node(ch.Node); cn != nil {
					if cn.held == nil {
						cn.held = Amounts{}
					}
					for r, v := range ch.Amounts() {
						cn.held[r] += v
					}
				}
			}
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
			cn := c.node(ch.Node)
			if cn == nil {
				continue
			}
			if cn.held == nil {
				cn.held = Amounts{}
			}
			for r, v := range amt {
				cn.held[r] += v
			}
		}
	}
	for _, cn := range c.nodes {
		if w.HeldByRunning {
			// The deferred jobs hold what Assigned has beyond the jobs
			// taken above.
			for r, v := range cn.node.Assigned {
				if d := v - cn.held[r]; d != 0 {
					c.takeNow(cn, r, d)
				}
			}
			continue
		}
		var rest Amounts
		for r, v := range cn.node.Assigned {
			if d := v - cn.held[r]; d > 0 {
				if rest == nil {
					rest = Amounts{}
				}
				rest[r] = d
			}
		}
		if len(rest) > 0 {
			c.addSpan(cn.node.Name, span{from: c.now, to: forever, amt: rest})
		}
	}
}

// resetNode makes cn the calendar's node for n, with nothing held,
// keeping cn's maps and slices. Usage maps it cached go to spare.
func (c *Calendar) resetNode(cn *calNode, n *Node) {
	if len(cn.usage) > 0 {
		for _, u := range cn.usage {
			c.spare = append(c.spare, u)
		}
		clear(cn.usage)
	}
	freeNow := cn.freeNow
	if freeNow == nil {
		freeNow = make(Amounts, len(n.Avail))
	}
	// Each of n's resources set anew; a resource of the cycle before
	// that n does not have (left by a span) is cleared with the rest.
	for r, v := range n.Avail {
		freeNow[r] = v
	}
	if len(freeNow) != len(n.Avail) {
		clear(freeNow)
		for r, v := range n.Avail {
			freeNow[r] = v
		}
	}
	host := n.Host
	if host == "" {
		host = n.Name
	}
	// cap is read only: the node's own map serves.
	*cn = calNode{index: len(c.nodes), node: n, host: host, cap: n.Avail, freeNow: freeNow,
		spans: cn.spans[:0], starts: cn.starts[:0], free: cn.free, peak: cn.peak, usage: cn.usage,
		byEnd: cn.byEnd, fallKeys: cn.fallKeys, fallNums: cn.fallNums, held: cn.held}
	clear(cn.held)
}

// takeNow takes v of r from what cn, and all nodes together, have free
// now.
func (c *Calendar) takeNow(cn *calNode, r string, v float64) {
	cn.freeNow[r] -= v
	if !c.totalIsNode {
		c.freeTotal[r] -= v
	}
}

// usageMap is an empty map for a usage cache: a spare one when there is.
func (c *Calendar) usageMap() Amounts {
	if k := len(c.spare); k > 0 {
		u := c.spare[k-1]
		c.spare = c.spare[:k-1]
		clear(u)
		return u
	}
	return Amounts{}
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
	if !c.hostsKnown {
		if c.byHost == nil {
			c.byHost = make(map[string][]*calNode, len(c.nodes))
		}
		clear(c.byHost)
		c.hostsKnown = true
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
		if !j.Running() || len(j.Where) == 0 || j.Place.Exclusive() || w.resvHeld(j) {
			continue
		}
		end := c.expectedEnd(j)
		for _, ch := range j.Where {
			// No usage is cached yet: freeOver, which caches it, adds
			// these spans first.
			if cn := c.node(ch.Node); cn != nil && end > c.now {
				cn.spans = append(cn.spans, span{from: c.now, to: end, amt: ch.Amounts()})
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
	return c.world.MaxWalltime(j.Queue)
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
	if s.from > c.now {
		cn.starts = append(cn.starts, len(cn.spans))
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
			c.takeNow(cn, r, v)
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
	// Each node once: the nodes this call holds carry its mark.
	c.mark++
	for _, ch := range where {
		cn := c.node(ch.Node)
		if cn == nil {
			continue
		}
		one := [1]*calNode{cn}
		nodes := one[:]
		if j.Place.Sharing == resc.SharingExclHost {
			nodes = c.hosts()[cn.host]
		}
		for _, n := range nodes {
			if n.mark != c.mark {
				n.mark = c.mark
				// Spans only read their amounts: cap serves.
				c.addSpan(n.node.Name, span{from: from, to: to, amt: n.cap})
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
	// The spans that start inside the window (after from, which is now or
	// later: they start after now).
	inside := 0
	for _, k := range cn.starts {
		if s := cn.spans[k]; s.from > from && s.from < to {
			inside++
		}
	}
	if from <= c.now && inside == 0 {
		// Usage at now is what freeNow lacks of cap (spans ending later
		// are all counted in it): with no span starting inside the
		// window, usage only falls from now on.
		return cn.freeNow
	}
	// The last answer stands for a window from the same moment over the
	// same spans starting inside it: they are those starting after from
	// and before its end, so as many of them are the same ones. Spans are
	// only ever added, so their number tells whether they changed.
	key := freeKey{from: from, inside: inside, spans: len(cn.spans)}
	if cn.freeFor == key {
		return cn.free
	}
	// Usage peaks at from or where a span starts inside the window. Usage
	// at a moment is cached per node until its spans change; the result
	// is the node's own scratch map, valid until the next query about it.
	c.addDeferred()
	if len(cn.spans) == 0 {
		return cn.cap // nothing holds any of it, ever
	}
	if cn.free == nil {
		cn.free, cn.peak = Amounts{}, Amounts{}
	}
	if cn.usage == nil {
		cn.usage = map[int64]Amounts{}
	}
	if f := cn.fall; f != nil && f.at == from {
		// Earliest follows this node's usage: it is the fall's at from,
		// and only falls after.
		clear(cn.free)
		for i, r := range f.keys[:f.own] {
			cn.free[r] = f.caps[i] - max(0, f.cur[i])
		}
		cn.freeFor = freeKey{}
		return cn.free
	}
	clear(cn.peak)
	peakWith := func(t int64) {
		u, ok := cn.usage[t]
		if !ok {
			u = c.usageMap()
			c.usageAt(cn, t, u)
			cn.usage[t] = u
		}
		for r, v := range u {
			if v > cn.peak[r] {
				cn.peak[r] = v
			}
		}
	}
	peakWith(from)
	// from is now or later: only spans that start after now can start
	// inside the window.
	for _, k := range cn.starts {
		if s := cn.spans[k]; s.from > from && s.from < to {
			peakWith(s.from)
		}
	}
	clear(cn.free)
	for r, v := range cn.cap {
		cn.free[r] = v - cn.peak[r]
	}
	cn.freeFor = key
	return cn.free
}

// freeKey says which window a node's free map was last worked out for
// (the zero key: none): its start, how many spans start inside it, and
// how many spans the node had.
type freeKey struct {
	from   int64
	inside int
	spans  int
}

// usageAt adds up in u (empty) what cn's spans hold at t (now or later).
// Usage now is what freeNow lacks of cap: every span that starts by now
// holds now, and freeNow is kept less them. Usage later is usage now less
// the spans that end by t, plus those that start after now and hold t,
// when that is fewer spans to add up than those holding t. Amounts are
// whole numbers, so either way gives the same sums exactly.
func (c *Calendar) usageAt(cn *calNode, t int64, u Amounts) {
	fromNow := func() {
		for r, v := range cn.freeNow {
			u[r] = cn.cap[r] - v
		}
	}
	if t == c.now {
		fromNow()
		return
	}
	holding, changed := 0, 1
	for _, s := range cn.spans {
		if s.from <= t && t < s.to {
			holding++
		}
		if s.from <= c.now && s.to <= t || s.from > c.now && s.from <= t && t < s.to {
			changed++
		}
	}
	if changed < holding {
		fromNow()
		for _, s := range cn.spans {
			switch {
			case s.from <= c.now && s.to <= t:
				for r, v := range s.amt {
					u[r] -= v
				}
			case s.from > c.now && s.from <= t && t < s.to:
				for r, v := range s.amt {
					u[r] += v
				}
			}
		}
		return
	}
	for _, s := range cn.spans {
		if s.from <= t && t < s.to {
			for r, v := range s.amt {
				u[r] += v
			}
		}
	}
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
	if len(j.Select) == 1 && j.Select[0].Count == 1 && j.Place.Group == "" {
		// One chunk, as most jobs ask: placed without a reason made for
		// each job that does not fit.
		i := place.First(j.Select[0], j.Place, cands, start)
		if i < 0 {
			return nil, false
		}
		if order == nil && from == c.now {
			c.cursor = i
		}
		return []Chunk{{Node: cands[i].Name, Chunk: j.Select[0]}}, true
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
	falls := c.falls[:0]
	allFall := true
	for _, cn := range c.nodes {
		switch {
		case len(cn.spans) == 0:
		case cn.future:
			allFall = false
		default:
			falls = append(falls, newUsageFall(cn, j.Totals))
		}
	}
	c.falls = falls
	for k := range falls {
		falls[k].cn.fall = &falls[k]
	}
	defer func() {
		for k := range falls {
			falls[k].cn.fall = nil
		}
	}()
	// When every node's usage only falls, what all of them have free at
	// an end is known before placing: a job asking for more in all does
	// not fit then (as PlaceAt says of now). need lists what the job asks
	// for, with the nodes' capacity of it, and where each fall follows it.
	var need []fallNeed
	if allFall && len(falls) > 0 {
		need = c.needs(j.Totals, falls)
	}
	try := func(end int64) (time.Time, []Chunk, bool) {
		for k := range falls {
			falls[k].advance(end)
		}
		if need != nil && !fitsFallen(need, falls) {
			return time.Time{}, nil, false
		}
		t := time.Unix(end, 0)
		where, ok := c.PlaceAt(j, t, nil, ignoreBlocks)
		if ok {
			// The job is likely reserved then: the usage the falls
			// reached is what a window over that moment asks for next.
			for k := range falls {
				falls[k].keep(end, c)
			}
		}
		return t, where, ok
	}
	if allFall && len(falls) == 1 && len(c.blocks) == 0 {
		// One node holds every span: its fall gives their ends in order,
		// one at a time, and the job mostly fits after the first few.
		fall := &falls[0]
		fall.skip(f)
		for end, ok := fall.next(); ok; end, ok = fall.next() {
			if t, where, ok := try(end); ok {
				return t, where, true
			}
		}
		return time.Time{}, nil, false
	}
	ends := c.endTimes()
	for i := sort.Search(len(ends), func(k int) bool { return ends[k] > f }); i < len(ends); i++ {
		if t, where, ok := try(ends[i]); ok {
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
	out := c.ends[:0]
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

// capacity is what the nodes that are up have in all.
func (c *Calendar) capacity() Amounts {
	if !c.capKnown {
		c.capTotal, c.capKnown = c.sumCaps(c.capTotal), true
	}
	return c.capTotal
}

// sumCaps sets total (made when nil) to what the nodes that are up have
// in all, and returns it.
func (c *Calendar) sumCaps(total Amounts) Amounts {
	if total == nil {
		total = Amounts{}
	}
	clear(total)
	for _, cn := range c.nodes {
		for r, v := range cn.cap {
			total[r] += v
		}
	}
	return total
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
// goes on: it only falls, as spans end. It follows the resources of keys:
// the node's own (the first own, of capacity caps), then those the job
// asks for that the node lacks; cur[i] is the usage of keys[i].
type usageFall struct {
	cn *calNode
	// left are the node's spans not ended yet, a heap by end: the next
	// to end is left[0].
	left []span
	at   int64 // the moment cur is the usage at (-1: none yet)
	keys []string
	own  int
	caps []float64
	cur  []float64
}

// newUsageFall starts following cn's usage of its resources and those of
// want, in the node's own buffers (byEnd, fallKeys, fallNums).
func newUsageFall(cn *calNode, want Amounts) usageFall {
	keys := cn.fallKeys[:0]
	for r := range cn.cap {
		keys = append(keys, r)
	}
	own := len(keys)
	for r := range want {
		if _, ok := cn.cap[r]; !ok {
			keys = append(keys, r)
		}
	}
	cn.fallKeys = keys
	nums := slices.Grow(cn.fallNums[:0], 2*len(keys))[:2*len(keys)]
	cn.fallNums = nums
	cn.byEnd = append(cn.byEnd[:0], cn.spans...)
	f := usageFall{cn: cn, left: cn.byEnd, at: -1, keys: keys, own: own, caps: nums[:len(keys)], cur: nums[len(keys):]}
	for i := len(f.left)/2 - 1; i >= 0; i-- {
		f.down(i)
	}
	// Every span holds now: the usage now is what freeNow lacks of cap
	// (amounts are whole numbers, so this is their sum exactly).
	for i, r := range keys {
		f.caps[i] = cn.cap[r]
		f.cur[i] = f.caps[i] - cn.freeNow[r]
	}
	return f
}

// down moves left[i] down the heap to its place.
func (f *usageFall) down(i int) {
	h := f.left
	for {
		k := 2*i + 1
		if k >= len(h) {
			return
		}
		if r := k + 1; r < len(h) && h[r].to < h[k].to {
			k = r
		}
		if h[i].to <= h[k].to {
			return
		}
		h[i], h[k] = h[k], h[i]
		i = k
	}
}

// skip takes off the spans ended by t, as advance does, leaving at as it
// is: for a search that starts after t.
func (f *usageFall) skip(t int64) {
	for len(f.left) > 0 && f.left[0].to <= t {
		amt := f.left[0].amt
		for i, r := range f.keys {
			f.cur[i] -= amt[r]
		}
		n := len(f.left) - 1
		f.left[0] = f.left[n]
		f.left = f.left[:n]
		f.down(0)
	}
}

// advance takes off the spans ended by t: cur is then the node's usage
// at t, what the spans ending after t hold. Calls come in increasing t.
func (f *usageFall) advance(t int64) {
	f.skip(t)
	f.at = t
}

// keep caches cur as the node's usage at t, when cur is that (advance
// reached t) and none is cached: it is what the spans holding t add up
// to, of the resources the fall follows (the node's own and the job's;
// the others count for nothing in what the node has free).
func (f *usageFall) keep(t int64, c *Calendar) {
	cn := f.cn
	if f.at != t {
		return
	}
	if cn.usage == nil {
		cn.usage = map[int64]Amounts{}
	}
	if _, ok := cn.usage[t]; ok {
		return
	}
	u := c.usageMap()
	for i, r := range f.keys {
		u[r] = f.cur[i]
	}
	cn.usage[t] = u
}

// next is the next moment a span ends, once advance took off those
// ended before (false: none ends before Forever).
func (f *usageFall) next() (int64, bool) {
	if len(f.left) == 0 || f.left[0].to >= forever {
		return 0, false
	}
	return f.left[0].to, true
}

// fallNeed is one resource a job asks for in Earliest: how much, the
// capacity of all nodes, and at[k], where falls[k] follows it.
type fallNeed struct {
	want, capTotal float64
	at             []int
}

// needs lists what want asks for (its positive amounts) for fitsFallen.
func (c *Calendar) needs(want Amounts, falls []usageFall) []fallNeed {
	capTotal := c.capacity()
	out, at := c.need[:0], c.needAt[:0]
	for r, v := range want {
		if v <= 0 {
			continue
		}
		// Every fall follows every resource the job asks for.
		for k := range falls {
			at = append(at, slices.Index(falls[k].keys, r))
		}
		out = append(out, fallNeed{want: v, capTotal: capTotal[r]})
	}
	for i := range out {
		out[i].at = at[i*len(falls) : (i+1)*len(falls)]
	}
	c.need, c.needAt = out, at
	return out
}

// fitsFallen reports whether what need lists fits in what the nodes have
// free together when their usage is the falls' (nodes without spans use
// nothing).
func fitsFallen(need []fallNeed, falls []usageFall) bool {
	for _, n := range need {
		free := n.capTotal
		for k := range falls {
			free -= falls[k].cur[n.at[k]]
		}
		if free < n.want {
			return false
		}
	}
	return true
}
