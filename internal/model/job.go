package model

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gopbs/gopbs/internal/mailer"
	"github.com/gopbs/gopbs/internal/place"
	"github.com/gopbs/gopbs/internal/stage"
	"github.com/gopbs/gopbs/proto"
	"github.com/gopbs/gopbs/resc"
)

// Job is one batch job. The server owns every Job; a Job read under the
// server's read lock must not be modified, and modifications happen under
// its write lock inside a store transaction.
type Job struct {
	Seq    int64
	ID     string // "<seq>.<server>"
	Name   string // Job_Name
	Owner  string // Job_Owner, user@host
	EUser  string
	EGroup string
	UID    uint32
	GID    uint32

	State     JobState
	Substate  int
	Suspended bool
	Queue     string
	QueueType string // "Execution" or "Route", copied from the queue
	QueueRank int64

	Account    string
	Checkpoint string
	// Depends is the depend attribute, parsed; the job is held while
	// Depends.Waiting() (see EvalState).
	Depends    Depends
	ErrorPath  string
	OutputPath string
	JoinPath   string
	KeepFiles  string
	// Alloc is what the job holds while it runs (nil when it does not):
	// its chunks, each on its vnode with its mom's node, the first one's
	// the mother superior. exec_host and exec_vnode are rendered from
	// it. It is replaced whole, never changed in place, so clones share
	// it.
	Alloc    resc.Alloc
	ExecGPUs string // the GPUs its mom gave it (exec_gpus)
	// ResizeSignal is the signal an elastic job gets when its allocation
	// changes (-W resize_signal: a name without SIG, or a number; ""
	// for none). Releasing is a shrink under way (none when empty): the
	// job holds its nodes until its first mom has ended its part there.
	ResizeSignal  string
	Releasing     Release
	Holds         string // canonical "uos" subset, "" for none
	MailPoints    string
	MailUsers     string
	Priority      int
	Rerunable     bool
	ShellPathList string
	Jobdir        string
	VariableList  string
	Comment       string
	RunCount      int
	HasExit       bool
	ExitStatus    int
	SessionID     int
	SubmitArgs    string
	UserList      string
	GroupList     string
	Project       string
	SubmitHost    string
	InitWorkDir   string
	Sandbox       string
	Stagein       string
	Stageout      string
	// Umask is the job's umask in octal ("022"; "" for the mom's own),
	// set for its processes and the files they and the mom create.
	Umask string
	// JobArgs are Torque's job_arguments (qsub -F): words passed to the
	// script, separated by blanks.
	JobArgs string
	// RemoveFiles is OpenPBS's Remove_Files (qsub -R): which of the
	// output ("o") and error ("e") files are removed when the job exits 0.
	RemoveFiles string
	// Block is OpenPBS's block (qsub -W block=true): qsub waits for the
	// job's end and exits with its exit status. The server only shows it.
	Block bool
	// JobType is Torque's jobtype (qsub -T name): the mom runs
	// mom_priv/prologue.<name> and epilogue.<name> where they exist.
	JobType string
	// KillDelay, when HasKillDelay, is the job's own kill_delay (Torque's
	// qsub -K): seconds between SIGTERM and SIGKILL, over the queue's
	// and the server's.
	KillDelay    int64
	HasKillDelay bool
	// StageNode is the node where the job's stage-in files are being
	// copied or are in place (StagePhase says which), after an early
	// stage-in request; "" when none was made.
	StageNode  string
	StagePhase int
	// Interactive is set for a job of qsub -I: the port qsub listens on
	// and the secret its shepherd proves itself with. Only the mom gets
	// it (the interactive attribute shows True); Host is filled in when
	// the job starts.
	Interactive *proto.InteractiveSession

	Ctime         int64
	Qtime         int64
	Mtime         int64
	Etime         int64
	Stime         int64
	ExecutionTime int64
	Obittime      int64
	HoldUntil     int64
	// Estimated is the scheduler's estimate of when and where a queued
	// job starts (start_time, exec_vnode); cleared when the job starts.
	Estimated   Resources
	HistoryTime int64 // when the job became F; history expires from here

	// Accrual is the job's eligible time and accrue_type (accrue.go),
	// kept while the server's eligible_time_enable is True.
	Accrual Accrual
	// LimitBlocked: the scheduler found the queued job's user, group or
	// project at a run limit (OpenPBS's scheduler makes such a job
	// ineligible); cleared when it leaves the queued state.
	LimitBlocked bool

	ResourceList  Resources
	ResourcesUsed Resources

	// Extra holds accepted attributes the server stores and shows but does
	// not interpret (see passThrough), sorted by name.
	Extra Resources

	// Array is set on a job array's parent (array.go).
	Array *Array
	// IsSubjob marks subjob Index of array Seq (its ID is Seq[Index]).
	IsSubjob bool
	Index    int
	// Purge: qdel -x asked for the job to leave no history when it ends.
	Purge bool
	// DeleteAskedBy is who (user@host) asked for the delete of the job
	// while it ran, "" when no one did: its mom is ending it, and
	// whatever else its run turns out to end with (a stage-in that
	// failed, a requeue), the job ends deleted.
	DeleteAskedBy string

	// Version is the server's change counter at the job's last change;
	// schedulers fetch only jobs changed since their last cycle. It means
	// nothing across server restarts (the server's epoch tells them).
	Version uint64

	// parsed is what the server derives from the stored fields and keeps
	// with the job: not stored (TestJobCodecCoversEveryField knows).
	parsed derived
}

// derived holds ResourceList parsed (Request), as of the list reqOf (a
// copy), and Alloc's amounts typed (Assigned) and its exec_host and
// exec_vnode rendered, as of the allocation execOf; see Request,
// Assigned, ExecHost and CacheRequest.
type derived struct {
	req    resc.Request
	reqErr error
	reqOf  Resources
	exec   []place.Assigned
	execOf resc.Alloc
	// execHost and execVnode are execOf rendered: every save of a
	// running job writes them, every status shows them.
	execHost, execVnode string
	// tab is the resource table the request was parsed with.
	tab *resc.Table
	// legacyHost and legacyVnode are exec_host and exec_vnode as a
	// record of a store before version 8 held them, read into Alloc
	// when the record is decoded (jobcodec.go), empty otherwise.
	legacyHost, legacyVnode string
}

// sameAlloc reports whether two allocations are the one slice (Alloc is
// replaced whole, never changed in place, so the same first element and
// length is the same allocation).
func sameAlloc(a, b resc.Alloc) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Request is the job's resource request, typed: parsed from ResourceList
// once (CacheRequest), and parsed afresh only when the list changed since
// (the result is then not kept: readers hold the server's read lock and
// must not write).
func (j *Job) Request() (resc.Request, error) {
	if d := &j.parsed; d.reqOf != nil && slices.Equal(d.reqOf, j.ResourceList) {
		return d.req, d.reqErr
	}
	return j.parsed.tab.ParseRequest(j.ResourceList)
}

