package proto

// Site hooks: OpenPBS's qmgr hook objects ("create hook NAME", "set hook
// NAME event = queuejob", "import hook NAME application/x-python default
// FILE"). qmgr creates, changes, imports and deletes them with manager
// requests on ObjHook; managers alone see them (MsgStatusHook), and
// "export hook" is qmgr writing what the status carries.
const (
	// MsgStatusHook asks for site hooks: a StatusRequest (IDs empty: all),
	// reply StatusReply, one Status per hook with its attributes in
	// qmgr's order and, when the request names AttrHookContent, the
	// imported script and configuration file (AttrHookContent,
	// AttrHookConfig, base64) and the configuration file's suffix.
	MsgStatusHook MsgType = 63
)

// ObjHook is a site hook.
const ObjHook ObjectType = 6

// MgrImport is qmgr's "import hook NAME content-type content-encoding
// FILE": the attributes are AttrContentType, AttrContentEncoding (always
// base64 on the wire: qmgr reads the file and encodes it),
// AttrHookContent (the data) and, for a configuration file,
// AttrInputFile (its name, whose suffix says its kind).
const MgrImport ManagerCommand = 5

// Attributes of an import and of a hook's status.
const (
	AttrContentType     = "content-type"
	AttrContentEncoding = "content-encoding"
	AttrInputFile       = "input-file"
	// AttrHookContent is the imported script, base64.
	AttrHookContent = "content"
	// AttrHookConfig is the imported configuration file, base64, and
	// AttrHookConfigSuffix its suffix (".json"); in a status only.
	AttrHookConfig       = "config"
	AttrHookConfigSuffix = "config_suffix"
)

func init() {
	msgNames[MsgStatusHook] = "StatusHook"
}

// StatusHooks returns the named site hooks, or all.
func (c *Client) StatusHooks(req *StatusRequest) ([]Status, []ObjectError, error) {
	return c.status(MsgStatusHook, req)
}

// MomHook is a site hook of the execution hosts' events as the server
// gives it to the moms: in a MomStatusReply whose HooksVersion differs
// from the one the mom reported, as OpenPBS's server copies hooks to its
// moms. Events, User and FailAction are internal/hook's values.
type MomHook struct {
	Name       string
	Enabled    bool
	Events     uint64
	User       uint8
	Alarm      int
	Order      int
	Freq       int
	Debug      bool
	FailAction uint8
	Script     []byte
	Config     []byte
}

// MsgMomPreterm asks the mom of a running job's first node to run its
// execjob_preterm hooks before the server deletes the job (qdel): a
// MomSignal naming the job, reply empty, or PBSE_HOOKERROR with the
// hook's refusal, which keeps the job running.
const MsgMomPreterm MsgType = 47

func init() {
	msgNames[MsgMomPreterm] = "MomPreterm"
}
