package mom

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gopbs/gopbs/internal/asuser"
	"github.com/gopbs/gopbs/internal/atomicfile"
	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/hookrun"
	"github.com/gopbs/gopbs/internal/shepherd"
	"github.com/gopbs/gopbs/proto"
)

// Site hooks of the execution host's events. The server gives this mom
// its hooks with the answer to a report whose HooksVersion is not the
// server's (as OpenPBS's server copies hooks to its moms); the mom keeps
// them in memory and their files in mom_priv/hooks, and runs them:
//
//   - execjob_begin, then execjob_prologue when a job arrives, before
//     anything of it exists: a rejection refuses the start
//     (PBSE_HOOKERROR, the hook's message), and the server puts the job
//     back in its queue; on a sister, execjob_begin when it joins the job
//     (a rejection refuses the join, so the start), execjob_end when its
//     part ends, execjob_abort when the start it joined was given up;
//   - execjob_epilogue when the job has ended, before its end is reported
//     (a rejection changes nothing of the end);
//   - execjob_end once the job's end is acknowledged by the server, and
//     execjob_postsuspend once it is suspended, on a loop of their own
//     (nothing waits for them);
//   - execjob_preresume before a suspended job is resumed: a rejection
//     keeps it suspended;
//   - exechost_startup once the mom has its hooks after it starts, and
//     exechost_periodic every freq seconds: what they set of this node's
//     resources_available (e.vnode_list[local node]) is reported as the
//     node's resources, beside mom_priv/config's static ones.
//
// Runs happen outside mu, each a process of its own (internal/hookrun).
// A job's attributes are read-only to these hooks here.

// momHooks is what the mom holds of its hooks (guarded by its mu).
type momHooks struct {
	mu      sync.Mutex
	version uint64
	hooks   []*hook.Hook
	// started is set once the first hooks arrived (the startup hooks
	// ran then).
	started bool
	// resources are what exechost hooks set of this node's
	// resources_available, reported with the static resources.
	resources map[string]string
	due       map[string]time.Time
	// offline, when set, is why a hook's failure took this node offline
	// (fail_action offline_vnodes): reported as the node's health verdict,
	// until an exechost_startup hook with clear_vnodes_upon_recovery
	// succeeds.
	offline string
	// offlineAt is when this mom set offline (zero: before it started,
	// read from hookOfflineFile). A startup hook's success clears only
	// a verdict older than its own run: one a hook's failure gave while
	// it ran is not what it recovers from.
	offlineAt time.Time
	after     chan func() // runs for hookLoop (execjob_end)
	runner    *hookrun.Runner
}

// hookAfterQueue bounds the execjob_end runs waiting (a full queue holds
// up the next job end's report, never drops a run).
const hookAfterQueue = 256

// hookOfflineFile keeps why a hook's fail_action took the node offline
// across restarts of the mom (mom_priv/hook_offline): only an
// exechost_startup hook's recovery brings the node back, as in OpenPBS.
const hookOfflineFile = "hook_offline"

func (m *Mom) initHooks() {
	m.hk.after = make(chan func(), hookAfterQueue)
	m.hk.due = map[string]time.Time{}
	if b, err := os.ReadFile(filepath.Join(m.cfg.Home, "mom_priv", hookOfflineFile)); err == nil {
		m.hk.offline = strings.TrimSpace(string(b))
	}
	m.hk.runner = hookrun.New(hookrun.Config{Python: m.cfg.Python, Dir: filepath.Join(m.cfg.Home, "mom_priv", "hooks"), Logger: m.log.Named("hook")})
}

