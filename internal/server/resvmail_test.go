package server

import (
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/accounting"
	"github.com/gopbs/gopbs/internal/model"
)

// A reservation's records have OpenPBS's bodies, type by type.
func TestResvRecord(t *testing.T) {
	t.Parallel()
	r := &model.Resv{Seq: 7, Kind: model.ResvAdvance, Name: "maint", Owner: "alice@h1", Duration: 3600, Ctime: 1000,
		Occ: []model.ResvOcc{{Start: 2000}}, Select: "1:ncpus=2", Resources: map[string]string{"walltime": "01:00:00", "ncpus": "2"},
		AuthUsers: "alice@h1,bob"}
	body := func(kind byte, requestor string) string {
		line := accounting.Format(time.Unix(0, 0), kind, "R7.srv", resvRecord(kind, r, requestor))
		return strings.TrimSpace(strings.SplitN(line, ";", 4)[3])
	}
	tests := []struct {
		kind      byte
		requestor string
		want      string
	}{
		{accounting.ResvUnconfirmed, "alice@h1", "requestor=alice@h1"},
		{accounting.ResvConfirmed, "Scheduler@srv", "requestor=Scheduler@srv start=2000 end=5600 nodes="},
		{accounting.ResvRemoved, "Server@srv", "requestor=Server@srv"},
		{accounting.ResvDeleted, "alice@h1", "requestor=alice@h1"},
	}
	for _, tc := range tests {
		if got := body(tc.kind, tc.requestor); got != tc.want {
			t.Errorf("%c: %q, want %q", tc.kind, got, tc.want)
		}
	}
	b := body(accounting.ResvBegin, "")
	want := "owner=alice@h1 name=maint queue=R7 ctime=1000 start=2000 end=5600 duration=3600 Authorized_Users=alice@h1,bob Resource_List.ncpus=2"
	if !strings.HasPrefix(b, want) || !strings.Contains(b, "Resource_List.select=1:ncpus=2") || !strings.Contains(b, "Resource_List.walltime=01:00:00") {
		t.Errorf("B: %q, want it to begin %q", b, want)
	}
	r.Kind, r.Rrule, r.TZ, r.Count = model.ResvStanding, "FREQ=DAILY;COUNT=3", "Europe/Prague", 3
	if got := body(accounting.ResvUnconfirmed, "alice@h1"); got != `requestor=alice@h1 recurrence_rrule=FREQ=DAILY_COUNT=3 timezone=Europe/Prague` && got != `requestor=alice@h1 recurrence_rrule=FREQ=DAILY;COUNT=3 timezone=Europe/Prague` {
		t.Errorf("a standing U: %q", got)
	}
	if got := body(accounting.ResvConfirmed, "Scheduler@srv"); !strings.HasSuffix(got, " count=3") {
		t.Errorf("a standing Y: %q", got)
	}
}
