package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// File staging (qsub -W stagein/stageout; DESIGN §10: copies are made by
// the mom of the job's first node, as the owner). The server checks at
// submission that every host of a list can be reached, resolves each
// file for the mom that copies it (a local copy, another node's mom with
// a token, or scp), and keeps the job's stage-in state:
//
//   - a run request for a job with stage-in files starts it (R, substate
//     STAGEGO 15 while its mom copies, then RUNNING 42);
//   - an early stage-in request (MsgStageInJob, the scheduler's
//     pbs_stagein) has the files copied to a node while the job stays
//     queued: substate STAGEIN 14, then STAGECMP 16 with stagein_node set,
//     so a later run there skips the copy (one elsewhere copies again);
//   - a failed stage-in, either way, puts the job in W for stagefail_wait
//     seconds (1800, PBS_STAGEFAIL_WAIT) with substate STAGEFAIL 37 and a
//     comment naming the file, so the scheduler does not retry it in a
//     loop; qrls or qalter -a ends the wait early.

// defaultStagefailWait is stagefail_wait when unset (seconds).
const defaultStagefailWait = 1800

// stageHostKnown reports whether host can be reached for staging: it is
// a node, or the host of a node's mom, or some mom may copy with scp or
// names the host in a $usecp line (mu held).
func (s *Server) stageHostKnown(host string) bool {
	if s.stageNodeOf(host) != "" {
		return true
	}
	for name := range s.nodes.All() {
		if rt := s.nodes.Runtime(name); rt != nil && rt.Reported {
			if rt.Status.RemoteCopy {
				return true
			}
			for _, p := range rt.Status.UseCpHosts {
				if stage.HostMatches(p, host) {
					return true
				}
			}
		}
	}
	return false
}

// checkStageHosts refuses a job whose staging lists name a host no mom
// can copy from or to (mu held).
func (s *Server) checkStageHosts(j *model.Job) error {
	for _, list := range []struct{ name, value string }{{proto.AttrStagein, j.Stagein}, {proto.AttrStageout, j.Stageout}} {
		if list.value == "" {
			continue
		}
		pairs, err := stage.ParseList(list.value)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "%s: %v", list.name, err)
		}
		for _, p := range pairs {
			if !s.stageHostKnown(p.Host) {
				return proto.Errorf(proto.PBSE_BADATVAL, "%s: host %s runs no pbs_mom of this cluster, no mom names it in $usecp, and no mom copies with scp ($rcpcmd in mom_priv/config); name a node or its host", list.name, p.Host)
			}
		}
	}
	return nil
}

// stageFiles resolves a staging list for the mom of node: which files are
// local copies, which another mom serves (with the server's token for
// direction), and which go through scp (mu held). A list that no longer
// parses (it was checked when set) resolves to nothing.
func (s *Server) stageFiles(j *model.Job, list, node, direction string) []proto.StageFile {
	if list == "" {
		return nil
	}
	pairs, err := stage.ParseList(list)
	if err != nil {
		s.log.Error("stored staging list does not parse", "job", j.ID, "error", err)
		return nil
	}
	here, _ := s.nodes.Get(node)
	out := make([]proto.StageFile, 0, len(pairs))
	for _, p := range pairs {
		f := proto.StageFile{Local: p.Local, Host: p.Host, Remote: p.Remote}
		target := s.stageNodeOf(p.Host)
		switch {
		case p.Host == node || target == node || here != nil && s.momOnHost(node, here, p.Host):
			// This node, or another name of its host: the same files.
			f.Here = true
		case target != "":
			if addr, err := s.momAddrLocked(target); err == nil {
				f.Node, f.Addr = target, addr
				f.Token = proto.StageToken(s.key, j.ID, j.EUser, direction, p.Remote)
			}
		}
		out = append(out, f)
	}
	return out
}

// stageNodeOf is the node whose mom serves host: the node of that name,
// else the first node (by name) whose mom runs on host (momOnHost); ""
// for none (mu held).
func (s *Server) stageNodeOf(host string) string {
	if _, ok := s.nodes.Get(host); ok {
		return host
	}
	best := ""
	for name, n := range s.nodes.All() {
		if (best == "" || name < best) && s.momOnHost(name, n, host) {
			best = name
		}
	}
	return best
}

// sameHost compares host names, a short name matching its long form.
func sameHost(a, b string) bool {
	if a == b {
		return true
	}
	sa, _, _ := strings.Cut(a, ".")
	sb, _, _ := strings.Cut(b, ".")
	return sa == sb && (sa == a || sb == b)
}