// takeHooks replaces the mom's hooks with those a report's answer gave.
func (m *Mom) takeHooks(reply *proto.MomStatusReply) {
	if !reply.HooksSent {
		return
	}
	hooks := make([]*hook.Hook, 0, len(reply.Hooks))
	for _, w := range reply.Hooks {
		hooks = append(hooks, hook.FromWire(w))
	}
	if err := m.hk.runner.Sync(hooks); err != nil {
		// Not taken: the next report asks again.
		m.log.Error("cannot write the hooks' files", "error", err)
		return
	}
	m.hk.mu.Lock()
	m.hk.version, m.hk.hooks = reply.HooksVersion, hooks
	first := !m.hk.started
	m.hk.started = true
	m.hk.mu.Unlock()
	m.log.Info("hooks received from the server", "hooks", len(hooks), "version", reply.HooksVersion)
	if first {
		m.afterHooks(func() { m.exechostHooks(hook.ExechostStartup, "") })
	}
}

// hooksOf are this mom's hooks of event e, in order.
func (m *Mom) hooksOf(e hook.Event) []*hook.Hook {
	m.hk.mu.Lock()
	defer m.hk.mu.Unlock()
	return hook.Ordered(m.hk.hooks, e)
}

// hooksVersion is the version of the hooks this mom holds, for its
// report.
func (m *Mom) hooksVersion() uint64 {
	m.hk.mu.Lock()
	defer m.hk.mu.Unlock()
	return m.hk.version
}

// withHookResources is the static resources with what exechost hooks set.
func (m *Mom) withHookResources(static map[string]string) map[string]string {
	m.hk.mu.Lock()
	defer m.hk.mu.Unlock()
	if len(m.hk.resources) == 0 {
		return static
	}
	out := maps.Clone(static)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, m.hk.resources)
	return out
}

// afterHooks queues run for hookLoop; it waits while the queue is full.
func (m *Mom) afterHooks(run func()) {
	select {
	case m.hk.after <- run:
	case <-m.stop:
	}
}

// hookLoop runs the queued hook runs and the exechost_periodic hooks when
// they are due.
func (m *Mom) hookLoop() {
	defer m.wg.Done()
	defer m.hk.runner.Close()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case run := <-m.hk.after:
			run()
		case now := <-t.C:
			for _, h := range m.hooksOf(hook.ExechostPeriodic) {
				next, ok := m.hk.due[h.Name]
				freq := time.Duration(h.Freq) * time.Second
				if !ok || next.Sub(now) > freq {
					m.hk.due[h.Name] = now.Add(freq)
					continue
				}
				if now.Before(next) {
					continue
				}
				m.hk.due[h.Name] = now.Add(freq)
				m.exechostHooks(hook.ExechostPeriodic, h.Name)
			}
		}
	}
}

// hasHooks reports whether this mom has a hook of event e.
func (m *Mom) hasHooks(e hook.Event) bool { return len(m.hooksOf(e)) > 0 }

// runHook runs one hook over an event's data, as as (nil: this mom's
// user); it returns the refusal in OpenPBS's words ("" for an accept) and
// the run's result.
func (m *Mom) runHook(e hook.Event, h *hook.Hook, ev map[string]any, settable map[string]any, as *hookrun.Credential) (string, hookrun.Result) {
	ev["type"] = int(e)
	ev["requestor"], ev["requestor_host"] = "pbs_mom", m.cfg.NodeName
	req := hookrun.Request{
		Hook: h, Event: ev, Settable: settable, LocalNode: m.cfg.NodeName, As: as,
		Server: map[string]any{"name": m.serverNameNow(), "attrs": map[string]any{}},
	}
	began := time.Now()
	res := m.hk.runner.Run(context.Background(), req)
	res.Log(m.log, e, h)
	m.failAction(e, h, res, began)
	refusal := res.Refusal(e, h.Name)
	return refusal, res
}

