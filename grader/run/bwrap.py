"""How a worker is started: exec'd inside a bubblewrap sandbox, or (where none can be made)
as a fresh interpreter with a cleared environment and the process limits alone.

The sandbox's view of the file system is an allow-list: /usr (with the merged-/usr links)
and, read-only under /sandbox, what view.py stages in a private folder whose path names
nothing of the host: the grader package, numpy, the preloads and what they require, the
course data files the assignments list (`files:`); plus a private /tmp, /dev and /proc.
Nothing else exists there: no home folder, no rest of the course, no class folder, no output
folder, no /etc beyond the linker's cache, and no host path in the mount table. The
network, IPC, UTS, PID and cgroup namespaces are new and empty; the environment is an
allow-list; new user namespaces are refused twice (bubblewrap's --disable-userns and the
seccomp filter of seccomp.py). It works the same for
root and for an ordinary user wherever the kernel allows unprivileged user namespaces.
"""

from __future__ import annotations

import functools
import os
import pwd
import site
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grader.course.files import SANDBOX_COURSE
from grader.errors import GraderError
from grader.run import probe_memory, programs, seccomp, unprivileged, view

if TYPE_CHECKING:  # config.py imports NumPy: a head start (head_start.py) imports this first
    from grader.course.config import Mode
    from grader.course.files import DataFile

NOBODY = "65534"
ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PATH = "import sys; sys.path[:0] = sys.argv[1:]; "
BOOT = _PATH + "from grader.run.worker import main; main()"
PROBE = _PATH + "from grader.run.isolation import enter_child; enter_child()"
# The environment a worker gets, whatever the grader's holds (tokens, keys, paths).
ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class Support:
    """Whether workers run in the sandbox here; `reason` says why not, in one line."""

    sandboxed: bool
    reason: str = ""


