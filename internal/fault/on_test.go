//go:build faultpoints

package fault

import "testing"

func TestParse(t *testing.T) {
	p, err := Parse("store.before_commit=error@3, mom.before_obit=crash")
	if err != nil {
		t.Fatal(err)
	}
	if a := p[StoreBeforeCommit]; a == nil || a.action != "error" || a.at != 3 {
		t.Fatalf("store.before_commit: %+v", a)
	}
	if a := p[MomBeforeObit]; a == nil || a.action != "crash" || a.at != 1 {
		t.Fatalf("mom.before_obit: %+v", a)
	}
	for _, bad := range []string{"nowhere=crash", "store.before_commit", "store.before_commit=explode", "store.before_commit=error@0"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestHitFiresOnTheArmedHit(t *testing.T) {
	points, _ = Parse("server.obit=error@2")
	defer func() { points = nil }()
	if Hit(ServerObit) != nil {
		t.Fatal("fired on the first hit")
	}
	if Hit(ServerObit) == nil {
		t.Fatal("did not fire on the second hit")
	}
	if Hit(ServerObit) != nil || Hit(StoreAfterCommit) != nil {
		t.Fatal("fired again, or at an unarmed point")
	}
}