// failAction does what a hook's fail_action says after its run: a hook
// that raised, died or ran past its alarm takes the node offline
// (offline_vnodes), with OpenPBS's comment; an exechost_startup hook that
// succeeds brings it back (clear_vnodes_upon_recovery) from a verdict
// given before it began. began is when the hook's run began.
func (m *Mom) failAction(e hook.Event, h *hook.Hook, res hookrun.Result, began time.Time) {
	failed := res.Outcome == hookrun.Failed || res.Outcome == hookrun.Alarm || res.Outcome == hookrun.Crashed
	m.hk.mu.Lock()
	was := m.hk.offline
	switch {
	case failed && h.FailAction&hook.OfflineVnodes != 0:
		m.hk.offline = fmt.Sprintf("offlined by hook '%s' due to hook error", h.Name)
		m.hk.offlineAt = time.Now()
	case res.Outcome == hookrun.Accepted && e == hook.ExechostStartup && h.FailAction&hook.ClearVnodesUponRecovery != 0 && m.hk.offlineAt.Before(began):
		m.hk.offline = ""
	}
	now := m.hk.offline
	if now != was {
		path := filepath.Join(m.cfg.Home, "mom_priv", hookOfflineFile)
		var err error
		if now == "" {
			err = os.Remove(path)
		} else {
			err = atomicfile.Write(path, []byte(now+"\n"), 0o600)
		}
		if err != nil && !os.IsNotExist(err) {
			m.log.Error("cannot keep the node's hook verdict", "error", err)
		}
	}
	m.hk.mu.Unlock()
	if now != was {
		m.log.Warn("node health set by a hook's fail_action", "hook", h.Name, "health", now)
		m.wakeLink()
	}
}

// hookHealth is why a hook's failure keeps the node offline ("" none).
func (m *Mom) hookHealth() string {
	m.hk.mu.Lock()
	defer m.hk.mu.Unlock()
	return m.hk.offline
}

// serverNameNow is the server's name as this mom knows it.
func (m *Mom) serverNameNow() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.serverName
}

// hookJob is a job as an execution host's event carries it.
func hookJob(job *proto.MomJob) map[string]any {
	rl := map[string]any{}
	for k, v := range job.Resources {
		rl[k] = v
	}
	var vars [][2]string
	for _, v := range proto.DecodeVariableList(job.VariableList) {
		vars = append(vars, [2]string{v.Name, v.Value})
	}
	attrs := map[string]any{
		proto.AttrJobName: job.Name, proto.AttrJobOwner: job.Owner, proto.AttrEuser: job.EUser,
		proto.AttrEgroup: job.EGroup, proto.AttrQueue: job.Queue, proto.AttrExecHost: job.ExecHost,
		proto.AttrExecVnode: job.ExecVnode, proto.AttrResourceList: rl, proto.AttrVariableList: vars,
		proto.AttrRunCount: strconv.Itoa(job.RunCount), proto.AttrJobState: "R",
	}
	if job.Account != "" {
		attrs[proto.AttrAccountName] = job.Account
	}
	return map[string]any{"id": job.JobID, "attrs": attrs}
}

// localVnode is this node as a hook's vnode_list shows it.
func (m *Mom) localVnode() map[string]any {
	avail := map[string]any{}
	for k, v := range m.withHookResources(m.live.Load().resources) {
		avail[k] = v
	}
	return map[string]any{m.cfg.NodeName: map[string]any{proto.AttrResourcesAvail: avail}}
}

// execjobHooks runs the hooks of a job event e in order, a pbsuser
// hook as the job's owner (usr); the first refusal ends them and is
// returned (PBSE_HOOKERROR: at a start, the start's error). extra are
// attributes the event adds to the job (an epilogue's exit status). The
// job may not be changed.
func (m *Mom) execjobHooks(e hook.Event, job *proto.MomJob, usr *asuser.Account, extra map[string]any) error {
	hooks := m.hooksOf(e)
	if len(hooks) == 0 {
		return nil
	}
	for _, h := range hooks {
		var as *hookrun.Credential
		if h.User == hook.PbsUser {
			if usr == nil {
				continue
			}
			as = &hookrun.Credential{User: usr.Name, UID: usr.UID, GID: usr.GID}
		}
		j := hookJob(job)
		maps.Copy(j["attrs"].(map[string]any), extra)
		refusal, res := m.runHook(e, h, map[string]any{"job": j, "vnode_list": m.localVnode()}, map[string]any{}, as)
		if refusal == "" && (len(res.Changes) > 0 || len(res.Vnodes) > 0) {
			refusal = fmt.Sprintf("request rejected by filter hook '%s': a %s hook cannot change the job or its vnodes here", h.Name, e)
		}
		if refusal != "" {
			return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: refusal}
		}
	}
	return nil
}

