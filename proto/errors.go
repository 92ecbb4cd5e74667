package proto

import (
	"errors"
	"fmt"
)

// Code is a PBSE error code with the classic/OpenPBS numbering. A command
// exits with Code%256 (see ExitStatus).
type Code int32

// Error codes. The numbers are OpenPBS's (src/include/pbs_error.h); the list
// is append-only in spirit: never renumber.
const (
	PBSE_NONE        Code = 0
	PBSE_UNKJOBID    Code = 15001
	PBSE_NOATTR      Code = 15002
	PBSE_ATTRRO      Code = 15003
	PBSE_IVALREQ     Code = 15004
	PBSE_UNKREQ      Code = 15005
	PBSE_PERM        Code = 15007
	PBSE_BADHOST     Code = 15008
	PBSE_JOBEXIST    Code = 15009
	PBSE_SYSTEM      Code = 15010
	PBSE_INTERNAL    Code = 15011
	PBSE_UNKSIG      Code = 15013
	PBSE_BADATVAL    Code = 15014
	PBSE_MODATRRUN   Code = 15015
	PBSE_BADSTATE    Code = 15016
	PBSE_UNKQUE      Code = 15018
	PBSE_BADCRED     Code = 15019
	PBSE_QUNOENB     Code = 15021
	PBSE_QACESS      Code = 15022
	PBSE_BADUSER     Code = 15023
	PBSE_QUEEXIST    Code = 15025
	PBSE_ATTRTYPE    Code = 15026
	PBSE_OBJBUSY     Code = 15027
	PBSE_QUENBIG     Code = 15028
	PBSE_NOSUP       Code = 15029
	PBSE_QUENOEN     Code = 15030
	PBSE_PROTOCOL    Code = 15031
	PBSE_NOCONNECTS  Code = 15033
	PBSE_NOSERVER    Code = 15034
	PBSE_UNKRESC     Code = 15035
	PBSE_EXCQRESC    Code = 15036
	PBSE_QUENODFLT   Code = 15037
	PBSE_NORERUN     Code = 15038
	PBSE_ROUTEREJ    Code = 15039
	PBSE_MOMREJECT   Code = 15041
	PBSE_BADSCRIPT   Code = 15042
	PBSE_RESCUNAV    Code = 15044
	PBSE_BADGRP      Code = 15045
	PBSE_MAXQUED     Code = 15046
	PBSE_EXLIMIT     Code = 15048
	PBSE_BADACCT     Code = 15049
	PBSE_ALRDYEXIT   Code = 15050
	PBSE_BADDEPEND   Code = 15054
	PBSE_DUPLIST     Code = 15055
	PBSE_SVRDOWN     Code = 15060
	PBSE_UNKNODE     Code = 15062
	PBSE_UNKNODEATR  Code = 15063
	PBSE_NONODES     Code = 15064
	PBSE_NODENBIG    Code = 15065
	PBSE_NODEEXIST   Code = 15066
	PBSE_BADNDATVAL  Code = 15067
	PBSE_MUTUALEX    Code = 15068
	PBSE_NORELYMOM   Code = 15070
	PBSE_NOTSNODE    Code = 15071
	PBSE_BADTSPEC    Code = 15086
	PBSE_BADNODESPEC Code = 15089
	// Reservations (OpenPBS's codes and texts).
	PBSE_UNKRESVID          Code = 15084
	PBSE_resvFail           Code = 15081
	PBSE_RESVAUTH_U         Code = 15094
	PBSE_BAD_RRULE_YEARLY   Code = 15126
	PBSE_BAD_RRULE_MONTHLY  Code = 15127
	PBSE_BAD_RRULE_WEEKLY   Code = 15128
	PBSE_BAD_RRULE_DAILY    Code = 15129
	PBSE_BAD_RRULE_HOURLY   Code = 15130
	PBSE_BAD_RRULE_MINUTELY Code = 15131
	PBSE_BAD_RRULE_SECONDLY Code = 15132
	PBSE_BAD_RRULE_SYNTAX   Code = 15133
	PBSE_BAD_RRULE_SYNTAX2  Code = 15134
	PBSE_BAD_ICAL_TZ        Code = 15135
	PBSE_HOOKERROR          Code = 15136
	PBSE_RESV_NOT_EMPTY     Code = 15178
	PBSE_NOSCHEDULER        Code = 15099
	PBSE_MaxArraySize       Code = 15107
	PBSE_INVALSELECTRESC    Code = 15108
	PBSE_INVALJOBRESC       Code = 15109
	PBSE_DUPRESC            Code = 15116
	PBSE_CONNFULL           Code = 15117
	PBSE_ETEERROR           Code = 15138
	PBSE_HISTJOBID          Code = 15139
	PBSE_JOBHISTNOTSET      Code = 15140
	PBSE_MIXENTLIMS         Code = 15141
	PBSE_ENTLIMCT           Code = 15142
	PBSE_ENTLIMRESC         Code = 15143
	PBSE_ATVALERANGE        Code = 15144
	PBSE_NORUNALTEREDJOB    Code = 15157
	PBSE_SAVE_ERR           Code = 15161
	// Shrink-to-fit jobs (min_walltime, max_walltime).
	PBSE_MAX_NO_MINWT     Code = 15162
	PBSE_MIN_GT_MAXWT     Code = 15163
	PBSE_NOSTF_RESV       Code = 15164
	PBSE_NOSTF_JOBARRAY   Code = 15165
	PBSE_NOLIMIT_RESOURCE Code = 15166
	PBSE_SOFTWT_STF       Code = 15180
	PBSE_IVAL_OBJ_NAME    Code = 15172
	PBSE_JOBNBIG          Code = 15173
	PBSE_RESCBUSY         Code = 15174
	PBSE_JOBSCRIPTMAXSIZE Code = 15175
	PBSE_TRYAGAIN         Code = 15208
	PBSE_SCHEDEXIST       Code = 15211
	PBSE_UNKSCHED         Code = 15213
	PBSE_SCHED_NO_DEL     Code = 15214

	// gopbs's own codes, above OpenPBS's range.

	// PBSE_EVENTGAP refuses a resume of the event stream whose changes
	// are no longer all kept: the client reads the state again.
	PBSE_EVENTGAP Code = 15900
	// PBSE_TOOSLOW ends the event stream of a subscriber that fell too
	// far behind.
	PBSE_TOOSLOW Code = 15901
	// PBSE_NOTLEADER answers the Hello of a daemon that reached a member
	// of a replicated server group that is not its leader: the reply's
	// Text is the leader's batch address (host:port), or empty while the
	// group has none (LeaderOf). DialGroup follows it.
	PBSE_NOTLEADER Code = 15902
	// PBSE_NOQUORUM refuses a request while the replicated server group
	// has no majority: nothing was changed.
	PBSE_NOQUORUM Code = 15903
)