// Resources is the resource table the job's request was last parsed with
// (CacheRequest).
func (j *Job) Resources() *resc.Table { return j.parsed.tab }

// Assigned is what the job holds on each node, chunk by chunk, from its
// allocation: typed once (CacheRequest), afresh only when it changed
// since (then not kept, as Request).
func (j *Job) Assigned() []place.Assigned {
	if d := &j.parsed; sameAlloc(d.execOf, j.Alloc) {
		return d.exec
	}
	return place.AssignedOf(j.parsed.tab, j.Alloc)
}

// ChunkNodes are the vnodes of a running job's chunks, in order (a vnode
// once per chunk), where exec_host names their moms' nodes.
func (j *Job) ChunkNodes() []string { return j.Alloc.Vnodes() }

// ExecHost is exec_host, rendered from the allocation once per change of
// it (CacheRequest), afresh when it changed since (then not kept).
func (j *Job) ExecHost() string {
	if d := &j.parsed; d.exec != nil && sameAlloc(d.execOf, j.Alloc) {
		return d.execHost
	}
	return j.Alloc.ExecHost()
}

// ExecVnode is exec_vnode, rendered as ExecHost is.
func (j *Job) ExecVnode() string {
	if d := &j.parsed; d.exec != nil && sameAlloc(d.execOf, j.Alloc) {
		return d.execVnode
	}
	return j.Alloc.ExecVnode()
}

// CacheRequest parses ResourceList into the job's typed request, and
// types the amounts of its allocation, with the resources of rt, when they or
// rt changed since the last call. The server calls it under its write
// lock at every change of a job, at load, and for every job when its
// site's resources change, so each is parsed once per change.
func (j *Job) CacheRequest(rt *resc.Table) {
	d := &j.parsed
	if d.tab != rt {
		d.tab, d.reqOf, d.exec, d.execOf = rt, nil, nil, nil
	}
	if !sameAlloc(d.execOf, j.Alloc) || (d.exec == nil && len(j.Alloc) > 0) {
		d.exec, d.execOf = place.AssignedOf(rt, j.Alloc), j.Alloc
		d.execHost, d.execVnode = j.Alloc.ExecHost(), j.Alloc.ExecVnode()
	}
	if d.reqOf != nil && slices.Equal(d.reqOf, j.ResourceList) {
		return
	}
	d.req, d.reqErr = rt.ParseRequest(j.ResourceList)
	d.reqOf = append(make(Resources, 0, len(j.ResourceList)), j.ResourceList...)
}

// passThrough lists job attributes of OpenPBS that are stored and shown
// as given but need nothing done, each with the check of its value. They
// stay only with the values that describe what this system does anyway,
// so that scripts written for OpenPBS that spell the default out are not
// refused; any other value is refused by its check:
//
//   - tolerate_node_failures = none: a job here never outlives the failure
//     of one of its nodes (it is requeued, or ends when not rerunnable).
//   - release_nodes_on_stageout = False: a job's nodes are released when
//     it ends, after its stage-out.
var passThrough = map[string]func(string) (string, error){
	proto.AttrTolerateNodeFailures: func(v string) (string, error) {
		switch strings.TrimSpace(v) {
		case "none":
			return "none", nil
		case "all", "job_start":
			return "", proto.Errorf(proto.PBSE_NOSUP, "(%s = %s: jobs do not outlive a failed node here; only none is supported)", proto.AttrTolerateNodeFailures, v)
		}
		return "", proto.Errorf(proto.PBSE_BADATVAL, "%s = %q (want none, all or job_start)", proto.AttrTolerateNodeFailures, v)
	},
	proto.AttrReleaseNodesOnStageout: func(v string) (string, error) {
		b, err := resc.ParseBool(v)
		switch {
		case err != nil:
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s = %q (want True or False)", proto.AttrReleaseNodesOnStageout, v)
		case b:
			return "", proto.Errorf(proto.PBSE_NOSUP, "(%s = True: a job's nodes are released when it ends, after its stage-out; only False is supported)", proto.AttrReleaseNodesOnStageout)
		}
		return resc.FormatBool(false), nil
	},
}

// refused lists attributes of OpenPBS and Torque that this system cannot
// honour, with the reason it gives: submitting or altering them is refused
// (PBSE_NOSUP) rather than stored and ignored.
var refused = map[string]string{
	// Torque qsub -D: a chroot as the job's owner can be escaped with a
	// set-uid program the owner links into that tree.
	proto.AttrInitRootDir: "running a job under another root directory (qsub -D) is not supported",
	// Torque qsub -W x=...: Moab's extensions, for a scheduler this
	// system does not have.
	proto.AttrExtension: "Moab scheduler extensions (qsub -W x=...) are not supported",
}

// Resources is a resource list kept sorted by name.
type Resources []resc.Pair

// Get returns the value of a resource.
func (r Resources) Get(name string) (string, bool) {
	i := sort.Search(len(r), func(i int) bool { return r[i].Name >= name })
	if i < len(r) && r[i].Name == name {
		return r[i].Value, true
	}
	return "", false
}

// Set returns r with name set to value, keeping the order.
func (r Resources) Set(name, value string) Resources {
	i := sort.Search(len(r), func(i int) bool { return r[i].Name >= name })
	if i < len(r) && r[i].Name == name {
		r[i].Value = value
		return r
	}
	r = append(r, resc.Pair{})
	copy(r[i+1:], r[i:])
	r[i] = resc.Pair{Name: name, Value: value}
	return r
}

// Delete returns r without name.
func (r Resources) Delete(name string) Resources {
	i := sort.Search(len(r), func(i int) bool { return r[i].Name >= name })
	if i < len(r) && r[i].Name == name {
		return append(r[:i], r[i+1:]...)
	}
	return r
}

// Clone returns a copy of r.
func (r Resources) Clone() Resources { return append(Resources(nil), r...) }

// Clone returns a deep copy of j.
func (j *Job) Clone() *Job {
	c := *j
	c.ResourceList = j.ResourceList.Clone()
	c.ResourcesUsed = j.ResourcesUsed.Clone()
	c.Extra = j.Extra.Clone()
	c.Estimated = j.Estimated.Clone()
	c.Depends = j.Depends.Clone()
	c.Array = j.Array.Clone()
	c.Releasing.Nodes = slices.Clone(j.Releasing.Nodes)
	return &c
}

// Release is a shrink of a running job under way: the nodes it gives
// back, and whether its owner gave them back for good (pbs_release_nodes:
// its select is lowered with them) rather than the scheduler shrinking it.
type Release struct {
	Nodes    []string
	GiveBack bool
}

// Pending says whether a shrink is under way.
func (r Release) Pending() bool { return len(r.Nodes) > 0 }

// releaseGiveBack marked a release by its owner in the text form of
// Releasing that stores before version 7 hold ("give:n1+n2").
const releaseGiveBack = "give:"

