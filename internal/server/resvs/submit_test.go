package resvs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

func attr(name, res, value string) proto.Attr {
	return proto.Attr{Name: name, Resource: res, Value: value}
}

func times(start, end int64) []proto.Attr {
	return []proto.Attr{attr(proto.AttrResvStart, "", strconv.FormatInt(start, 10)), attr(proto.AttrResvEnd, "", strconv.FormatInt(end, 10))}
}

// pbs_rsub's reservation before its commit, and what the commit checks:
// the server's resv_enable and acl_resv_users, its chunks, and a
// maintenance reservation of whole hosts.
func TestNewAndAdmit(t *testing.T) {
	t.Parallel()
	alice := Caller{User: "alice", Host: "h1", Group: "staff", Client: true}
	r, p, err := New(alice, append(times(1000, 1600), attr(proto.AttrResourceList, "select", "2:ncpus=2")), nil, 500)
	if err != nil {
		t.Fatal(err)
	}
	if r.Owner != "alice@h1" || r.EGroup != "staff" || r.AuthUsers != "alice@h1" || r.Start() != 1000 || r.Duration != 600 || r.Count != 1 || r.State != proto.ResvUnconfirmed {
		t.Fatalf("new reservation %+v", r)
	}
	for _, tc := range []struct {
		name  string
		attrs []proto.Attr
		hosts []string
		code  proto.Code
	}{
		{"a start in the past", times(100, 200), nil, proto.PBSE_BADTSPEC},
		{"a standing maintenance", append(times(1000, 1100), attr(proto.AttrResvRrule, "", "FREQ=DAILY;COUNT=2")), []string{"n1"}, proto.PBSE_BADATVAL},
		{"an unknown attribute", append(times(1000, 1100), attr("nonsense", "", "x")), nil, proto.PBSE_NOATTR},
	} {
		if _, _, err := New(alice, tc.attrs, tc.hosts, 500); proto.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
		}
	}

	v, _ := view(t)
	v.Server = model.NewObject("srv")
	if err := v.Admit(r, p, alice, nil, false); err != nil || !strings.HasPrefix(r.Select, "2:ncpus=2") || r.Resources["ncpus"] != "4" {
		t.Fatalf("admitted: select %q resources %v, %v", r.Select, r.Resources, err)
	}
	v.Server.Set(proto.AttrResvEnable, "", "False")
	if err := v.Admit(r, p, alice, nil, false); proto.CodeOf(err) != proto.PBSE_RESVAUTH_U {
		t.Errorf("resv_enable False: %v", err)
	}
	if err := v.Admit(r, p, alice, nil, true); err != nil {
		t.Errorf("a manager with resv_enable False: %v", err)
	}
	v.Server.Set(proto.AttrResvEnable, "", "True")
	v.Server.Set(proto.AttrAclResvUserEnable, "", "True")
	v.Server.Set(proto.AttrAclResvUsers, "", "bob")
	if err := v.Admit(r, p, alice, nil, false); proto.CodeOf(err) != proto.PBSE_RESVAUTH_U || !strings.Contains(err.Error(), "acl_resv_users") {
		t.Errorf("alice not in acl_resv_users: %v", err)
	}
	v.Server.Set(proto.AttrAclResvUsers, "", "bob,alice@*")
	if err := v.Admit(r, p, alice, nil, false); err != nil {
		t.Errorf("alice in acl_resv_users: %v", err)
	}

	// Maintenance: a manager's, of whole hosts, confirmed at once.
	m, mp, err := New(alice, times(1000, 1100), []string{"n2"}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Admit(m, mp, alice, []string{"n2"}, false); proto.CodeOf(err) != proto.PBSE_PERM {
		t.Errorf("maintenance by a user: %v", err)
	}
	if err := v.Admit(m, mp, alice, []string{"n9"}, true); proto.CodeOf(err) != proto.PBSE_UNKNODE {
		t.Errorf("maintenance of an unknown host: %v", err)
	}
	if err := v.Admit(m, mp, alice, []string{"n2"}, true); err != nil {
		t.Fatal(err)
	}
	if m.Kind != model.ResvMaintenance || m.State != proto.ResvConfirmed || m.Nodes() != "(n2:ncpus=8)" || !m.Place.Exclusive() || m.Resources[proto.ResNodect] != "1" {
		t.Errorf("maintenance reservation: kind %c state %s nodes %q place %v resources %v", m.Kind, m.State, m.Nodes(), m.Place, m.Resources)
	}
	withL, lp, _ := New(alice, append(times(1000, 1100), attr(proto.AttrResourceList, "ncpus", "1")), []string{"n2"}, 500)
	if err := v.Admit(withL, lp, alice, []string{"n2"}, true); proto.CodeOf(err) != proto.PBSE_BADATVAL {
		t.Errorf("maintenance with -l: %v", err)
	}
}

