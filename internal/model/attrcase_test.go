package model

import (
	"testing"

	"gopbs/proto"
)

// TestCanonicalAttrNames: a name in any case becomes its canonical
// spelling for its object type; an unknown name is left as written (the
// server then refuses it, naming it).
func TestCanonicalAttrNames(t *testing.T) {
	for _, tt := range []struct {
		what       string
		fold       func([]proto.Attr)
		name, want string
	}{
		{"queue", QueueDefs.CanonicalAttrs, "priority", "Priority"},
		{"queue", QueueDefs.CanonicalAttrs, "MAX_RUNNING", "max_running"},
		{"server", ServerDefs.CanonicalAttrs, "Scheduling", "scheduling"},
		{"server", ServerDefs.CanonicalAttrs, "scheduling", "scheduling"},
		{"node", NodeDefs.CanonicalAttrs, "Resources_Available", "resources_available"},
		{"job", CanonicalJobAttrs, "account_name", "Account_Name"},
		{"job", CanonicalJobAttrs, "RESOURCE_LIST", "Resource_List"},
		{"job", CanonicalJobAttrs, "no_such_attr", "no_such_attr"},
		{"reservation", CanonicalResvAttrs, "reserve_name", "Reserve_Name"},
	} {
		attrs := []proto.Attr{{Name: tt.name}}
		tt.fold(attrs)
		if attrs[0].Name != tt.want {
			t.Errorf("%s %q: %q, want %q", tt.what, tt.name, attrs[0].Name, tt.want)
		}
	}
}

// TestEligibleTimeEnableRefused: a setting this server would not act on
// is refused, not taken (eligible_time is not accrued).
func TestEligibleTimeEnableRefused(t *testing.T) {
	d, _ := ServerDefs.Lookup(proto.AttrEligibleTimeEnable)
	if _, err := d.Canonical("", "true"); err == nil {
		t.Error("eligible_time_enable = True was taken")
	}
	if v, err := d.Canonical("", "false"); err != nil || v != "False" {
		t.Errorf("eligible_time_enable = False: %q, %v", v, err)
	}
}
