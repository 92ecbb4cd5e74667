package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/entlim"
	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Kind is the value type of an attribute of the server, a queue or a node.
type Kind uint8

// Attribute kinds.
const (
	KindString    Kind = iota
	KindBool           // True / False
	KindLong           // integer
	KindList           // comma-separated list; += and -= add and remove items
	KindResources      // name.resource = value
	KindTime           // Unix seconds
	KindDuration       // seconds written as HH:MM:SS or plain seconds
	KindSize
	// KindEntity is an OpenPBS entity limit of counts
	// ("[u:PBS_GENERIC=10]"), KindEntityRes one of a resource's amounts
	// (max_run_res.ncpus = "[g:grp=64]"): internal/entlim.
	KindEntity
	KindEntityRes
)

// Access says who may read and write an attribute.
type Access uint8

// Access flags.
const (
	ReadOnly   Access = 1 << iota // only the server sets it
	MgrSet                        // managers may set it
	OperSet                       // operators may set it (implies managers)
	HiddenUser                    // not shown to ordinary users
)

// Def defines one attribute of a generic object.
type Def struct {
	Name string
	// Aliases are other names OpenPBS takes for the attribute (a
	// deprecated spelling): read as Name, never stored or printed.
	Aliases []string
	Kind    Kind
	Access  Access
	// Check validates and canonicalises a value (after the kind's own
	// check); nil for none.
	Check func(string) (string, error)
}

// DefTable is the ordered attribute table of one object type; the order is
// the display order.
type DefTable struct {
	Object proto.ObjectType
	Defs   []Def
	index  map[string]int
	fold   foldIndex // the names without case (attrcase.go)
}

func newTable(obj proto.ObjectType, defs []Def) *DefTable {
	t := &DefTable{Object: obj, Defs: defs, index: make(map[string]int, len(defs))}
	names := make([]string, len(defs))
	for i, d := range defs {
		t.index[d.Name] = i
		names[i] = d.Name
	}
	t.fold = newFoldIndex(names...)
	for _, d := range defs {
		for _, a := range d.Aliases {
			t.fold.alias(a, d.Name)
		}
	}
	return t
}

// Lookup returns the definition of name.
func (t *DefTable) Lookup(name string) (Def, bool) {
	i, ok := t.index[name]
	if !ok {
		return Def{}, false
	}
	return t.Defs[i], true
}

// LookupFold returns the definition whose name matches name in any case,
// as the server takes names (attrcase.go); qmgr's parser uses it to tell
// an attribute from an object name.
func (t *DefTable) LookupFold(name string) (Def, bool) {
	return t.Lookup(t.fold.canonical(name))
}

// Defs is the attribute table of an object type: the one table that the
// server applies and shows, and that qmgr parses and prints by (which
// names are attributes, which values are comma lists, which attributes
// print leaves out). Nil for a type without one.
func Defs(obj proto.ObjectType) *DefTable {
	switch obj {
	case proto.ObjServer:
		return ServerDefs
	case proto.ObjQueue:
		return QueueDefs
	case proto.ObjNode:
		return NodeDefs
	case proto.ObjResource:
		return ResourceDefs
	case proto.ObjSched:
		return SchedDefs
	}
	return nil
}

// Settable reports whether a manager may set d (it is not computed by the
// server or reported by a mom).
func (d Def) Settable() bool { return d.Access&ReadOnly == 0 && d.Access&(MgrSet|OperSet) != 0 }

// CanSet reports whether a caller with the given privileges may set d.
func (d Def) CanSet(manager, operator bool) bool {
	switch {
	case d.Access&ReadOnly != 0:
		return false
	case manager:
		return d.Access&(MgrSet|OperSet) != 0
	case operator:
		return d.Access&OperSet != 0
	}
	return false
}

// PerResource reports whether an attribute of kind k holds one value per
// resource (name.resource = value).
func (k Kind) PerResource() bool { return k == KindResources || k == KindEntityRes }

// EntityCount reads an entity limit's count (max_run, max_queued).
func EntityCount(v string) (float64, string, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, "", fmt.Errorf("%q is not a count of jobs", v)
	}
	return float64(n), strconv.FormatInt(n, 10), nil
}

