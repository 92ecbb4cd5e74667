package mom

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/internal/stagecopy"
	"github.com/gopbs/gopbs/proto"
)

// Early stage-in: the server asks this mom to copy a queued job's stage-in
// files before the job is run (the scheduler's stage-in request, OpenPBS's
// pbs_stagein), so that a later run here starts at once. The mom answers
// the request at once, copies in the background and reports the outcome
// to the server on its link (MsgStageInDone) until the server has it.
//
// Each request is recorded in mom_priv/stagein/<job> before it is
// accepted: a mom that restarts copies again what it had not finished
// (copies are idempotent: each file is written under a temporary name and
// renamed into place), and reports what it had finished. The server sees
// the job in the Staging list of every status report meanwhile, and takes
// the stage-in for lost when a report lacks it.

// earlyStage is one early stage-in, as recorded on disk.
type earlyStage struct {
	Job     proto.MomJob `json:"job"`
	Done    bool         `json:"done"`
	OK      bool         `json:"ok"`
	Comment string       `json:"comment,omitempty"`

	running bool // a goroutine is copying (not recorded)
}

func (m *Mom) stageRecord(id string) string { return filepath.Join(m.stageDir, id+".json") }

// stageConfig is this mom's staging settings for a copy.
func (m *Mom) stageConfig() stagecopy.Config {
	return stagecopy.Config{Node: m.cfg.NodeName, KeyFile: m.cfg.KeyFile, Timeout: m.mc().StageTimeout, Rcp: m.mc().Rcp, Spool: m.spool, Partials: m.partials}
}

// recoverStaging loads the records a previous mom left.
func (m *Mom) recoverStaging() error {
	ents, err := os.ReadDir(m.stageDir)
	if err != nil {
		return fmt.Errorf("mom_priv/stagein: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		var es earlyStage
		if err := shepherd.ReadJSON(filepath.Join(m.stageDir, name), &es); err != nil || es.Job.JobID+".json" != name {
			m.log.Error("unreadable stage-in record removed", "file", name, "error", err)
			os.Remove(filepath.Join(m.stageDir, name))
			continue
		}
		m.staging[es.Job.JobID] = &es
		m.log.Info("recovered early stage-in", "job", es.Job.JobID, "done", es.Done)
	}
	return nil
}

// resumeStaging starts the copies a previous mom had not finished.
func (m *Mom) resumeStaging() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, es := range m.staging {
		if !es.Done && !es.running {
			es.running = true
			m.wg.Add(1)
			go m.runEarlyStage(es)
		}
	}
}

// startEarlyStage accepts the server's stage-in request for a queued job.
// A repeated request for a job already staging here is accepted as is.
func (m *Mom) startEarlyStage(job *proto.MomJob) error {
	if job.JobID == "" || strings.ContainsAny(job.JobID, "/\x00") || job.JobID[0] == '.' {
		return proto.Errorf(proto.PBSE_IVALREQ, "bad job id %q", job.JobID)
	}
	if len(job.StageIn) == 0 {
		return proto.Errorf(proto.PBSE_IVALREQ, "%s has no stage-in files", job.JobID)
	}
	if _, err := m.jobOwner(job); err != nil {
		return err
	}
	applyUseCp(job, m.mc().UseCp)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.staging[job.JobID]; ok && !old.Done {
		return nil
	}
	job.Script = nil
	es := &earlyStage{Job: *job}
	if err := shepherd.WriteJSON(m.stageDir, job.JobID+".json", es, 0o600); err != nil {
		return fmt.Errorf("stage-in record: %w", err)
	}
	es.running = true
	m.staging[job.JobID] = es
	m.wg.Add(1)
	go m.runEarlyStage(es)
	m.log.Info("early stage-in started", "job", job.JobID, "files", len(job.StageIn), "user", job.EUser)
	return nil
}

// runEarlyStage copies one job's stage-in files and records the outcome.
func (m *Mom) runEarlyStage(es *earlyStage) {
	defer m.wg.Done()
	job := &es.Job
	err := func() error {
		usr, err := asuser.Lookup(job.EUser, job.EGroup)
		if err != nil {
			return err
		}
		dir := job.WorkDir
		if dir == "" {
			dir = usr.Home
		}
		st := &stagecopy.Stager{Cfg: m.stageConfig(), Key: m.key, Job: job, Usr: usr, Dir: dir, Cancel: func() error {
			if m.stopped() {
				return errMomStopping
			}
			return nil
		}}
		return st.StageIn(job.StageIn)
	}()
	if errors.Is(err, errMomStopping) {
		// Not an outcome: the next mom copies again.
		m.mu.Lock()
		es.running = false
		m.mu.Unlock()
		return
	}
	m.mu.Lock()
	es.running, es.Done, es.OK = false, true, err == nil
	if err != nil {
		es.Comment = err.Error()
	}
	rec := *es
	m.mu.Unlock()
	if werr := shepherd.WriteJSON(m.stageDir, job.JobID+".json", &rec, 0o600); werr != nil {
		m.log.Error("cannot record the end of an early stage-in", "job", job.JobID, "error", werr)
	}
	if err != nil {
		m.log.Warn("early stage-in failed", "job", job.JobID, "error", err)
	} else {
		m.log.Info("early stage-in done", "job", job.JobID)
	}
	m.wakeLink()
}