// stageInJob is the early stage-in request: copy a queued job's stage-in
// files to node without running it. Operators and managers only (the
// scheduler). The job's stage state is durable before the mom is asked;
// the mom's report ends it (stageInDone), and a mom that stops reporting
// it puts it back (momStatus).
func (s *Server) stageInJob(who *caller, id, node string) error {
	mgr, op := s.privileges(who)
	if !mgr && !op {
		return proto.NewError(proto.PBSE_PERM)
	}
	var req *proto.MomJob
	var key model.JobKey
	err := s.commit.Do(func(b *store.Batch) error {
		j, _, err := s.runnable(id, s.nowUnix())
		if err != nil {
			return err
		}
		switch {
		case j.Finished():
			return proto.NewError(proto.PBSE_HISTJOBID)
		case j.State != model.StateQueued || j.QueueType != "Execution":
			return proto.Errorf(proto.PBSE_BADSTATE, "(job is %c; only queued jobs are staged in early)", j.StateLetter())
		case j.Stagein == "":
			return proto.Errorf(proto.PBSE_BADSTATE, "(job has no stagein files)")
		case !s.nodes.Up(node):
			return proto.Errorf(proto.PBSE_UNKNODE, "%s (not up)", node)
		case j.StageNode == node && j.StagePhase != model.StageNone:
			return nil // under way or done there already
		}
		if _, live := s.jobs.Get(j.Key()); !live {
			s.jobs.Insert(j) // a subjob staged on its own
		}
		key = j.Key()
		now := s.nowUnix()
		s.transitJob(b, j, now, func() model.Hooks {
			j.StageNode, j.StagePhase = node, model.StageRunning
			return j.Settle(now)
		})
		req = s.stageRequest(j, node)
		s.stageAsked[key] = s.now()
		return nil
	})
	if err != nil || req == nil {
		return err
	}
	if err := s.callMom(node, proto.MsgMomStageIn, req); err != nil {
		s.log.Warn("early stage-in refused", "job", id, "node", node, "error", err)
		s.stageForget(key, node)
		return err
	}
	s.log.Info("early stage-in sent to its mom", "job", id, "node", node, "files", len(req.StageIn), "by", who.user+"@"+who.host)
	return nil
}

// stageRequest is the request of an early stage-in (mu held).
func (s *Server) stageRequest(j *model.Job, node string) *proto.MomJob {
	allowRoot := false
	if j.EUser == "root" {
		roots, _ := s.server.Get(proto.AttrAclRoots)
		allowRoot = model.MatchesUserList(roots, "root", j.SubmitHost)
	}
	return &proto.MomJob{JobID: j.ID, RunCount: j.RunCount, Name: j.Name, Owner: j.Owner, EUser: j.EUser, EGroup: j.EGroup,
		Queue: j.Queue, VariableList: j.VariableList, WorkDir: j.InitWorkDir, AllowRoot: allowRoot,
		StageIn: s.stageFiles(j, j.Stagein, node, proto.StageGet)}
}

// stageForget puts a job whose early stage-in on node did not happen
// back to "not staged" (the scheduler may ask again).
func (s *Server) stageForget(key model.JobKey, node string) {
	err := s.commit.Do(func(b *store.Batch) error {
		delete(s.stageAsked, key)
		j, ok := s.jobs.Get(key)
		if !ok || j.StageNode != node || j.StagePhase != model.StageRunning {
			return nil
		}
		now := s.nowUnix()
		s.transitJob(b, j, now, func() model.Hooks {
			j.ClearStage()
			return j.Settle(now)
		})
		return nil
	})
	if err != nil {
		s.log.Error("cannot reset a job's stage-in", "seq", key.Seq, "index", key.Index, "error", err)
	}
}

// stageInDone records how a mom's early stage-in ended.
func (s *Server) stageInDone(who *caller, rep *proto.StageInDone) error {
	var ok bool
	var jobID string
	err := s.commit.Do(func(b *store.Batch) error {
		j, err := s.jobs.Lookup(rep.JobID)
		if err != nil || j.Finished() || j.Active() || j.StageNode != who.name || j.StagePhase != model.StageRunning {
			return nil // the job ran, ended or was staged elsewhere since
		}
		now := s.nowUnix()
		jobID = j.ID
		if rep.OK {
			ok = true
			s.transitJob(b, j, now, func() model.Hooks {
				j.StagePhase = model.StageDone
				return j.Settle(now)
			})
		} else {
			s.stageFailed(b, j, rep.Comment, now)
		}
		delete(s.stageAsked, j.Key())
		return nil
	})
	if err != nil || jobID == "" {
		return err
	}
	if ok {
		s.log.Info("early stage-in done", "job", jobID, "node", who.name)
		s.schedEvent(proto.SchedNew)
	} else {
		s.log.Warn("stage-in failed; the job waits", "job", jobID, "node", who.name, "error", rep.Comment)
	}
	return nil
}

// stageFailed puts a queued job whose stage-in failed in W for
// stagefail_wait, saying why, and saves it (mu held, inside b's commit).
func (s *Server) stageFailed(b *store.Batch, j *model.Job, why string, now int64) {
	wait := s.serverLong(proto.AttrStagefailWait, defaultStagefailWait)
	s.transitJob(b, j, now, func() model.Hooks {
		j.ClearStage()
		j.StagePhase = model.StageFailed
		j.ExecutionTime = now + wait
		j.Comment = fmt.Sprintf("Stage-in failed: %s; the job waits until %s (stagefail_wait), or qrls", why, time.Unix(j.ExecutionTime, 0).Format("Mon Jan 02 at 15:04"))
		return j.Settle(now)
	})
}

// checkStaging takes a mom's Staging list: a job whose early stage-in on
// that node is neither listed nor recently asked for was lost (the mom
// lost its record, or never got the request) and goes back to "not
// staged" (mu held; returns the jobs to reset).
func (s *Server) checkStaging(node string, listed []string, now time.Time) []model.JobKey {
	in := make(map[string]bool, len(listed))
	for _, id := range listed {
		in[id] = true
	}
	var lost []model.JobKey
	for _, j := range s.jobs.List() {
		if j.StagePhase != model.StageRunning || j.StageNode != node || in[j.ID] {
			continue
		}
		asked, ok := s.stageAsked[j.Key()]
		if !ok {
			asked = s.started
		}
		if now.Sub(asked) > lostJobGrace {
			lost = append(lost, j.Key())
		}
	}
	return lost
}
