package qmgrparse

import (
	"strings"

	"gopbs/proto"
)

// The tables below are switch statements rather than maps so that the
// package holds no mutable state.

// ReadOnly reports whether attribute name (without its resource) of an
// object of type obj is computed by the server or reported by a mom, so that
// print leaves it out: feeding such a line back would only draw
// "Cannot set attribute, read only" errors. This is the one table of such
// attributes. Node state is special: print keeps it only when the node is
// offline (see FormatPrint). Node resources_available.* stay printable
// because the server cannot say which of them a manager set.
func ReadOnly(obj proto.ObjectType, name string) bool {
	switch name {
	case proto.AttrResourcesAssigned, proto.AttrTotalJobs, proto.AttrStateCount, proto.AttrMtime, proto.AttrCtime:
		return true
	}
	switch obj {
	case proto.ObjServer:
		switch name {
		case proto.AttrServerState, proto.AttrServerHost, proto.AttrPbsVersion,
			proto.AttrNextJobNumber, proto.AttrServerName, proto.AttrLicenseCount:
			return true
		}
	case proto.ObjQueue:
		return name == proto.AttrHasNodes
	case proto.ObjNode:
		switch name {
		case proto.AttrNodeJobs, proto.AttrNodeLoadave, proto.AttrNodeVersion,
			proto.AttrNodeLastState, proto.AttrNodeLastUsed, proto.AttrNodeNtype,
			proto.AttrNodeStatus:
			return true
		}
	}
	return false
}

// isListAttr reports whether a value is a comma-separated list that print
// writes as "= first" then "+= next" per element. Other values containing
// commas are printed whole, quoted.
func isListAttr(name string) bool {
	switch name {
	case proto.AttrManagers, proto.AttrOperators, proto.AttrAclHosts, proto.AttrAclUsers,
		proto.AttrAclGroups, proto.AttrAclRoots, proto.AttrRouteDestinations,
		proto.AttrNodeProperties, proto.AttrSubmissionFilters, proto.AttrActivationFilters:
		return true
	}
	return false
}

// IsTimeAttr reports whether a value is Unix seconds that list shows as a
// ctime(3) string.
func IsTimeAttr(name string) bool {
	switch name {
	case proto.AttrMtime, proto.AttrCtime, proto.AttrNodeLastState, proto.AttrNodeLastUsed:
		return true
	}
	return false
}

// isKnownAttr reports whether name (the part before any '.') is an
// attribute of obj. It only decides whether the word after the object is a
// name or the start of the attribute list, so it errs on the side of
// listing too many names: the server still validates every attribute.
// Matching ignores case, because a mistyped case is still not a name.
func isKnownAttr(obj proto.ObjectType, name string) bool {
	name = strings.ToLower(name)
	switch name {
	case "comment", proto.AttrResourcesAvail, proto.AttrResourcesAssigned,
		proto.AttrResourcesMax, proto.AttrResourcesMin, proto.AttrResourcesDefault,
		proto.AttrMaxRunning, proto.AttrMaxUserRun, proto.AttrMaxGroupRun, proto.AttrMaxQueuable,
		proto.AttrMaxUserQueuable, proto.AttrTotalJobs, proto.AttrStateCount,
		proto.AttrAclHostEnable, proto.AttrAclHosts, proto.AttrAclUserEnable, proto.AttrAclUsers,
		proto.AttrAclGroupEnable, proto.AttrAclGroups, proto.AttrKeepCompleted,
		"max_run", "max_run_res", "max_run_soft", "max_run_res_soft", "max_queued",
		"max_queued_res", "queued_jobs_threshold", "queued_jobs_threshold_res",
		"max_user_res", "max_user_res_soft", "max_group_res", "max_group_res_soft",
		strings.ToLower(proto.AttrQPriority), proto.AttrMtime, proto.AttrCtime:
		return true
	}
	switch obj {
	case proto.ObjServer:
		switch name {
		case proto.AttrServerState, proto.AttrServerHost, proto.AttrScheduling,
			proto.AttrSchedulerIteration, proto.AttrDefaultQueue, proto.AttrManagers,
			proto.AttrOperators, proto.AttrQueryOtherJobs, proto.AttrNodePack,
			proto.AttrDefaultNode, proto.AttrAclRoots, proto.AttrMailFrom, proto.AttrLogEvents,
			proto.AttrPbsVersion, proto.AttrNextJobNumber, proto.AttrJobHistoryEnable,
			proto.AttrJobHistoryDuration, proto.AttrNodeFailRequeue, proto.AttrDefaultChunk,
			proto.AttrServerName, proto.AttrFlatUID, proto.AttrEligibleTimeEnable,
			proto.AttrMaxArraySize, proto.AttrResvEnable, proto.AttrLicenseCount,
			proto.AttrJobscriptMaxSize, "acl_resv_host_enable", "acl_resv_hosts",
			"acl_resv_user_enable", "acl_resv_users", "acl_resv_group_enable", "acl_resv_groups",
			"backfill_depth", "default_qdel_arguments", "default_qsub_arguments",
			"job_sort_formula", "max_concurrent_provision", "node_group_enable",
			"node_group_key", "python_restart_max_hooks", "resv_post_processing_time",
			"single_signon_password_enable", "sched_cycle_length", "scheduler_timeout",
			"job_requeue_timeout", "max_job_sequence_id", "mail_subject", "mail_body":
			return true
		}
	case proto.ObjQueue:
		switch name {
		case proto.AttrQueueTypeQ, proto.AttrEnabled, proto.AttrStarted,
			proto.AttrRouteDestinations, proto.AttrRouteHeldJobs, proto.AttrRouteWaitingJobs,
			proto.AttrRouteRetryTime, proto.AttrRouteLifetime, proto.AttrFromRouteOnly,
			proto.AttrKillDelay, proto.AttrHasNodes, "alt_router", "disallowed_types",
			"checkpoint_min", "default_chunk", "max_array_size", "node_group_key",
			"backfill_depth", "partition", "queued_jobs_threshold", "resources_min":
			return true
		}
	case proto.ObjNode:
		switch name {
		case strings.ToLower(proto.AttrNodeMom), strings.ToLower(proto.AttrNodePort),
			proto.AttrNodeState, proto.AttrNodeNtype, proto.AttrNodeJobs, proto.AttrNodeNoteTorque,
			proto.AttrNodeLoadave, proto.AttrNodeArch, proto.AttrNodeNp, proto.AttrNodeProperties,
			proto.AttrNodeStatus, proto.AttrNodeVersion, proto.AttrNodeSharing,
			proto.AttrNodeLastState, proto.AttrNodeLastUsed, proto.AttrNodeResvEnable,
			proto.AttrNodeIdealLoad, proto.AttrNodeMaxLoad, proto.AttrQueue, "pcpus",
			"priority", "provision_enable", "current_aoe", "in_multivnode_host",
			"power_provisioning", "current_eoe", "poweroff_eligible", "partition",
			"no_multinode_jobs", "license", "topology_info", "vnode_pool", "power_state",
			"mom_service_port", "mom_manager_port", "gpus", "host":
			return true
		}
	}
	return false
}