// EntityAmount reads an entity limit's amount of resource (max_run_res.RES),
// as its type in rt.
func EntityAmount(rt *resc.Table, resource string) entlim.ValueParser {
	return func(v string) (float64, string, error) {
		c, err := rt.Canonical(resource, v)
		if err != nil {
			return 0, "", err
		}
		n, ok := rt.Number(resource, c)
		if !ok || n < 0 {
			return 0, "", fmt.Errorf("%q is not an amount of %s", v, resource)
		}
		return n, c, nil
	}
}

// Canonical validates value for this attribute (resource names the
// resource of a KindResources attribute), with the built-in resources
// alone.
func (d Def) Canonical(resource, value string) (string, error) {
	return d.CanonicalIn(nil, resource, value)
}

// CanonicalIn validates value for this attribute, a resource's value as
// its type in rt.
func (d Def) CanonicalIn(rt *resc.Table, resource, value string) (string, error) {
	var out string
	switch d.Kind {
	case KindBool:
		b, err := resc.ParseBool(value)
		if err != nil {
			return "", badValue(d.Name, resource, value, "want True or False")
		}
		out = resc.FormatBool(b)
	case KindLong:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return "", badValue(d.Name, resource, value, "want an integer")
		}
		out = strconv.FormatInt(n, 10)
	case KindTime:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || n < 0 {
			return "", badValue(d.Name, resource, value, "want Unix seconds")
		}
		out = strconv.FormatInt(n, 10)
	case KindDuration:
		secs, err := resc.ParseDuration(value)
		if err != nil {
			return "", badValue(d.Name, resource, value, "want [[H:]M:]S")
		}
		out = resc.FormatDuration(secs)
	case KindSize:
		c, err := resc.Canonical("mem", value)
		if err != nil {
			return "", badValue(d.Name, resource, value, "want a size such as 100mb")
		}
		out = c
	case KindResources:
		if resource == "" {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s needs a resource name (%s.<resource>)", d.Name, d.Name)
		}
		if (d.Name == proto.AttrResourcesMax || d.Name == proto.AttrResourcesMin) && (resource == proto.ResMinWalltime || resource == proto.ResMaxWalltime) {
			// As OpenPBS: resources_min and resources_max.walltime bound
			// a shrink-to-fit job's min_walltime and max_walltime.
			return "", proto.NewError(proto.PBSE_NOLIMIT_RESOURCE)
		}
		c, err := rt.Canonical(resource, value)
		if err != nil {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s.%s: %v", d.Name, resource, err)
		}
		out = c
	case KindList:
		items := SplitList(value)
		out = strings.Join(items, ",")
	case KindEntity:
		l, err := entlim.Parse(value, EntityCount)
		if err != nil {
			return "", badValue(d.Name, resource, value, err.Error())
		}
		out = l.String()
	case KindEntityRes:
		if resource == "" {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s needs a resource name (%s.<resource>)", d.Name, d.Name)
		}
		l, err := entlim.Parse(value, EntityAmount(rt, resource))
		if err != nil {
			return "", badValue(d.Name, resource, value, err.Error())
		}
		out = l.String()
	default:
		if strings.ContainsAny(value, resc.ControlChars) {
			return "", badValue(d.Name, resource, value, "contains a line break or NUL")
		}
		out = value
	}
	if !d.Kind.PerResource() && resource != "" {
		return "", proto.Errorf(proto.PBSE_NOATTR, "%s.%s", d.Name, resource)
	}
	if d.Check != nil {
		return d.Check(out)
	}
	return out, nil
}

func badValue(name, resource, value, why string) error {
	full := name
	if resource != "" {
		full += "." + resource
	}
	return proto.Errorf(proto.PBSE_BADATVAL, "%s = %q (%s)", full, value, why)
}

// SplitList splits a comma list, trimming blanks and dropping empty items:
// the one reading of a comma list, a string_array resource's included.
func SplitList(v string) []string { return resc.SplitArray(v) }

// Object is a generic attribute set: the server, a queue or a node. Values
// are canonical strings; resources live under their attribute name.
type Object struct {
	Name      string
	Attrs     map[string]string
	Resources map[string]map[string]string
}

// NewObject returns an empty object.
func NewObject(name string) *Object {
	return &Object{Name: name, Attrs: map[string]string{}, Resources: map[string]map[string]string{}}
}