// parseRelease reads Releasing's text form of stores before version 7:
// "+"-separated nodes, "give:" first for a release by the owner.
func parseRelease(s string) Release {
	if s == "" {
		return Release{}
	}
	rest, give := strings.CutPrefix(s, releaseGiveBack)
	return Release{Nodes: strings.Split(rest, "+"), GiveBack: give}
}

// User is the owner's user name (Job_Owner without @host).
func (j *Job) User() string {
	if i := strings.IndexByte(j.Owner, '@'); i >= 0 {
		return j.Owner[:i]
	}
	return j.Owner
}

// StateLetter is the state shown to users: S for a suspended running job.
func (j *Job) StateLetter() byte {
	if j.State == StateRunning && j.Suspended {
		return 'S'
	}
	return byte(j.State)
}

// Finished reports whether the job is history.
func (j *Job) Finished() bool { return j.State == StateFinished }

// Active reports whether the job holds or is about to hold resources.
func (j *Job) Active() bool { return j.State == StateRunning || j.State == StateExiting }

// Holding reports whether the job holds the resources of its exec_vnode:
// it is active and placed, and if suspended, suspended by an operator
// (qsig -s suspend). A job the scheduler suspended to preempt it holds
// nothing (OpenPBS gives its resources to the job that preempted it; the
// scheduler takes them back when it resumes the job), nor does a
// suspended job on its way to be requeued (qrerun): it is frozen, then
// killed.
func (j *Job) Holding() bool {
	return j.Active() && len(j.Alloc) > 0 && (!j.Suspended || j.Substate == SubSuspended)
}

// EvalState recomputes the state of a job that is neither running nor
// finished from its holds and Execution_Time (reference §4.1): held if
// any hold is set or hold_until is in the future, waiting if
// Execution_Time is, held for dependencies while they are not all met,
// else queued.
func (j *Job) EvalState(now int64) {
	switch j.State {
	case StateRunning, StateExiting, StateFinished, StateBegun:
		return
	}
	switch {
	case j.Holds != "" || j.HoldUntil > now:
		j.State, j.Substate = StateHeld, SubHeld
	case j.Depends.Waiting():
		j.State, j.Substate = StateHeld, SubDepHold
	case j.ExecutionTime > now:
		j.State, j.Substate = StateWaiting, SubWaiting
		if j.StagePhase == StageFailed {
			j.Substate = SubStageFail
		}
	default:
		if j.StagePhase == StageFailed {
			// The wait after a failed stage-in is over: try again.
			j.StagePhase = StageNone
		}
		j.State, j.Substate = StateQueued, SubQueued
		switch {
		case j.StagePhase == StageRunning:
			j.Substate = SubStageIn
		case j.StagePhase == StageDone:
			j.Substate = SubStageCmp
		case j.Stagein != "":
			j.Substate = SubPrestagein
		}
	}
}

// Stage-in phases of a job that is not running (Job.StagePhase).
const (
	StageNone    = 0
	StageRunning = 1 // an early stage-in is copying the files to StageNode
	StageDone    = 2 // the files are in place on StageNode
	StageFailed  = 3 // the last stage-in failed: the job waits (W) before another try
)

// ClearStage forgets an early stage-in (the job runs, or its files
// changed).
func (j *Job) ClearStage() {
	j.StageNode, j.StagePhase = "", StageNone
}

// SetExit records the exit status.
func (j *Job) SetExit(status int) {
	j.HasExit = true
	j.ExitStatus = status
}

// Privilege is what a caller may do, as the server determined it.
type Privilege struct {
	Owner    bool // the caller owns the job
	Operator bool
	Manager  bool
	// Scheduler: the caller is the scheduler (it alone tells the server
	// that a job is at a run limit, by its accrue_type).
	Scheduler bool
}

// jobAccess says who may set a job attribute and when.
type jobAccess uint8

const (
	jaUser       jobAccess = 1 << iota // the owner may set it at submit and with qalter
	jaOper                             // operators and managers may set it
	jaRunning                          // may change while the job runs
	jaReadOnly                         // only the server sets it
	jaSubmitOnly                       // set at submission, never altered
	jaSched                            // only the scheduler sets it
)

// jobAttr binds an attribute name to a Job field.
type jobAttr struct {
	name   string
	access jobAccess
	get    func(j *Job) (string, bool)
	set    func(j *Job, resource, value string) error
	// resources marks Resource_List and resources_used.
	resources func(j *Job) *Resources
	// accrual marks eligible_time and accrue_type: shown only while the
	// server keeps them, as of the renderer's clock (ShowAccrual).
	accrual func(a Accrual, now int64) string
}

func timeAttr(f func(j *Job) *int64) (func(*Job) (string, bool), func(*Job, string, string) error) {
	get := func(j *Job) (string, bool) {
		v := *f(j)
		return strconv.FormatInt(v, 10), v != 0
	}
	set := func(j *Job, _, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return proto.Errorf(proto.PBSE_BADATVAL, "time %q (want Unix seconds)", v)
		}
		*f(j) = n
		return nil
	}
	return get, set
}

func strAttr(f func(j *Job) *string, check func(string) (string, error)) (func(*Job) (string, bool), func(*Job, string, string) error) {
	get := func(j *Job) (string, bool) {
		v := *f(j)
		return v, v != ""
	}
	set := func(j *Job, _, v string) error {
		if strings.ContainsAny(v, resc.ControlChars) {
			return proto.Errorf(proto.PBSE_BADATVAL, "value contains a line break or NUL")
		}
		if check != nil {
			var err error
			if v, err = check(v); err != nil {
				return err
			}
		}
		*f(j) = v
		return nil
	}
	return get, set
}

func mk(name string, access jobAccess, get func(*Job) (string, bool), set func(*Job, string, string) error) jobAttr {
	return jobAttr{name: name, access: access, get: get, set: set}
}

// allocAttr shows exec_host or exec_vnode, rendered from the allocation
// (unset while the job holds none).
func allocAttr(render func(*Job) string) func(*Job) (string, bool) {
	return func(j *Job) (string, bool) {
		if len(j.Alloc) == 0 {
			return "", false
		}
		return render(j), true
	}
}

// refuseAlloc: only a start or a resize gives a job its allocation, never
// an attribute's text.
func refuseAlloc(*Job, string, string) error {
	return proto.Errorf(proto.PBSE_ATTRRO, "exec_host and exec_vnode are set by the job's start")
}

func mkStr(name string, access jobAccess, f func(j *Job) *string, check func(string) (string, error)) jobAttr {
	g, s := strAttr(f, check)
	return mk(name, access, g, s)
}

func mkTime(name string, access jobAccess, f func(j *Job) *int64) jobAttr {
	g, s := timeAttr(f)
	return mk(name, access, g, s)
}

func oneOf(name string, allowed ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, a := range allowed {
			if v == a {
				return v, nil
			}
		}
		return "", proto.Errorf(proto.PBSE_BADATVAL, "%s = %q (want one of %s)", name, v, strings.Join(allowed, ", "))
	}
}

