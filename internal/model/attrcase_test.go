package model

import (
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// TestCanonicalAttrNames: a name in any case becomes its canonical
// spelling for its object type; an unknown name is left as written (the
// server then refuses it, naming it).
func TestCanonicalAttrNames(t *testing.T) {
	t.Parallel()
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

// TestEligibleTimeEnable: eligible_time_enable is a boolean, True
// taken now that the server accrues eligible time.
func TestEligibleTimeEnable(t *testing.T) {
	t.Parallel()
	d, _ := ServerDefs.Lookup(proto.AttrEligibleTimeEnable)
	for in, want := range map[string]string{"true": "True", "false": "False", "1": "True"} {
		if v, err := d.Canonical("", in); err != nil || v != want {
			t.Errorf("eligible_time_enable = %s: %q, %v; want %s", in, v, err, want)
		}
	}
}
