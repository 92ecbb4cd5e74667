# The pbs module that site hooks import, written for this system to read
# and write as OpenPBS's does, so that hook scripts run unchanged. It lives
# in the hook's own process (runtime.py starts it): the event comes in as
# data, the changes the hook makes go back as data, and the daemon checks
# them like any other request. Nothing here touches the daemon's state.

import sys as _sys

# Events, OpenPBS's values (internal/hook/event.go has the same table).
QUEUEJOB = 0x01
MODIFYJOB = 0x02
RESVSUB = 0x04
MOVEJOB = 0x08
RUNJOB = 0x10
PROVISION = 0x20
EXECJOB_BEGIN = 0x40
EXECJOB_PROLOGUE = 0x80
EXECJOB_EPILOGUE = 0x100
EXECJOB_END = 0x200
EXECJOB_PRETERM = 0x400
EXECJOB_LAUNCH = 0x800
EXECHOST_PERIODIC = 0x1000
EXECHOST_STARTUP = 0x2000
EXECJOB_ATTACH = 0x4000
PERIODIC = 0x8000
RESV_END = 0x10000
EXECJOB_RESIZE = 0x20000
EXECJOB_ABORT = 0x40000
EXECJOB_POSTSUSPEND = 0x80000
EXECJOB_PRERESUME = 0x100000
MANAGEMENT = 0x200000
MODIFYVNODE = 0x400000
JOBOBIT = 0x800000
RESV_BEGIN = 0x1000000
RESV_CONFIRM = 0x2000000
MODIFYRESV = 0x4000000
MOM_EVENTS = (EXECJOB_BEGIN | EXECJOB_PROLOGUE | EXECJOB_EPILOGUE | EXECJOB_END |
              EXECJOB_PRETERM | EXECJOB_LAUNCH | EXECHOST_PERIODIC | EXECHOST_STARTUP |
              EXECJOB_ATTACH | EXECJOB_RESIZE | EXECJOB_ABORT | EXECJOB_POSTSUSPEND |
              EXECJOB_PRERESUME)

# Log levels of logmsg, OpenPBS's.
LOG_DEBUG = 5
LOG_WARNING = 6
LOG_ERROR = 7
EVENT_ERROR = 0x0001
EVENT_SYSTEM = 0x0002
EVENT_ADMIN = 0x0004
EVENT_JOB = 0x0008
EVENT_JOB_USAGE = 0x0010
EVENT_SECURITY = 0x0020
EVENT_SCHED = 0x0040
EVENT_DEBUG = 0x0080
EVENT_DEBUG2 = 0x0100
EVENT_RESV = 0x0200
EVENT_DEBUG3 = 0x0400
EVENT_DEBUG4 = 0x0800
EVENT_FORCE = 0x8000
_LOG_VALUES = (LOG_DEBUG, LOG_WARNING, LOG_ERROR, EVENT_ERROR, EVENT_SYSTEM, EVENT_ADMIN,
               EVENT_JOB, EVENT_JOB_USAGE, EVENT_SECURITY, EVENT_SCHED, EVENT_DEBUG,
               EVENT_DEBUG2, EVENT_RESV, EVENT_DEBUG3, EVENT_DEBUG4, EVENT_FORCE)

# Job states and substates, OpenPBS's numbers.
JOB_STATE_TRANSIT = 0
# A management event's command and object types, OpenPBS's values.
MGR_CMD_NONE = -1
MGR_CMD_CREATE = 0
MGR_CMD_DELETE = 1
MGR_CMD_SET = 2
MGR_CMD_UNSET = 3
MGR_CMD_LIST = 4
MGR_CMD_PRINT = 5
MGR_CMD_ACTIVE = 6
MGR_CMD_IMPORT = 7
MGR_CMD_EXPORT = 8
MGR_OBJ_NONE = -1
MGR_OBJ_SERVER = 0
MGR_OBJ_QUEUE = 1
MGR_OBJ_JOB = 2
MGR_OBJ_NODE = 3
MGR_OBJ_RESV = 4
MGR_OBJ_RSC = 5
MGR_OBJ_SCHED = 6
MGR_OBJ_HOST = 7
MGR_OBJ_HOOK = 8
MGR_OBJ_PBS_HOOK = 9