// MaxJobName is the longest job name, OpenPBS's PBS_MAXJOBNAME.
const MaxJobName = 236

// CheckJobName says what is wrong with a job name, or nil. As OpenPBS's
// check_job_name: at most MaxJobName characters, each a letter, a digit,
// '-', '_', '+' or '.', and when strict (qsub -N, qalter -N) the first a
// letter. Not strict is a name at submission, which qsub may have taken
// from the script's file name ("1run.sh"), as OpenPBS allows; even then
// the first may not be '-': prologues and epilogues, run as root, get
// the name as an argument, and "-rf" would read as options.
func CheckJobName(name string, strict bool) error {
	if name == "" {
		return errors.New("empty")
	}
	if len(name) > MaxJobName {
		return fmt.Errorf("longer than %d characters", MaxJobName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_+.", c) >= 0) {
			return fmt.Errorf("%q is not allowed (letters, digits, '-', '_', '+' and '.' are)", c)
		}
	}
	switch c := name[0]; {
	case strict && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
		return errors.New("the first character must be a letter")
	case c == '-':
		return errors.New("the first character may not be '-'")
	}
	return nil
}

// checkJobName accepts a Job_Name at submission (CheckJobName, not
// strict); SetJobAttr is strict for an alteration.
func checkJobName(v string) (string, error) {
	if err := CheckJobName(v, false); err != nil {
		code := proto.PBSE_BADATVAL
		if len(v) > MaxJobName {
			code = proto.PBSE_JOBNBIG
		}
		return "", proto.Errorf(code, "Job_Name = %q (%v)", v, err)
	}
	return v, nil
}

// checkStageList checks a stagein or stageout list (internal/stage) and
// stores it in its canonical form. Whether each host may be reached is
// the server's check at submission (it knows the nodes).
func checkStageList(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		if v == "" {
			return v, nil
		}
		pairs, err := stage.ParseList(v)
		if err != nil {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "%s: %v", name, err)
		}
		return stage.FormatList(pairs), nil
	}
}

// checkMailPoints accepts n alone, or letters of a, b and e, with j
// (subjobs mail too) only beside one of them, as OpenPBS's qsub -m.
func checkMailPoints(v string) (string, error) {
	if v == "n" {
		return v, nil
	}
	for i, c := range v {
		if !strings.ContainsRune("abej", c) || strings.IndexRune(v, c) != i {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "Mail_Points = %q (want n, or letters of a, b, e, j without repeats)", v)
		}
	}
	if strings.Trim(v, "j") == "" {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "Mail_Points = %q (j needs a, b or e beside it)", v)
	}
	return v, nil
}

// checkMailUsers accepts Mail_Users: comma-separated addresses, user or
// user@host (mailer.ParseUsers: never a program, a file or an option of
// the mailer), stored without the blanks around them.
func checkMailUsers(v string) (string, error) {
	users, err := mailer.ParseUsers(v)
	if err != nil {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "Mail_Users = %q (%v)", v, err)
	}
	return users, nil
}

// checkSignalName accepts a signal as qsig takes it: a name with or
// without SIG (stored without, upper case) or a number from 1 to 64;
// whether the name is a signal of this system is the server's check
// (model knows no system's signals).
func checkSignalName(v string) (string, error) {
	s := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(v)), "SIG")
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "resize_signal = %q (a signal number is 1 to 64)", v)
		}
		return s, nil
	}
	if s == "" || len(s) > 16 || strings.IndexFunc(s, func(r rune) bool { return (r < 'A' || r > 'Z') && (r < '0' || r > '9') }) >= 0 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "resize_signal = %q (want a signal name such as USR1, or a number)", v)
	}
	return s, nil
}

// checkUmask accepts an octal umask of one to four digits, at most 0777,
// and stores it with three digits ("22" -> "022").
func checkUmask(v string) (string, error) {
	t := strings.TrimSpace(v)
	n, err := strconv.ParseUint(t, 8, 32)
	if err != nil || t == "" || len(t) > 4 || n > 0o777 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "umask = %q (want octal digits, at most 0777)", v)
	}
	return fmt.Sprintf("%03o", n), nil
}

// ParseUmask reads a umask stored by checkUmask.
func ParseUmask(v string) (uint32, bool) {
	n, err := strconv.ParseUint(v, 8, 32)
	return uint32(n), err == nil && v != "" && n <= 0o777
}

// checkJobArgs accepts job_arguments with at least one word.
func checkJobArgs(v string) (string, error) {
	if len(JobArgWords(v)) == 0 {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "job_arguments is empty")
	}
	return v, nil
}

// JobArgWords splits job_arguments into the script's arguments: words
// separated by blanks, as Torque's mom passes them (no quoting, no shell).
func JobArgWords(v string) []string { return strings.Fields(v) }

// checkRemoveFiles accepts Remove_Files: o, e, oe or eo.
func checkRemoveFiles(v string) (string, error) {
	switch v {
	case "o", "e", "oe", "eo":
		return v, nil
	}
	return "", proto.Errorf(proto.PBSE_BADATVAL, "Remove_Files = %q (want o, e, oe or eo)", v)
}

// checkKeepFiles accepts Keep_Files as OpenPBS does: n alone, or any of
// o, e and d, each once.
func checkKeepFiles(v string) (string, error) {
	t := strings.TrimSpace(v)
	if t == "n" {
		return t, nil
	}
	ok := t != ""
	for i, c := range t {
		if !strings.ContainsRune("oed", c) || strings.ContainsRune(t[:i], c) {
			ok = false
		}
	}
	if !ok {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "Keep_Files = %q (want n, or any of o, e and d)", v)
	}
	return t, nil
}

// KeptStreams reads Keep_Files: whether the output and the error stream
// stay on the execution host, in the owner's home directory, rather
// than go to their paths. With d the named streams are written straight
// to their paths, which is how this system writes output anyway.
func KeptStreams(keep string) (out, err bool) {
	if strings.ContainsRune(keep, 'd') {
		return false, false
	}
	return strings.ContainsRune(keep, 'o'), strings.ContainsRune(keep, 'e')
}

// StdFileName is the default name of the job's output (kind 'o') or
// error ('e') file: <Job_Name>.o<seq>, with .<index> for a subjob (an
// array's own name keeps ArrayIndexTag in its place).
func (j *Job) StdFileName(kind byte) string {
	n := j.Name + "." + string(kind) + strconv.FormatInt(j.Seq, 10)
	switch {
	case j.IsSubjob:
		n += "." + strconv.Itoa(j.Index)
	case j.IsArray():
		n += "." + ArrayIndexTag
	}
	return n
}

