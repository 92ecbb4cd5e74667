package hook

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/proto"
)

// Hook is one site hook: what qmgr sets on it and what it imported.
type Hook struct {
	Name    string `msgpack:"name"`
	Enabled bool   `msgpack:"enabled"`
	Events  Events `msgpack:"events"`
	User    User   `msgpack:"user"`
	// Alarm is how many seconds a run may take before it is killed.
	Alarm int `msgpack:"alarm"`
	// Order ranks the hooks of one event, lowest first.
	Order int `msgpack:"order"`
	// Freq is how many seconds apart a periodic hook runs.
	Freq       int        `msgpack:"freq"`
	Debug      bool       `msgpack:"debug"`
	FailAction FailAction `msgpack:"fail_action"`
	// Script is the Python source, as imported ("" before any import).
	Script []byte `msgpack:"script"`
	// Config is the hook's configuration file as imported, its suffix
	// (".json", ".ini"...) kept for pbs.hook_config_filename's name.
	Config       []byte `msgpack:"config"`
	ConfigSuffix string `msgpack:"config_suffix"`
}

// OpenPBS's defaults for a new hook.
const (
	DefaultAlarm = 30
	DefaultOrder = 1
	DefaultFreq  = 120
	// MinOrder and MaxOrder bound a site hook's order.
	MinOrder = 1
	MaxOrder = 1000
	// MaxContent bounds an imported script or configuration file.
	MaxContent = 4 << 20
)

// New makes hook name with OpenPBS's defaults, after checking the name.
func New(name string) (*Hook, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return &Hook{Name: name, Enabled: true, User: PbsAdmin, Alarm: DefaultAlarm, Order: DefaultOrder, Freq: DefaultFreq}, nil
}

// hookName is what a hook may be called: it names a file in PBS_HOME
// and a Python log tag, so letters, digits, '_' and '-', starting with
// a letter or '_'.
var hookName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)

// CheckName refuses a hook name that is not one.
func CheckName(name string) error {
	if !hookName.MatchString(name) {
		return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: fmt.Sprintf("hook name %q: letters, digits, _ and -, starting with a letter or _, at most 63", name)}
	}
	if strings.HasPrefix(name, "PBS") {
		return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: fmt.Sprintf("hook_name '%s', cannot use PBS as a prefix it is reserved for pbs hooks", name)}
	}
	return nil
}

// Clone copies h; Script and Config are shared (they are replaced whole,
// never changed in place).
func (h *Hook) Clone() *Hook { c := *h; return &c }

// User is who a hook runs as.
type User uint8

// Users.
const (
	// PbsAdmin runs the hook as the daemon's own user (root).
	PbsAdmin User = iota
	// PbsUser runs an execution host's hook as the job's owner.
	PbsUser
)

func (u User) String() string {
	if u == PbsUser {
		return "pbsuser"
	}
	return "pbsadmin"
}

// FailAction is what is done when a hook fails (raises, or runs past its
// alarm), a set of flags; none is the empty set.
type FailAction uint8

// Fail actions, OpenPBS's.
const (
	OfflineVnodes FailAction = 1 << iota
	ClearVnodesUponRecovery
	SchedulerRestartCycle
)

var failNames = []struct {
	f    FailAction
	name string
}{{OfflineVnodes, "offline_vnodes"}, {ClearVnodesUponRecovery, "clear_vnodes_upon_recovery"}, {SchedulerRestartCycle, "scheduler_restart_cycle"}}

func (f FailAction) String() string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for _, n := range failNames {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, ",")
}

// ParseFailAction reads fail_action's value.
func ParseFailAction(s string) (FailAction, error) {
	var f FailAction
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "none" {
			if len(strings.Split(s, ",")) > 1 {
				return 0, fmt.Errorf("fail_action value of a hook must be \"none\" or one or more of \"offline_vnodes\",\"clear_vnodes_upon_recovery\", \"scheduler_restart_cycle\"")
			}
			continue
		}
		i := slices.IndexFunc(failNames, func(n struct {
			f    FailAction
			name string
		}) bool {
			return n.name == part
		})
		if i < 0 {
			return 0, fmt.Errorf("fail_action value of a hook must be \"none\" or one or more of \"offline_vnodes\",\"clear_vnodes_upon_recovery\", \"scheduler_restart_cycle\"")
		}
		f |= failNames[i].f
	}
	return f, nil
}

// Attribute names of a hook, OpenPBS's.
const (
	AttrType       = "type"
	AttrEnabled    = "enabled"
	AttrEvent      = "event"
	AttrUser       = "user"
	AttrAlarm      = "alarm"
	AttrOrder      = "order"
	AttrFreq       = "freq"
	AttrDebug      = "debug"
	AttrFailAction = "fail_action"
)

// attrOrder is the order qmgr lists a hook's attributes in.
var attrOrder = []string{AttrType, AttrEnabled, AttrEvent, AttrUser, AttrAlarm, AttrFreq, AttrOrder, AttrDebug, AttrFailAction}

