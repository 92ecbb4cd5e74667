package web

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/config"
	"github.com/gopbs/gopbs/internal/display"
	"github.com/gopbs/gopbs/proto"
)

// schemaV1 is the schema of the v1 documents, served at /api/v1/schema;
// integration/web_test.go checks live documents against it.
//
//go:embed api-v1.schema.json
var schemaV1 []byte

// SchemaV1 returns the v1 schema document.
func SchemaV1() []byte { return bytes.Clone(schemaV1) }

func (s *Server) schema(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/schema+json")
	w.Write(schemaV1)
}

// options are the display options of qstat -F json in the pbspro
// personality, on the server host.
func (s *Server) options() display.Options {
	return display.Options{Personality: config.PBSPro, ServerName: s.cfg.ServerLabel, Now: s.cfg.Now(), Loc: s.cfg.Loc}
}

func (s *Server) jobs(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	history := false
	if h := r.URL.Query().Get("history"); h != "" {
		var err error
		if history, err = strconv.ParseBool(h); err != nil {
			return nil, &httpError{http.StatusBadRequest, "history: want true or false"}
		}
	}
	jobs, _, err := s.cfg.Source.Jobs(v, nil, history)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = display.JobsJSON(&b, forViewer(v, jobs), s.options())
	return b.Bytes(), err
}

// job is one job's record, finished or not: a finished job's record is
// what a tool asks for most.
func (s *Server) job(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	id := strings.TrimSpace(r.PathValue("id"))
	if id == "" || len(id) > 256 {
		return nil, &httpError{http.StatusBadRequest, "want a job id"}
	}
	jobs, objErrs, err := s.cfg.Source.Jobs(v, []string{id}, true)
	if err == nil && len(objErrs) > 0 {
		err = &proto.Error{Code: objErrs[0].Code, Text: objErrs[0].Text}
	}
	if err != nil {
		if v.Anonymous() && proto.CodeOf(err) == proto.PBSE_PERM {
			// Anonymous viewers learn nothing of jobs they may not see.
			err = proto.NewError(proto.PBSE_UNKJOBID)
		}
		return nil, err
	}
	var b bytes.Buffer
	err = display.JobsJSON(&b, forViewer(v, jobs), s.options())
	return b.Bytes(), err
}

func (s *Server) nodes(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	nodes, err := s.cfg.Source.Nodes(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = display.NodesJSON(&b, display.NodesHeader(s.cfg.Now(), s.cfg.ServerLabel), nodes)
	return b.Bytes(), err
}

func (s *Server) queues(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	queues, err := s.cfg.Source.Queues(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = display.QueuesJSON(&b, queues, s.options())
	return b.Bytes(), err
}

func (s *Server) server(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	st, err := s.cfg.Source.Server(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = display.ServersJSON(&b, []proto.Status{st}, s.options())
	return b.Bytes(), err
}

// whoami tells the page who it is shown to and what it may show.
func (s *Server) whoami(r *http.Request, v Viewer, rights Rights) ([]byte, error) {
	return json.Marshal(map[string]any{
		"user":       v.User,
		"anonymous":  v.Anonymous(),
		"see":        rights.See,
		"manager":    rights.Manager,
		"other_jobs": rights.OtherJobs,
		"server":     s.cfg.ServerLabel,
		"live":       s.live(),
		"last_event": s.lastEvent(),
	})
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// writeError answers {"error": text, "code": code} with status.
func writeError(w http.ResponseWriter, status int, text string, code proto.Code) {
	body := map[string]any{"error": text}
	if code != 0 {
		body["code"] = int(code)
	}
	out, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(out)
}

// httpError is a refusal with its HTTP status.
type httpError struct {
	status int
	text   string
}

func (e *httpError) Error() string { return e.text }

// writeAnyError answers err: an httpError with its status, a server error
// with the HTTP status closest to its PBS code (the code itself in the
// body).
func writeAnyError(w http.ResponseWriter, err error) {
	var he *httpError
	if errors.As(err, &he) {
		writeError(w, he.status, he.text, 0)
		return
	}
	code := proto.CodeOf(err)
	status := http.StatusInternalServerError
	switch code {
	case proto.PBSE_UNKJOBID, proto.PBSE_UNKQUE, proto.PBSE_UNKNODE, proto.PBSE_HISTJOBID:
		status = http.StatusNotFound
	case proto.PBSE_PERM:
		status = http.StatusForbidden
	case proto.PBSE_IVALREQ, proto.PBSE_BADATVAL:
		status = http.StatusBadRequest
	}
	writeError(w, status, err.Error(), code)
}

// anonymousJob is what an anonymous viewer sees of a job: who, what,
// where and when, sizes; never its environment (Variable_List), paths,
// script, arguments, mail addresses or comment. Resource_List and
// estimated keep only the members named.
var anonymousJob = map[string]map[string]bool{
	proto.AttrJobName:    nil,
	proto.AttrJobOwner:   nil,
	proto.AttrJobState:   nil,
	proto.AttrQueue:      nil,
	proto.AttrServer:     nil,
	proto.AttrExecHost:   nil,
	proto.AttrExecVnode:  nil,
	proto.AttrCtime:      nil,
	proto.AttrQtime:      nil,
	proto.AttrStime:      nil,
	proto.AttrArray:      nil,
	proto.AttrArrayID:    nil,
	proto.AttrArrayIndex: nil,
	proto.AttrResourceList: {proto.ResWalltime: true, proto.ResNcpus: true, proto.ResNodect: true, proto.ResMem: true,
		proto.ResNgpus: true, proto.ResSelect: true, proto.ResPlace: true},
	proto.AttrEstimated: {"start_time": true, "exec_vnode": true},
}

// forViewer strips jobs to what v may see of them.
func forViewer(v Viewer, jobs []proto.Status) []proto.Status {
	if !v.Anonymous() {
		return jobs
	}
	out := make([]proto.Status, len(jobs))
	for i, j := range jobs {
		out[i] = proto.Status{Name: j.Name, Attrs: anonymousAttrs(j.Attrs)}
	}
	return out
}

func anonymousAttrs(attrs []proto.Attr) []proto.Attr {
	var kept []proto.Attr
	for _, a := range attrs {
		members, ok := anonymousJob[a.Name]
		if !ok || (members != nil && !members[a.Resource]) || (members == nil && a.Resource != "") {
			continue
		}
		kept = append(kept, a)
	}
	return kept
}
