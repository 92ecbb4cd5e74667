package integration

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopbs/gopbs/internal/fault"
	"github.com/gopbs/gopbs/internal/testcluster"
)

// Each fault point (internal/fault) crashes or fails its daemon in the
// middle of a workload of concurrent submissions and running jobs; the
// daemon is restarted without the fault, the workload finishes, and the
// invariants of DESIGN §6 must hold (checkInvariants).
func TestFaultPoints(t *testing.T) {
	cases := []struct {
		daemon, spec string
	}{
		{"pbs_server", fault.StoreBeforeCommit + "=crash@6"},
		{"pbs_server", fault.StoreAfterCommit + "=crash@6"},
		{"pbs_server", fault.StoreBeforeCommit + "=error@4"},  // a write error: refused, not fatal
		{"pbs_server", fault.ServerBeforeReply + "=crash@20"}, // past a scheduler cycle's 8 requests: the crash comes in the workload, not at the restart
		{"pbs_server", fault.ServerDispatchMom + "=crash"},
		{"pbs_server", fault.ServerObit + "=crash"},
		{"pbs_sched", fault.SchedMidCycle + "=crash"},
		{"pbs_mom", fault.MomAfterStart + "=crash"},
		{"pbs_mom", fault.MomBeforeObit + "=crash"},
		{"pbs_mom", fault.ShepherdStarted + "=crash"},
	}
	// Points this workload never reaches, each crashed by a test of its
	// own (no job here stages files).
	covered := map[string]bool{
		fault.MomStageReceive: true, // TestPartialFileRemovedWhenMomRestarts
		fault.MomJoinJob:      true, // TestSisterJoinRefused
		fault.ServerResizeMom: true, // TestElasticRestartMidGrowth
	}
	for _, tc := range cases {
		covered[strings.SplitN(tc.spec, "=", 2)[0]] = true
	}
	for _, p := range fault.Points {
		if !covered[p] {
			t.Errorf("fault point %s has no case", p)
		}
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.spec, "=", "_"), func(t *testing.T) {
			// Each round is its own cluster and mostly waits: two at a
			// time halve the wall time on two cores.
			t.Parallel()
			faultRound(t, tc.daemon, tc.spec)
		})
	}
}

func faultRound(t *testing.T, daemon, spec string) {
	c := testcluster.New(t, testcluster.Options{FaultBuild: true})
	c.MustRun("qmgr", "-c", "set server node_check_rate = 3")
	c.MustRun("qmgr", "-c", "set server node_fail_requeue = 4")
	c.MustRun("qmgr", "-c", "set server scheduler_iteration = 2")
	c.MustRun("qmgr", "-c", "set server job_history_duration = 3600")
	c.SetFault(daemon, spec)
	var moms []*testcluster.Mom
	for _, n := range []string{"n1", "n2"} {
		moms = append(moms, c.AddMom(n, testcluster.MomOptions{}))
		c.MustRun("qmgr", "-c", "set node "+n+" resources_available.ncpus = 2")
		if daemon == "pbs_mom" {
			c.SetFault(daemon, "") // n1 alone is armed
		}
	}
	sched := c.StartScheduler("pbs_sched")
	if daemon == "pbs_server" {
		// Armed from the start: restart it so that the count of hits
		// starts with the workload.
		c.KillServer(syscall.SIGKILL)
		c.StartServer()
	}
	beats := filepath.Join(c.Home, "beats.log")
	var sub submitter
	sub.run(c, 3, 4, beatScript(beats, 1))

	// Wait for the armed daemon to fall, then bring it back unarmed.
	c.SetFault(daemon, "")
	fell := false
	switch daemon {
	case "pbs_server":
		if fell = c.WaitServerDown(20 * time.Second); fell {
			c.StartServer()
		}
	case "pbs_sched":
		if fell = sched.WaitDown(20 * time.Second); fell {
			c.StartScheduler("pbs_sched")
		}
	case "pbs_mom":
		if strings.Contains(spec, fault.ShepherdStarted) {
			// The shepherds crash, not the moms: restart the moms unarmed
			// so that later jobs get sound shepherds.
			if fell = waitShepherdCrash(t, moms); fell {
				for _, m := range moms {
					m.Kill(syscall.SIGTERM)
					m.Start()
				}
			}
			break
		}
		if fell = moms[0].WaitDown(20 * time.Second); fell {
			moms[0].Start()
		}
	}
	if !strings.Contains(spec, "=error") && !fell {
		t.Fatalf("%s never reached %s", daemon, spec)
	}
	// Service resumed: more work goes through.
	sub.run(c, 1, 2, beatScript(beats, 1))
	checkInvariants(t, c, sub.ids(), beats, moms...)
	if len(sub.ids()) < 2 {
		t.Fatalf("only %d submissions acknowledged", len(sub.ids()))
	}
}

// waitShepherdCrash waits until a shepherd has hit its fault (it says so
// in its job directory's log).
func waitShepherdCrash(t *testing.T, moms []*testcluster.Mom) bool {
	t.Helper()
	crashed, _ := testcluster.Poll(20*time.Second, func() (bool, string) {
		for _, m := range moms {
			logs, _ := filepath.Glob(filepath.Join(m.Home, "mom_priv", "jobs", "*", "shepherd.log"))
			for _, l := range logs {
				if b, _ := os.ReadFile(l); strings.Contains(string(b), "fault: "+fault.ShepherdStarted) {
					return true, ""
				}
			}
			if strings.Contains(m.Log(), "shepherd is gone without a result") {
				return true, ""
			}
		}
		return false, ""
	})
	return crashed
}