// Wire is h as the server gives it to the moms.
func (h *Hook) Wire() proto.MomHook {
	return proto.MomHook{Name: h.Name, Enabled: h.Enabled, Events: uint64(h.Events), User: uint8(h.User),
		Alarm: h.Alarm, Order: h.Order, Freq: h.Freq, Debug: h.Debug, FailAction: uint8(h.FailAction),
		Script: h.Script, Config: h.Config}
}

// FromWire is the hook a mom got.
func FromWire(w proto.MomHook) *Hook {
	return &Hook{Name: w.Name, Enabled: w.Enabled, Events: Events(w.Events), User: User(w.User),
		Alarm: w.Alarm, Order: w.Order, Freq: w.Freq, Debug: w.Debug, FailAction: FailAction(w.FailAction),
		Script: w.Script, Config: w.Config}
}

// AttrNames are the attributes a hook has, in the order qmgr lists them
// (and print sets them: the events before what depends on them).
func AttrNames() []string { return slices.Clone(attrOrder) }

// ListAttr reports whether attribute name holds a comma list, which
// qmgr's print writes as "=" then "+=" per element.
func ListAttr(name string) bool { return name == AttrEvent || name == AttrFailAction }

// Attrs renders the hook's attributes in qmgr's order, as "list hook"
// shows them (freq only for a hook of a periodic event).
func (h *Hook) Attrs() []proto.Attr {
	out := make([]proto.Attr, 0, len(attrOrder))
	for _, name := range attrOrder {
		var v string
		switch name {
		case AttrType:
			v = "site"
		case AttrEnabled:
			v = formatBool(h.Enabled)
		case AttrEvent:
			if v = h.Events.String(); v == "" {
				v = `""`
			}
		case AttrUser:
			v = h.User.String()
		case AttrAlarm:
			v = strconv.Itoa(h.Alarm)
		case AttrFreq:
			if !h.Events.Has(Periodic) && !h.Events.Has(ExechostPeriodic) {
				continue
			}
			v = strconv.Itoa(h.Freq)
		case AttrOrder:
			v = strconv.Itoa(h.Order)
		case AttrDebug:
			v = formatBool(h.Debug)
		case AttrFailAction:
			v = h.FailAction.String()
		}
		out = append(out, proto.Attr{Name: name, Value: v})
	}
	return out
}

// formatBool is OpenPBS's form of a hook's booleans (lower case, unlike
// other objects' True and False).
func formatBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// hookErr is a refusal of a hook's attribute, in OpenPBS's words.
func hookErr(format string, args ...any) error {
	return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: fmt.Sprintf(format, args...)}
}

// Set applies one qmgr set (=, += or -=) or unset of an attribute; the
// hook is changed only when the whole value is good. As OpenPBS does, a
// change of the events resets what no longer fits them (freq, user,
// fail_action) to its default.
func (h *Hook) Set(a proto.Attr) error {
	name := strings.ToLower(a.Name)
	if a.Resource != "" {
		return hookErr("Undefined attribute  - %s", a.FullName())
	}
	next := *h
	if a.Op == proto.OpUnset {
		d, _ := New(h.Name)
		switch name {
		case AttrEnabled:
			next.Enabled = d.Enabled
		case AttrEvent:
			next.Events = 0
		case AttrUser:
			next.User = d.User
		case AttrAlarm:
			next.Alarm = d.Alarm
		case AttrOrder:
			next.Order = d.Order
		case AttrFreq:
			next.Freq = d.Freq
		case AttrDebug:
			next.Debug = d.Debug
		case AttrFailAction:
			next.FailAction = 0
		case AttrType:
			return hookErr("can't unset hook's type")
		default:
			return hookErr("Undefined attribute  - %s", a.Name)
		}
		next.fit()
		*h = next
		return nil
	}
	if a.Op != proto.OpSet && name != AttrEvent && name != AttrFailAction {
		switch name {
		case AttrType, AttrEnabled, AttrUser, AttrAlarm, AttrOrder, AttrFreq, AttrDebug:
			return hookErr("'%s' operator not =", name)
		}
	}
	v := strings.TrimSpace(a.Value)
	switch name {
	case AttrType:
		switch v {
		case "site":
		case "pbs":
			return hookErr("not allowed to set hook to 'pbs' type")
		default:
			return hookErr("invalid argument to type, must be \"site\"")
		}
	case AttrEnabled, AttrDebug:
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		if name == AttrEnabled {
			next.Enabled = b
		} else {
			next.Debug = b
		}
	case AttrEvent:
		set, err := ParseEvents(unquote(v))
		if err != nil {
			return hookErr("%v", err)
		}
		next.Events = applyOp(next.Events, set, a.Op)
		next.fit()
	case AttrUser:
		switch v {
		case "pbsadmin":
			next.User = PbsAdmin
		case "pbsuser":
			if next.Events&userEvents == 0 {
				return hookErr("Can't set hook user value to 'pbsuser': hook event must contain at least execjob_prologue,execjob_epilogue,execjob_preterm")
			}
			next.User = PbsUser
		default:
			return hookErr("user value of a hook must be pbsadmin,pbsuser")
		}
	case AttrAlarm:
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return hookErr("set_hook_alarm: alarm value '%s' of a hook must be > 0", v)
		}
		next.Alarm = n
	case AttrFreq:
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || n <= 0:
			return hookErr("set_hook_freq: freq value '%s' of a hook must be > 0", v)
		case !next.Events.Has(Periodic) && !next.Events.Has(ExechostPeriodic):
			return hookErr("set_hook_freq: Can't set hook freq value: hook event must contain at least 'exechost_periodic' or 'periodic'")
		}
		next.Freq = n
	case AttrOrder:
		n, err := strconv.Atoi(v)
		if err != nil || n < MinOrder || n > MaxOrder {
			if err != nil {
				n = 0 // OpenPBS reads it with atoi
			}
			return &proto.Error{Code: proto.PBSE_ATVALERANGE, Text: fmt.Sprintf("order given (%d) is outside the acceptable range of [%d, %d] for type 'site'.", n, MinOrder, MaxOrder)}
		}
		next.Order = n
	case AttrFailAction:
		f, err := ParseFailAction(unquote(v))
		if err != nil {
			return hookErr("%v", err)
		}
		next.FailAction = FailAction(applyOp(Events(next.FailAction), Events(f), a.Op))
		if err := next.checkFailAction(); err != nil {
			return err
		}
	default:
		return hookErr("Undefined attribute  - %s", a.Name)
	}
	*h = next
	return nil
}