JOB_STATE_QUEUED = 1
JOB_STATE_HELD = 2
JOB_STATE_WAITING = 3
JOB_STATE_RUNNING = 4
JOB_STATE_EXITING = 5
JOB_STATE_EXPIRED = 6
JOB_STATE_BEGUN = 7
JOB_STATE_MOVED = 8
JOB_STATE_FINISHED = 9
JOB_STATE_SUSPEND = 400
JOB_STATE_SUSPEND_USERACTIVE = 410
_JOB_STATES = {"T": 0, "Q": 1, "H": 2, "W": 3, "R": 4, "E": 5, "X": 6, "B": 7, "M": 8, "F": 9, "S": 400, "U": 410}

# Node states, OpenPBS's bits.
ND_STATE_FREE = 0
ND_STATE_OFFLINE = 1
ND_STATE_DOWN = 2
ND_STATE_DELETED = 4
ND_STATE_UNRESOLVABLE = 8
ND_STATE_JOBBUSY = 16
ND_STATE_JOB_EXCLUSIVE = 32
ND_STATE_BUSY = 128
ND_STATE_UNKNOWN = 256
ND_STATE_STALE = 1024
ND_STATE_PROV = 2048
ND_STATE_RESV_EXCLUSIVE = 8192
ND_STATE_OFFLINE_BY_MOM = 16384
ND_STATE_MAINTENANCE = 32768
ND_STATE_SLEEP = 65536
_ND_STATES = {"free": ND_STATE_FREE, "offline": ND_STATE_OFFLINE, "down": ND_STATE_DOWN,
              "job-busy": ND_STATE_JOBBUSY, "job-exclusive": ND_STATE_JOB_EXCLUSIVE,
              "busy": ND_STATE_BUSY, "state-unknown": ND_STATE_UNKNOWN, "stale": ND_STATE_STALE,
              "resv-exclusive": ND_STATE_RESV_EXCLUSIVE, "maintenance": ND_STATE_MAINTENANCE,
              "sleep": ND_STATE_SLEEP}

# Reservation states.
RESV_STATE_NONE = 0
RESV_STATE_UNCONFIRMED = 1
RESV_STATE_CONFIRMED = 2
RESV_STATE_WAIT = 3
RESV_STATE_TIME_TO_RUN = 4
RESV_STATE_RUNNING = 5
RESV_STATE_FINISHED = 6
RESV_STATE_BEING_DELETED = 7
RESV_STATE_DELETED = 8
RESV_STATE_DELETING_JOBS = 9
RESV_STATE_DEGRADED = 10
RESV_STATE_BEING_ALTERED = 11
RESV_STATE_IN_CONFLICT = 12

QTYPE_EXECUTION = 1
QTYPE_ROUTE = 2


class PBSError(RuntimeError):
    """Any error of the pbs module."""


class BadAttributeValueError(PBSError):
    """A value an attribute cannot take."""


class BadAttributeValueTypeError(PBSError):
    """A value of the wrong type for an attribute."""


class BadResourceValueError(PBSError):
    """A value a resource cannot take."""


class BadResourceValueTypeError(PBSError):
    """A value of the wrong type for a resource."""


class UnsetAttributeNameError(PBSError):
    """An attribute that does not exist."""


class UnsetResourceNameError(PBSError):
    """A resource that does not exist."""


class EventIncompatibleError(PBSError):
    """Something the current event does not have."""


# ---- typed values ----------------------------------------------------

class duration(int):
    """A length of time in seconds, written [[HH:]MM:]SS."""

    def __new__(cls, value=0):
        text = str(value).strip()
        if isinstance(value, str):
            value = _parse_duration(value)
        d = int.__new__(cls, int(value))
        d._text = text
        return d

    def __str__(self):
        # As OpenPBS's: the text it was made from.
        return self._text

    def __repr__(self):
        return "pbs.duration(%r)" % str(self)


def _parse_duration(s):
    s = s.strip()
    parts = s.split(":")
    if not 1 <= len(parts) <= 3:
        raise BadAttributeValueError("bad duration %r" % s)
    total = 0
    try:
        for p in parts[:-1]:
            total = total * 60 + int(p)
        total = total * 60 + float(parts[-1]) if len(parts) > 1 else float(parts[-1])
    except ValueError:
        raise BadAttributeValueError("bad duration %r" % s)
    return int(total)


