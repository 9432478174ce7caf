"""Namespace isolation for the student's process (Linux), done in the forked child itself.

What the child gets: its own mount namespace where the secret paths (solutions, config,
the grader's source, the submissions folder, the output folder) are covered by empty
tmpfs mounts and /tmp is a fresh tmpfs; no network (a new, empty network namespace); its own
PID namespace, so that every process it starts dies with it, even a detached one; and, when
the grader runs as root, the unprivileged user `nobody` with no capability, every mount
read-only except its own /tmp, home folders covered, and a cap on its number of processes
(RLIMIT_NPROC, and a pids cgroup where one is writable).

In a batch, a worker enters the costly part once (enter_worker: mount and network
namespaces, secrets covered, everything read-only) and each child it forks adds only its own
PID, IPC and UTS namespaces, /tmp, /dev/shm and /proc, and the drop to `nobody`
(before_fork, enter_child). A single `grader check` does it all in the child (enter).

This is the equivalent of a bubblewrap sandbox without an exec, so the warm, forked child
keeps its speed. Where namespaces are not allowed (a student's laptop without root), the
child runs with the process limits alone and the report says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 16384
MS_REMOUNT = 32
MS_PRIVATE = 1 << 18
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
NOBODY = 65534
PROCESS_LIMIT = 64
NOTE = "no namespace sandbox on this machine: the notebook ran with process limits only"
_NEVER_HIDE = {"/", "/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/sys", "/dev", "/tmp"}

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationError(OSError):
    pass


def _call(name: str, *args: object) -> None:
    if getattr(_libc, name)(*args) != 0:
        errno = ctypes.get_errno()
        raise IsolationError(errno, f"{name}: {os.strerror(errno)}")


def _mount(source: str, target: str, kind: str, flags: int, data: str = "") -> None:
    _call("mount", source.encode(), target.encode(), kind.encode(), flags, data.encode() or None)


@cache
def available() -> bool:
    """Whether this process may create the namespaces (tried once, in a throwaway child)."""
    if os.geteuid() != 0:
        return False
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reported through the exit code
        try:
            _call("unshare", CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC)
            _mount("none", "/", "", MS_REC | MS_PRIVATE)
            _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def hidden_paths(paths: Sequence[Path | str | None]) -> tuple[str, ...]:
    """The directories (or files) to cover; never a system directory or a parent of the
    interpreter's own files."""
    keep = [Path(p).resolve() for p in (os.__file__, ctypes.__file__)]
    result: list[str] = []
    for path in paths:
        if path is None:
            continue
        resolved = Path(path).resolve()
        if str(resolved) in _NEVER_HIDE or not resolved.exists():
            continue
        if any(k == resolved or resolved in k.parents for k in keep):
            continue
        result.append(str(resolved))
    # A path inside a covered directory is covered already (and no longer exists to mount).
    unique = sorted(set(result), key=len)
    return tuple(p for p in unique if not any(p.startswith(q + "/") for q in unique if q != p))


def enter(hidden: Sequence[str]) -> str:
    """In the forked child: new namespaces, secrets covered, a fresh /tmp; returns a workdir.

    The calling process forks once more inside: the grandchild is PID 1 of the new PID
    namespace and goes on to run the notebook; this process only waits for it and passes
    its end on, so the parent sees one child that exits as the notebook did.
    """
    join_pids_cgroup()
    _drop_bounding_set()
    _call("unshare", CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS)
    _cover(hidden)
    _fresh_tmp()
    pid = os.fork()
    if pid:
        _relay(pid)
    _mount_proc()
    _read_only_mounts()
    return _become_nobody()


# A batch worker enters the costly part once (mount and network namespaces, secrets covered,
# everything read-only) and keeps a handle on its own PID namespace; each child it forks
# then only adds a PID namespace of its own (so it is PID 1 there and every process it starts
# dies with it), IPC and UTS namespaces, a fresh /tmp and /proc, and drops to `nobody`.
_WORKER_PID_NS: list[int] = []


def enter_worker(hidden: Sequence[str], cgroup_name: str) -> bool:
    """In a batch worker, once; False where namespaces are not allowed."""
    if not available():
        return False
    join_pids_cgroup(PROCESS_LIMIT + 2, cgroup_name)  # the worker, its child, and theirs
    _drop_bounding_set()
    handle = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    _call("unshare", CLONE_NEWNS | CLONE_NEWNET)
    _cover(hidden)
    _read_only_mounts()
    _WORKER_PID_NS.append(handle)
    return True


def in_worker() -> bool:
    return bool(_WORKER_PID_NS)


def before_fork() -> None:
    """In a worker that entered: the next child starts a PID namespace of its own."""
    _call("setns", _WORKER_PID_NS[0], CLONE_NEWPID)  # back to ours, so unshare may nest one
    _call("unshare", CLONE_NEWPID)


def enter_child() -> str:
    """In a child forked by a worker that entered: the per-student part; returns a workdir."""
    _call("unshare", CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)
    _fresh_tmp()
    _mount_proc()
    return _become_nobody()