var errMomStopping = errors.New("the mom is stopping")

// sendStageReports tells the server how finished early stage-ins ended;
// a record goes once the server has the outcome.
func (m *Mom) sendStageReports(c *proto.Client) error {
	m.mu.Lock()
	var done []earlyStage
	for _, es := range m.staging {
		if es.Done {
			done = append(done, *es)
		}
	}
	m.mu.Unlock()
	for _, es := range done {
		rep := &proto.StageInDone{JobID: es.Job.JobID, OK: es.OK, Comment: es.Comment}
		if err := c.Call(proto.MsgStageInDone, rep, nil); err != nil {
			var pe *proto.Error
			if !errors.As(err, &pe) || transient(pe.Code) {
				return err
			}
			m.log.Warn("server refused a stage-in report; dropping it", "job", es.Job.JobID, "error", err)
		}
		m.mu.Lock()
		if cur := m.staging[es.Job.JobID]; cur != nil && cur.Done {
			delete(m.staging, es.Job.JobID)
			os.Remove(m.stageRecord(es.Job.JobID))
		}
		m.mu.Unlock()
	}
	return nil
}

// serveFile serves another mom's request for one file of a job's staging
// list: it is read (get) or written (put) as the job's owner, and only
// with the server's token for that job, owner, direction and path.
func (m *Mom) serveFile(c *proto.Conn, peer string, h proto.Header, body []byte) {
	nc := c.NetConn()
	st := &stagecopy.Stager{Cfg: m.stageConfig()}
	fail := func(err error) {
		pe := momError(err)
		nc.SetDeadline(time.Now().Add(st.Timeout()))
		c.Send(proto.Header{Type: proto.MsgReply, Seq: h.Seq, Code: pe.Code, Text: pe.Error()}, nil)
	}
	var req proto.FileRequest
	if err := proto.DecodeBody(body, &req); err != nil {
		fail(proto.Errorf(proto.PBSE_PROTOCOL, "%v", err))
		return
	}
	direction := proto.StageGet
	if h.Type == proto.MsgMomFilePut {
		direction = proto.StagePut
	}
	usr, err := m.fileOwner(&req, direction)
	if err != nil {
		m.log.Warn("refused a staging request", "from", peer, "job", req.JobID, "user", req.User, "path", req.Path, "error", err)
		fail(err)
		return
	}
	st.Usr = usr
	path := req.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(usr.Home, path)
	}
	if direction == proto.StageGet {
		err = st.SendFile(c, h.Seq, path)
	} else {
		err = st.ReceiveFile(c, h.Seq, path)
	}
	if err != nil {
		m.log.Warn("staging copy failed", "from", peer, "job", req.JobID, "direction", direction, "path", path, "error", err)
		fail(err)
		return
	}
	m.log.Info("staging copy served", "from", peer, "job", req.JobID, "direction", direction, "path", path, "user", usr.Name)
}

// fileOwner checks a file request and returns the account it is served
// as: the token must be the server's for this job, owner, direction and
// path, and this mom must be able to act as that owner.
func (m *Mom) fileOwner(req *proto.FileRequest, direction string) (*asuser.Account, error) {
	if req.Path == "" || strings.ContainsRune(req.Path, 0) {
		return nil, proto.Errorf(proto.PBSE_IVALREQ, "bad path")
	}
	if !proto.ValidStageToken(m.key, req.Token, req.JobID, req.User, direction, req.Path) {
		return nil, proto.Errorf(proto.PBSE_PERM, "%s of %s for job %s was not granted by the server", direction, req.Path, req.JobID)
	}
	usr, err := asuser.Lookup(req.User, req.Group)
	if err != nil {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: %v", m.cfg.NodeName, err)
	}
	if os.Geteuid() != 0 && usr.UID != uint32(os.Geteuid()) {
		return nil, proto.Errorf(proto.PBSE_BADUSER, "on %s: this pbs_mom runs as uid %d and can copy only that user's files", m.cfg.NodeName, os.Geteuid())
	}
	return usr, nil
}
