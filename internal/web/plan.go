package web

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
	"github.com/gopbs/gopbs/sched/fairshare"
	schedpriv "github.com/gopbs/gopbs/sched/schedpriv"
	"github.com/gopbs/gopbs/sched/schedpriv/privdir"
)

// planBar is one job on the page's timeline: from Start to End (Unix
// seconds; End 0 when the job has no walltime, so no known end).
type planBar struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Owner string `json:"owner"`
	Queue string `json:"queue"`
	State string `json:"state"`
	// Kind is "running" (started: stime to stime + walltime) or
	// "estimated" (waiting, with the scheduler's estimated.start_time:
	// the EASY reservation of the top job, or a later estimate).
	Kind  string `json:"kind"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Nodes string `json:"nodes"`
}

// planWindow is a dedicated-time window.
type planWindow struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// planDoc is the timeline: what the server knows of the scheduler's plan.
type planDoc struct {
	Now       int64        `json:"now"`
	Bars      []planBar    `json:"bars"`
	Waiting   int          `json:"waiting"` // waiting jobs without an estimate
	Dedicated []planWindow `json:"dedicated"`
	// Notes say what the page cannot know, in words for the page.
	Notes []string `json:"notes"`
}

// plan builds the timeline from the jobs v may see: running jobs to their
// walltime, waiting jobs at their estimated start (the scheduler sets
// estimated.start_time for the jobs it reserves for), and the dedicated
// time of sched_priv on this host.
func (s *Server) plan(r *http.Request, v Viewer, _ Rights) ([]byte, error) {
	jobs, _, err := s.cfg.Source.Jobs(v, nil, false)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	doc := planDoc{Now: now.Unix(), Bars: []planBar{}, Dedicated: []planWindow{}, Notes: []string{}}
	for _, j := range forViewer(v, jobs) {
		get := func(name, res string) string {
			for _, a := range j.Attrs {
				if a.Name == name && a.Resource == res {
					return a.Value
				}
			}
			return ""
		}
		b := planBar{ID: j.Name, Name: get(proto.AttrJobName, ""), Owner: get(proto.AttrJobOwner, ""), Queue: get(proto.AttrQueue, ""), State: get(proto.AttrJobState, "")}
		wall, _ := resc.ParseDuration(get(proto.AttrResourceList, proto.ResWalltime))
		switch b.State {
		case "R", "E", "S", "U":
			b.Kind = "running"
			b.Start, _ = strconv.ParseInt(get(proto.AttrStime, ""), 10, 64)
			b.Nodes = get(proto.AttrExecVnode, "")
		default:
			est, err := strconv.ParseInt(get(proto.AttrEstimated, "start_time"), 10, 64)
			if err != nil || est <= 0 {
				doc.Waiting++
				continue
			}
			b.Kind, b.Start, b.Nodes = "estimated", est, get(proto.AttrEstimated, "exec_vnode")
		}
		if b.Start <= 0 {
			continue
		}
		if wall > 0 {
			b.End = b.Start + wall
		}
		doc.Bars = append(doc.Bars, b)
	}
	sort.SliceStable(doc.Bars, func(a, b int) bool { return doc.Bars[a].Start < doc.Bars[b].Start })
	files, note := s.schedFiles()
	if files != nil && files.Dedicated != nil {
		for _, win := range files.Dedicated.Upcoming(now).Windows {
			doc.Dedicated = append(doc.Dedicated, planWindow{From: win.From.Unix(), To: win.To.Unix()})
		}
	}
	if note != "" {
		doc.Notes = append(doc.Notes, "Dedicated time: "+note)
	}
	return json.Marshal(doc)
}

// schedFiles reads sched_priv on this host, or says why it cannot.
func (s *Server) schedFiles() (*schedpriv.Files, string) {
	if s.cfg.SchedPriv == "" {
		return nil, "unknown here (no sched_priv configured)"
	}
	if _, err := os.Stat(filepath.Join(s.cfg.SchedPriv, schedpriv.ConfigFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, "unknown to the server: the scheduler keeps it in its sched_priv, which is not on this host"
	}
	files, err := privdir.Load(s.cfg.SchedPriv, s.cfg.Loc)
	if err != nil {
		return nil, "the scheduler's files cannot be read: " + err.Error()
	}
	return files, ""
}

// fsEntity is one node of the fair-share tree as the page shows it.
type fsEntity struct {
	Name      string  `json:"name"`
	Parent    string  `json:"parent"`
	Depth     int     `json:"depth"`
	Shares    int     `json:"shares"`
	OfParent  float64 `json:"of_parent"`
	OfMachine float64 `json:"of_machine"`
	Usage     float64 `json:"usage"`
	Factor    float64 `json:"factor"`
}

// fsDoc is the fair-share tree with usage, or why there is none.
type fsDoc struct {
	Available bool       `json:"available"`
	Why       string     `json:"why,omitempty"`
	Enabled   bool       `json:"enabled"`    // fair_share is on in sched_config
	UsageTime int64      `json:"usage_time"` // when the usage file was last written
	Entities  []fsEntity `json:"entities"`
}

// fairshare is pbsfs -t for the page. Usage is per user, so only viewers
// who see other users' jobs see it. It comes from the files pbs_sched
// writes on this host (the usage file at its sync_time, so it lags the
// scheduler's memory); a scheduler on another host keeps them there,
// and the page says so.
func (s *Server) fairshare(r *http.Request, v Viewer, rights Rights) ([]byte, error) {
	doc := fsDoc{Entities: []fsEntity{}}
	files, note := s.schedFiles()
	var st *schedpriv.UsageState
	switch {
	case !rights.OtherJobs:
		doc.Why = "fair-share usage is per user: shown to those who see other users' jobs (query_other_jobs, managers)"
	case files == nil:
		doc.Why = note
	default:
		var err error
		if st, err = privdir.ReadUsageFile(s.cfg.SchedPriv); err != nil {
			doc.Why = "the scheduler's usage file cannot be read: " + err.Error()
		}
	}
	if st != nil {
		doc.Available, doc.Enabled = true, files.Config.FairShareAny()
		if info, err := os.Stat(filepath.Join(s.cfg.SchedPriv, schedpriv.UsageFile)); err == nil {
			doc.UsageTime = info.ModTime().Unix()
		}
		tree := files.Groups
		if tree == nil {
			tree = schedpriv.NewTree(files.Config.UnknownShares)
		}
		tree = tree.Clone()
		stand := fairshare.NewStanding(tree, st.Entities)
		var walk func(g *schedpriv.Group, depth int)
		walk = func(g *schedpriv.Group, depth int) {
			e := fsEntity{Name: g.Name, Depth: depth, Shares: g.Shares, OfParent: fairshare.OfParent(g), OfMachine: g.Percentage,
				Usage: fairshare.SubtreeUsage(g, st.Entities), Factor: stand.Factor(g)}
			if g.Parent != nil {
				e.Parent = g.Parent.Name
			}
			doc.Entities = append(doc.Entities, e)
			for _, c := range g.Children {
				walk(c, depth+1)
			}
		}
		walk(tree.Root, 0)
	}
	return json.Marshal(doc)
}
