package schedpriv

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 5e-6 }

func TestResourceGroupFixture(t *testing.T) {
	t.Parallel()
	tree, err := ParseResourceGroup(openFixture(t, "resource_group"), "resource_group", 10)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Len() != 18 { // root, unknown, grp1..grp6, usr1..usr10
		t.Errorf("Len = %d, want 18", tree.Len())
	}
	// The worked example of the reference (unknown_shares 10: root's
	// children hold 55 shares).
	for name, want := range map[string]float64{
		"root": 1, "unknown": 0.18182, "grp1": 0.18182, "usr1": 0.09091, "usr2": 0.04545,
		"usr6": 0.12121, "usr7": 0.18182, "grp2": 0.36364, "grp6": 0.24242, "usr10": 0.04545,
	} {
		g, ok := tree.Lookup(name)
		if !ok {
			t.Errorf("%s not found", name)
			continue
		}
		if !near(g.Percentage, want) {
			t.Errorf("%s: percentage %.5f, want %.5f", name, g.Percentage, want)
		}
	}
	// "grp5 " has a trailing blank in the file.
	g5, ok := tree.Lookup("grp5")
	if !ok || g5.ID != 54 || g5.Shares != 10 || g5.Parent.Name != "grp1" || g5.Line == 0 {
		t.Errorf("grp5 = %+v", g5)
	}
	usr4, _ := tree.Lookup("usr4")
	if usr4.Parent.Name != "grp6" || usr4.Parent.Parent.Name != "grp2" || usr4.Parent.Parent.Parent != tree.Root {
		t.Error("usr4 should be under grp6 under grp2 under root")
	}
	if tree.Unknown.Shares != 10 || tree.Unknown.Parent != tree.Root {
		t.Errorf("unknown = %+v", tree.Unknown)
	}
	// Percentages of every level add up to their parent's.
	tree.Walk(func(g *Group) {
		if len(g.Children) == 0 {
			return
		}
		sum := 0.0
		for _, c := range g.Children {
			sum += c.Percentage
		}
		if !near(sum, g.Percentage) {
			t.Errorf("children of %s add up to %v, not %v", g.Name, sum, g.Percentage)
		}
	})
	if _, ok := tree.Lookup("usr11"); ok {
		t.Error("usr11 is not in the file")
	}
}

func TestAddUnknown(t *testing.T) {
	t.Parallel()
	tree, err := ParseResourceGroup(openFixture(t, "resource_group"), "resource_group", 10)
	if err != nil {
		t.Fatal(err)
	}
	before := tree.Clone()
	alice := tree.AddUnknown("alice")
	if alice.Parent != tree.Unknown || alice.Shares != 1 || alice.ID != -1 || alice.Line != 0 {
		t.Errorf("alice = %+v", alice)
	}
	if !near(alice.Percentage, 0.18182) {
		t.Errorf("only unknown user gets all of unknown: %v", alice.Percentage)
	}
	bob := tree.AddUnknown("bob")
	if !near(alice.Percentage, 0.09091) || !near(bob.Percentage, 0.09091) {
		t.Errorf("two unknown users share unknown: %v %v", alice.Percentage, bob.Percentage)
	}
	if again := tree.AddUnknown("alice"); again != alice {
		t.Error("AddUnknown of a known name must return the existing node")
	}
	if usr1 := tree.AddUnknown("usr1"); usr1.Parent != tree.Root {
		t.Error("AddUnknown must not move a user the file defines")
	}
	if g, _ := tree.Lookup("grp1"); !near(g.Percentage, 0.18182) {
		t.Error("adding unknown users changes nothing outside unknown")
	}
	// The clone taken before is untouched.
	if _, ok := before.Lookup("alice"); ok || len(before.Unknown.Children) != 0 {
		t.Error("Clone shares state with the original")
	}
	if g, _ := before.Lookup("usr6"); g.Parent.Name != "grp6" || g.Parent.Parent.Parent != before.Root {
		t.Error("Clone lost parent links")
	}
}

