"""The per-student part of the sandbox, done by the worker's forked child (Linux).

The worker already runs inside bubblewrap (see bwrap.py): an allow-list view of the file
system, no network, a cleared environment, new user namespaces refused, and two
capabilities inside its own user namespace kept for this module: CAP_SYS_ADMIN (the child's
namespaces and mounts) and CAP_SETPCAP (the child's empty bounding set). Each child
then adds what must be its own: a PID namespace (it is PID 1 there, so every process it
starts dies with it), mount, IPC and UTS namespaces, a fresh /tmp, /dev/shm, /proc and
/dev/pts, the worker's / and /dev read-only (nothing left for the next student), a
cap on processes, the drop of every capability (no way back: no_new_privs), and a filter
that keeps every process it starts in its session (seccomp.session_program). The
namespaces come with the child's own fork (fork_isolated); the rest it does itself before
any student code (set_up_child). As a PID namespace's first process it would ignore the
signals whose default action ends a process: default_signals.py makes them end it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal

from grader.run import seccomp

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_RELATIME = 1 << 21
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_GET_TID_ADDRESS = 40
CLONE_CHILD_CLEARTID = 0x00200000
CLONE_CHILD_SETTID = 0x01000000
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PROCESS_LIMIT = 64
WORKDIR = "/tmp/work"

CHILD_NAMESPACES = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS

_libc = ctypes.CDLL(None, use_errno=True)
# The C functions a child calls, looked up once here in the worker: looked up in each child,
# they would copy some thirty of the worker's pages into it, every time.
CHILD_CALLS = ("mount", "prctl", "capset")
for _name in CHILD_CALLS:
    getattr(_libc, _name)
# The same symbols, called with the interpreter's lock held: fork_isolated's child must come
# back from the system call holding it, as os.fork's does.
_api = ctypes.PyDLL(None, use_errno=True)
_api.syscall.restype = ctypes.c_long
_api.syscall.argtypes = [ctypes.c_long] * 6


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _session_filter() -> tuple[ctypes.Array[ctypes.c_char], _Program] | None:
    """seccomp.session_program, ready to hand to the kernel (built once, in the worker)."""
    if not seccomp.supported():
        return None
    code = seccomp.session_program()
    held = ctypes.create_string_buffer(code, len(code))
    return held, _Program(len(code) // 8, ctypes.addressof(held))


_SESSION_FILTER = _session_filter()


class IsolationError(OSError):
    """A namespace or mount call the kernel refused."""


def _call(name: str, *args: object) -> None:
    if getattr(_libc, name)(*args) != 0:
        errno = ctypes.get_errno()
        raise IsolationError(errno, f"{name}: {os.strerror(errno)}")


def _mount(source: str, target: str, kind: str, flags: int, data: str = "") -> None:
    _call("mount", source.encode(), target.encode(), kind.encode(), flags, data.encode() or None)


def _child_tid_argument() -> int:
    """Where clone(2) takes the child's thread-id address, after its flags: (stack, parent
    tid, child tid, tls) on x86-64; (stack, parent tid, tls, child tid) on the others this
    grader's seccomp filter knows (arm64)."""
    return 2 if platform.machine() in ("x86_64", "AMD64") else 3


_CHILD_TID_ARGUMENT = _child_tid_argument()
_TID_ADDRESS: list[int | None] = []


def _tid_address() -> int | None:
    """The address of the C library's record of this thread's id (what it gave the kernel
    at start: prctl PR_GET_TID_ADDRESS); None where the kernel does not say."""
    if not _TID_ADDRESS:
        found = ctypes.c_void_p()
        ok = _libc.prctl(PR_GET_TID_ADDRESS, ctypes.byref(found), 0, 0, 0) == 0
        _TID_ADDRESS.append(found.value if ok and found.value else None)
    return _TID_ADDRESS[0]


def fork_isolated() -> int:
    """fork(), the child in PID, mount, IPC and UTS namespaces of its own: 0 in the child
    (PID 1 of its namespace, so every process it starts dies with it), its PID in the
    caller. IsolationError when the kernel refuses (in a caller with threads, the child
    gets it from set_up_child instead, after taking its job).

    A single-threaded caller (a worker) clones straight into the namespaces (_clone). One
    with other threads (a course preload that started some) forks through the C library
    first, which leaves no lock held by a thread that is not there, and that child clones
    and relays: a clone(2) of its own would copy the other threads' locks as they are."""
    if len(os.listdir("/proc/self/task")) == 1:
        return _clone()
    pid = os.fork()
    if pid:
        return pid
    try:
        inner = _clone()
    except IsolationError as exc:
        _REFUSED.append(exc)
        return 0
    if inner:
        _relay(inner)
    return 0


_REFUSED: list[IsolationError] = []  # in a relayed child: the namespaces the kernel refused