// epilogueHooks runs the execjob_epilogue hooks over job j, which ended
// with res, and lets its end be reported (setResult started it; the end
// waits for it: endReportable). A rejection changes nothing of the end.
func (m *Mom) epilogueHooks(j *momJob, res *shepherd.Result) {
	usr, _ := asuser.Lookup(j.spec.EUser, j.spec.EGroup)
	extra := map[string]any{proto.AttrExitStatus: strconv.Itoa(res.ExitStatus), proto.AttrJobState: "E"}
	if err := m.execjobHooks(hook.ExecjobEpilogue, &j.spec, usr, extra); err != nil {
		m.log.Info("execjob_epilogue hook rejected (the job has ended: its end is reported as it is)", "job", j.spec.JobID, "message", err)
	}
	m.mu.Lock()
	j.epilogue = false
	m.mu.Unlock()
	m.wakeLink()
}

// exechostHooks runs the hooks of a host event e (only names one hook:
// a periodic one that is due); what they set of this node's
// resources_available is reported from now on.
func (m *Mom) exechostHooks(e hook.Event, only string) {
	for _, h := range m.hooksOf(e) {
		if only != "" && h.Name != only || h.User != hook.PbsAdmin {
			continue
		}
		refusal, res := m.runHook(e, h, map[string]any{"vnode_list": m.localVnode()},
			map[string]any{"vnode": []string{proto.AttrResourcesAvail}}, nil)
		if refusal != "" {
			continue // logged by runHook; what it set is not taken
		}
		m.takeVnodeChanges(h, res.Vnodes)
	}
}

// takeVnodeChanges records what a host hook set of this node's
// resources_available; changes of other vnodes are refused (logged).
func (m *Mom) takeVnodeChanges(h *hook.Hook, vnodes map[string][]hookrun.Change) {
	changed := false
	m.hk.mu.Lock()
	for node, changes := range vnodes {
		if node != m.cfg.NodeName {
			m.log.Warn("hook's change of another vnode refused", "hook", h.Name, "vnode", node)
			continue
		}
		for _, c := range changes {
			if c.Name != proto.AttrResourcesAvail || c.Resource == "" {
				m.log.Warn("hook's change refused: only resources_available is taken", "hook", h.Name, "attr", c.Name)
				continue
			}
			if m.hk.resources == nil {
				m.hk.resources = map[string]string{}
			}
			if c.Unset {
				delete(m.hk.resources, c.Resource)
			} else {
				m.hk.resources[c.Resource] = c.Value
			}
			changed = true
			m.log.Info(fmt.Sprintf("'%s' hook set vnode %s's resources_available.%s = %s", h.Name, node, c.Resource, c.Value))
		}
	}
	m.hk.mu.Unlock()
	if changed {
		m.wakeLink() // reported now, not at the next interval
	}
}

