package model

import "github.com/gopbs/gopbs/proto"

// A node's health: its mom runs the site's health check and reports the
// verdict with each status report ("" when it passes). A failing check
// takes the node offline with the verdict as its comment, and marks the
// offline as the check's (AttrNodeOfflineByCheck, stored with the node,
// so a restarted server still knows). A passing check brings back only
// an offline so marked, and clears the comment only while it is still
// the check's; an offline of an operator or manager is theirs (a
// manager's change of the state clears the mark: see ClearHealthMark).

// HealthChange is what a health report does to a node.
type HealthChange uint8

// Health changes.
const (
	HealthSame    HealthChange = iota // nothing to change
	HealthOffline                     // the check failed: the node goes offline
	HealthMessage                     // the check still fails, with another message
	HealthOnline                      // the check passes again: the node comes back
)

// ApplyHealth returns the node n becomes on a report of health, and what
// changed (n itself, unchanged, with HealthSame).
func ApplyHealth(n *Object, health string) (*Object, HealthChange) {
	state, _ := n.Get(proto.AttrNodeState)
	mark, _ := n.Get(proto.AttrNodeOfflineByCheck)
	comment, _ := n.Get(proto.AttrComment)
	switch {
	case health != "" && state != NodeOffline:
		c := n.Clone()
		c.Set(proto.AttrNodeState, "", NodeOffline)
		c.Set(proto.AttrComment, "", health)
		c.Set(proto.AttrNodeOfflineByCheck, "", health)
		return c, HealthOffline
	case health != "" && mark != "" && mark != health:
		c := n.Clone()
		c.Set(proto.AttrNodeOfflineByCheck, "", health)
		if comment == mark {
			c.Set(proto.AttrComment, "", health)
		}
		return c, HealthMessage
	case health == "" && mark != "":
		c := n.Clone()
		c.Unset(proto.AttrNodeOfflineByCheck, "")
		if state == NodeOffline {
			c.Set(proto.AttrNodeState, "", NodeFree)
		}
		if comment == mark {
			c.Unset(proto.AttrComment, "")
		}
		return c, HealthOnline
	}
	return n, HealthSame
}

// ClearHealthMark makes an offline the manager's: after a request that
// set or unset the node's state, a passing check no longer brings the
// node back (a failing one takes it offline again if it was cleared).
func ClearHealthMark(n *Object, attrs []proto.Attr) {
	for _, a := range attrs {
		if a.Name == proto.AttrNodeState {
			n.Unset(proto.AttrNodeOfflineByCheck, "")
			return
		}
	}
}