// A reservation's queue takes its access lists, and follows them when
// they change.
func TestQueueOf(t *testing.T) {
	t.Parallel()
	r := &model.Resv{Seq: 4, Kind: model.ResvAdvance, AuthUsers: "alice@h1", AuthGroups: "staff"}
	q := QueueOf(r)
	if q.Name != "R4" || q.Bool(proto.AttrStarted) || !q.Bool(proto.AttrEnabled) || !q.Bool(proto.AttrAclGroupEnable) || q.Bool(proto.AttrAclHostEnable) {
		t.Fatalf("queue %+v", q.Attrs)
	}
	r.AuthGroups, r.AuthHosts = "", "h1"
	SetACL(q, r)
	if g, ok := q.Get(proto.AttrAclGroups); ok || q.Bool(proto.AttrAclGroupEnable) || !q.Bool(proto.AttrAclHostEnable) {
		t.Errorf("after the change: groups %q (%v), hosts on %v", g, ok, q.Bool(proto.AttrAclHostEnable))
	}
}

// pbs_ralter: who may, and what each state lets change.
func TestAltered(t *testing.T) {
	t.Parallel()
	v, r := view(t) // R1 running from 100 to 200
	alice := Caller{User: "alice", Client: true}
	r.EUser = "alice"
	if err := v.MayChange(Caller{User: "bob", Client: true}, false, r); proto.CodeOf(err) != proto.PBSE_PERM {
		t.Errorf("bob changes alice's: %v", err)
	}
	if v.MayChange(alice, false, r) != nil || v.MayChange(Caller{User: "bob"}, true, r) != nil || v.MayChange(Caller{User: "alice"}, false, r) == nil {
		t.Error("the owner, an operator, or an unauthenticated caller named as the owner")
	}
	for _, tc := range []struct {
		name    string
		state   proto.ResvState
		attrs   []proto.Attr
		code    proto.Code
		start   int64
		end     int64
		altered bool
	}{
		{"a running one's end later", proto.ResvRunning, []proto.Attr{attr(proto.AttrResvEnd, "", "300")}, 0, 100, 300, true},
		{"a running one's start", proto.ResvRunning, []proto.Attr{attr(proto.AttrResvStart, "", "160")}, proto.PBSE_BADTSPEC, 0, 0, false},
		{"a running one's end in the past", proto.ResvRunning, []proto.Attr{attr(proto.AttrResvEnd, "", "140")}, proto.PBSE_BADTSPEC, 0, 0, false},
		{"its resources", proto.ResvRunning, []proto.Attr{attr(proto.AttrResourceList, "ncpus", "2")}, proto.PBSE_NOSUP, 0, 0, false},
		{"being deleted", proto.ResvBeingDeleted, []proto.Attr{attr(proto.AttrResvName, "", "x")}, proto.PBSE_BADSTATE, 0, 0, false},
		{"its name", proto.ResvRunning, []proto.Attr{attr(proto.AttrResvName, "", "night")}, 0, 100, 200, false},
	} {
		r.SetState(tc.state)
		r.Occ[0].Start, r.Duration = 100, 100
		c, err := v.Altered(r, tc.attrs, 150)
		if proto.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
			continue
		}
		if r.State != tc.state || r.Start() != 100 || r.End() != 200 {
			t.Errorf("%s: the reservation given changed: %s %d-%d", tc.name, r.State, r.Start(), r.End())
		}
		if err != nil {
			continue
		}
		if c.Start() != tc.start || c.End() != tc.end || (c.State == proto.ResvBeingAltered) != tc.altered || c.Mtime != 150 {
			t.Errorf("%s: %s %d-%d, want %d-%d (altered %v)", tc.name, c.State, c.Start(), c.End(), tc.start, tc.end, tc.altered)
		}
		if tc.altered && (c.Before == nil || c.Before.Start != 100 || c.Before.Duration != 100 || c.Before.State != proto.ResvRunning) {
			t.Errorf("%s: the times to fall back on %+v", tc.name, c.Before)
		}
	}
	// Not started: an unconfirmed one's new times apply at once, a
	// confirmed one's wait for the scheduler.
	r.Occ[0].Start = 300
	for _, st := range []proto.ResvState{proto.ResvUnconfirmed, proto.ResvConfirmed} {
		r.SetState(st)
		c, err := v.Altered(r, times(400, 500), 150)
		if err != nil || c.Start() != 400 || c.End() != 500 || (c.State == proto.ResvBeingAltered) != (st == proto.ResvConfirmed) {
			t.Errorf("%s moved to 400-500: %+v, %v", st, c, err)
		}
	}
}