// checkJobType accepts a jobtype that names a file: letters, digits,
// '.', '_' and '-', not starting with a dot (the mom runs
// mom_priv/prologue.<jobtype>).
func checkJobType(v string) (string, error) {
	ok := v != "" && len(v) <= 64 && v[0] != '.'
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			ok = false
		}
	}
	if !ok {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "jobtype = %q (want a name of letters, digits, '.', '_' and '-', not starting with '.'; the mom runs prologue.<jobtype>)", v)
	}
	switch v {
	case "user", "parallel", "user.parallel", "precancel":
		// Torque's own programs (prologue.user runs as the owner there).
		return "", proto.Errorf(proto.PBSE_BADATVAL, "jobtype = %q names one of Torque's own prologue or epilogue variants", v)
	}
	return v, nil
}

func checkPath(v string) (string, error) {
	if v == "" {
		return "", proto.Errorf(proto.PBSE_BADATVAL, "empty path")
	}
	return v, nil
}

// jobAttrs lists job attributes in OpenPBS's qstat -f order.
var jobAttrs = []jobAttr{
	mkStr(proto.AttrJobName, jaUser, func(j *Job) *string { return &j.Name }, checkJobName),
	mkStr(proto.AttrJobOwner, jaReadOnly, func(j *Job) *string { return &j.Owner }, nil),
	{name: proto.AttrResourcesUsed, access: jaReadOnly, resources: func(j *Job) *Resources { return &j.ResourcesUsed }},
	mk(proto.AttrJobState, jaReadOnly, func(j *Job) (string, bool) { return string(j.StateLetter()), true }, nil),
	mkStr(proto.AttrQueue, jaReadOnly, func(j *Job) *string { return &j.Queue }, nil),
	mk(proto.AttrServer, jaReadOnly, func(j *Job) (string, bool) {
		_, srv, _ := strings.Cut(j.ID, ".")
		return srv, srv != ""
	}, nil),
	mkStr(proto.AttrAccountName, jaUser, func(j *Job) *string { return &j.Account }, nil),
	mkStr(proto.AttrCheckpoint, jaUser, func(j *Job) *string { return &j.Checkpoint }, nil),
	mkTime(proto.AttrCtime, jaReadOnly, func(j *Job) *int64 { return &j.Ctime }),
	mk(proto.AttrDepend, jaUser, func(j *Job) (string, bool) {
		_, srv, _ := strings.Cut(j.ID, ".")
		return j.Depends.Format(srv), len(j.Depends) > 0
	}, func(j *Job, _, v string) error {
		d, err := ParseDepend(v)
		if err != nil {
			return err
		}
		j.Depends = d
		return nil
	}),
	mkStr(proto.AttrErrorPath, jaUser, func(j *Job) *string { return &j.ErrorPath }, checkPath),
	mk(proto.AttrExecHost, jaReadOnly, allocAttr((*Job).ExecHost), refuseAlloc),
	mk(proto.AttrExecVnode, jaReadOnly, allocAttr((*Job).ExecVnode), refuseAlloc),
	mkStr(proto.AttrExecGPUs, jaReadOnly, func(j *Job) *string { return &j.ExecGPUs }, nil),
	mkTime(proto.AttrExecutionTime, jaUser, func(j *Job) *int64 { return &j.ExecutionTime }),
	mk(proto.AttrHoldTypes, jaUser, func(j *Job) (string, bool) {
		h := j.Holds
		if j.Depends.Waiting() {
			// As OpenPBS shows a job held for its dependencies.
			h = AddHolds(h, string(HoldSystem))
		}
		if h == "" {
			return "n", true
		}
		return h, true
	}, func(j *Job, _, v string) error {
		h, ok := NormalizeHolds(v)
		if !ok {
			return proto.Errorf(proto.PBSE_BADATVAL, "Hold_Types = %q (want letters of u, o, s, or n)", v)
		}
		j.Holds = h
		return nil
	}),
	mkStr(proto.AttrJoinPath, jaUser, func(j *Job) *string { return &j.JoinPath }, oneOf(proto.AttrJoinPath, "oe", "eo", "n")),
	mkStr(proto.AttrKeepFiles, jaUser, func(j *Job) *string { return &j.KeepFiles }, checkKeepFiles),
	mkStr(proto.AttrMailPoints, jaUser|jaRunning, func(j *Job) *string { return &j.MailPoints }, checkMailPoints),
	mkStr(proto.AttrMailUsers, jaUser|jaRunning, func(j *Job) *string { return &j.MailUsers }, checkMailUsers),
	mkTime(proto.AttrMtime, jaReadOnly, func(j *Job) *int64 { return &j.Mtime }),
	mkStr(proto.AttrOutputPath, jaUser, func(j *Job) *string { return &j.OutputPath }, checkPath),
	mk(proto.AttrPriority, jaUser|jaRunning, func(j *Job) (string, bool) { return strconv.Itoa(j.Priority), true },
		func(j *Job, _, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < -1024 || n > 1023 {
				return proto.Errorf(proto.PBSE_BADATVAL, "Priority = %q (want an integer from -1024 to 1023)", v)
			}
			j.Priority = n
			return nil
		}),
	mkTime(proto.AttrQtime, jaReadOnly, func(j *Job) *int64 { return &j.Qtime }),
	mk(proto.AttrRerunable, jaUser, func(j *Job) (string, bool) { return resc.FormatBool(j.Rerunable), true },
		func(j *Job, _, v string) error {
			b, err := resc.ParseBool(v)
			if err != nil {
				return proto.Errorf(proto.PBSE_BADATVAL, "Rerunable = %q (want y or n)", v)
			}
			if b && j.Interactive != nil {
				return proto.Errorf(proto.PBSE_BADATVAL, "(interactive jobs are not rerunnable)")
			}
			j.Rerunable = b
			return nil
		}),
	{name: proto.AttrResourceList, access: jaUser, resources: func(j *Job) *Resources { return &j.ResourceList }},
	mkTime(proto.AttrStime, jaReadOnly, func(j *Job) *int64 { return &j.Stime }),
	mk(proto.AttrSessionID, jaReadOnly, func(j *Job) (string, bool) { return strconv.Itoa(j.SessionID), j.SessionID != 0 }, nil),
	mkStr(proto.AttrShellPathList, jaUser, func(j *Job) *string { return &j.ShellPathList }, nil),
	mkStr(proto.AttrJobdir, jaReadOnly, func(j *Job) *string { return &j.Jobdir }, nil),
	mk(proto.AttrSubstate, jaReadOnly, func(j *Job) (string, bool) { return strconv.Itoa(j.Substate), true }, nil),
	mk(proto.AttrVariableList, jaUser, func(j *Job) (string, bool) { return j.VariableList, j.VariableList != "" },
		func(j *Job, _, v string) error {
			if strings.ContainsRune(v, 0) {
				return proto.Errorf(proto.PBSE_BADATVAL, "Variable_List contains NUL")
			}
			j.VariableList = v
			return nil
		}),
	mkStr(proto.AttrEuser, jaReadOnly, func(j *Job) *string { return &j.EUser }, nil),
	mkStr(proto.AttrEgroup, jaReadOnly, func(j *Job) *string { return &j.EGroup }, nil),
	mk(proto.AttrQueueRank, jaReadOnly, func(j *Job) (string, bool) { return strconv.FormatInt(j.QueueRank, 10), true }, nil),
	mkStr(proto.AttrQueueType, jaReadOnly, func(j *Job) *string { return &j.QueueType }, func(v string) (string, error) { return v, nil }),
	mkStr(proto.AttrComment, jaOper|jaRunning, func(j *Job) *string { return &j.Comment }, nil),
	mkTime(proto.AttrEtime, jaReadOnly, func(j *Job) *int64 { return &j.Etime }),
	{name: proto.AttrEligibleTime, access: jaOper | jaRunning,
		get: func(*Job) (string, bool) { return "", false },
		set: func(j *Job, _, v string) error {
			secs, err := resc.ParseDuration(strings.TrimSpace(v))
			if err != nil || secs < 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "eligible_time = %q (want a duration, [[HH:]MM:]SS)", v)
			}
			// Since 0: the server's next track restarts the clock at
			// its now (Server.accrue).
			j.Accrual = Accrual{Type: j.Accrual.Type, Eligible: secs}
			return nil
		},
		accrual: func(a Accrual, now int64) string { return FormatEligible(a.EligibleAt(now)) }},
	{name: proto.AttrAccrueType, access: jaSched | jaRunning,
		get: func(*Job) (string, bool) { return "", false },
		set: func(j *Job, _, v string) error {
			// The scheduler's word: 1, the job's user, group or project
			// is at a run limit; 2, it is not. The server decides the
			// type (AccrueFor).
			switch strings.TrimSpace(v) {
			case AccrueIneligible.String():
				j.LimitBlocked = true
			case AccrueEligible.String():
				j.LimitBlocked = false
			default:
				return proto.Errorf(proto.PBSE_BADATVAL, "accrue_type = %q (the scheduler sets 1 or 2)", v)
			}
			return nil
		},
		accrual: func(a Accrual, _ int64) string { return a.Type.String() }},
	mk(proto.AttrRunCount, jaReadOnly, func(j *Job) (string, bool) { return strconv.Itoa(j.RunCount), j.RunCount != 0 }, nil),
	mk(proto.AttrExitStatus, jaReadOnly, func(j *Job) (string, bool) { return strconv.Itoa(j.ExitStatus), j.HasExit }, nil),
	mkStr(proto.AttrSubmitArguments, jaUser, func(j *Job) *string { return &j.SubmitArgs }, nil),
	mkStr(proto.AttrUserList, jaUser, func(j *Job) *string { return &j.UserList }, nil),
	mkStr(proto.AttrGroupList, jaUser, func(j *Job) *string { return &j.GroupList }, nil),
	mkStr(proto.AttrInitWorkDir, jaUser, func(j *Job) *string { return &j.InitWorkDir }, func(v string) (string, error) {
		if !strings.HasPrefix(v, "/") {
			return "", proto.Errorf(proto.PBSE_BADATVAL, "init_work_dir = %q (want an absolute path)", v)
		}
		return v, nil
	}),
	mkStr(proto.AttrSandbox, jaUser, func(j *Job) *string { return &j.Sandbox }, oneOf(proto.AttrSandbox, "HOME", "PRIVATE")),
	mkStr(proto.AttrStagein, jaUser, func(j *Job) *string { return &j.Stagein }, checkStageList(proto.AttrStagein)),
	mkStr(proto.AttrStageout, jaUser, func(j *Job) *string { return &j.Stageout }, checkStageList(proto.AttrStageout)),
	mkStr(proto.AttrUmask, jaUser, func(j *Job) *string { return &j.Umask }, checkUmask),
	mkStr(proto.AttrJobArguments, jaUser, func(j *Job) *string { return &j.JobArgs }, checkJobArgs),
	mkStr(proto.AttrRemoveFiles, jaUser, func(j *Job) *string { return &j.RemoveFiles }, checkRemoveFiles),
	mk(proto.AttrBlock, jaUser|jaSubmitOnly, func(j *Job) (string, bool) { return resc.FormatBool(j.Block), j.Block },
		func(j *Job, _, v string) error {
			b, err := resc.ParseBool(v)
			if err != nil {
				return proto.Errorf(proto.PBSE_BADATVAL, "block = %q (want true or false)", v)
			}
			j.Block = b
			return nil
		}),
	mkStr(proto.AttrJobType, jaUser, func(j *Job) *string { return &j.JobType }, checkJobType),
	mkStr(proto.AttrResizeSignal, jaUser|jaRunning, func(j *Job) *string { return &j.ResizeSignal }, checkSignalName),
	mk(proto.AttrKillDelay, jaUser, func(j *Job) (string, bool) { return strconv.FormatInt(j.KillDelay, 10), j.HasKillDelay },
		func(j *Job, _, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return proto.Errorf(proto.PBSE_BADATVAL, "kill_delay = %q (want a number of seconds, 0 or more)", v)
			}
			j.KillDelay, j.HasKillDelay = n, true
			return nil
		}),
	// qsub -I: shown as True, never with its port or secret; set only
	// through the submission's Interactive field.
	mk(proto.AttrInteractive, jaReadOnly, func(j *Job) (string, bool) { return "True", j.Interactive != nil }, nil),
	// Where an early stage-in put (or is putting) the job's files: the
	// scheduler runs the job there to skip the copy.
	mkStr(proto.AttrStageinNode, jaReadOnly, func(j *Job) *string { return &j.StageNode }, nil),
	// Managers and operators (and filters) hold a job until a time; the
	// server lifts it then (DESIGN §7).
	mkTime(proto.AttrHoldUntil, jaOper, func(j *Job) *int64 { return &j.HoldUntil }),
	mkStr(proto.AttrProject, jaUser, func(j *Job) *string { return &j.Project }, nil),
	mkStr(proto.AttrSubmitHost, jaReadOnly, func(j *Job) *string { return &j.SubmitHost }, nil),
	mkTime(proto.AttrObittime, jaReadOnly, func(j *Job) *int64 { return &j.Obittime }),
	mkTime(proto.AttrHistoryTime, jaReadOnly, func(j *Job) *int64 { return &j.HistoryTime }),
	// Set by the scheduler (a manager) for the job its backfilling
	// protects; users cannot.
	{name: proto.AttrEstimated, access: jaOper, resources: func(j *Job) *Resources { return &j.Estimated }},
	// Job arrays (array.go).
	mk(proto.AttrArray, jaReadOnly, func(j *Job) (string, bool) { return "True", j.Array != nil }, nil),
	mk(proto.AttrArrayIndices, jaUser|jaSubmitOnly, func(j *Job) (string, bool) {
		if j.Array == nil || j.Array.Indices.Empty() {
			return "", false
		}
		return j.Array.Indices.String(), true
	}, func(j *Job, _, v string) error {
		spec, err := ParseArraySpec(v)
		if err != nil {
			return err
		}
		if j.Array == nil {
			j.Array = &Array{}
		}
		j.Array.Indices, j.Array.Queued = spec.Indices, spec.Indices.Clone()
		if spec.MaxRun > 0 {
			j.Array.MaxRun = spec.MaxRun
		}
		return nil
	}),
	mk(proto.AttrArrayRemaining, jaReadOnly, func(j *Job) (string, bool) {
		if j.Array == nil {
			return "", false
		}
		return j.Array.Queued.String(), true
	}, nil),
	mk(proto.AttrArrayStateCount, jaReadOnly, func(j *Job) (string, bool) {
		if j.Array == nil {
			return "", false
		}
		return j.Array.StateCount(), true
	}, nil),
	mk(proto.AttrMaxRunSubjobs, jaUser|jaRunning, func(j *Job) (string, bool) {
		if j.Array == nil || j.Array.MaxRun == 0 {
			return "", false
		}
		return strconv.Itoa(j.Array.MaxRun), true
	}, func(j *Job, _, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return proto.Errorf(proto.PBSE_BADATVAL, "max_run_subjobs = %q (want a whole number from 1)", v)
		}
		if j.IsSubjob {
			return proto.Errorf(proto.PBSE_BADATVAL, "(max_run_subjobs is set on the array, not on a subjob)")
		}
		if j.Array == nil {
			j.Array = &Array{} // the indices may come later in the request; the server checks
		}
		j.Array.MaxRun = n
		return nil
	}),
	mk(proto.AttrArrayID, jaReadOnly, func(j *Job) (string, bool) {
		if !j.IsSubjob {
			return "", false
		}
		_, srv, _ := strings.Cut(j.ID, ".")
		return FormatArrayID(j.Seq, srv), true
	}, nil),
	mk(proto.AttrArrayIndex, jaReadOnly, func(j *Job) (string, bool) {
		return strconv.Itoa(j.Index), j.IsSubjob
	}, nil),
}

