package qmgrparse

import (
	"slices"
	"strings"

	"github.com/gopbs/gopbs/internal/hook"
	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/proto"
)

// What qmgr knows of attributes comes from the server's own tables
// (model.Defs): which names are attributes of an object type, which
// values are comma lists, which attributes the server computes. One
// table, so that an attribute the server takes is never a syntax error
// here, and print writes back exactly what set accepts.

// attrDef returns the table definition of name (in any case) for obj.
func attrDef(obj proto.ObjectType, name string) (model.Def, bool) {
	t := model.Defs(obj)
	if t == nil {
		return model.Def{}, false
	}
	return t.LookupFold(name)
}

// ReadOnly reports whether attribute name (without its resource) of an
// object of type obj is not one a manager sets: computed by the server,
// reported by a mom, or not an attribute of the server's table at all. Print
// leaves it out: feeding such a line back would only draw "Cannot set
// attribute, read only" or "Unknown attribute" errors. Node state is special: print
// keeps it only when the node is offline (see FormatPrint). Node
// resources_available.* stay printable because the server cannot say
// which of them a manager set.
func ReadOnly(obj proto.ObjectType, name string) bool {
	if obj == proto.ObjHook {
		return !slices.Contains(hook.AttrNames(), name)
	}
	if obj == proto.ObjServer && name == proto.AttrNextJobNumber {
		// Settable (forward only), but the store's sequence, not
		// configuration: print leaves it out, so that a site replaying
		// it elsewhere does not move that server's ids.
		return true
	}
	d, ok := attrDef(obj, name)
	return !ok || !d.Settable()
}

// isListAttr reports whether a value is a comma-separated list: set
// takes it unquoted ("managers = a@h,b@h"), and print writes it as
// "= first" then "+= next" per element. Other values containing commas
// are quoted.
func isListAttr(obj proto.ObjectType, name string) bool {
	if obj == proto.ObjHook {
		return hook.ListAttr(strings.ToLower(name))
	}
	d, ok := attrDef(obj, name)
	return ok && d.Kind == model.KindList
}

// IsTimeAttr reports whether a value is Unix seconds that list shows as a
// ctime(3) string.
func IsTimeAttr(obj proto.ObjectType, name string) bool {
	d, ok := attrDef(obj, name)
	return ok && d.Kind == model.KindTime
}

// isKnownAttr reports whether name (the part before any '.') is an
// attribute of obj. It only decides whether the word after the object is a
// name or the start of the attribute list, so it errs on the side of
// listing too many names: the server still validates every attribute.
// Matching ignores case, because a mistyped case is still not a name.
func isKnownAttr(obj proto.ObjectType, name string) bool {
	if obj == proto.ObjHook {
		return slices.Contains(hook.AttrNames(), strings.ToLower(name))
	}
	if _, ok := attrDef(obj, name); ok {
		return true
	}
	return slices.Contains(otherPBSAttrs(obj), strings.ToLower(name))
}

// otherPBSAttrs are attribute names of OpenPBS (lower case) that this
// system does not have, so that "set server backfill_depth = 3" reaches
// the server, which says it does not know the attribute, instead of
// naming a server backfill_depth. The attributes this system has are in
// model's tables and nowhere else (TestOtherPBSAttrsAreNotOurs).
func otherPBSAttrs(obj proto.ObjectType) []string {
	common := []string{proto.AttrMtime, proto.AttrCtime}
	switch obj {
	case proto.ObjServer:
		return append(common, proto.AttrServerName, proto.AttrLicenseCount,
			proto.AttrAclGroupEnable, proto.AttrAclGroups,
			"acl_resv_host_enable", "acl_resv_hosts",
			"acl_resv_group_enable", "acl_resv_groups", "default_qdel_arguments",
			"job_sort_formula", "max_concurrent_provision",
			"node_group_enable", "node_group_key", "python_restart_max_hooks",
			"resv_post_processing_time", "single_signon_password_enable", "scheduler_timeout",
			"job_requeue_timeout", "max_job_sequence_id", "mail_subject", "mail_body")
	case proto.ObjQueue:
		return append(common, "alt_router", "disallowed_types", "checkpoint_min", "node_group_key",
			"partition")
	case proto.ObjSched:
		// OpenPBS's sched attributes for its preemption, partitions and
		// multiple schedulers: sched_config holds this system's
		// preemption settings.
		return append(common, proto.AttrComment, "do_not_span_psets", "sched_preempt_enforce_resumption",
			"preempt_targets_enable", "job_sort_formula_threshold", "throughput_mode", "preempt_queue_prio",
			"preempt_prio", "preempt_order", "preempt_sort", "server_dyn_res_alarm", "partition",
			"sched_user", "job_run_wait", "attr_update_period")
	case proto.ObjNode:
		return append(common, proto.AttrNodeNoteTorque, proto.AttrNodeArch, proto.AttrNodeNp,
			proto.AttrNodeStatus, proto.AttrQueue, "priority", "provision_enable", "current_aoe",
			"in_multivnode_host", "power_provisioning", "current_eoe", "poweroff_eligible",
			"partition", "no_multinode_jobs", "license", "topology_info", "vnode_pool",
			"power_state", "mom_service_port", "mom_manager_port", "gpus", "host")
	}
	return nil
}