_UNITS = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}
_ORDER = ["b", "kb", "mb", "gb", "tb", "pb"]


class size(object):
    """An amount of memory or disk: a number and a unit (b, kb, mb, gb, tb,
    pb, or their first letter; a bare number is bytes). It keeps the unit
    it was written in, as OpenPBS's does; + and - give the smaller unit
    of the two (bytes rounded up to kb first), and comparisons go by
    bytes."""

    def __init__(self, value=0):
        if isinstance(value, size):
            self._n, self._unit = value._n, value._unit
            return
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ValueError("_size instance cannot be negative")
            self._n, self._unit = value, "b"
            return
        s = str(value).strip().lower()
        i = len(s)
        while i > 0 and s[i - 1].isalpha():
            i -= 1
        num, unit = s[:i], s[i:] or "b"
        if len(unit) == 1 and unit != "b":
            unit += "b"
        if unit.endswith("w"):
            raise ValueError("%s: words are not supported here" % value)
        if unit not in _UNITS or not num.isdigit():
            raise ValueError("%s: bad value for _size" % value)
        self._n, self._unit = int(num), unit

    def _bytes(self):
        return self._n * _UNITS[self._unit]

    def _in(self, unit):
        b = self._bytes()
        return -(-b // _UNITS[unit])  # rounded up

    def _arith(self, other, sign):
        other = size(other)
        units = [u if u != "b" else "kb" for u in (self._unit, other._unit)]
        unit = min(units, key=_ORDER.index)
        n = self._in(unit) + sign * other._in(unit)
        if n < 0:
            raise ArithmeticError("expression evaluates to negative _size value")
        return size("%d%s" % (n, unit))

    def __str__(self):
        return "%d%s" % (self._n, self._unit)

    def __repr__(self):
        return "pbs.size(%r)" % str(self)

    def __int__(self):
        return self._bytes()

    def __add__(self, other):
        return self._arith(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, -1)

    def __rsub__(self, other):
        return size(other)._arith(self, -1)

    def __mul__(self, k):
        return size("%d%s" % (self._n * int(k), self._unit))

    __rmul__ = __mul__

    def __floordiv__(self, k):
        return size("%d%s" % (self._n // int(k), self._unit))

    __truediv__ = __floordiv__

    def _cmp(self, other):
        try:
            return self._bytes() - size(other)._bytes()
        except (ValueError, TypeError):
            return None

    def __eq__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c == 0

    def __ne__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c != 0

    def __lt__(self, other):
        return self._cmp(other) < 0

    def __le__(self, other):
        return self._cmp(other) <= 0

    def __gt__(self, other):
        return self._cmp(other) > 0

    def __ge__(self, other):
        return self._cmp(other) >= 0

    def __hash__(self):
        return hash(self._bytes())


class _text(str):
    """A value shown as its text (select, place, exec_vnode...)."""

    def __repr__(self):
        return "pbs.%s(%r)" % (type(self).__name__, str(self))


class select(_text):
    """A select statement: chunks joined by '+', each [N:]res=value:..."""

    def increment_chunks(self, n):
        """The select with every chunk's count raised by n (an int, or a
        percentage string such as "50%"), the first chunk's excepted as
        OpenPBS does (it holds the mother superior)."""
        out = []
        for i, chunk in enumerate(str(self).split("+")):
            parts = chunk.split(":")
            count = int(parts[0]) if parts[0].isdigit() else 1
            rest = parts[1:] if parts[0].isdigit() else parts
            if i == 0:
                add = 0
            elif isinstance(n, str) and n.endswith("%"):
                add = int(count * float(n[:-1]) / 100.0)
            else:
                add = int(n)
            out.append(":".join([str(count + add)] + rest))
        return select("+".join(out))


class place(_text):
    pass


class exec_vnode(_text):
    def chunks(self):
        return [c.strip("()") for c in str(self).split("+") if c]


class exec_host(_text):
    pass


class hold_types(_text):
    pass


class email_list(_text):
    pass


class user_list(_text):
    pass


class group_list(_text):
    pass


class path_list(_text):
    pass


class depend(_text):
    pass


class checkpoint(_text):
    pass


class join_path(_text):
    pass


class keep_files(_text):
    pass


class mail_points(_text):
    pass


class staging_list(_text):
    pass


class range(_text):
    pass


class acl(_text):
    pass


class state_count(_text):
    pass


class license_count(_text):
    pass


class route_destinations(_text):
    pass


class args(_text):
    pass


class sandbox(_text):
    pass


class priority(int):
    pass


# How job attributes read, by name; any other is text.
_JOB_TYPES = {
    "Priority": int, "Rerunable": bool, "interactive": bool, "block": bool,
    "Hold_Types": hold_types, "Mail_Users": email_list, "Mail_Points": mail_points,
    "User_List": user_list, "group_list": group_list, "Shell_Path_List": path_list,
    "depend": depend, "Checkpoint": checkpoint, "Join_Path": join_path,
    "Keep_Files": keep_files, "stagein": staging_list, "stageout": staging_list,
    "exec_vnode": exec_vnode, "exec_host": exec_host, "sandbox": sandbox,
    "array_indices_submitted": range, "run_count": int, "Exit_status": int,
    "session_id": int, "ctime": int, "mtime": int, "qtime": int, "etime": int,
    "stime": int, "obittime": int, "Execution_Time": int, "eligible_time": duration,
    "max_run_subjobs": int, "run_version": int, "substate": int,
}

_TRUE = ("true", "t", "y", "yes", "1")


def _typed_resource(name, value, kind):
    if value is None:
        return None
    if name == "select":
        return select(value)
    if name == "place":
        return place(value)
    try:
        if kind == "duration":
            return duration(value)
        if kind == "size":
            return size(value)
        if kind == "long":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "boolean":
            return str(value).strip().lower() in _TRUE
    except (ValueError, PBSError, ArithmeticError):
        pass
    return value


def _render(value):
    """A value as the daemon reads it back."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (_Queue, _Vnode)):
        return value.name
    return str(value)


# ---- the objects of an event ----------------------------------------

class pbs_resource(object):
    """A resource list (Resource_List, resources_available...): reads
    typed, writes recorded as changes of the object it belongs to."""

    def __init__(self, owner, attr, values):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_attr", attr)
        object.__setattr__(self, "_values", dict(values or {}))

    def __getitem__(self, name):
        v = self._values.get(name)
        return _typed_resource(name, v, _resource_types.get(name, "string"))

    def __setitem__(self, name, value):
        self._owner._change(self._attr, name, value)
        if value is None:
            self._values.pop(name, None)
        else:
            self._values[name] = _render(value)

    def __delitem__(self, name):
        self[name] = None

    def __contains__(self, name):
        return name in self._values

    def __iter__(self):
        return iter(list(self._values))

    def keys(self):
        return list(self._values)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __setattr__(self, name, value):
        self[name] = value

    def __str__(self):
        return ",".join("%s=%s" % (k, v) for k, v in sorted(self._values.items()))

    def __repr__(self):
        return "pbs_resource(%s)" % self


class pbs_env(dict):
    """A job's Variable_List: a dict whose changes are recorded."""

    def __init__(self, owner, attr, pairs):
        dict.__init__(self, pairs or [])
        self._owner = owner
        self._attr = attr

    def __setitem__(self, k, v):
        dict.__setitem__(self, k, str(v))
        self._owner._changed_env(self._attr, self)

    def __delitem__(self, k):
        dict.__delitem__(self, k)
        self._owner._changed_env(self._attr, self)

    def __str__(self):
        return ",".join("%s=%s" % kv for kv in self.items())


class _Object(object):
    """A job, reservation, vnode, queue or server of the event: attributes
    read typed; a write is checked against what the event lets a hook
    change, and recorded."""

    _kind = "object"
    _types = {}
    _resource_attrs = ("Resource_List", "resources_used", "resources_available",
                       "resources_assigned", "resources_default", "resources_max",
                       "resources_min")

    def __init__(self, name, attrs, settable=None, changes=None):
        d = object.__getattribute__(self, "__dict__")
        d["_name"] = name
        d["_attrs"] = dict(attrs or {})
        d["_settable"] = settable  # None: read-only; "*": any
        d["_changes"] = changes if changes is not None else []
        d["_cache"] = {}

    def _may_set(self, attr):
        s = self._settable
        if s is None:
            raise BadAttributeValueError("%s attribute '%s' is read-only in a %s hook" % (self._kind, attr, _event_name()))
        if s != "*" and attr not in s:
            raise BadAttributeValueError("%s attribute '%s' cannot be changed in a %s hook" % (self._kind, attr, _event_name()))

    def _change(self, attr, resource, value):
        self._may_set(attr)
        c = {"name": attr, "resource": resource or ""}
        if value is None:
            c["unset"] = True
        else:
            c["value"] = _render(value)
        self._changes.append(c)

    def _changed_env(self, attr, env):
        self._may_set(attr)
        self._changes.append({"name": attr, "vars": [[k, v] for k, v in env.items()]})

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        cache = self._cache
        if attr in cache:
            return cache[attr]
        raw = self._attrs.get(attr)
        if attr in self._resource_attrs:
            v = pbs_resource(self, attr, raw if isinstance(raw, dict) else {})
        elif attr == "Variable_List":
            v = pbs_env(self, attr, raw if isinstance(raw, list) else [])
        elif raw is None:
            v = None
        else:
            t = self._types.get(attr) or _JOB_TYPES.get(attr)
            if t is bool:
                v = str(raw).strip().lower() in _TRUE
            elif t is not None:
                try:
                    v = t(raw)
                except (ValueError, PBSError):
                    v = raw
            else:
                v = raw
        cache[attr] = v
        return v

    def __setattr__(self, attr, value):
        if attr in self._resource_attrs:
            raise BadAttributeValueTypeError("set %s's resources one by one (%s[\"name\"] = value)" % (attr, attr))
        self._change(attr, "", value)
        self._cache.pop(attr, None)
        if value is None:
            self._attrs.pop(attr, None)
        else:
            self._attrs[attr] = _render(value)

    def __str__(self):
        return str(self._name)


class _Job(_Object):
    _kind = "job"

    @property
    def id(self):
        return self._name

    def __getattr__(self, attr):
        if attr == "queue":
            q = self._attrs.get("queue")
            return _Queue(q, None) if q else None
        if attr == "job_state":
            st = self._attrs.get("job_state")
            return _JOB_STATES.get(st, st)
        return _Object.__getattr__(self, attr)

    def is_checkpointed(self):
        return False

    def rerun(self):
        self._change("_rerun", "", "True")

    def delete(self):
        self._change("_delete", "", "True")


class _Resv(_Object):
    _kind = "reservation"
    _types = {"reserve_start": int, "reserve_end": int, "reserve_duration": duration, "reserve_count": int}

    @property
    def resvid(self):
        return self._name


class _Vnode(_Object):
    _kind = "vnode"
    _types = {"pcpus": int, "resv_enable": bool, "priority": int}

    @property
    def name(self):
        return self._name

    def __getattr__(self, attr):
        if attr == "state":
            text = self._attrs.get("state") or ""
            bits = 0
            for part in text.split(","):
                bits |= _ND_STATES.get(part.strip(), 0)
            return bits
        return _Object.__getattr__(self, attr)

    def __setattr__(self, attr, value):
        if attr == "state" and isinstance(value, int):
            names = [n for n, b in _ND_STATES.items() if b and value & b]
            value = ",".join(names) if names else "free"
        _Object.__setattr__(self, attr, value)


class _Queue(_Object):
    _kind = "queue"

    def __init__(self, name, attrs):
        _Object.__init__(self, name, attrs)
        self.__dict__["_loaded"] = attrs is not None

    @property
    def name(self):
        return self._name

    def __getattr__(self, attr):
        if not self._loaded:
            self.__dict__["_attrs"] = _query("queue", self._name) or {}
            self.__dict__["_loaded"] = True
        if attr == "queue_type":
            t = self._attrs.get("queue_type", "")
            return QTYPE_ROUTE if t.lower().startswith("r") else QTYPE_EXECUTION
        return _Object.__getattr__(self, attr)

    def job(self, jobid):
        return server().job(jobid)

    def jobs(self):
        for j in server().jobs():
            if j._attrs.get("queue") == self._name:
                yield j


class _Server(_Object):
    _kind = "server"

    @property
    def name(self):
        return self._name

    def job(self, jobid):
        a = _query("job", str(jobid))
        return _Job(a.get("id", jobid), a.get("attrs")) if a else None

    def jobs(self):
        for a in _query("jobs", "") or []:
            yield _Job(a["id"], a["attrs"])

    def queue(self, name):
        a = _query("queue", str(name))
        return _Queue(name, a) if a is not None else None

    def queues(self):
        for name, a in (_query("queues", "") or {}).items():
            yield _Queue(name, a)

    def vnode(self, name):
        a = _query("vnode", str(name))
        return _Vnode(name, a) if a is not None else None

    def vnodes(self):
        for name, a in (_query("vnodes", "") or {}).items():
            yield _Vnode(name, a)

    def resv(self, resvid):
        a = _query("resv", str(resvid))
        return _Resv(resvid, a) if a is not None else None

    def resvs(self):
        for rid, a in (_query("resvs", "") or {}).items():
            yield _Resv(rid, a)

    def scheduler_restart_cycle(self):
        _actions["scheduler_restart_cycle"] = True


class server_attribute(object):
    """One attribute of a management event's request."""

    def __init__(self, name, resource, value, op, flags=0):
        self.name, self.resource, self.value, self.op, self.flags = name, resource, value, op, flags

    def __repr__(self):
        return "server_attribute(%r, %r, %r, %r)" % (self.name, self.resource, self.value, self.op)


class management(object):
    """A management event's qmgr request and how the server answered it."""

    def __init__(self, d):
        self.cmd = d.get("cmd", MGR_CMD_NONE)
        self.objtype = d.get("objtype", MGR_OBJ_NONE)
        self.objname = d.get("objname")
        self.request_time = d.get("request_time")
        self.reply_code = d.get("reply_code", 0)
        self.reply_auxcode = d.get("reply_auxcode", 0)
        self.reply_choice = d.get("reply_choice", 0)
        self.reply_text = d.get("reply_text")
        self.attribs = [server_attribute(a.get("name"), a.get("resource"), a.get("value"), a.get("op", 0))
                        for a in d.get("attribs") or []]


class _Event(object):
    def __init__(self, data, settable):
        self._data = data
        self.type = data["type"]
        self.hook_name = _hook.get("name")
        self.hook_type = "site"
        self.requestor = data.get("requestor")
        self.requestor_host = data.get("requestor_host")
        self.freq = _hook.get("freq")
        self.accepted = None
        self.reject_msg = None
        self.changes = []
        job = data.get("job")
        self.job = _Job(job.get("id"), job.get("attrs"), settable.get("job"), self.changes) if job is not None else None
        job_o = data.get("job_o")
        self.job_o = _Job(job_o.get("id"), job_o.get("attrs")) if job_o is not None else None
        resv = data.get("resv")
        self.resv = _Resv(resv.get("id"), resv.get("attrs"), settable.get("resv"), self.changes) if resv is not None else None
        resv_o = data.get("resv_o")
        self.resv_o = _Resv(resv_o.get("id"), resv_o.get("attrs")) if resv_o is not None else None
        self.src_queue = _Queue(data["src_queue"], None) if data.get("src_queue") else None
        vn = data.get("vnode")
        self.vnode = _Vnode(vn.get("name"), vn.get("attrs")) if vn is not None else None
        vn_o = data.get("vnode_o")
        self.vnode_o = _Vnode(vn_o.get("name"), vn_o.get("attrs")) if vn_o is not None else None
        self.management = management(data["management"]) if data.get("management") is not None else None
        self.vnode_list = {}
        for name, attrs in (data.get("vnode_list") or {}).items():
            self.vnode_list[name] = _Vnode(name, attrs, settable.get("vnode"), [])
        self.vnode_list_fail = {}
        for name, attrs in (data.get("vnode_list_fail") or {}).items():
            self.vnode_list_fail[name] = _Vnode(name, attrs, settable.get("vnode"), [])
        self.job_list = {}
        for j in data.get("job_list") or []:
            self.job_list[j["id"]] = _Job(j["id"], j.get("attrs"))
        self.argv = list(data.get("argv") or [])
        self.progname = data.get("progname")
        self.env = dict(data.get("env") or {})

    def accept(self, code=0):
        self.accepted = True
        raise SystemExit(code)

    def reject(self, msg=None, code=0):
        self.accepted = False
        self.reject_msg = msg
        raise SystemExit(code)

    def __getattr__(self, attr):
        raise EventIncompatibleError("the %s event has no %s" % (_event_name(), attr))


# ---- module functions ---------------------------------------------

_event = None
_hook = {}
_resource_types = {}
_channel = None
_actions = {}
_server_data = {}
_local_node = None
hook_config_filename = None
_EVENT_NAMES = {v: k.lower() for k, v in list(globals().items())
                if k.isupper() and isinstance(v, int) and k in (
                    "QUEUEJOB", "MODIFYJOB", "RESVSUB", "MOVEJOB", "RUNJOB", "PERIODIC",
                    "RESV_END", "EXECJOB_BEGIN", "EXECJOB_PROLOGUE", "EXECJOB_EPILOGUE",
                    "EXECJOB_END", "EXECJOB_PRETERM", "EXECJOB_LAUNCH", "EXECHOST_PERIODIC",
                    "EXECHOST_STARTUP", "EXECJOB_RESIZE", "EXECJOB_ABORT",
                    "EXECJOB_POSTSUSPEND", "EXECJOB_PRERESUME", "MANAGEMENT", "MODIFYVNODE",
                    "RESV_CONFIRM", "RESV_BEGIN", "MODIFYRESV", "JOBOBIT")}


def _event_name():
    return _EVENT_NAMES.get(_event.type if _event else 0, "unknown")


def event():
    """The event this hook runs for."""
    return _event


def server():
    """The server, its attributes as the event saw them."""
    return _Server(_server_data.get("name"), _server_data.get("attrs"))


def get_local_nodename():
    return _local_node


def logmsg(level, msg):
    """Writes msg into the daemon's log, tagged with the hook's name."""
    if level not in _LOG_VALUES:
        raise TypeError("Invalid severity or eventtype value <%d>" % level)
    _channel.send({"log": [int(level), str(msg)]})


def logjobmsg(jobid, msg):
    _channel.send({"log": [EVENT_JOB, str(msg)], "job": str(jobid)})


def reboot(cmd=None):
    raise PBSError("pbs.reboot() is not supported here")


def _query(what, name):
    _channel.send({"query": what, "name": name})
    reply = _channel.recv()
    if "error" in reply:
        raise PBSError(reply["error"])
    return reply.get("value")


def _begin(req, channel):
    """Sets the module up for one run (runtime.py, in the run's process)."""
    global _event, _hook, _resource_types, _channel, _server_data, _local_node, hook_config_filename
    _channel = channel
    _hook = req.get("hook") or {}
    _resource_types = req.get("resource_types") or {}
    _server_data = req.get("server") or {}
    _local_node = req.get("local_node")
    hook_config_filename = req.get("config_file")
    _event = _Event(req["event"], req.get("settable") or {})


def _run(script, path):
    """Runs the hook's script and says how it ended."""
    import traceback
    import builtins
    ev = _event
    try:
        code = compile(script, path, "exec")
        ns = {"__name__": "__main__", "__builtins__": builtins, "__file__": path}
        exec(code, ns)
    except SystemExit:
        pass
    except BaseException as e:
        tb = traceback.format_exc()
        return {"outcome": "exception", "message": "%s: %s" % (type(e).__name__, e), "traceback": tb}
    if ev.accepted is False:
        msg = ev.reject_msg
        # What the hook set before it rejected: a few events keep some of
        # it (a runjob hook's holds); the daemon decides.
        return {"outcome": "reject", "message": "" if msg is None else str(msg), "changes": ev.changes}
    out = {"outcome": "accept", "changes": ev.changes,
           "vnodes": {n: v._changes for n, v in ev.vnode_list.items() if v._changes},
           "actions": _actions}
    if ev.type == EXECJOB_LAUNCH:
        out["launch"] = {"progname": str(ev.progname), "argv": [str(a) for a in ev.argv],
                         "env": dict((str(k), str(v)) for k, v in ev.env.items())}
    return out