@dataclass(frozen=True)
class Launch:
    """A worker's command line, environment and the descriptors it must inherit."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = field(default=())
    user: tuple[int, int] | None = None  # (uid, gid) to start it as


def note(support: Support) -> str:
    """The one line every output carries when a notebook ran without the sandbox."""
    return f"no sandbox: the notebook ran with process limits only ({support.reason})"


def _python() -> tuple[str, str]:
    """The real interpreter binary, and the prefix it belongs to."""
    binary = os.path.realpath(sys.executable)
    base = os.path.realpath(sys.base_prefix)
    if not binary.startswith(base + os.sep):
        base = os.path.dirname(os.path.dirname(binary))
    return binary, base


def _package_dirs() -> list[str]:
    """Where the worker imports from: the grader package's parent (only the package itself is
    bound), then the site folders (numpy and the config's preloads live there)."""
    import numpy

    folders = [*site.getsitepackages(), os.path.dirname(os.path.dirname(numpy.__file__))]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        folders.append(site.getusersitepackages())
    unique = dict.fromkeys(os.path.realpath(f) for f in folders if os.path.isdir(f))
    return list(unique)


def _grader_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def plain_launch() -> Launch:
    """A fresh interpreter without a sandbox: nothing inherited but the allow-listed
    environment; the grader package and the site folders on its path. As root, GraderError
    when nobody (whom its children become, unprivileged.py) cannot read what they import."""
    binary, base = _python()
    paths = [os.path.dirname(_grader_dir()), *_package_dirs()]
    if unprivileged.needed():
        binary, base = _plain_interpreter(binary, base)
        if missing := unprivileged.unreadable([base, *paths]):
            raise GraderError(
                "without the sandbox a grader run as root runs each notebook as nobody, who "
                f"cannot read {', '.join(missing)}: make them readable by all (chmod o+rx), "
                "install the system's python3 of this version, or make the sandbox work "
                "(docs/sandbox.md)"
            )
    return Launch([binary, "-I", "-S", "-c", BOOT, *paths], dict(ENVIRONMENT))


def _plain_interpreter(binary: str, base: str) -> tuple[str, str]:
    """The interpreter of a root's worker without the sandbox, and its prefix: one nobody
    cannot read (a root's pyenv in /root) is replaced by the system's own of the same
    version, where there is one, as in the sandbox."""
    uid, gid = unprivileged.account()
    if unprivileged.readable(base, uid, gid) and unprivileged.readable(binary, uid, gid):
        return binary, base
    system = system_python()
    return (system, "/usr") if system else (binary, base)


def system_python() -> str | None:
    """The system's own interpreter of this version, if it has one."""
    system = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    return system if os.path.isfile(system) else None


def _interpreter(as_nobody: bool) -> tuple[list[str], str]:
    """The binds that show the interpreter, and its path inside. One outside /usr would name
    its folder in the mount table (and a root's pyenv in /root is private): the system's own
    interpreter of the same version stands in for it, or else its prefix is staged."""
    binary, base = _python()
    if binary.startswith("/usr/"):
        return [], binary
    system = system_python()
    if system:
        return [], system
    staged = view.stage_python(base, binary, as_nobody)
    inside = f"/sandbox/python/bin/{os.path.basename(binary)}"
    return ["--ro-bind", str(staged), "/sandbox/python"], inside


def _view(as_nobody: bool, preload: Sequence[str] = ()) -> tuple[list[str], str, list[str]]:
    """bubblewrap's binds (the allow-list), the interpreter's path inside and the import path
    inside. Whatever lies outside /usr is bound from a staged folder (view.py), so that no
    source in the mount table names the host's checkout, environment or home."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for link in ROOT_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    python, inside = _interpreter(as_nobody)
    lib = view.stage_lib(tuple(preload), as_nobody)
    args += [*python, "--ro-bind", str(lib.folder / "lib"), "/sandbox/lib"]
    return args, inside, ["/sandbox/lib", *lib.paths]


def _course_binds(files: Sequence[DataFile], as_nobody: bool) -> list[str]:
    """The listed course files, read-only under /sandbox/course/<name>, from a staged folder
    holding them and nothing else of the course."""
    if not files:
        return []
    return ["--ro-bind", str(view.stage_course(tuple(files), as_nobody)), SANDBOX_COURSE]


def _seccomp_fd() -> int:
    """A pipe holding the filter, for bubblewrap to read once."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, seccomp.program())
    os.close(write_fd)
    return read_fd


def _unprivileged() -> tuple[int, int] | None:
    """The user and group bubblewrap runs as when the grader is root: nobody, so that
    bubblewrap sets the sandbox up exactly as for an ordinary user (as root it would cover
    parts of /proc and lock them, and each child could not mount its own)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return int(NOBODY), int(NOBODY)


def sandbox_launch(
    probe: bool = False, files: Sequence[DataFile] = (), preload: Sequence[str] = ()
) -> Launch:
    """The worker inside the sandbox, seeing `files` of the course and able to import the
    `preload` modules (or, to `probe`, a child's own setup, once); the caller closes
    `pass_fds` after the process has started."""
    user = _unprivileged()
    binds, python, paths = _view(user is not None, preload)
    binds += _course_binds(files, user is not None)
    env: list[str] = []
    for name, value in {**ENVIRONMENT, "GRADER_SANDBOX": "bwrap"}.items():
        env += ["--setenv", name, value]
    fd = _seccomp_fd()
    argv = [
        programs.which("bwrap") or "bwrap",
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--uid", NOBODY, "--gid", NOBODY, "--hostname", "sandbox",
        # CAP_SYS_ADMIN for each child's namespaces, CAP_SETPCAP for it to empty its bounding set
        "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
        "--die-with-parent", "--new-session", "--clearenv", *env,
        *binds, "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp",
        "--seccomp", str(fd), "--",
        python, "-I", "-S", "-c", PROBE if probe else BOOT, *paths,
    ]  # fmt: skip
    path = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return Launch(argv, path, (fd,), user)


# Whether this process's answer came from a remembered probe (probe_memory.py), and
# whether one was found stale (forgotten, not yet probed again).
_REMEMBERED: list[str] = []
_STALE: list[bool] = []
# Cleared while `grader check` starts its worker early with the answer (prestart.py): the
# engine then waits for it, and gets a fresh probe's answer where a remembered one failed.
SETTLED = threading.Event()
SETTLED.set()


@functools.cache
def support() -> Support:
    """Whether the sandbox can be made here (tried once per process; a positive answer is
    remembered on disk for the next start, see probe_memory.py)."""
    if sys.platform != "linux":
        return Support(False, f"bubblewrap sandboxes need Linux, this is {sys.platform}")
    binary = programs.which("bwrap")
    if binary is None:
        return Support(False, "bubblewrap (bwrap) is not installed")
    if not seccomp.supported():
        return Support(False, "no seccomp filter for this processor's architecture")
    if probe_memory.remembered(binary):
        _REMEMBERED.append(binary)
        return Support(True)
    found = _probe()
    if found.sandboxed:
        probe_memory.remember(binary)
    return found


def forget_remembered() -> bool:
    """After a worker could not start in the sandbox: when this process's answer was a
    remembered one, forget it, here and on disk (the next answer is a fresh probe), and say
    so. A stale 'works' costs a failed start, never a weaker sandbox."""
    if not _REMEMBERED:
        return False
    probe_memory.forget(_REMEMBERED.pop())
    _STALE.append(True)
    support.cache_clear()
    return True


def recheck() -> Support | None:
    """After a worker could not start in the sandbox: when this process's answer was a
    remembered one, forget it and probe afresh; None when the answer was probed (nothing
    new to learn)."""
    forget_remembered()
    if not _STALE:
        return None
    _STALE.clear()
    return support()


def _probe() -> Support:
    """Start bubblewrap and a child's own setup inside it, once: whether both work."""
    try:
        launch = sandbox_launch(probe=True)
    except OSError as exc:
        return Support(False, f"the sandbox's files could not be staged: {exc}")
    try:
        done = subprocess.run(
            launch.argv, capture_output=True, timeout=30, check=False, **process_options(launch)
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Support(False, f"bubblewrap could not start ({exc})")
    finally:
        for fd in launch.pass_fds:
            os.close(fd)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit code {done.returncode}"
        return Support(False, f"bubblewrap failed: {why}; see docs on user namespaces")
    return Support(True)


def choose(mode: Mode, settled: bool = True) -> Support:
    """The sandbox for `mode`: 'none' never tries; 'auto' and 'required' use it when they
    can ('required' makes its absence an error, which the caller raises). `settled`: once
    an early start has settled the answer (SETTLED)."""
    if mode == "none":
        return Support(False, "the sandbox was turned off: --sandbox none or sandbox: none")
    if settled:
        SETTLED.wait()
    return support()


def spawn(launch: Launch) -> subprocess.Popen[bytes]:
    """Start `launch` as a worker: its pipes for standard input and output, a session of
    its own, nothing on standard error; the descriptors passed to it closed here after."""
    try:
        return subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **process_options(launch),
        )
    finally:
        for fd in launch.pass_fds:
            os.close(fd)


def process_options(launch: Launch) -> dict[str, Any]:
    """subprocess's keyword arguments that start `launch` as it says."""
    user = launch.user
    return {
        "env": launch.env,
        "pass_fds": launch.pass_fds,
        "user": user[0] if user else None,
        "group": user[1] if user else None,
        "extra_groups": [] if user else None,
    }


def launch(chosen: Support, files: Sequence[DataFile] = (), preload: Sequence[str] = ()) -> Launch:
    """How to start a worker under the chosen support, able to read the course's `files`
    (staged into the sandbox; without one, they are read where they are) and import the
    `preload` modules."""
    if chosen.sandboxed:
        return sandbox_launch(files=files, preload=preload)
    return plain_launch()