def _drop_bounding_set() -> None:
    for cap in range(64):  # while we still may: no way back via exec
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def _cover(hidden: Sequence[str]) -> None:
    """Secrets under empty read-only tmpfs (or /dev/null for a file); homes covered too."""
    _mount("none", "/", "", MS_REC | MS_PRIVATE)
    for path in hidden:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k")
        else:
            _mount("/dev/null", path, "", MS_BIND)
    _cover_homes()


def _fresh_tmp() -> None:
    """A private, empty /tmp and /dev/shm: nothing left by anyone before, nothing kept after
    (but the Python this process runs on, read-only, when it is installed under /tmp)."""
    _mount_keeping_python("/tmp", "size=64m,mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")


def _mount_proc() -> None:
    # Without a fresh /proc, the old one would show the host's processes (not its files).
    with contextlib.suppress(IsolationError):
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)


def _become_nobody() -> str:
    workdir = "/tmp/work"
    os.mkdir(workdir, 0o700)
    os.chown(workdir, NOBODY, NOBODY)
    resource.setrlimit(resource.RLIMIT_NPROC, (PROCESS_LIMIT, PROCESS_LIMIT))
    _call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)  # from root to nobody: every capability goes with it
    _drop_capabilities()
    return workdir


def _cover_homes() -> None:
    """Home folders hold keys and tokens: cover them, but keep the Python this process runs
    on reachable when it lives inside one (pyenv installs in ~/.pyenv, venvs anywhere)."""
    for home in ("/root", "/home"):
        if os.path.isdir(home):
            _mount_keeping_python(home, "size=4k,mode=755")


def _mount_keeping_python(point: str, options: str) -> None:
    """An empty tmpfs over `point`, with the interpreter's own folders (sys.prefix and
    sys.base_prefix) bound back read-only when they are inside it: students' cells import
    from there what the grader has not imported already (a CI job may check out and install
    under /tmp, pyenv installs in ~/.pyenv)."""
    keep = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)})
    inside = [k for k in keep if k.startswith(point + "/") and os.path.isdir(k)]
    handles = [os.open(k, os.O_PATH | os.O_DIRECTORY) for k in inside]
    _mount("tmpfs", point, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for path, handle in zip(inside, handles, strict=True):
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{handle}", path, "", MS_BIND | MS_REC)
        _mount("none", path, "", MS_BIND | MS_REMOUNT | MS_RDONLY)
        os.close(handle)


def _read_only_mounts() -> None:
    """Every mount read-only but /tmp (and the kernel's own file systems)."""
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        points = [line.split()[4] for line in handle]
    for point in sorted(set(points), key=len):
        if point == "/tmp" or point.startswith(("/tmp/", "/proc", "/sys", "/dev")):
            continue
        try:
            _mount("none", point.replace("\\040", " "), "", MS_BIND | MS_REMOUNT | MS_RDONLY)
        except IsolationError:
            continue  # a mount that refuses; it is still covered by no-capabilities below


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_capabilities() -> None:
    """No capability left, in any set: nothing to mount, unmount, override or regain."""
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    _call("capset", ctypes.byref(header), data)


def join_pids_cgroup(limit: int = PROCESS_LIMIT, name: str = "") -> str | None:
    """Put this process in a fresh pids cgroup (v1 layout) capped at `limit` processes."""
    root = Path("/sys/fs/cgroup/pids")
    if not (root / "cgroup.procs").exists():
        return None
    group = root / "grader" / (name or str(os.getpid()))
    try:
        group.mkdir(parents=True, exist_ok=True)
        (group / "pids.max").write_text(str(limit))
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return None
    return str(group)


CGROUPS = Path("/sys/fs/cgroup/pids/grader")


def remove_cgroup(name: int | str, attempts: int = 20) -> None:
    """Remove a child's or worker's pids cgroup. The processes that were in it may still be
    exiting (the kernel kills a PID namespace's last processes asynchronously), and then
    the cgroup is busy for a moment: try again, briefly."""
    group = CGROUPS / str(name)
    for _ in range(attempts):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.002)


def sweep_cgroups(min_age: float = 60.0) -> int:
    """Remove the empty cgroups that graders killed outright left behind (older than
    `min_age` seconds, so that none is taken from under a child about to join it)."""
    removed = 0
    now = time.time()
    with contextlib.suppress(OSError):
        for group in CGROUPS.iterdir():
            with contextlib.suppress(OSError):
                if group.is_dir() and now - group.stat().st_mtime > min_age:
                    group.rmdir()  # refused while a process is in it
                    removed += 1
    return removed


def die_with_parent() -> None:
    """SIGKILL this process when the one that forked it dies (a batch worker killed by the
    system takes its student's process along). Set last: a change of user clears it."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def remove_worker_cgroups(prefix: str) -> None:
    """The pids cgroups of a batch's workers (named `prefix`-…), once the workers are gone."""
    with contextlib.suppress(OSError):
        for group in CGROUPS.glob(f"{prefix}-*"):
            remove_cgroup(group.name)


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
