package state

import (
	"iter"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Nodes is the node table: each node's attributes as qmgr and the store
// know them (a model.Object, replaced whole on a change: readers may keep
// the one they got), what its mom last reported (Runtime, not stored:
// moms report again after a restart), and, typed, the amounts of its
// consumable resources that are available, from both, worked out when
// either changes or the resource table does rather than at every start.
type Nodes struct {
	table func() *resc.Table
	// since is when the server started: a node no mom has reported yet
	// counts its silence from then.
	since  time.Time
	byName map[string]*model.Object
	// order caches the names in order (Names); nil once a node is created
	// or deleted. Atomic: readers fill it under the server's read lock.
	order   atomic.Pointer[[]string]
	runtime map[string]*Runtime
	amounts map[string]map[string]float64
}

// Runtime is what the server knows of a node's mom. Its fields are the
// server's to set but for what the mom makes available, which only
// Nodes.Report sets, so that the typed amounts follow it.
type Runtime struct {
	Reported bool // a report arrived since this server started
	LastSeen time.Time
	Status   proto.MomStatus
	// avail is what Status makes available, canonical (shared with
	// readers, never modified in place).
	avail map[string]string
	// LoadBusy: the load went above max_load and has not come back below
	// ideal_load.
	LoadBusy   bool
	Down       bool
	DownSince  time.Time
	LastChange time.Time
	// Told is the report interval the mom was last told: until its next
	// report it keeps to that one, whatever node_check_rate says now.
	Told time.Duration
	// LeaseEnd is when the lease last granted to the mom has certainly
	// lapsed and its shepherds have killed their jobs (zero: none
	// granted). No job on the node is requeued before then (fencing).
	LeaseEnd time.Time
	// Owner is the node whose mom reports this vnode ("" for a node its
	// own mom reports); Stale: that mom no longer reports it.
	Owner string
	Stale bool
	// Vnodes are the vnodes this node's mom reported last (their names).
	Vnodes map[string]bool
	// FromMom are the attributes last applied from the mom's vnode
	// definitions: a value an admin set since is not overwritten until
	// the definition itself changes.
	FromMom map[string]string
}

// Avail is what the mom's last report makes available, canonical (read
// only; nil before a report).
func (rt *Runtime) Avail() map[string]string { return rt.avail }

// Applied notes that attribute k has the value v its mom's definition
// gives.
func (rt *Runtime) Applied(k, v string) {
	if rt.FromMom == nil {
		rt.FromMom = map[string]string{}
	}
	rt.FromMom[k] = v
}

// NewNodes makes an empty table whose values are read with the resource
// table table gives; since is when the server started.
func NewNodes(table func() *resc.Table, since time.Time) *Nodes {
	t := &Nodes{table: table, since: since, runtime: map[string]*Runtime{}}
	t.Load(nil)
	return t
}

// Load replaces the nodes with those of a store snapshot; what moms
// reported is kept (a rollback reloads the table, and reports are not
// stored).
func (t *Nodes) Load(ns []*model.Object) {
	t.byName = make(map[string]*model.Object, len(ns))
	t.amounts = make(map[string]map[string]float64, len(ns))
	t.order.Store(nil)
	for _, n := range ns {
		t.byName[n.Name] = n
		t.retype(n.Name)
	}
}

// Len is how many nodes there are.
func (t *Nodes) Len() int { return len(t.byName) }

// Get is node name's attributes.
func (t *Nodes) Get(name string) (*model.Object, bool) {
	n, ok := t.byName[name]
	return n, ok
}

// Put adds node n or replaces the node of its name with it.
func (t *Nodes) Put(n *model.Object) {
	if _, ok := t.byName[n.Name]; !ok {
		t.order.Store(nil)
	}
	t.byName[n.Name] = n
	t.retype(n.Name)
}

// Delete takes node name out; what its mom reported is kept, as the mom
// may go on reporting.
func (t *Nodes) Delete(name string) {
	delete(t.byName, name)
	delete(t.amounts, name)
	t.order.Store(nil)
}

// All is every node, in no order.
func (t *Nodes) All() iter.Seq2[string, *model.Object] { return maps.All(t.byName) }

// Names is every node name in order: the table's own, read only. Sorted
// once per creation or deletion of a node, so that listing nodes each
// second does not sort tens of thousands under the lock.
func (t *Nodes) Names() []string {
	if p := t.order.Load(); p != nil {
		return *p
	}
	names := slices.Sorted(maps.Keys(t.byName))
	t.order.Store(&names)
	return names
}

// Runtime is what node name's mom reported, nil when it never did (and
// nothing else made its record).
func (t *Nodes) Runtime(name string) *Runtime { return t.runtime[name] }

// RuntimeOf is node name's runtime record, made when it has none.
func (t *Nodes) RuntimeOf(name string) *Runtime {
	rt := t.runtime[name]
	if rt == nil {
		rt = &Runtime{LastSeen: t.since, LastChange: t.since}
		t.runtime[name] = rt
	}
	return rt
}

// Report records a mom's report st for node name and what it makes
// available (the mom's resources canonical, ncpus, mem and arch from what
// it measured), and that it reported. Status replies read the
// availability of every node, so it is worked out here, once per report,
// not once per reader.
func (t *Nodes) Report(name string, st proto.MomStatus) {
	rt := t.RuntimeOf(name)
	rt.Reported, rt.Status = true, st
	tab := t.table()
	avail := make(map[string]string, len(st.Resources)+3)
	for k, v := range st.Resources {
		if c, err := tab.Canonical(k, v); err == nil {
			avail[k] = c
		}
	}
	avail[proto.ResNcpus] = strconv.Itoa(st.Ncpus)
	avail[proto.ResMem] = resc.FormatKB(st.Physmem)
	avail[proto.ResArch] = st.Arch
	rt.avail = avail
	t.retype(name)
}

// Available is resources_available of node name: what its mom reports,
// with every value a manager set winning. The map may be shared: callers
// only read it.
func (t *Nodes) Available(name string) map[string]string {
	var reported map[string]string
	if rt := t.runtime[name]; rt != nil && rt.Reported {
		reported = rt.avail
	}
	n := t.byName[name]
	if n == nil || len(n.Resources[proto.AttrResourcesAvail]) == 0 {
		return reported // shared with the runtime: read only
	}
	out := make(map[string]string, len(reported)+len(n.Resources[proto.AttrResourcesAvail]))
	maps.Copy(out, reported)
	maps.Copy(out, n.Resources[proto.AttrResourcesAvail])
	return out
}

// AvailOne is one resource of Available, without building the map.
func (t *Nodes) AvailOne(name, key string) (string, bool) {
	if n := t.byName[name]; n != nil {
		if v, ok := n.Resources[proto.AttrResourcesAvail][key]; ok {
			return v, true
		}
	}
	if rt := t.runtime[name]; rt != nil && rt.Reported {
		v, ok := rt.avail[key]
		return v, ok
	}
	return "", false
}

// Amounts is what node name has available of each consumable resource,
// typed (Available's values read as numbers): the table's own, read only.
func (t *Nodes) Amounts(name string) map[string]float64 { return t.amounts[name] }

// Retype reads every node's availability again, the resource table
// having changed.
func (t *Nodes) Retype() {
	for name := range t.byName {
		t.retype(name)
	}
}

// retype works out node name's typed amounts from its availability.
func (t *Nodes) retype(name string) {
	if _, ok := t.byName[name]; !ok {
		return
	}
	tab := t.table()
	avail := t.Available(name)
	m := make(map[string]float64, len(avail))
	for r, v := range avail {
		if !tab.Consumable(r) {
			continue
		}
		if x, ok := tab.Number(r, v); ok {
			m[r] = x
		}
	}
	t.amounts[name] = m
}

// Up reports whether a node can take work: known, not offline, and
// reported by its mom, which is not down.
func (t *Nodes) Up(name string) bool {
	n, ok := t.byName[name]
	if !ok {
		return false
	}
	if st, _ := n.Get(proto.AttrNodeState); st == model.NodeOffline {
		return false
	}
	rt := t.runtime[name]
	return rt != nil && rt.Reported && !rt.Down
}

// Host is the host a node is on for exclusive placement (exclhost): its
// resources_available.host, else its name.
func (t *Nodes) Host(node string) string {
	if _, ok := t.byName[node]; ok {
		if h, ok := t.AvailOne(node, proto.ResHost); ok && h != "" {
			return h
		}
	}
	return node
}

// HostNodes lists every node on the hosts of nodes (Host), in no order.
func (t *Nodes) HostNodes(nodes []string) []string {
	hosts := map[string]bool{}
	for _, n := range nodes {
		hosts[t.Host(n)] = true
	}
	var out []string
	for name := range t.byName {
		if hosts[t.Host(name)] {
			out = append(out, name)
		}
	}
	return out
}

// MomOf is the node whose mom runs a node's jobs: the mom that reports a
// vnode, or the node itself. exec_host names it.
func (t *Nodes) MomOf(name string) string {
	if rt := t.runtime[name]; rt != nil && rt.Owner != "" {
		return rt.Owner
	}
	return name
}
