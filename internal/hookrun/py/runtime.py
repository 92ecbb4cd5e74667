# A hook run's process, forked by the zygote (zygote.py): it reads the
# run's request from its channel, becomes the hook's user, sets the pbs
# module up with the event and runs the hook's script. The channel's
# messages are a 4-byte big-endian length and a JSON object; package
# hookrun (runner.go) has the protocol.
import builtins
import json
import os
import resource
import socket
import struct
import sys
import traceback
import types

_PBS_MODULE = None


def load(pbs_src):
    """Makes the pbs module, once, in the zygote."""
    global _PBS_MODULE
    m = types.ModuleType("pbs")
    m.__file__ = "pbs.py"
    exec(compile(pbs_src, "pbs.py", "exec"), m.__dict__)
    sys.modules["pbs"] = m
    _PBS_MODULE = m


class Channel(object):
    def __init__(self, fd):
        self.sock = socket.socket(fileno=fd)

    def send(self, obj):
        data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        self.sock.sendall(struct.pack(">I", len(data)) + data)

    def recv(self):
        (n,) = struct.unpack(">I", self._read(4))
        return json.loads(self._read(n).decode("utf-8"))

    def _read(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("the daemon closed the hook's channel")
            buf += chunk
        return bytes(buf)


def child(fd):
    ch = Channel(fd)
    ch.send({"pid": os.getpid()})
    req = ch.recv()
    if "compile" in req:
        msg = compile_check(req["compile"], req["script_path"], req.get("kind", ".py"))
        ch.send({"result": {"outcome": "compiled", "message": msg or ""}})
        return 0
    limit = req.get("rlimit_as")
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if req.get("uid") is not None and os.geteuid() == 0:
        os.initgroups(req["user"], req["gid"])
        os.setgid(req["gid"])
        os.setuid(req["uid"])
    if req.get("cwd"):
        os.chdir(req["cwd"])
    for k, v in (req.get("environ") or {}).items():
        os.environ[k] = v
    _PBS_MODULE._begin(req, ch)
    result = _PBS_MODULE._run(req["script"], req["script_path"])
    ch.send({"result": result})
    return 0


def compile_check(src, path, kind):
    """Python's message for a script (kind ".py") that does not compile,
    or a configuration file (".json", ".ini") that does not read; None
    when it does."""
    try:
        if kind == ".py":
            compile(src, path, "exec")
        elif kind == ".json":
            json.loads(src)
        elif kind == ".ini":
            import configparser
            configparser.RawConfigParser().read_string(src, path)
    except Exception:
        return "".join(traceback.format_exception_only(*sys.exc_info()[:2])).rstrip()
    return None
