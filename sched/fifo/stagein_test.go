package fifo

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/gopbs/gopbs/proto"
)

// Early stage-in (the admin guide's scheduling and file staging): the
// job the reservation protects has its files copied to the node it is
// expected to run on, once; a job whose copy is under way keeps its
// resources and waits for it; a job whose files are in place runs where
// they are.
func TestEarlyStageIn(t *testing.T) {
	t.Parallel()
	wall := func(w string) proto.Attr { return r("Resource_List", "walltime", w) }
	stagein := a("stagein", "in.dat@n9:/data/in.dat")
	running := func(w *world) *world {
		return w.job(1, "R", "workq", "u", "1:ncpus=2", wall("00:01:00"), a("stime", strconv.FormatInt(now.Unix(), 10)), a("exec_vnode", "(n1:ncpus=2)"))
	}
	easy := Inputs{Settings: Settings{Backfill: true, BackfillDepth: 1000}}
	tests := []struct {
		name string
		w    *world
		in   Inputs
		want []string
	}{
		{"the top job's files are copied to its reserved node",
			running(newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "2"))).
				job(2, "Q", "workq", "u", "1:ncpus=2", wall("00:01:00"), stagein, a("substate", "11")),
			easy, []string{"reserve 2 n1 +1m0s", "stagein 2 n1", "comment 2 " + cNodes}},
		{"not asked again while they are being copied",
			running(newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "2"))).
				job(2, "Q", "workq", "u", "1:ncpus=2", wall("00:01:00"), stagein, a("substate", "14"), a("stagein_node", "n1")),
			easy, []string{"reserve 2 n1 +1m0s", "comment 2 " + cNodes}},
		{"nor once they are in place",
			running(newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "2"))).
				job(2, "Q", "workq", "u", "1:ncpus=2", wall("00:01:00"), stagein, a("substate", "16"), a("stagein_node", "n1")),
			easy, []string{"reserve 2 n1 +1m0s", "comment 2 " + cNodes}},
		{"a job that fits now is simply run: its mom copies first",
			newWorld().node("n1", 2, "free").job(2, "Q", "workq", "u", "1:ncpus=1", stagein, a("substate", "11")),
			easy, []string{"run 2 n1"}},
		{"a copy under way holds the job and what it would take",
			newWorld().node("n1", 1, "free").node("n2", 1, "free").
				job(2, "Q", "workq", "u", "1:ncpus=1", stagein, a("substate", "14"), a("stagein_node", "n2")).
				job(3, "Q", "workq", "u", "1:ncpus=1").job(4, "Q", "workq", "u", "1:ncpus=1"),
			Inputs{}, []string{"comment 2 " + cStagingIn + "n2", "run 3 n1", "comment 4 " + cNodes}},
		{"staged files draw the job to their node",
			newWorld().node("n1", 1, "free").node("n2", 1, "free").
				job(2, "Q", "workq", "u", "1:ncpus=1", stagein, a("substate", "16"), a("stagein_node", "n2")),
			Inputs{}, []string{"run 2 n2"}},
		{"elsewhere when their node is full (the mom copies again)",
			newWorld().node("n1", 1, "free").node("n2", 1, "free", r("resources_assigned", "ncpus", "1")).
				job(2, "Q", "workq", "u", "1:ncpus=1", stagein, a("substate", "16"), a("stagein_node", "n2")),
			Inputs{}, []string{"run 2 n1"}},
		{"no stage-in without backfilling's reservation",
			running(newWorld().node("n1", 2, "free", r("resources_assigned", "ncpus", "2"))).
				job(2, "Q", "workq", "u", "1:ncpus=2", wall("00:01:00"), stagein, a("substate", "11")),
			Inputs{}, []string{"comment 2 " + cNodes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(tt.w.run(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decisions\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
