package resvspec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

func code(err error) proto.Code {
	var pe *proto.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return proto.PBSE_NONE
}

func TestParseAttrs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		attrs []proto.Attr
		code  proto.Code
		check func(*testing.T, *model.Resv, *Request)
	}{
		{"times and resources", []proto.Attr{
			{Name: proto.AttrResvStart, Value: "1000"}, {Name: proto.AttrResvDuration, Value: "00:10:00"},
			{Name: proto.AttrResourceList, Resource: "ncpus", Value: "2"}, {Name: proto.AttrResvName, Value: "night"},
		}, proto.PBSE_NONE, func(t *testing.T, r *model.Resv, p *Request) {
			if !p.StartSet || p.Start != 1000 || p.Duration != 600 || p.Resources["ncpus"] != "2" || r.Name != "night" {
				t.Errorf("got %+v, name %q", p, r.Name)
			}
		}},
		{"walltime is the duration", []proto.Attr{{Name: proto.AttrResourceList, Resource: proto.ResWalltime, Value: "1:00:00"}},
			proto.PBSE_NONE, func(t *testing.T, _ *model.Resv, p *Request) {
				if p.Duration != 3600 || len(p.Resources) != 0 {
					t.Errorf("got %+v", p)
				}
			}},
		{"users listed", []proto.Attr{{Name: proto.AttrAuthUsers, Value: "alice, bob"}}, proto.PBSE_NONE, func(t *testing.T, r *model.Resv, _ *Request) {
			if r.AuthUsers != "alice,bob" {
				t.Errorf("Authorized_Users %q", r.AuthUsers)
			}
		}},
		{"bad start", []proto.Attr{{Name: proto.AttrResvStart, Value: "soon"}}, proto.PBSE_BADTSPEC, nil},
		{"zero duration", []proto.Attr{{Name: proto.AttrResvDuration, Value: "0"}}, proto.PBSE_BADTSPEC, nil},
		{"shrink-to-fit", []proto.Attr{{Name: proto.AttrResourceList, Resource: proto.ResMinWalltime, Value: "10"}}, proto.PBSE_NOSTF_RESV, nil},
		{"control character in name", []proto.Attr{{Name: proto.AttrResvName, Value: "a\nb"}}, proto.PBSE_BADATVAL, nil},
		{"empty user list", []proto.Attr{{Name: proto.AttrAuthUsers, Value: " "}}, proto.PBSE_BADATVAL, nil},
		{"mail points", []proto.Attr{{Name: proto.AttrMailPoints, Value: "ax"}}, proto.PBSE_BADATVAL, nil},
		{"n with others", []proto.Attr{{Name: proto.AttrMailPoints, Value: "an"}}, proto.PBSE_BADATVAL, nil},
		{"not a reservation attribute", []proto.Attr{{Name: "Priority", Value: "1"}}, proto.PBSE_NOATTR, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p := &model.Resv{}, &Request{}
			err := ParseAttrs(tc.attrs, r, p)
			if got := code(err); got != tc.code || (tc.code != proto.PBSE_NONE) != (err != nil) {
				t.Fatalf("error %v (code %d), want code %d", err, got, tc.code)
			}
			if tc.check != nil {
				tc.check(t, r, p)
			}
		})
	}
}

func TestSettle(t *testing.T) {
	t.Parallel()
	const now = 1000
	for _, tc := range []struct {
		name                 string
		p                    Request
		start, end, duration int64
		why                  string // in the refusal
	}{
		{"start and duration", Request{Start: 2000, StartSet: true, Duration: 60}, 2000, 2060, 60, ""},
		{"end and duration", Request{End: 3000, EndSet: true, Duration: 100}, 2900, 3000, 100, ""},
		{"now and duration", Request{Duration: 10}, now, now + 10, 10, ""},
		{"start and end", Request{Start: 1500, StartSet: true, End: 1600, EndSet: true}, 1500, 1600, 100, ""},
		{"disagree", Request{Start: 1500, StartSet: true, End: 1600, EndSet: true, Duration: 5}, 0, 0, 0, "disagree"},
		{"no end", Request{Start: 1500, StartSet: true}, 0, 0, 0, "give an end"},
		{"past", Request{Start: 10, StartSet: true, Duration: 5}, 0, 0, 0, "in the past"},
		{"end before start", Request{Start: 1500, StartSet: true, End: 1400, EndSet: true}, 0, 0, 0, "not after the start"},
	} {
		p := tc.p
		err := p.Settle(now)
		if tc.why != "" {
			if err == nil || !strings.Contains(err.Error(), tc.why) || code(err) != proto.PBSE_BADTSPEC {
				t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.why)
			}
			continue
		}
		if err != nil || p.Start != tc.start || p.End != tc.end || p.Duration != tc.duration {
			t.Errorf("%s: %+v, %v; want %d-%d (%d)", tc.name, p, err, tc.start, tc.end, tc.duration)
		}
	}
}

