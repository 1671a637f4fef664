"""Joining a started sandbox's namespaces, and dropping every privilege after it (Linux only).

A forked worker (``zygote.py``) does not build its sandbox: a ``bwrap`` holder process has built
it (``forkserver.py``: the same ``isolation.bwrap_command`` as every sandbox, running ``sleep``),
and the fork joins the holder's namespaces with ``setns(2)``, passed as open ``/proc/PID/ns/*``
descriptors. ``bwrap`` nests two user namespaces (the outer one owns the mount, PID, network, IPC,
UTS and cgroup namespaces; the inner one maps ``SANDBOX_UID``), so ``enter`` joins the outer one
(when it is not this process's own), the owned namespaces, then the inner one. Joining a PID
namespace places only the process's *children* in it: the caller forks after ``enter``.

``drop_privileges`` then leaves the process what ``bwrap --cap-drop ALL --new-session`` leaves
its command: every capability set empty (bounding, ambient, permitted, effective, inheritable),
``no_new_privs`` set, a session of its own.
"""

from __future__ import annotations

import ctypes
import fcntl
import os

# setns(2) flags, <linux/sched.h>.
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# The namespaces a holder's descriptors are sent for, in the order ``enter`` joins them after the
# user namespaces (``/proc/PID/ns/<name>``).
OWNED = (("mnt", CLONE_NEWNS), ("cgroup", CLONE_NEWCGROUP), ("uts", CLONE_NEWUTS), ("ipc", CLONE_NEWIPC),
         ("net", CLONE_NEWNET), ("pid", CLONE_NEWPID))
NAMES = ("user",) + tuple(name for name, _ in OWNED)
# ioctl(2) on a namespace descriptor, <linux/nsfs.h>: _IO(0xb7, 0x2), the parent user namespace.
NS_GET_PARENT = 0xB702
# prctl(2) options, <linux/prctl.h>.
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# capset(2)'s header version for 64-bit capability sets, <linux/capability.h>.
CAPABILITY_VERSION_3 = 0x20080522

_LIBC = ctypes.CDLL(None, use_errno=True)


class NamespaceError(OSError):
    """A namespace could not be joined or a privilege not dropped: the fork must not run a job."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise NamespaceError(errno, f"{what}: {os.strerror(errno)}")


def _setns(fd: int, flag: int, name: str) -> None:
    _check(_LIBC.setns(fd, flag), f"setns({name})")


def enter(fds: dict[str, int]) -> None:
    """Join the namespaces of ``fds`` (``NAMES`` -> open ``/proc/PID/ns/*`` descriptors of one
    holder): the inner user namespace's parent when it is not ours, every ``OWNED`` namespace,
    then the inner user namespace. Must run single-threaded (a fresh fork). Raises
    ``NamespaceError``."""
    missing = [name for name in NAMES if name not in fds]
    if missing:
        raise NamespaceError(0, f"no descriptor for the {', '.join(missing)} namespace")
    inner = fds["user"]
    try:
        outer = fcntl.ioctl(inner, NS_GET_PARENT)
    except OSError as exc:
        raise NamespaceError(exc.errno or 0, f"the sandbox's outer user namespace: {exc}") from exc
    try:
        if os.fstat(outer).st_ino != os.stat("/proc/self/ns/user").st_ino:
            _setns(outer, CLONE_NEWUSER, "outer user")
    finally:
        os.close(outer)
    for name, flag in OWNED:
        _setns(fds[name], flag, name)
    _setns(inner, CLONE_NEWUSER, "user")


def die_with_parent(signal_number: int) -> None:
    """``PR_SET_PDEATHSIG``: this process gets ``signal_number`` when its parent ends."""
    _check(_LIBC.prctl(PR_SET_PDEATHSIG, signal_number, 0, 0, 0), "PR_SET_PDEATHSIG")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def last_capability() -> int:
    """The highest capability number this kernel knows (``/proc/sys/kernel/cap_last_cap``)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def drop_privileges() -> None:
    """A new session; every capability dropped from the bounding and ambient sets, then from the
    permitted, effective and inheritable ones (``capset`` with all zero); ``no_new_privs``, so
    nothing exec'd later gains any. Raises ``NamespaceError``."""
    os.setsid()
    for cap in range(last_capability() + 1):
        _check(_LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"PR_CAPBSET_DROP {cap}")
    _check(_LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "PR_CAP_AMBIENT_CLEAR_ALL")
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_LIBC.capset(ctypes.byref(header), data), "capset")
    _check(_LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")


__all__ = ["NAMES", "NamespaceError", "die_with_parent", "drop_privileges", "enter", "last_capability"]
