package sched

import (
	"reflect"
	"testing"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// A running job's typed allocation reads as the same chunks as its
// exec_vnode text did, a site's resources typed as the site defines them;
// a job whose server sends no typed allocation is read from the text.
func TestTypedAllocationReadsAsItsText(t *testing.T) {
	t.Parallel()
	rt := resc.NewTable([]resc.Custom{{Name: "foo", Type: resc.TypeLong, Flags: resc.FlagHost | resc.FlagConsumeHost}})
	for _, tc := range []struct{ host, vnode string }{
		{"n1/0*2+n2/0", "(n1:ncpus=2:mem=1gb)+(n2:ncpus=1)"},
		{"h/0*4+h/1", "(h[0]:ncpus=4:foo=3:ngpus=1)+(h[1]:ncpus=1:mem=512mb)"},
	} {
		var held []proto.Held
		for _, h := range resc.ParseAlloc(tc.host, tc.vnode) {
			w := proto.Held{Vnode: h.Vnode, Host: h.Host, Ncpus: h.Ncpus}
			for _, p := range h.Resources {
				w.Resources = append(w.Resources, proto.ResourceValue{Name: p.Name, Value: p.Value})
			}
			held = append(held, w)
		}
		typed, text := chunksHeld(rt, held), chunksOf(rt, tc.vnode)
		if !reflect.DeepEqual(typed, text) {
			t.Errorf("%s: typed %+v, text %+v", tc.vnode, typed, text)
		}
		st := status("1.srv", "job_state", "R", "exec_vnode", tc.vnode, "Resource_List.select", "1:ncpus=1")
		fromText := newCoreJob(rt, st)
		st.Alloc = held
		st.Attrs = st.Attrs[:1] // the typed allocation alone
		st.Attrs = append(st.Attrs, proto.Attr{Name: "Resource_List", Resource: "select", Value: "1:ncpus=1"})
		if fromHeld := newCoreJob(rt, st); !reflect.DeepEqual(fromHeld.Where, fromText.Where) || len(fromHeld.Where) != 2 {
			t.Errorf("%s: the job's chunks from its typed allocation %+v, from its text %+v", tc.vnode, fromHeld.Where, fromText.Where)
		}
		if got := typed[0].Chunk.Amounts["ncpus"]; got == 0 {
			t.Errorf("%s: the first chunk takes no cpus: %+v", tc.vnode, typed[0])
		}
	}
}