var jobAttrIndex = func() map[string]int {
	m := make(map[string]int, len(jobAttrs))
	for i, a := range jobAttrs {
		m[a.name] = i
	}
	return m
}()

// IsJobAttr reports whether name is a job attribute.
func IsJobAttr(name string) bool {
	_, ok := jobAttrIndex[name]
	return ok || passThrough[name] != nil
}

// JobAttrNames lists every job attribute: those in display order, then
// the ones only passed through, sorted (the web API's schema test holds
// its list of documented fields against it).
func JobAttrNames() []string {
	out := make([]string, 0, len(jobAttrs)+len(passThrough))
	for _, a := range jobAttrs {
		out = append(out, a.name)
	}
	return append(out, slices.Sorted(maps.Keys(passThrough))...)
}

// JobStatus renders j's attributes in display order. want limits the
// attributes (nil for all).
func JobStatus(j *Job, want map[string]bool) []proto.Attr {
	return NewJobRenderer(want).Render(j)
}

// JobRenderer renders jobs' attributes, with the selection of attributes
// worked out once for a whole status answer.
type JobRenderer struct {
	attrs []*jobAttr
	want  map[string]bool
	// Hidden are resources left out of the resource lists (a site's
	// resources with flag i, for callers who are not managers or
	// operators); nil: none.
	Hidden map[string]bool
	// accrual: eligible_time and accrue_type are shown, as of now.
	accrual bool
	now     int64
}

