package sched

import (
	"strconv"

	"github.com/gopbs/gopbs/internal/logging/logclass"
	"github.com/gopbs/gopbs/proto"
)

// The sched object's log_events (qmgr set sched log_events = N) is
// OpenPBS's mask of the event classes the scheduler logs: a class whose
// bit is clear is not logged. This system's classes are OpenPBS's first
// nine bits (logclass); the bits above them (resv, debug3, debug4,
// force) name classes no line here has, so they change nothing. Error
// lines are logged whatever the mask, as OpenPBS forces its error lines.
// sched_config's log_filter (a mask of classes not logged) still applies:
// a line is logged when neither leaves it out. While log_events is unset,
// log_filter alone decides, as before the sched object existed.

// knownClasses are the bits of every class lines here have.
var knownClasses = func() uint32 {
	var m uint32
	for _, c := range logclass.All() {
		m |= uint32(c)
	}
	return m
}()

// eventsOff is the mask of the classes a log_events leaves out.
func eventsOff(events uint32) uint32 { return knownClasses &^ events }

// notLogged is the mask of classes the filter drops for a log_filter and
// the classes log_events leaves out.
func notLogged(filter, off uint32) uint32 {
	return (filter | off) &^ uint32(logclass.Error)
}

// applyLogMask sets the filter from the two masks (r.mu held, or before
// the runner serves).
func (r *runner) applyLogMask() {
	r.logFilter.SetMask(notLogged(r.filterMask, r.eventsOff))
}

// readLogEvents asks the server for the sched object's log_events at a
// cycle's start and at a CONFIGURE, when the scheduler is its client, and
// applies a change. A server that does not answer (one older than the
// sched object) leaves the mask as it was.
func (r *runner) readLogEvents(c *proto.Client) {
	objs, _, err := c.StatusSched(&proto.StatusRequest{IDs: []string{proto.DefaultSched}, Attrs: []string{proto.AttrLogEvents}})
	if err != nil || len(objs) != 1 {
		r.log.Debug("log_events of the sched object not read", "error", err, logclass.Key, logclass.Admin)
		return
	}
	var off uint32
	if v, ok := objs[0].Get(proto.AttrLogEvents); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			r.log.Warn("log_events of the sched object is not a mask; ignored", "value", v, logclass.Key, logclass.Admin)
			return
		}
		off = eventsOff(uint32(n))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if off == r.eventsOff {
		return
	}
	r.eventsOff = off
	r.applyLogMask()
	// At admin class, so a mask without admin drops this line too; the
	// server's log has the manager request either way.
	r.log.Info("log_events changed", "not_logged", logclass.Describe(r.logFilter.Mask()), logclass.Key, logclass.Admin)
}