// messages holds the OpenPBS texts returned to clients
// (src/lib/Liblog/pbs_messages.c).
var messages = map[Code]string{
	PBSE_UNKJOBID:           "Unknown Job Id",
	PBSE_NOATTR:             "Undefined attribute ",
	PBSE_ATTRRO:             "Cannot set attribute, read only or insufficient permission ",
	PBSE_IVALREQ:            "Invalid request",
	PBSE_MaxArraySize:       "Array job exceeds server or queue size limit",
	PBSE_UNKREQ:             "Unknown request",
	PBSE_PERM:               "Unauthorized Request ",
	PBSE_BADHOST:            "Access from host not allowed, or unknown host",
	PBSE_JOBEXIST:           "Job with requested ID already exists",
	PBSE_SYSTEM:             "System error: ",
	PBSE_INTERNAL:           "PBS server internal error",
	PBSE_UNKSIG:             "Unknown/illegal signal name",
	PBSE_BADATVAL:           "Illegal attribute or resource value",
	PBSE_MODATRRUN:          "Cannot modify attribute while job running ",
	PBSE_BADSTATE:           "Request invalid for state of job",
	PBSE_UNKQUE:             "Unknown queue",
	PBSE_BADCRED:            "Invalid credential",
	PBSE_QUNOENB:            "Queue is not enabled",
	PBSE_QACESS:             "Access to queue is denied",
	PBSE_BADUSER:            "Bad UID for job execution",
	PBSE_QUEEXIST:           "Queue already exists",
	PBSE_ATTRTYPE:           "Incompatible type",
	PBSE_OBJBUSY:            "Cannot delete busy object",
	PBSE_QUENBIG:            "Queue name too long",
	PBSE_NOSUP:              "No support for requested service",
	PBSE_QUENOEN:            "Cannot enable queue, incomplete definition",
	PBSE_PROTOCOL:           "Batch protocol error",
	PBSE_NOCONNECTS:         "No free connections",
	PBSE_NOSERVER:           "No server specified",
	PBSE_UNKRESC:            "Unknown resource",
	PBSE_EXCQRESC:           "Job violates queue and/or server resource limits",
	PBSE_QUENODFLT:          "No default queue specified",
	PBSE_NORERUN:            "job is not rerunnable",
	PBSE_ROUTEREJ:           "Job rejected by all possible destinations",
	PBSE_MOMREJECT:          "Execution server rejected request",
	PBSE_BADSCRIPT:          "(qsub) cannot access script file",
	PBSE_RESCUNAV:           "Resource temporarily unavailable",
	PBSE_BADGRP:             "Bad GID for job execution",
	PBSE_MAXQUED:            "Maximum number of jobs already in queue",
	PBSE_EXLIMIT:            "Resource limit exceeds allowable",
	PBSE_BADACCT:            "Invalid Account",
	PBSE_ALRDYEXIT:          "Job already in exit state",
	PBSE_BADDEPEND:          "Invalid Job Dependency",
	PBSE_DUPLIST:            "Duplicate entry in list ",
	PBSE_SVRDOWN:            "Request not allowed: Server shutting down",
	PBSE_UNKNODE:            "Unknown node ",
	PBSE_UNKNODEATR:         "Unknown node-attribute ",
	PBSE_NONODES:            "Server has no node list",
	PBSE_NODENBIG:           "Node name is too big",
	PBSE_NODEEXIST:          "Node name already exists",
	PBSE_BADNDATVAL:         "Illegal value for node",
	PBSE_MUTUALEX:           "Mutually exclusive values for ",
	PBSE_NORELYMOM:          "Server could not connect to MOM",
	PBSE_NOTSNODE:           "No time-share node available",
	PBSE_BADTSPEC:           "Bad time specification(s)",
	PBSE_BADNODESPEC:        "node(s) specification error",
	PBSE_UNKRESVID:          "Unknown Reservation Id",
	PBSE_resvFail:           "Reservation failed",
	PBSE_RESVAUTH_U:         "Requestor not authorized to make reservations",
	PBSE_BAD_RRULE_YEARLY:   "YEARLY recurrence duration cannot exceed 1 year",
	PBSE_BAD_RRULE_MONTHLY:  "MONTHLY recurrence duration cannot exceed 1 month",
	PBSE_BAD_RRULE_WEEKLY:   "WEEKLY recurrence duration cannot exceed 1 week",
	PBSE_BAD_RRULE_DAILY:    "DAILY recurrence duration cannot exceed 24 hours",
	PBSE_BAD_RRULE_HOURLY:   "HOURLY recurrence duration cannot exceed 1 hour",
	PBSE_BAD_RRULE_MINUTELY: "MINUTELY recurrence duration cannot exceed 1 minute",
	PBSE_BAD_RRULE_SECONDLY: "SECONDLY recurrence duration cannot exceed 1 second",
	PBSE_BAD_RRULE_SYNTAX:   "Undefined iCalendar syntax",
	PBSE_BAD_RRULE_SYNTAX2:  "Undefined iCalendar syntax. A valid COUNT or UNTIL is required",
	PBSE_BAD_ICAL_TZ:        "Unrecognized reservation timezone",
	PBSE_HOOKERROR:          "error encountered related to hooks",
	PBSE_RESV_NOT_EMPTY:     "Reservation not empty",
	PBSE_NOSCHEDULER:        "Could not contact Scheduler",
	PBSE_INVALSELECTRESC:    "Resource invalid in \"select\" specification",
	PBSE_INVALJOBRESC:       "\"-lresource=\" cannot be used with \"select\" or \"place\", resource is",
	PBSE_DUPRESC:            "duplicated resource within a section of a select specification, resource is",
	PBSE_CONNFULL:           "Server connection table full",
	PBSE_ETEERROR:           "Cannot set attribute when eligible_time_enable is OFF",
	PBSE_HISTJOBID:          "Job has finished",
	PBSE_JOBHISTNOTSET:      "PBS is not configured to maintain job history",
	PBSE_MIXENTLIMS:         "Cannot mix old and new style limits",
	PBSE_ENTLIMCT:           "Maximum number of jobs already in queue",
	PBSE_ENTLIMRESC:         "Maximum resource usage already in queue",
	PBSE_ATVALERANGE:        "attribute value is out of range",
	PBSE_NORUNALTEREDJOB:    "Cannot run job which was altered/moved during current scheduling cycle.",
	PBSE_SAVE_ERR:           "Failed to save job/resv, refer server logs for details",
	PBSE_MAX_NO_MINWT:       "Cannot have \"max_walltime\" without \"min_walltime\"",
	PBSE_MIN_GT_MAXWT:       "\"min_walltime\" can not be greater than \"max_walltime\"",
	PBSE_NOSTF_RESV:         "\"min_walltime\" and \"max_walltime\" are not valid resources for a reservation",
	PBSE_NOSTF_JOBARRAY:     "\"min_walltime\" and \"max_walltime\" are not valid resources for a job array",
	PBSE_NOLIMIT_RESOURCE:   "Resource limits can not be set for the resource",
	PBSE_SOFTWT_STF:         "soft_walltime is not supported with Shrink to Fit jobs",
	PBSE_IVAL_OBJ_NAME:      "Invalid object name",
	PBSE_JOBNBIG:            "name is too long",
	PBSE_RESCBUSY:           "Resource busy on",
	PBSE_JOBSCRIPTMAXSIZE:   "jobscript size exceeded the jobscript_max_size",
	PBSE_TRYAGAIN:           "Try the request again later",
	PBSE_SCHEDEXIST:         "Scheduler already exists",
	PBSE_UNKSCHED:           "Unknown Scheduler",
	PBSE_SCHED_NO_DEL:       "Can not delete Scheduler",
	PBSE_EVENTGAP:           "Changes since that event are no longer kept: read the state again",
	PBSE_TOOSLOW:            "Event stream cut off: the subscriber fell too far behind",
	PBSE_NOTLEADER:          "This server is not the leader of its group",
	PBSE_NOQUORUM:           "No quorum: too few servers of the group are reachable; nothing was changed",
}