def _clone() -> int:
    """fork_isolated in a single-threaded process: one clone(2) into the namespaces.

    One clone(2) does it, not unshare(2) and a second fork: the worker may not unshare a
    PID namespace per child (only its first child would get one, and it may not join its
    own namespace again to start over), and a second fork would copy the worker's memory
    map once more for every student. Python's fork hooks run around the call as os.fork
    runs them; the process is single-threaded, so none of the C library's own fork
    bookkeeping for other threads is needed.
    """
    flags, args = CHILD_NAMESPACES | signal.SIGCHLD, [0, 0, 0, 0]
    if (where := _tid_address()) is not None:
        # The C library's own record of the thread's id, set anew in the child as its fork
        # sets it: without this the child's main thread keeps the worker's id, and the first
        # thread the student starts gets the same one (their locks would not tell them apart).
        flags |= CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
        args[_CHILD_TID_ARGUMENT] = where
    _api.PyOS_BeforeFork()
    pid = _api.syscall(seccomp.number("clone"), flags, *args)
    errno = ctypes.get_errno()
    if pid == 0:
        _api.PyOS_AfterFork_Child()
        return 0
    _api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise IsolationError(errno, f"clone: {os.strerror(errno)}")
    return int(pid)


def enter_child() -> str:
    """In a process that is not yet in namespaces of its own (bwrap.py's probe runs this
    alone), before any student code: what a worker's child gets, via fork_isolated and
    set_up_child; returns the working folder.

    The calling process forks once more inside: the grandchild is PID 1 of the new PID
    namespace and goes on; this process only waits for it and passes its end on.
    """
    pid = fork_isolated()
    if pid:
        _relay(pid)
    return set_up_child()


def _relay(pid: int) -> None:
    """Wait for the namespace's PID 1 and end the same way; never returns."""
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os._exit(70)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def set_up_child() -> str:
    """In the child of fork_isolated, before any student code: its own scratch, /proc and
    limits, no capability left; returns its working folder."""
    if _REFUSED:
        raise _REFUSED.pop()
    _mount("none", "/", "", MS_REC | MS_PRIVATE)
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
    # Without a fresh /proc, the worker's would show its own processes.
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
    if os.path.isdir("/dev/pts"):  # its own terminals, a few: the machine's are shared
        try:
            _mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, PTS_OPTIONS)
        except IsolationError:  # a kernel without devpts in a user namespace: none at all
            _mount("tmpfs", "/dev/pts", "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k")
    # The worker's / and /dev outlive this child and serve the next students: written to,
    # they would carry files (a planted /lib, say) and memory from one student to the next.
    for path in ("/", "/dev"):
        _read_only(path)
    os.mkdir(WORKDIR, 0o700)
    resource.setrlimit(resource.RLIMIT_NPROC, (PROCESS_LIMIT, PROCESS_LIMIT))
    _drop_capabilities()
    keep_session()
    return WORKDIR


def keep_session() -> None:
    """From now on `setsid` leaves this process, and every process it starts, in its session
    (seccomp.session_program); no_new_privs first, which lets an unprivileged process add
    the filter. Nothing where the machine has no filter of ours."""
    if _SESSION_FILTER is not None:
        _call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        _call("prctl", PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_SESSION_FILTER[1]), 0, 0)


# A child's own terminals: a new devpts instance with room for a few (a notebook that opens
# thousands would take the machine's, which every other program shares).
PTS_OPTIONS = "newinstance,ptmxmode=0666,mode=620,max=8"
# statvfs's flags that are mount flags of the same value (ST_RELATIME is 4096, MS_RELATIME
# another bit).
_KEPT_FLAGS = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048
_ST_RELATIME = 4096


def _read_only(path: str) -> None:
    """This child's view of the mount at `path` read-only (its other flags kept: a bind
    remount must repeat them); the mount itself, and the worker's view of it, unchanged."""
    have = os.statvfs(path).f_flag
    flags = (have & _KEPT_FLAGS) | (MS_RELATIME if have & _ST_RELATIME else 0)
    _mount("none", path, "", flags | MS_RDONLY | MS_REMOUNT | MS_BIND)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _last_cap() -> int:
    """The highest capability this kernel knows (dropping one above it is EINVAL)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last one of Linux 5.9 to 6.x


def _drop_capabilities() -> None:
    """No capability left, in any set: nothing to mount, unmount, override or regain."""
    _call("prctl", PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(_last_cap() + 1):  # while we still may (CAP_SETPCAP): none via an exec
        _call("prctl", PR_CAPBSET_DROP, cap, 0, 0, 0)
    _call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _call("capset", ctypes.byref(_CapHeader(0x20080522, 0)), (_CapData * 2)())


def die_with_parent() -> None:
    """SIGKILL this process when the one that forked it dies (a worker killed by the grader
    takes its student's process along)."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
