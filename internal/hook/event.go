package hook

import (
	"fmt"
	"math/bits"
	"strings"
)

// Event is one hook event, its value OpenPBS's (pbs.QUEUEJOB is 1, and
// so on), so that a script comparing pbs.event().type with a number it
// printed once still matches.
type Event uint64

// Events is a set of events, the bits of its members.
type Events uint64

// The events, OpenPBS's values (its HOOK_EVENT_* bits).
const (
	QueueJob           Event = 0x01
	ModifyJob          Event = 0x02
	ResvSub            Event = 0x04
	MoveJob            Event = 0x08
	RunJob             Event = 0x10
	Provision          Event = 0x20
	ExecjobBegin       Event = 0x40
	ExecjobPrologue    Event = 0x80
	ExecjobEpilogue    Event = 0x100
	ExecjobEnd         Event = 0x200
	ExecjobPreterm     Event = 0x400
	ExecjobLaunch      Event = 0x800
	ExechostPeriodic   Event = 0x1000
	ExechostStartup    Event = 0x2000
	ExecjobAttach      Event = 0x4000
	Periodic           Event = 0x8000
	ResvEnd            Event = 0x10000
	ExecjobResize      Event = 0x20000
	ExecjobAbort       Event = 0x40000
	ExecjobPostsuspend Event = 0x80000
	ExecjobPreresume   Event = 0x100000
	Management         Event = 0x200000
	ModifyVnode        Event = 0x400000
	JobObit            Event = 0x800000
	ResvBegin          Event = 0x1000000
	ResvConfirm        Event = 0x2000000
	ModifyResv         Event = 0x4000000
)

// eventNames are the events' names, as qmgr's event attribute and
// pbs.event().type's name read them, in the order OpenPBS shows them.
var eventNames = []struct {
	e    Event
	name string
}{
	{QueueJob, "queuejob"}, {ModifyJob, "modifyjob"}, {ResvSub, "resvsub"},
	{ModifyResv, "modifyresv"}, {MoveJob, "movejob"}, {RunJob, "runjob"},
	{JobObit, "jobobit"}, {Management, "management"}, {ModifyVnode, "modifyvnode"},
	{Periodic, "periodic"}, {Provision, "provision"}, {ResvConfirm, "resv_confirm"},
	{ResvBegin, "resv_begin"}, {ResvEnd, "resv_end"},
	{ExecjobBegin, "execjob_begin"}, {ExecjobPrologue, "execjob_prologue"},
	{ExecjobEpilogue, "execjob_epilogue"}, {ExecjobEnd, "execjob_end"},
	{ExecjobPreterm, "execjob_preterm"}, {ExecjobLaunch, "execjob_launch"},
	{ExecjobAttach, "execjob_attach"}, {ExecjobResize, "execjob_resize"},
	{ExecjobAbort, "execjob_abort"}, {ExecjobPostsuspend, "execjob_postsuspend"},
	{ExecjobPreresume, "execjob_preresume"},
	{ExechostPeriodic, "exechost_periodic"}, {ExechostStartup, "exechost_startup"},
}

// unsupported are events OpenPBS has that this system does not raise,
// with the reason a hook set for one is refused (rather than stored and
// never run).
var unsupported = map[Event]string{
	Provision:     "there is no provisioning here (no aoe resource)",
	ExecjobAttach: "pbs_attach is not supported",
}

func (e Event) String() string {
	for _, n := range eventNames {
		if n.e == e {
			return n.name
		}
	}
	return fmt.Sprintf("event(%#x)", uint64(e))
}

// ParseEvent reads one event's name.
func ParseEvent(name string) (Event, error) {
	name = strings.TrimSpace(name)
	for _, n := range eventNames {
		if n.name == name {
			if why, ok := unsupported[n.e]; ok {
				return 0, fmt.Errorf("event %s is not supported: %s", name, why)
			}
			return n.e, nil
		}
	}
	return 0, fmt.Errorf("invalid argument (%s) to event. Should be one or more of: %s or \"\" for no event", name, allNames())
}

// allNames lists the events' names, separated by commas.
func allNames() string {
	var names []string
	for _, e := range All() {
		names = append(names, e.String())
	}
	return strings.Join(names, ",")
}

// ParseEvents reads qmgr's event value: names separated by commas, or ""
// for none.
func ParseEvents(s string) (Events, error) {
	var set Events
	if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == `""` {
		return 0, nil
	}
	for _, part := range strings.Split(s, ",") {
		e, err := ParseEvent(part)
		if err != nil && strings.HasPrefix(err.Error(), "invalid argument") {
			return 0, fmt.Errorf("invalid argument (%s) to event. Should be one or more of: %s or \"\" for no event", s, allNames())
		}
		if err != nil {
			return 0, err
		}
		set |= Events(e)
	}
	return set, nil
}

// Has reports whether e is in the set.
func (s Events) Has(e Event) bool { return s&Events(e) != 0 }

// Len is how many events the set holds.
func (s Events) Len() int { return bits.OnesCount64(uint64(s)) }

// String renders the set as qmgr shows it: names in OpenPBS's order,
// separated by commas, "" for none.
func (s Events) String() string {
	var b strings.Builder
	for _, n := range eventNames {
		if s.Has(n.e) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

// Mom reports whether e is run by the moms (the execjob and exechost
// events), not by the server.
func (e Event) Mom() bool {
	switch e {
	case ExecjobBegin, ExecjobPrologue, ExecjobEpilogue, ExecjobEnd, ExecjobPreterm,
		ExecjobLaunch, ExecjobAttach, ExecjobResize, ExecjobAbort, ExecjobPostsuspend,
		ExecjobPreresume, ExechostPeriodic, ExechostStartup:
		return true
	}
	return false
}

// MomEvents is the set of the events the moms run.
func MomEvents() Events {
	var out Events
	for _, n := range eventNames {
		if n.e.Mom() {
			out |= Events(n.e)
		}
	}
	return out
}

// All lists every event this system raises, in OpenPBS's order (for the
// pbs module's constants and the README).
func All() []Event {
	var out []Event
	for _, n := range eventNames {
		if _, no := unsupported[n.e]; !no {
			out = append(out, n.e)
		}
	}
	return out
}