// parseBool reads enabled and debug as OpenPBS does.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "t", "y", "1":
		return true, nil
	case "false", "f", "n", "0":
		return false, nil
	}
	return false, hookErr("unexpected value '%s', must be (not case sensitive) true|t|y|1|false|f|n|0", v)
}

// applyOp applies a set, += or -= of a set of flags.
func applyOp(cur, v Events, op proto.Op) Events {
	switch op {
	case proto.OpIncr:
		return cur | v
	case proto.OpDecr:
		return cur &^ v
	}
	return v
}

// unquote drops the quotes qmgr users write around a list
// (event = "queuejob,modifyjob").
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// The events that allow what a hook's other attributes may say.
const (
	// userEvents may run as pbsuser.
	userEvents = Events(ExecjobPrologue) | Events(ExecjobEpilogue) | Events(ExecjobPreterm)
	// offlineEvents may take their vnodes offline on a failure.
	offlineEvents = Events(ExecjobBegin) | Events(ExecjobPrologue) | Events(ExechostStartup)
	// restartEvents may restart the scheduler's cycle on a failure.
	restartEvents = Events(ExecjobBegin) | Events(ExecjobPrologue)
)

// fit resets, after a change of the events, what no longer fits them.
func (h *Hook) fit() {
	if !h.Events.Has(Periodic) && !h.Events.Has(ExechostPeriodic) {
		h.Freq = DefaultFreq
	}
	if h.Events&userEvents == 0 {
		h.User = PbsAdmin
	}
	if h.Events&offlineEvents == 0 {
		h.FailAction = 0
	}
	if h.Events&Events(ExechostStartup) == 0 {
		h.FailAction &^= ClearVnodesUponRecovery
	}
	if h.Events&restartEvents == 0 {
		h.FailAction &^= SchedulerRestartCycle
	}
}

// checkFailAction refuses a fail_action the hook's events cannot take.
func (h *Hook) checkFailAction() error {
	f := h.FailAction
	switch {
	case f&OfflineVnodes != 0 && h.Events&offlineEvents == 0:
		return hookErr("Can't set hook fail_action value to '%s': hook event must contain at least one of execjob_begin, exechost_startup, execjob_prologue", f)
	case f&ClearVnodesUponRecovery != 0 && !h.Events.Has(ExechostStartup):
		return hookErr("Can't set hook fail_action value to '%s': hook event must contain at least an exechost_startup value", f)
	case f&SchedulerRestartCycle != 0 && h.Events&restartEvents == 0:
		return hookErr("Can't set hook fail_action value to '%s': hook event must contain at least one of execjob_begin, execjob_prologue", f)
	}
	return nil
}

// Content types and encodings of import hook and export hook.
const (
	ContentPython = "application/x-python"
	ContentConfig = "application/x-config"
	EncDefault    = "default"
	EncBase64     = "base64"
)

// configSuffixes are the configuration file kinds OpenPBS takes, by the
// imported file's suffix.
var configSuffixes = []string{".json", ".py", ".txt", ".xml", ".ini", ""}

// CheckConfigSuffix refuses a configuration file of a kind OpenPBS does
// not take.
func CheckConfigSuffix(suffix string) error {
	if !slices.Contains(configSuffixes, suffix) {
		return hookErr("<input-file> contains an invalid suffix, should be one of: .json .py .txt .xml .ini")
	}
	return nil
}

// Ordered returns the enabled hooks of event e, by order and then name
// (OpenPBS runs hooks of one order in no promised order; a name makes it
// the same on every run and every host).
func Ordered(hooks []*Hook, e Event) []*Hook {
	var out []*Hook
	for _, h := range hooks {
		if h.Enabled && h.Events.Has(e) && len(h.Script) > 0 {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b *Hook) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	return out
}