// Message returns the OpenPBS text of code, or "" when none is defined.
func (c Code) Message() string { return messages[c] }

// ExitStatus is the process exit status a command uses for code: the code
// modulo 256, as PBS commands do (15001 -> 153, 15139 -> 35).
func (c Code) ExitStatus() int { return int(c) % 256 }

// Error is a PBSE error as carried in a reply: the code and the text the
// server chose (usually the code's Message plus detail).
type Error struct {
	Code Code
	Text string
}

// Error returns the text, falling back to the code's standard message.
func (e *Error) Error() string {
	if e.Text != "" {
		return e.Text
	}
	if m := e.Code.Message(); m != "" {
		return m
	}
	return fmt.Sprintf("PBS error %d", int(e.Code))
}

// Errorf builds an Error whose text is the code's standard message followed
// by the formatted detail, the way PBS appends the offending name.
func Errorf(code Code, format string, args ...any) *Error {
	detail := fmt.Sprintf(format, args...)
	msg := code.Message()
	switch {
	case msg == "":
		return &Error{Code: code, Text: detail}
	case detail == "":
		return &Error{Code: code, Text: msg}
	case msg[len(msg)-1] == ' ':
		return &Error{Code: code, Text: msg + detail}
	default:
		return &Error{Code: code, Text: msg + " " + detail}
	}
}

// NewError builds an Error with the code's standard message.
func NewError(code Code) *Error { return &Error{Code: code, Text: code.Message()} }

// CodeOf extracts the PBSE code from err: the Error's code, PBSE_NONE for nil,
// and PBSE_SYSTEM for any other error.
func CodeOf(err error) Code {
	if err == nil {
		return PBSE_NONE
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return PBSE_SYSTEM
}