// ShowAccrual has the renderer show eligible_time and accrue_type as of
// now (the server's eligible_time_enable is True).
func (r *JobRenderer) ShowAccrual(now int64) {
	r.accrual, r.now = true, now
}

// NewJobRenderer prepares rendering of the attributes in want (nil: all).
func NewJobRenderer(want map[string]bool) *JobRenderer {
	r := &JobRenderer{want: want}
	for i := range jobAttrs {
		if want == nil || want[jobAttrs[i].name] {
			r.attrs = append(r.attrs, &jobAttrs[i])
		}
	}
	return r
}

// Render returns j's attributes in display order.
func (r *JobRenderer) Render(j *Job) []proto.Attr {
	return r.AppendTo(make([]proto.Attr, 0, len(r.attrs)+len(j.ResourceList)+len(j.ResourcesUsed)), j)
}

// AppendTo appends j's attributes in display order to out.
func (r *JobRenderer) AppendTo(out []proto.Attr, j *Job) []proto.Attr {
	want := r.want
	for _, a := range r.attrs {
		if a.resources != nil {
			for _, p := range *a.resources(j) {
				if r.Hidden[p.Name] {
					continue
				}
				v := p.Value
				if p.Name == proto.ResNodect && a.name == proto.AttrResourceList {
					v = j.nodect(v)
				}
				out = append(out, proto.Attr{Name: a.name, Resource: p.Name, Value: v})
			}
			continue
		}
		if a.accrual != nil {
			if r.accrual {
				out = append(out, proto.Attr{Name: a.name, Value: a.accrual(j.Accrual, r.now)})
			}
			continue
		}
		if v, ok := a.get(j); ok {
			out = append(out, proto.Attr{Name: a.name, Value: v})
		}
	}
	for _, p := range j.Extra {
		if want == nil || want[p.Name] {
			out = append(out, proto.Attr{Name: p.Name, Value: p.Value})
		}
	}
	return out
}

// lowerMax is qalter of a running elastic job's select: only the maximum
// of its count range may change, and only down, never below the chunks
// the job holds of it (pbs_release_nodes gives chunks back).
func (j *Job) lowerMax(v string) error {
	req, err := j.Request()
	if err != nil {
		return proto.Errorf(proto.PBSE_BADATVAL, "Resource_List: %v", err)
	}
	old := req.Select
	ei := old.Elastic()
	if ei < 0 {
		return proto.Errorf(proto.PBSE_MODATRRUN, "Resource_List.select (of a running job: only the maximum of a chunk count range may be lowered)")
	}
	sel, err := j.parsed.tab.ParseSelect(v)
	if err != nil {
		return proto.Errorf(proto.PBSE_BADATVAL, "Resource_List.select: %v", err)
	}
	held, _ := old.WithNodeCount(len(j.Assigned()))
	newMax := sel[min(ei, len(sel)-1)].Count
	if m := sel[min(ei, len(sel)-1)].Max; m > 0 {
		newMax = m
	}
	same := len(sel) == len(old)
	for i := 0; same && i < len(sel); i++ {
		a, b := sel[i], old[i]
		if i == ei {
			a.Max, b.Max = 0, 0
		}
		same = resc.Select{a}.String() == resc.Select{b}.String()
	}
	oldMax := old[ei].Max
	switch {
	case !same:
		return proto.Errorf(proto.PBSE_MODATRRUN, "Resource_List.select = %s (of a running job only the maximum of %s may be lowered)", v, old)
	case newMax > oldMax:
		return proto.Errorf(proto.PBSE_MODATRRUN, "Resource_List.select = %s (the maximum of a running job's range may only be lowered, from %d)", v, oldMax)
	case held != nil && newMax < held[ei].Count:
		return proto.Errorf(proto.PBSE_BADATVAL, "Resource_List.select = %s (the job holds %d chunks of its range: give them back with pbs_release_nodes first)", v, held[ei].Count)
	}
	j.ResourceList = j.ResourceList.Set(proto.ResSelect, sel.String())
	return nil
}