func TestResourceGroupEdgeCases(t *testing.T) {
	t.Parallel()
	// No shares for unknown and no entries: unknown users get nothing
	// rather than a division by zero.
	tree, err := ParseResourceGroup(strings.NewReader(""), "resource_group", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Unknown.Percentage != 0 || tree.Len() != 2 {
		t.Errorf("empty tree: %+v", tree.Unknown)
	}
	if u := tree.AddUnknown("x"); u.Percentage != 0 {
		t.Errorf("x under a zero-share unknown: %v", u.Percentage)
	}
	tree = NewTree(5)
	if tree.Unknown.Percentage != 1 {
		t.Errorf("unknown alone holds everything: %v", tree.Unknown.Percentage)
	}
	// Members of unknown may be listed in the file; comments after fields.
	tree, err = ParseResourceGroup(strings.NewReader("guest 7 unknown 3 # visitors\n"), "resource_group", 1)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := tree.Lookup("guest"); g.Parent != tree.Unknown || !near(g.Percentage, 1) {
		t.Errorf("guest = %+v", g)
	}
}

func TestResourceGroupErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		// The classic scheduler created an undefined parent under unknown.
		{"usr1 60 grp1 5", []string{`resource_group:1: usr1: parent "grp1" is not defined on an earlier line`}},
		{"usr1 60 grp1 5\ngrp1 50 root 10", []string{`resource_group:1: usr1: parent "grp1"`}},
		{"grp1 50 root 10\ngrp1 51 root 10", []string{"resource_group:2: grp1 is already defined on line 1"}},
		{"grp1 50 root 10\ngrp2 50 root 10", []string{"resource_group:2: grp2: cresgrp 50 is already used on line 1"}},
		{"grp1 x root 10", []string{`resource_group:1: grp1: cresgrp "x" is not a non-negative integer`}},
		{"grp1 -1 root 10", []string{`resource_group:1: grp1: cresgrp "-1"`}},
		{"grp1 1 root ten", []string{`resource_group:1: grp1: shares "ten" is not a non-negative integer`}},
		{"grp1 1 root 1.5", []string{`resource_group:1: grp1: shares "1.5"`}},
		{"root 1 root 1", []string{`resource_group:1: "root" is reserved`}},
		{"unknown 1 root 1", []string{`resource_group:1: "unknown" is reserved`}},
		{"grp1 1 root", []string{"resource_group:1: want \"name cresgrp parent shares\", got 3 field(s)"}},
		{"grp1 1 root 1 extra", []string{`resource_group:1: unexpected "extra" after the shares`}},
		{"a x nowhere y", []string{"resource_group:1: a: cresgrp", "resource_group:1: a: shares", "resource_group:1: a: parent"}},
		{"# header\ngrp1 1 root 1\n\nbad\ngrp2 2 grp9 1", []string{"resource_group:4:", "resource_group:5:"}},
	}
	for _, tt := range tests {
		tree, err := ParseResourceGroup(strings.NewReader(tt.file), "resource_group", 10)
		if tree != nil {
			t.Errorf("%q: got a tree despite errors", tt.file)
		}
		wantProblems(t, err, tt.want...)
	}
}

func TestResourceGroupFormatRoundTrip(t *testing.T) {
	t.Parallel()
	tree, err := ParseResourceGroup(openFixture(t, "resource_group"), "resource_group", 10)
	if err != nil {
		t.Fatal(err)
	}
	tree.AddUnknown("someone") // not part of the file: not written
	var buf bytes.Buffer
	if err := tree.Format(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "someone") {
		t.Error("users added at run time must not be written")
	}
	back, err := ParseResourceGroup(bytes.NewReader(buf.Bytes()), "formatted", 10)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if back.Len() != tree.Len()-1 {
		t.Errorf("Len %d, want %d", back.Len(), tree.Len()-1)
	}
	back.Walk(func(g *Group) {
		o, ok := tree.Lookup(g.Name)
		if !ok || o.ID != g.ID || o.Shares != g.Shares || !near(o.Percentage, g.Percentage) ||
			(g.Parent != nil && o.Parent.Name != g.Parent.Name) {
			t.Errorf("%s differs after round trip: %+v vs %+v", g.Name, g, o)
		}
	})
}