// launchHooks runs the execjob_launch hooks before the job's shell
// starts: e.progname is the shell, e.argv its arguments, e.env the job's
// environment (its Variable_List). What the hooks leave of the
// environment is the job's (job.VariableList is rewritten); a change of
// the program or its arguments is refused, naming the hook: the shell
// the job runs with is chosen by its Shell_Path_List here.
func (m *Mom) launchHooks(job *proto.MomJob, usr *asuser.Account) error {
	hooks := m.hooksOf(hook.ExecjobLaunch)
	if len(hooks) == 0 {
		return nil
	}
	shell := usr.Shell
	if sh := firstShell(job.ShellPath); sh != "" {
		shell = sh
	}
	vars := proto.DecodeVariableList(job.VariableList)
	for _, h := range hooks {
		if h.User != hook.PbsAdmin {
			continue
		}
		env := map[string]any{}
		for _, v := range vars {
			env[v.Name] = v.Value
		}
		ev := map[string]any{"job": hookJob(job), "vnode_list": m.localVnode(),
			"progname": shell, "argv": []string{shell}, "env": env}
		refusal, res := m.runHook(hook.ExecjobLaunch, h, ev, map[string]any{}, nil)
		switch {
		case refusal != "":
		case len(res.Changes) > 0 || len(res.Vnodes) > 0:
			refusal = fmt.Sprintf("request rejected by filter hook '%s': a %s hook cannot change the job or its vnodes here", h.Name, hook.ExecjobLaunch)
		case res.Launch == nil:
			refusal = fmt.Sprintf("request rejected by filter hook '%s': its run said nothing of the program", h.Name)
		case res.Launch.Progname != shell || len(res.Launch.Argv) != 1 || res.Launch.Argv[0] != shell:
			refusal = fmt.Sprintf("request rejected by filter hook '%s': only the environment is taken from an %s hook here, not a change of the program or its arguments", h.Name, hook.ExecjobLaunch)
		}
		if refusal != "" {
			return &proto.Error{Code: proto.PBSE_HOOKERROR, Text: refusal}
		}
		vars = mergeEnv(vars, res.Launch.Env)
	}
	job.VariableList = proto.EncodeVariableList(vars)
	return nil
}

// mergeEnv is vars as env leaves them: a variable changed keeps its
// place, one gone is dropped, a new one is added (by name).
func mergeEnv(vars []proto.Var, env map[string]string) []proto.Var {
	out := make([]proto.Var, 0, len(env))
	had := map[string]bool{}
	for _, v := range vars {
		had[v.Name] = true
		if nv, ok := env[v.Name]; ok {
			out = append(out, proto.Var{Name: v.Name, Value: nv})
		}
	}
	var added []string
	for k := range env {
		if !had[k] {
			added = append(added, k)
		}
	}
	slices.Sort(added)
	for _, k := range added {
		out = append(out, proto.Var{Name: k, Value: env[k]})
	}
	return out
}

// firstShell is the shell a Shell_Path_List names for any host (the
// shepherd picks the one for its host; a launch hook is shown the first).
func firstShell(list string) string {
	for _, e := range strings.Split(list, ",") {
		if p, _, _ := strings.Cut(strings.TrimSpace(e), "@"); p != "" {
			return p
		}
	}
	return ""
}

// pretermWait bounds a preterm request: the hooks' alarms, and more.
const pretermWait = 5 * time.Minute

// pretermHooks runs the execjob_preterm hooks over a running job the
// server is about to delete (qdel): a rejection keeps it running, as in
// OpenPBS; a job this mom does not run has nothing to judge.
func (m *Mom) pretermHooks(id string) error {
	m.mu.Lock()
	j := m.jobs[id]
	m.mu.Unlock()
	if j == nil || j.sister || m.hasEnded(j) {
		return nil
	}
	usr, _ := asuser.Lookup(j.spec.EUser, j.spec.EGroup)
	return m.execjobHooks(hook.ExecjobPreterm, &j.spec, usr, nil)
}

// laterJobHooks queues the run of the hooks of job event e that nothing
// waits for (execjob_end, execjob_postsuspend, execjob_abort,
// execjob_resize) on hookLoop: extra are attributes the event adds to
// the job, and a rejection is logged with why it changes nothing.
func (m *Mom) laterJobHooks(e hook.Event, job proto.MomJob, extra map[string]any, why string) {
	if !m.hasHooks(e) {
		return
	}
	m.afterHooks(func() {
		if err := m.execjobHooks(e, &job, nil, extra); err != nil {
			m.log.Info(e.String()+" hook rejected ("+why+")", "job", job.JobID, "message", err)
		}
	})
}
