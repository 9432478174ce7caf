"""A sandbox probe that succeeded, remembered on disk so that the next start skips it.

Probing means starting bubblewrap and an interpreter inside it (about 50-100 ms of every
`grader check`). Only a *positive* answer is remembered, under a key made of everything the
answer depends on: this boot, this user, the bubblewrap binary, the kernel's switches for
user namespaces, the namespaces this process lives in (a container shares the host's boot),
the interpreters (ours, and the system's that stands in for it) and the grader's run/
sources. A miss, or a negative answer, always probes.

A remembered answer can only make the grader *try* the sandbox, never go without it: if the
sandbox cannot be made after all, the worker fails to start and says so in one line, the
answer is forgotten (bwrap.forget_remembered), and `grader check` probes again at once
(bwrap.recheck), so that it goes on as a fresh probe says.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, mark, used

# The kernel's switches that decide whether an unprivileged user namespace can be made.
SWITCHES = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/kernel/unprivileged_userns_apparmor_policy",
    "/proc/sys/kernel/seccomp/actions_avail",
)
NAMESPACES = ("user", "mnt", "pid", "net", "cgroup")
_BOOT = "/proc/sys/kernel/random/boot_id"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return "-"


def _stat(path: str | Path) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}:{st.st_uid}"


def key(bwrap: str) -> str | None:
    """The key a positive probe with the `bwrap` binary is remembered under; None where this
    boot cannot be told apart from the next (then nothing is remembered)."""
    boot = _read(_BOOT)
    if boot == "-":
        return None
    run = Path(__file__).parent
    parts = [
        boot,
        f"{os.getuid()}:{os.geteuid()}:{os.getgid()}:{os.getegid()}",
        os.path.realpath(bwrap),
        _stat(bwrap),
        _stat("/etc/apparmor.d/bwrap"),
        *(_read(switch) for switch in SWITCHES),
        *(_readlink(f"/proc/self/ns/{name}") for name in NAMESPACES),
        os.path.realpath(sys.executable),
        _stat(os.path.realpath(sys.executable)),
        _stat(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"),  # bwrap.py
        *(f"{p.name}={_stat(p)}" for p in sorted(run.glob("*.py"))),
    ]
    return blake2b("\n".join(parts).encode(), digest_size=20).hexdigest()


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "-"


def _path(bwrap: str) -> Path | None:
    folder, found = cache_dir(), key(bwrap)
    return folder / f"sandbox-probe-{found}.ok" if folder and found else None


def remembered(bwrap: str) -> bool:
    """Whether a probe with `bwrap` succeeded before under the same conditions."""
    path = _path(bwrap)
    if path is None or not path.is_file():
        return False
    used(path)
    return True


def remember(bwrap: str) -> None:
    """Note that the probe with `bwrap` succeeded (silently nothing where it cannot be
    written: the next start probes again)."""
    path = _path(bwrap)
    if path is None:
        return
    mark(path, "the sandbox could be made\n")


def forget(bwrap: str) -> None:
    """Forget a remembered positive probe with `bwrap` (a worker could not start after all)."""
    path = _path(bwrap)
    if path is not None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            return
