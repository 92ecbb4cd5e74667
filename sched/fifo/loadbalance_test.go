package fifo

import (
	"reflect"
	"strings"
	"testing"
)

// tsNode adds a time-shared node with a load and ideal / max loads
// ("" leaves one unset: the node's cpus stand in).
func (w *world) tsNode(name string, ncpus int, load, ideal, maxLoad string) *world {
	attrs := []string{"ntype", "time-shared", "loadave", load}
	if ideal != "" {
		attrs = append(attrs, "ideal_load", ideal)
	}
	if maxLoad != "" {
		attrs = append(attrs, "max_load", maxLoad)
	}
	w.node(name, ncpus, "free")
	n := &w.nodes[len(w.nodes)-1]
	for i := 0; i < len(attrs); i += 2 {
		n.Attrs = append(n.Attrs, a(attrs[i], attrs[i+1]))
	}
	return w
}

func TestLoadBalancing(t *testing.T) {
	t.Parallel()
	lb := Inputs{Settings: Settings{LoadBalancing: true}}
	rr := Inputs{Settings: Settings{LoadBalancingRR: true}}
	three := func() *world {
		return newWorld().tsNode("t1", 8, "3.5", "4", "8").tsNode("t2", 8, "0.5", "4", "8").tsNode("t3", 8, "2", "4", "8")
	}
	tests := []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"off: first fit", three().job(1, "Q", "workq", "u", "1:ncpus=1"), Inputs{}, []string{"run 1 t1"}},
		{"least loaded first, and each start adds its cpus to the load",
			three().job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1").job(3, "Q", "workq", "u", "1:ncpus=1"),
			lb, []string{"run 1 t2", "run 2 t2", "run 3 t3"}},
		{"within ideal load before merely within max load",
			newWorld().tsNode("t1", 8, "1", "8", "8").tsNode("t2", 8, "0", "1", "8").job(1, "Q", "workq", "u", "1:ncpus=2"),
			lb, []string{"run 1 t1"}},
		{"every node would go over max load: the job waits, saying why",
			newWorld().tsNode("t1", 8, "7.5", "4", "8").job(1, "Q", "workq", "u", "1:ncpus=1"),
			lb, []string{"comment 1 " + cTsLoaded}},
		{"no ideal or max load: the cpu count",
			newWorld().tsNode("t1", 2, "1.5", "", "").tsNode("t2", 2, "0", "", "").job(1, "Q", "workq", "u", "1:ncpus=1"),
			lb, []string{"run 1 t2"}},
		{"cluster nodes are not balanced; jobs of several chunks are placed as usual",
			newWorld().node("c1", 8, "free").tsNode("t1", 8, "0", "4", "8").job(1, "Q", "workq", "u", "2:ncpus=1"),
			lb, []string{"run 1 c1+c1"}},
		{"a busy node (over max load at its mom) takes nothing",
			newWorld().tsNode("t1", 8, "9", "4", "8").job(1, "Q", "workq", "u", "1:ncpus=1"),
			lb, []string{"comment 1 " + cTsLoaded}},
		{"round robin from the start",
			three().job(1, "Q", "workq", "u", "1:ncpus=1").job(2, "Q", "workq", "u", "1:ncpus=1").job(3, "Q", "workq", "u", "1:ncpus=1").job(4, "Q", "workq", "u", "1:ncpus=1"),
			rr, []string{"run 1 t1", "run 2 t2", "run 3 t3", "run 4 t1"}},
		{"round robin goes on after the last node of the previous cycle",
			three().job(1, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{Settings: Settings{LoadBalancingRR: true}, LastRR: "t2"}, []string{"run 1 t3"}},
		{"round robin skips a node whose load with the job reaches max load (counted once)",
			newWorld().tsNode("t1", 8, "7", "4", "8").tsNode("t2", 8, "6.5", "4", "8").job(1, "Q", "workq", "u", "1:ncpus=1"),
			rr, []string{"run 1 t2"}},
	}
	for _, tt := range tests {
		got := outcome(tt.w.run(tt.in))
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
	// The comment of a balanced start names the node.
	p := three().job(1, "Q", "workq", "u", "1:ncpus=1").run(lb)
	if d := p.Decisions()[0]; !strings.HasPrefix(d.Text, "Job run on node t2 - started on ") {
		t.Errorf("comment %q", d.Text)
	}
}