// Clone returns a deep copy.
func (o *Object) Clone() *Object {
	c := NewObject(o.Name)
	for k, v := range o.Attrs {
		c.Attrs[k] = v
	}
	for k, m := range o.Resources {
		cm := make(map[string]string, len(m))
		for r, v := range m {
			cm[r] = v
		}
		c.Resources[k] = cm
	}
	return c
}

// Get returns an attribute value.
func (o *Object) Get(name string) (string, bool) {
	v, ok := o.Attrs[name]
	return v, ok
}

// Bool reads a boolean attribute (false when unset).
func (o *Object) Bool(name string) bool { return o.Attrs[name] == "True" }

// Long reads an integer attribute and whether it is set.
func (o *Object) Long(name string) (int64, bool) {
	v, ok := o.Attrs[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Resource reads attr.resource.
func (o *Object) Resource(attr, resource string) (string, bool) {
	v, ok := o.Resources[attr][resource]
	return v, ok
}

// Set stores a canonical value.
func (o *Object) Set(name, resource, value string) {
	if resource == "" {
		o.Attrs[name] = value
		return
	}
	m := o.Resources[name]
	if m == nil {
		m = map[string]string{}
		o.Resources[name] = m
	}
	m[resource] = value
}

// Unset removes an attribute (or one resource of it).
func (o *Object) Unset(name, resource string) {
	if resource == "" {
		delete(o.Attrs, name)
		delete(o.Resources, name)
		return
	}
	if m := o.Resources[name]; m != nil {
		delete(m, resource)
		if len(m) == 0 {
			delete(o.Resources, name)
		}
	}
}

// Apply performs one manager operation (=, +=, -=, unset) on o, checking
// the value against t with the built-in resources alone. It does not
// check privileges.
func (t *DefTable) Apply(o *Object, a proto.Attr) error { return t.ApplyIn(nil, o, a) }

// ApplyIn is Apply with resources' values read as their types in rt.
func (t *DefTable) ApplyIn(rt *resc.Table, o *Object, a proto.Attr) error {
	d, ok := t.Lookup(a.Name)
	if !ok {
		return proto.Errorf(proto.PBSE_NOATTR, "%s", a.FullName())
	}
	if a.Op == proto.OpUnset {
		o.Unset(a.Name, a.Resource)
		return nil
	}
	val, err := d.CanonicalIn(rt, a.Resource, a.Value)
	if err != nil {
		return err
	}
	switch a.Op {
	case proto.OpSet:
		o.Set(a.Name, a.Resource, val)
	case proto.OpIncr, proto.OpDecr:
		cur, _ := o.Get(a.Name)
		if a.Resource != "" {
			cur, _ = o.Resource(a.Name, a.Resource)
		}
		next, err := incr(rt, d, a.Resource, cur, val, a.Op == proto.OpIncr)
		if err != nil {
			return err
		}
		// The result must pass the same check as a value set directly
		// (scheduler_iteration -= 600 must not leave 0).
		if next != "" && d.Check != nil {
			if next, err = d.Check(next); err != nil {
				return err
			}
		}
		if next == "" && d.Kind == KindList {
			o.Unset(a.Name, a.Resource)
		} else {
			o.Set(a.Name, a.Resource, next)
		}
	default:
		return proto.Errorf(proto.PBSE_IVALREQ, "operator %d on %s", a.Op, a.FullName())
	}
	return nil
}

// incr implements += and -=: list membership for lists and a
// string_array resource's elements, arithmetic for numbers.
func incr(rt *resc.Table, d Def, resource, cur, val string, add bool) (string, error) {
	if d.Kind == KindResources && rt.Lookup(resource).Type == resc.TypeStringArray {
		d.Kind = KindList // its elements, as a list attribute's
	}
	switch d.Kind {
	case KindList:
		items := SplitList(cur)
		for _, v := range SplitList(val) {
			idx := -1
			for i, it := range items {
				if it == v {
					idx = i
				}
			}
			switch {
			case add && idx < 0:
				items = append(items, v)
			case !add && idx >= 0:
				items = append(items[:idx], items[idx+1:]...)
			}
		}
		return strings.Join(items, ","), nil
	case KindLong:
		a, _ := strconv.ParseInt(cur, 10, 64)
		b, _ := strconv.ParseInt(val, 10, 64)
		sum := a + b
		if !add {
			sum = a - b
		}
		if up := (b > 0) == add; b != 0 && (sum > a) != up {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s: result out of range", d.Name)
		}
		return strconv.FormatInt(sum, 10), nil
	case KindResources:
		name := resource
		x, okx := rt.Number(name, orZero(rt, name, cur))
		y, oky := rt.Number(name, val)
		if !okx || !oky {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s.%s is not numeric; += and -= need a number", d.Name, resource)
		}
		if !add {
			y = -y
		}
		sum := x + y
		if sum < 0 {
			sum = 0
		}
		if sum >= math.MaxInt64 {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s.%s: result out of range", d.Name, resource)
		}
		return rt.Format(name, sum), nil
	}
	return "", proto.Errorf(proto.PBSE_IVALREQ, "%s does not support += or -=", d.Name)
}

func orZero(rt *resc.Table, name, v string) string {
	if v != "" {
		return v
	}
	if rt.Lookup(name).Type == resc.TypeSize {
		return "0b"
	}
	return "0"
}

// Status renders o in table order. Hidden attributes are skipped unless
// privileged; want limits the attributes (nil for all).
func (t *DefTable) Status(o *Object, privileged bool, want map[string]bool) []proto.Attr {
	var out []proto.Attr
	for _, d := range t.Defs {
		if d.Access&HiddenUser != 0 && !privileged {
			continue
		}
		if want != nil && !want[d.Name] {
			continue
		}
		if d.Kind.PerResource() {
			m := o.Resources[d.Name]
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				out = append(out, proto.Attr{Name: d.Name, Resource: k, Value: m[k]})
			}
			continue
		}
		if v, ok := o.Attrs[d.Name]; ok {
			out = append(out, proto.Attr{Name: d.Name, Value: v})
		}
	}
	return out
}

// WantSet turns a StatusRequest's attribute list into a lookup set; nil
// means every attribute.
func WantSet(attrs []string) map[string]bool {
	if len(attrs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(attrs))
	for _, a := range attrs {
		name, _ := proto.SplitAttrName(a)
		m[name] = true
	}
	return m
}

// mustPositive is a Check for counts that must be at least 1.
func mustPositive(v string) (string, error) {
	n, _ := strconv.ParseInt(v, 10, 64)
	if n < 1 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "value %s must be at least 1", v)
	}
	return v, nil
}

