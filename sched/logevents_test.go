package sched

import (
	"testing"

	"github.com/gopbs/gopbs/internal/logging/logclass"
)

// The classes the filter drops for a sched_config log_filter and the
// sched object's log_events: a class is logged when log_events has its
// bit and log_filter has not; errors always are.
func TestNotLogged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		filter, events, want uint32
	}{
		// OpenPBS's default, 767, drops debug2, as log_filter 256 does.
		{256, 767, 256},
		{0, 767, 256},
		// OpenPBS's 2047 (every class up to debug4) drops nothing.
		{0, 2047, 0},
		{8, 2047, 8},
		// log_events 0 drops every class but error.
		{0, 0, 0x1fe},
		// Bits of classes no line here has change nothing.
		{0, 0x1ff | 0x1000, 0},
		{0, uint32(logclass.Job) | uint32(logclass.Sched), 0x1ff &^ 0x49},
	} {
		if got := notLogged(tt.filter, eventsOff(tt.events)); got != tt.want {
			t.Errorf("notLogged(%#x, log_events %#x) = %#x (%s), want %#x (%s)", tt.filter, tt.events, got, logclass.Describe(got), tt.want, logclass.Describe(tt.want))
		}
	}
}
