package vnodedef

import (
	"strings"
	"testing"

	"github.com/gopbs/gopbs/internal/model"
)

// FuzzParse: any bytes give lines or an error, never a panic; every line
// given names a valid vnode and a known attribute with a value.
func FuzzParse(f *testing.F) {
	f.Add([]byte("$configversion 2\nhost[0]: resources_available.ncpus = 2\nhost: sharing = default_shared\n"))
	f.Add([]byte("$configversion 2\nh: resv_enable = t\nh: resources_available.mem = \"3gb\"\n"))
	f.Add([]byte("$configversion 2\n:=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := Parse("fuzz", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, l := range lines {
			if model.CheckNodeName(l.Vnode) != nil || l.Value == "" {
				t.Fatalf("bad line accepted: %+v", l)
			}
			switch l.Attr {
			case AttrResourcesAvail, AttrSharing, AttrResvEnable:
			default:
				t.Fatalf("unknown attribute accepted: %+v", l)
			}
		}
		Merge(lines)
	})
}