// nodect is the Resource_List.nodect shown: for a running elastic job (a
// select with a chunk count range) the chunks it holds now, else the
// stored value (the select's minimum).
func (j *Job) nodect(stored string) string {
	if len(j.Alloc) == 0 {
		return stored
	}
	if req, err := j.Request(); err != nil || req.Select.Elastic() < 0 {
		return stored
	}
	return strconv.Itoa(len(j.Assigned()))
}

// JobAttrValue returns one attribute of j as status would show it.
func JobAttrValue(j *Job, name, resource string) (string, bool) {
	i, ok := jobAttrIndex[name]
	if !ok {
		return j.Extra.Get(name)
	}
	a := &jobAttrs[i]
	if a.resources != nil {
		return (*a.resources(j)).Get(resource)
	}
	return a.get(j)
}

// HookSettable lists the job attributes a queuejob or modifyjob hook may
// set: those a user, an operator or a manager may write, as OpenPBS's
// hooks may (whoever the requestor is), with the passed-through ones.
func HookSettable() []string {
	var out []string
	for _, a := range jobAttrs {
		if a.access&jaReadOnly == 0 && a.access&(jaUser|jaOper) != 0 {
			out = append(out, a.name)
		}
	}
	for name := range passThrough {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Phase distinguishes submission from later alteration.
type Phase uint8

// Phases.
const (
	AtSubmit Phase = iota
	AtAlter
)

// SetJobAttr applies one client-supplied attribute to j, checking who may
// set it and, for qalter, whether the job's state allows it. Values are
// validated and canonicalised, a resource's as its type in rt; Hold_Types
// is checked against the caller's privileges.
func SetJobAttr(rt *resc.Table, j *Job, a proto.Attr, priv Privilege, phase Phase) error {
	i, ok := jobAttrIndex[a.Name]
	if !ok {
		if why, no := refused[a.Name]; no && a.Resource == "" {
			return proto.Errorf(proto.PBSE_NOSUP, "(%s: %s)", a.Name, why)
		}
		check := passThrough[a.Name]
		if check == nil || a.Resource != "" {
			return proto.Errorf(proto.PBSE_NOATTR, "%s", a.FullName())
		}
		if a.Op == proto.OpUnset {
			j.Extra = j.Extra.Delete(a.Name)
			return nil
		}
		v, err := check(a.Value)
		if err != nil {
			return err
		}
		j.Extra = j.Extra.Set(a.Name, v)
		return nil
	}
	d := &jobAttrs[i]
	privileged := priv.Operator || priv.Manager
	switch {
	case d.access&jaReadOnly != 0, d.access&jaSched != 0 && !priv.Scheduler,
		d.accrual != nil && !privileged: // OpenPBS's answer to a user's qalter of eligible_time
		return proto.Errorf(proto.PBSE_ATTRRO, "%s", a.FullName())
	case d.access&(jaUser|jaSched) == 0 && !(d.access&jaOper != 0 && privileged):
		return proto.Errorf(proto.PBSE_PERM, "%s may be set only by an operator or manager", a.FullName())
	case phase == AtAlter && d.access&jaSubmitOnly != 0:
		return proto.Errorf(proto.PBSE_ATTRRO, "%s (set at submission only)", a.FullName())
	}
	if phase == AtAlter && j.Active() && d.access&jaRunning == 0 {
		if a.Name == proto.AttrResourceList && a.Resource == proto.ResSelect && a.Op != proto.OpUnset {
			return j.lowerMax(a.Value)
		}
		return proto.Errorf(proto.PBSE_MODATRRUN, "%s", a.FullName())
	}
	if d.resources != nil {
		if a.Resource == "" {
			return proto.Errorf(proto.PBSE_BADATVAL, "%s needs a resource name", a.Name)
		}
		list := d.resources(j)
		if a.Op == proto.OpUnset {
			*list = list.Delete(a.Resource)
			return nil
		}
		if c, ok := rt.Custom(a.Resource); ok && c.Flags&(resc.FlagReadOnly|resc.FlagInvisible) != 0 && !privileged {
			// OpenPBS's flags r and i: only managers and operators set
			// the resource on a job.
			return proto.Errorf(proto.PBSE_ATTRRO, "%s (resource %s is set by managers and operators only)", a.FullName(), a.Resource)
		}
		v, err := rt.Canonical(a.Resource, a.Value)
		if err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "%s.%s: %v", a.Name, a.Resource, err)
		}
		*list = list.Set(a.Resource, v)
		return nil
	}
	if a.Resource != "" {
		return proto.Errorf(proto.PBSE_NOATTR, "%s", a.FullName())
	}
	if a.Name == proto.AttrVariableList && a.Op == proto.OpIncr {
		a.Value = proto.MergeVariableList(j.VariableList, a.Value)
	}
	if a.Name == proto.AttrJobName && phase == AtAlter && a.Op != proto.OpUnset {
		// qalter -N: a new name is held to qsub -N's rule, as OpenPBS
		// holds it (a letter first).
		if err := CheckJobName(a.Value, true); err != nil {
			return proto.Errorf(proto.PBSE_BADATVAL, "Job_Name = %q (%v)", a.Value, err)
		}
	}
	if a.Name == proto.AttrHoldTypes {
		h, ok := NormalizeHolds(a.Value)
		if !ok {
			return proto.Errorf(proto.PBSE_BADATVAL, "Hold_Types = %q (want letters of u, o, s, or n)", a.Value)
		}
		// Every hold that changes, set or cleared, needs its privilege:
		// an owner's "qalter -h n" must not clear an o or s hold.
		changed := AddHolds(RemoveHolds(h, j.Holds), RemoveHolds(j.Holds, h))
		if !HoldAllowed(changed, priv.Owner, priv.Operator, priv.Manager) {
			return proto.Errorf(proto.PBSE_PERM, "Hold_Types %s", changed)
		}
	}
	return d.set(j, a.Resource, a.Value)
}

// SetVar returns the Variable_List s with name set to value (appended
// when absent).
func SetVar(s, name, value string) string {
	return proto.MergeVariableList(s, proto.EncodeVariableList([]proto.Var{{Name: name, Value: value}}))
}

// GetVar returns one variable of a Variable_List.
func GetVar(s, name string) (string, bool) {
	for _, v := range proto.DecodeVariableList(s) {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// FormatJobID builds "<seq>.<server>".
func FormatJobID(seq int64, server string) string {
	return strconv.FormatInt(seq, 10) + "." + server
}