// mustSoftLimit is a Check for soft limits: at least 1 (0 would put
// every job over it: unset it instead).
func mustSoftLimit(v string) (string, error) {
	if n, _ := strconv.ParseInt(v, 10, 64); n == 0 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "a soft limit of 0 would put every job over it: set 1 or more, or unset it")
	}
	return mustPositive(v)
}

// mustNonNegative is a Check for limits.
func mustNonNegative(v string) (string, error) {
	n, _ := strconv.ParseInt(v, 10, 64)
	if n < 0 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "value %s must not be negative", v)
	}
	return v, nil
}

// checkFilterPaths accepts a list of filter programs: absolute paths (the
// daemons run filters from /), since a relative one would mean a
// different program to each daemon.
func checkFilterPaths(v string) (string, error) {
	for _, p := range SplitList(v) {
		if !strings.HasPrefix(p, "/") {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "filter %q is not an absolute path", p)
		}
	}
	return v, nil
}

// MaxSubmissionFilterTimeout bounds submission_filter_timeout: qsub waits
// for the whole chain within its request timeout (60 s), so one filter
// may not take most of it.
const MaxSubmissionFilterTimeout = 45

func checkFilterTimeout(v string) (string, error) {
	n, _ := strconv.ParseInt(v, 10, 64)
	if n < 1 || n > MaxSubmissionFilterTimeout {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "submission_filter_timeout = %s (want 1 to %d seconds)", v, MaxSubmissionFilterTimeout)
	}
	return v, nil
}

// checkMailFrom accepts the sender of job mail: one address the mailer
// takes as the value of its -f.
func checkMailFrom(v string) (string, error) {
	if !mailer.ValidAddress(v) {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "mail_from = %q (want one mail address)", v)
	}
	return v, nil
}

// queueTypeCheck accepts any case-insensitive prefix of Execution or Route
// and stores the full word, as PBS does.
func queueTypeCheck(v string) (string, error) {
	l := strings.ToLower(strings.TrimSpace(v))
	switch {
	case l != "" && strings.HasPrefix("execution", l):
		return "Execution", nil
	case l != "" && strings.HasPrefix("route", l):
		return "Route", nil
	}
	return "", proto.Errorf(proto.PBSE_BADATVAL, "queue_type = %q (want Execution or Route)", v)
}

