# The hook runner's zygote: started once by a daemon (pbs_server or
# pbs_mom), it imports what every hook run needs, then forks one child per
# run, so that each run is a process of its own without paying Python's
# start-up each time. Package hookrun (runner.go) has the contract.
#
# fd 3 is the control socket (SOCK_SEQPACKET): each packet from the daemon
# carries, as SCM_RIGHTS, the child's end of a run's channel. The child
# speaks the channel protocol (runtime.py); the zygote never reads a hook
# or an event itself. EOF on the control socket ends the zygote.
import array
import os
import signal
import socket
import sys

import json

_SOURCES = json.loads(sys.stdin.read())
_runtime = {"__name__": "gopbs_hook_runtime"}
exec(compile(_SOURCES["runtime"], "gopbs_hook_runtime.py", "exec"), _runtime)
_runtime["load"](_SOURCES["pbs"])
_null = os.open(os.devnull, os.O_RDWR)
os.dup2(_null, 0)

ctl = socket.socket(fileno=3)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel

while True:
    fds = array.array("i")
    try:
        msg, anc, _flags, _addr = ctl.recvmsg(64, socket.CMSG_SPACE(fds.itemsize))
    except InterruptedError:
        continue
    if not msg:
        break
    for level, typ, data in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    for fd in fds:
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                ctl.close()
                os.setsid()
                os.dup2(_null, 1)
                os.dup2(_null, 2)
                code = _runtime["child"](fd)
            except BaseException:
                code = 70
            os._exit(code)
        os.close(fd)
