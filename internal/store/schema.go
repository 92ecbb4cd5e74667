package store

// StorageVersion is the layout version written in the meta bucket. Bump it
// when the encoding of any bucket changes incompatibly, and teach Open to
// migrate or refuse older versions.
//
// Version 2 added the subjob records of job arrays (kindSubjob,
// kindSubjobEnd); version 3 lets a job record's dependency carry a fourth
// item, which of its jobs were named as arrays (model's fDepends). A
// version 1 or 2 store is a version 3 store without them and is upgraded
// in place when opened. Version 4 added bucketEvents; an older store gets
// it (empty) when opened. Version 5 added bucketResvs; an older store gets
// it (empty) when opened, and an older pbs_server refuses a version 5
// store rather than run a reservation queue's jobs outside its window.
// Version 6 added bucketResources; an older store gets it (empty) when
// opened, and an older pbs_server refuses a version 6 store rather than
// read a site's typed resources as untyped strings. Version 7 stores a
// job's Releasing (a shrink under way) typed, as [nodes, give back], where
// older versions hold its text ("give:n1+n2"); model's job codec reads both,
// so a version 6 store is upgraded in place by its version alone, and an
// older pbs_server refuses a version 7 store rather than misread it.
// Version 8 stores a started job's allocation typed (resc.Alloc: each
// chunk's vnode, host, cpus and resources), in a field of its own, where
// older versions hold exec_host and exec_vnode text; model's job codec
// reads the text of an older record into the allocation, so a version 7
// store is upgraded in place by its version alone (testdata/v7 is one).
// Version 8 still writes the text, rendered from the allocation and never
// read back: an older member of a replicated group applies the log's job
// records whatever their version and must still see where its jobs run
// during a rolling upgrade. An older pbs_server opening a version 8 store
// file refuses it by its version. Version 9 added bucketHooks; an older
// store gets it (empty) when opened, and an older pbs_server refuses a
// version 9 store rather than run its jobs without the site's hooks.
const StorageVersion = 9

// FileName is the store's file name inside server_priv.
const FileName = "serverdb"

// Buckets. Every bucket the store uses is named here and nowhere else.
var (
	// bucketMeta holds keyVersion, keyNextSeq, keyLeaseCeiling and, in a
	// replicated group, keyApplied.
	bucketMeta = []byte("meta")
	// bucketServer holds the server object under keyServer and the
	// scheduler object (qmgr's sched: the attributes it does not share
	// with the server) under keySched.
	bucketServer = []byte("server")
	// bucketQueues maps queue name -> msgpack model.Object.
	bucketQueues = []byte("queues")
	// bucketNodes maps node name -> msgpack model.Object.
	bucketNodes = []byte("nodes")
	// bucketJobs holds each job's record and script side by side, keyed by
	// the 8-byte big-endian sequence number followed by one kind byte
	// (kindJob: msgpack model.Job; kindScript: the script). Keeping both
	// in one bucket, in key order, makes a submission dirty one leaf page
	// instead of one per bucket. A job array's subjobs that have records
	// of their own follow their parent's: the sequence number, a kind byte
	// (kindSubjob: msgpack model.Job of a subjob that is queued on its own,
	// running or exiting; kindSubjobEnd: msgpack model.SubjobEnd of a
	// finished one), then the 4-byte big-endian index.
	bucketJobs = []byte("jobs")
	// bucketEvents maps a change's 8-byte big-endian sequence number ->
	// msgpack proto.JobEvent: the last job changes the server published
	// on its event stream, written in the commit of the change itself,
	// so that a subscriber resumes across a restart without a loss.
	bucketEvents = []byte("events")
	// bucketResvs maps a reservation's 8-byte big-endian sequence number
	// (from the jobs' sequence: ids are never shared) -> msgpack
	// model.Resv. Its queue is an ordinary queue record.
	bucketResvs = []byte("resvs")
	// bucketResources maps a custom resource's name -> msgpack
	// resc.Custom (its type and flags, as "qmgr -c 'create resource'"
	// defined it).
	bucketResources = []byte("resources")
	// bucketHooks maps a site hook's name -> msgpack hook.Hook (its
	// attributes, script and configuration file).
	bucketHooks = []byte("hooks")
)

// Kinds of record in bucketJobs.
const (
	kindJob       byte = 0
	kindScript    byte = 1
	kindSubjob    byte = 2
	kindSubjobEnd byte = 3
)

// allBuckets is checked on open and created on init.
var allBuckets = [][]byte{bucketMeta, bucketServer, bucketQueues, bucketNodes, bucketJobs, bucketEvents, bucketResvs, bucketResources, bucketHooks}

// addedBuckets are the buckets of later versions that upgrade makes in an
// older store.
var addedBuckets = [][]byte{bucketEvents, bucketResvs, bucketResources, bucketHooks}

// Keys in bucketMeta and bucketServer.
var (
	keyVersion = []byte("version")
	keyNextSeq = []byte("next_seq")
	keyServer  = []byte("server")
	// keySched (in bucketServer) is the sched object. A store without
	// it is one written before the object existed: its defaults apply.
	// Being one more key of a bucket every version has, written by the
	// server record's operation, it needs no new storage version: an
	// older pbs_server ignores it.
	keySched = []byte("sched")
	// keyApplied (in bucketMeta) is the index of the last entry of a
	// replicated group's log applied to this store (replica.go).
	keyApplied = []byte("raft_applied")
	// keyLeaseCeiling (in bucketMeta) is the longest lease granted to a
	// mom, in seconds (Batch.SetLeaseCeiling).
	keyLeaseCeiling = []byte("lease_ceiling")
)