// ServerDefs is the server's attribute table.
var ServerDefs = newTable(proto.ObjServer, slices.Concat([]Def{
	{Name: proto.AttrServerState, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrServerHost, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrServerMembers, Kind: KindString, Access: ReadOnly}, // changed by the server itself (changeGroup)
	{Name: proto.AttrServerLeader, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrServerTerm, Kind: KindLong, Access: ReadOnly},
	{Name: proto.AttrScheduling, Kind: KindBool, Access: OperSet | MgrSet},
	{Name: proto.AttrTotalJobs, Kind: KindLong, Access: ReadOnly},
	{Name: proto.AttrStateCount, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrComment, Kind: KindString, Access: OperSet | MgrSet},
	{Name: proto.AttrDefaultQueue, Kind: KindString, Access: MgrSet},
	// Checked by the server with qsub's parser (mgr.go).
	{Name: proto.AttrDefaultQsubArguments, Kind: KindString, Access: MgrSet},
	{Name: proto.AttrLogEvents, Kind: KindLong, Access: MgrSet},
	{Name: proto.AttrMailFrom, Kind: KindString, Access: MgrSet, Check: checkMailFrom},
	{Name: proto.AttrQueryOtherJobs, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrResourcesAvail, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesDefault, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesMax, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrDefaultChunk, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesAssigned, Kind: KindResources, Access: ReadOnly},
	{Name: proto.AttrSchedulerIteration, Kind: KindLong, Access: MgrSet, Check: mustPositive},
	{Name: proto.AttrSchedCycleLength, Kind: KindDuration, Access: MgrSet},
	{Name: proto.AttrBackfillDepth, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
}, runLimitDefs(), []Def{
	{Name: proto.AttrMaxQueuable, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
	{Name: proto.AttrMaxUserQueuable, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
	{Name: proto.AttrManagers, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrOperators, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrAclHostEnableSvr, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclHosts, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrAclUserEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclUsers, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrAclRoots, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrResvEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclResvUserEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclResvUsers, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrReserveRetryTime, Kind: KindLong, Access: MgrSet, Check: mustPositive, Aliases: []string{proto.AttrReserveRetryInit}},
	{Name: proto.AttrNodePack, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrDefaultNode, Kind: KindString, Access: MgrSet},
	{Name: proto.AttrNodeFailRequeue, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrNodeCheckRate, Kind: KindLong, Access: MgrSet, Check: mustPositive},
	{Name: proto.AttrKillDelay, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrJobHistoryEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrJobHistoryDuration, Kind: KindDuration, Access: MgrSet},
	{Name: proto.AttrKeepCompleted, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrEligibleTimeEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrFlatUID, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrJobscriptMaxSize, Kind: KindSize, Access: MgrSet},
	{Name: proto.AttrSubmissionFilters, Kind: KindList, Access: MgrSet, Check: checkFilterPaths},
	{Name: proto.AttrSubmissionFilterTimeout, Kind: KindLong, Access: MgrSet, Check: checkFilterTimeout},
	{Name: proto.AttrStagefailWait, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrMaxArraySize, Kind: KindLong, Access: MgrSet, Check: mustPositive},
	{Name: proto.AttrPbsVersion, Kind: KindString, Access: ReadOnly},
	// next_job_number is the store's sequence (the server moves it on
	// set, never back); it is not kept among the server's attributes.
	{Name: proto.AttrNextJobNumber, Kind: KindLong, Access: MgrSet},
}))

// runLimitDefs are the run limits the server and every queue have (the
// scheduler keeps them): counts of running jobs, what they hold per user
// and group, and the soft forms of both.
func runLimitDefs() []Def {
	return []Def{
		{Name: proto.AttrMaxRunning, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
		{Name: proto.AttrMaxUserRun, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
		{Name: proto.AttrMaxGroupRun, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
		{Name: proto.AttrMaxUserRunSoft, Kind: KindLong, Access: OperSet | MgrSet, Check: mustSoftLimit},
		{Name: proto.AttrMaxGroupRunSoft, Kind: KindLong, Access: OperSet | MgrSet, Check: mustSoftLimit},
		{Name: proto.AttrMaxUserRes, Kind: KindResources, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxGroupRes, Kind: KindResources, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxUserResSoft, Kind: KindResources, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxGroupResSoft, Kind: KindResources, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxRun, Kind: KindEntity, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxRunSoft, Kind: KindEntity, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxRunRes, Kind: KindEntityRes, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxRunResSoft, Kind: KindEntityRes, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxQueued, Kind: KindEntity, Access: OperSet | MgrSet},
		{Name: proto.AttrMaxQueuedRes, Kind: KindEntityRes, Access: OperSet | MgrSet},
		{Name: proto.AttrQueuedJobsThreshold, Kind: KindEntity, Access: OperSet | MgrSet},
		{Name: proto.AttrQueuedJobsThresholdRes, Kind: KindEntityRes, Access: OperSet | MgrSet},
	}
}

// SchedOnServer are the attributes of the sched object that are the
// server's own: OpenPBS keeps scheduling and scheduler_iteration of its
// default scheduler and of its server in step, and this server already
// had sched_cycle_length, enforced on the cycle (internal/server/sched.go).
// The server object stores them, so that setting one through the sched or
// through the server is the same change.
var SchedOnServer = []string{proto.AttrScheduling, proto.AttrSchedulerIteration, proto.AttrSchedCycleLength}

// onServer is the server's definition of a SchedOnServer attribute, set
// by managers only on the sched object (OpenPBS's MGR_ONLY_SET there),
// with the server's kind and checks: one value, one way to parse it.
func onServer(name string) Def {
	d, ok := ServerDefs.Lookup(name)
	if !ok {
		panic("model: sched attribute " + name + " is not a server attribute")
	}
	d.Access = MgrSet
	return d
}

// checkBackfillFuzzy accepts the opt_backfill_fuzzy this scheduler has:
// off (0 seconds, OpenPBS's other way to say it). Its backfill computes
// every start time exactly; OpenPBS's low, medium, high or a number of
// seconds would coarsen them, which nothing here does, so they are
// refused rather than stored and ignored.
func checkBackfillFuzzy(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0":
		return "off", nil
	}
	return "", proto.Errorf(proto.PBSE_BADATVAL, "%s = %q: this scheduler's backfill computes every start time exactly and has no fuzziness; only off is taken", proto.AttrOptBackfillFuzzy, v)
}

// SchedDefs is the attribute table of the sched object, in OpenPBS's
// order of "list sched". The read-only ones are the server's view of its
// scheduler, computed when shown (internal/server/schedobj.go).
var SchedDefs = newTable(proto.ObjSched, []Def{
	{Name: proto.AttrSchedHost, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrSchedPort, Kind: KindLong, Access: ReadOnly},
	{Name: proto.AttrPbsVersion, Kind: KindString, Access: ReadOnly},
	onServer(proto.AttrSchedCycleLength),
	{Name: proto.AttrOptBackfillFuzzy, Kind: KindString, Access: MgrSet, Check: checkBackfillFuzzy},
	{Name: proto.AttrSchedPriv, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrSchedLog, Kind: KindString, Access: ReadOnly},
	onServer(proto.AttrScheduling),
	onServer(proto.AttrSchedulerIteration),
	{Name: proto.AttrSchedState, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrLogEvents, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
})

// QueueDefs is the queue attribute table.
var QueueDefs = newTable(proto.ObjQueue, slices.Concat([]Def{
	{Name: proto.AttrQueueTypeQ, Kind: KindString, Access: MgrSet, Check: queueTypeCheck},
	{Name: proto.AttrQPriority, Kind: KindLong, Access: MgrSet},
	{Name: proto.AttrBackfillDepth, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrTotalJobs, Kind: KindLong, Access: ReadOnly},
	{Name: proto.AttrStateCount, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrMaxQueuable, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
	{Name: proto.AttrMaxUserQueuable, Kind: KindLong, Access: OperSet | MgrSet, Check: mustNonNegative},
}, runLimitDefs(), []Def{
	{Name: proto.AttrResourcesMax, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesMin, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesDefault, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesAvail, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrDefaultChunk, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesAssigned, Kind: KindResources, Access: ReadOnly},
	{Name: proto.AttrMaxArraySize, Kind: KindLong, Access: MgrSet, Check: mustPositive},
	{Name: proto.AttrAclHostEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclHosts, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrAclUserEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclUsers, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrAclGroupEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrAclGroups, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrRouteDestinations, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrRouteHeldJobs, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrRouteWaitingJobs, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrRouteRetryTime, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrRouteLifetime, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrFromRouteOnly, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrKillDelay, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrKeepCompleted, Kind: KindLong, Access: MgrSet, Check: mustNonNegative},
	{Name: proto.AttrHasNodes, Kind: KindBool, Access: ReadOnly},
	{Name: proto.AttrSubmissionFilters, Kind: KindList, Access: MgrSet, Check: checkFilterPaths},
	{Name: proto.AttrActivationFilters, Kind: KindList, Access: MgrSet, Check: checkFilterPaths},
	{Name: proto.AttrComment, Kind: KindString, Access: OperSet | MgrSet},
	{Name: proto.AttrEnabled, Kind: KindBool, Access: OperSet | MgrSet},
	{Name: proto.AttrStarted, Kind: KindBool, Access: OperSet | MgrSet},
}))

// ResourceDefs are the attributes of a custom resource, for qmgr's
// parsing and printing; the server reads them itself (resc.ParseTypeName,
// resc.ParseFlags) and keeps the definition typed.
var ResourceDefs = newTable(proto.ObjResource, []Def{
	{Name: proto.AttrResourceType, Kind: KindString, Access: MgrSet},
	{Name: proto.AttrResourceFlag, Kind: KindString, Access: MgrSet},
})

// NodeDefs is the node attribute table.
var NodeDefs = newTable(proto.ObjNode, []Def{
	{Name: proto.AttrNodeMom, Kind: KindString, Access: MgrSet},
	{Name: proto.AttrNodePort, Kind: KindLong, Access: MgrSet, Check: portCheck},
	{Name: proto.AttrNodeVersion, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrNodeNtype, Kind: KindString, Access: MgrSet, Check: ntypeCheck},
	{Name: proto.AttrNodeState, Kind: KindString, Access: OperSet | MgrSet, Check: nodeStateCheck},
	{Name: proto.AttrNodePcpus, Kind: KindLong, Access: ReadOnly},
	{Name: proto.AttrNodeJobs, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrResourcesAvail, Kind: KindResources, Access: MgrSet},
	{Name: proto.AttrResourcesAssigned, Kind: KindResources, Access: ReadOnly},
	{Name: proto.AttrNodeLoadave, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrNodeIdealLoad, Kind: KindString, Access: MgrSet, Check: loadCheck},
	{Name: proto.AttrNodeMaxLoad, Kind: KindString, Access: MgrSet, Check: loadCheck},
	{Name: proto.AttrNodeProperties, Kind: KindList, Access: MgrSet},
	{Name: proto.AttrComment, Kind: KindString, Access: OperSet | MgrSet},
	{Name: proto.AttrNodeOfflineByCheck, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrNodeResvEnable, Kind: KindBool, Access: MgrSet},
	{Name: proto.AttrNodeResvs, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrNodeSharing, Kind: KindString, Access: ReadOnly},
	{Name: proto.AttrNodeLastState, Kind: KindTime, Access: ReadOnly},
	{Name: proto.AttrNodeLastUsed, Kind: KindTime, Access: ReadOnly},
})

func portCheck(v string) (string, error) {
	n, _ := strconv.Atoi(v)
	if n <= 0 || n > 65535 {
		return "", proto.Errorf(proto.PBSE_BADNDATVAL, "Port = %s (want 1-65535)", v)
	}
	return v, nil
}

// Node states a manager or operator may set.
const (
	NodeFree    = "free"
	NodeOffline = "offline"
	NodeDown    = "down"
	NodeBusy    = "busy"
	NodeUnknown = "state-unknown"
	// NodeStale is a vnode its mom reported and no longer does (OpenPBS's
	// spelling, capital S).
	NodeStale   = "Stale"
	NodeJobBusy = "job-busy"
	NodeJobExcl = "job-exclusive"
)

// Node types: an ordinary node ("PBS", OpenPBS's name; "cluster", the
// classic one) takes jobs by placement; a time-shared one (":ts" in a
// nodes file) is where load balancing sends jobs.
const (
	NodePBS        = "PBS"
	NodeCluster    = "cluster"
	NodeTimeShared = "time-shared"
)

// NewNode is a node as created, before any attribute asked for: of mom
// host mom and port, its resources_available.host host, sharing by
// default (qmgr's create node, and a vnode its mom's definitions make).
func NewNode(name, mom, port, host string) *Object {
	o := NewObject(name)
	o.Set(proto.AttrNodeMom, "", mom)
	o.Set(proto.AttrNodePort, "", port)
	o.Set(proto.AttrNodeNtype, "", NodePBS)
	o.Set(proto.AttrNodeSharing, "", "default_shared")
	o.Set(proto.AttrResourcesAvail, proto.ResHost, host)
	o.Set(proto.AttrResourcesAvail, "vnode", name)
	return o
}

func ntypeCheck(v string) (string, error) {
	switch v {
	case NodePBS, NodeCluster, NodeTimeShared:
		return v, nil
	}
	return "", proto.Errorf(proto.PBSE_BADNDATVAL, "ntype = %s (PBS, cluster or time-shared)", v)
}

// loadCheck accepts a load average limit: a non-negative number.
func loadCheck(v string) (string, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", proto.Errorf(proto.PBSE_BADNDATVAL, "load %s (want a non-negative number)", v)
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

func nodeStateCheck(v string) (string, error) {
	switch v {
	case NodeFree, NodeOffline:
		return v, nil
	}
	return "", proto.Errorf(proto.PBSE_BADNDATVAL, "state = %s (only free or offline may be set)", v)
}

// ValidName reports whether s is acceptable as a queue or node name: a
// letter first, then letters, digits, '-', '_' or '.' (at most 64 chars).
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !(c >= '0' && c <= '9') && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// checkName returns PBSE_IVAL_OBJ_NAME for an unacceptable object name.
func checkName(kind, s string) error {
	if !ValidName(s) {
		return proto.Errorf(proto.PBSE_IVAL_OBJ_NAME, "%s name %q (a letter, then letters, digits, '-', '_' or '.')", kind, s)
	}
	return nil
}

// CheckQueueName validates a queue name.
func CheckQueueName(s string) error { return checkName("queue", s) }

// CheckNodeName validates a node name: a queue's rule, optionally followed
// by one bracketed index of letters, digits, '-', '_' or '.', as OpenPBS
// names the vnodes a mom splits its host into ("host[0]", "host[sock1]").
func CheckNodeName(s string) error {
	base, idx, bracket := strings.Cut(s, "[")
	if !bracket {
		return checkName("node", s)
	}
	inner, ok := strings.CutSuffix(idx, "]")
	if !ValidName(base) || len(s) > 64 || !ok || !validIndex(inner) {
		return proto.Errorf(proto.PBSE_IVAL_OBJ_NAME, "node name %q (a letter, then letters, digits, '-', '_' or '.', then at most one [INDEX] of those)", s)
	}
	return nil
}

// validIndex checks the index of a vnode name: the characters of a name,
// a digit first too.
func validIndex(s string) bool { return s != "" && ValidName("x"+s) }

// DefaultServer returns the server object a fresh PBS_HOME starts with.
func DefaultServer(name, manager string) *Object {
	o := NewObject(name)
	o.Set(proto.AttrScheduling, "", "True")
	o.Set(proto.AttrDefaultQueue, "", "workq")
	o.Set(proto.AttrLogEvents, "", "511")
	o.Set(proto.AttrQueryOtherJobs, "", "True")
	o.Set(proto.AttrSchedulerIteration, "", "600")
	o.Set(proto.AttrResourcesDefault, "ncpus", "1")
	o.Set(proto.AttrDefaultChunk, "ncpus", "1")
	o.Set(proto.AttrJobHistoryEnable, "", "True")
	o.Set(proto.AttrJobHistoryDuration, "", "336:00:00")
	if manager != "" {
		o.Set(proto.AttrManagers, "", manager)
	}
	return o
}

// DefaultQueue returns the execution queue workq of a fresh PBS_HOME.
func DefaultQueue() *Object {
	q := NewObject("workq")
	q.Set(proto.AttrQueueTypeQ, "", "Execution")
	q.Set(proto.AttrEnabled, "", "True")
	q.Set(proto.AttrStarted, "", "True")
	return q
}

// ErrNoAttr formats the error for an unknown attribute.
func ErrNoAttr(a proto.Attr) error { return proto.Errorf(proto.PBSE_NOATTR, "%s", a.FullName()) }