func TestOccurrences(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC).Unix()
	now := start - 3600
	for _, tc := range []struct {
		name     string
		r        model.Resv
		duration int64
		n        int
		code     proto.Code
	}{
		{"advance", model.Resv{}, 600, 1, proto.PBSE_NONE},
		{"daily three", model.Resv{Rrule: "FREQ=DAILY;COUNT=3", TZ: "Europe/Stockholm"}, 600, 3, proto.PBSE_NONE},
		{"no time zone", model.Resv{Rrule: "FREQ=DAILY;COUNT=3"}, 600, 0, proto.PBSE_BAD_ICAL_TZ},
		{"a path for a zone", model.Resv{Rrule: "FREQ=DAILY;COUNT=3", TZ: "/etc/passwd"}, 600, 0, proto.PBSE_BAD_ICAL_TZ},
		{"no end", model.Resv{Rrule: "FREQ=DAILY", TZ: "UTC"}, 600, 0, proto.PBSE_BAD_RRULE_SYNTAX2},
		{"bad rule", model.Resv{Rrule: "FREQ=SOMETIMES;COUNT=2", TZ: "UTC"}, 600, 0, proto.PBSE_BAD_RRULE_SYNTAX},
		{"longer than its period", model.Resv{Rrule: "FREQ=HOURLY;COUNT=2", TZ: "UTC"}, 2 * 3600, 0, proto.PBSE_BAD_RRULE_HOURLY},
	} {
		occ, err := Occurrences(&tc.r, start, tc.duration, now)
		if code(err) != tc.code || (tc.code != proto.PBSE_NONE) != (err != nil) {
			t.Errorf("%s: error %v, want code %d", tc.name, err, tc.code)
			continue
		}
		if len(occ) != tc.n || tc.n > 0 && occ[0].Start != start {
			t.Errorf("%s: %d occurrences %v, want %d from %d", tc.name, len(occ), occ, tc.n, start)
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	for _, tc := range []struct {
		name   string
		rl     map[string]string
		sel    string
		nodect string
		code   proto.Code
	}{
		{"nothing named", nil, "1:ncpus=1", "1", proto.PBSE_NONE},
		{"plain resources", map[string]string{"ncpus": "4", "mem": "1gb"}, "1:mem=1gb:ncpus=4", "1", proto.PBSE_NONE},
		{"a select", map[string]string{"select": "2:ncpus=2"}, "2:ncpus=2", "2", proto.PBSE_NONE},
		{"both", map[string]string{"select": "2:ncpus=2", "ncpus": "4"}, "", "", proto.PBSE_INVALJOBRESC},
		{"elastic", map[string]string{"select": "1-4:ncpus=1"}, "", "", proto.PBSE_BADATVAL},
		{"bad place", map[string]string{"place": "sideways"}, "", "", proto.PBSE_BADATVAL},
	} {
		s, _, rest, err := Select(rt, tc.rl)
		if code(err) != tc.code || (tc.code != proto.PBSE_NONE) != (err != nil) {
			t.Errorf("%s: error %v, want code %d", tc.name, err, tc.code)
			continue
		}
		if err == nil && (s.String() != tc.sel || rest[proto.ResNodect] != tc.nodect) {
			t.Errorf("%s: select %q nodect %q, want %q %q", tc.name, s.String(), rest[proto.ResNodect], tc.sel, tc.nodect)
		}
	}
}

func TestAmounts(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable(nil)
	got, err := Amounts(rt, "(n1:ncpus=2)+(n2:ncpus=1:mem=1gb)+(n1:ncpus=1)")
	if err != nil || got["n1"]["ncpus"] != 3 || got["n2"]["ncpus"] != 1 || len(got) != 2 {
		t.Fatalf("Amounts: %v, %v", got, err)
	}
	for _, bad := range []string{"", "(n1:ncpus=two)", "(:ncpus=1)"} {
		if _, err := Amounts(rt, bad); err == nil {
			t.Errorf("Amounts(%q) accepted", bad)
		}
	}
}

// ParseAttrs and Settle take whatever a client sends: never a panic, and
// a request they accept has a positive duration ending after its start.
func FuzzParseAttrs(f *testing.F) {
	f.Add("reserve_start", "", "2000", "reserve_duration", "", "600")
	f.Add("Resource_List", "walltime", "1:00:00", "Resource_List", "select", "2:ncpus=1")
	f.Add("reserve_rrule", "", "FREQ=DAILY;COUNT=2", "reserve_timezone", "", "UTC")
	f.Add("Mail_Points", "", "abe", "Authorized_Users", "", "a,b")
	f.Fuzz(func(t *testing.T, n1, r1, v1, n2, r2, v2 string) {
		r, p := &model.Resv{}, &Request{}
		if ParseAttrs([]proto.Attr{{Name: n1, Resource: r1, Value: v1}, {Name: n2, Resource: r2, Value: v2}}, r, p) != nil {
			return
		}
		if err := p.Settle(1000); err != nil {
			return
		}
		if p.Duration <= 0 || p.End <= p.Start || p.Start < 1000 {
			t.Fatalf("accepted %+v", p)
		}
		Occurrences(r, p.Start, p.Duration, 1000)
		Select(resc.NewTable(nil), p.Resources)
	})
}
