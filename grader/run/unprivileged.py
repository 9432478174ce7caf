"""Without a sandbox, as root: the student's child gives up root before any of its code.

A grader run as root (a CI container, a Gradescope autograder whose course says
`sandbox: auto` where no bubblewrap can start) forks each student's child from a worker that
is root too. Left so, the notebook could write the grader's own results (Gradescope's
`/autograder/results/results.json`) or anything else of the machine's. So the child, once
its files are in place, becomes `nobody` (group `nogroup`, no supplementary groups) for
good: a real, effective and saved user and group of nobody's, which no code of its own can
undo. Should the kernel refuse, the child ends as a sandbox fault: never root.

Modules the worker imported before the fork keep working; anything imported afresh, by the
child's own code or the notebook's, needs its files readable by nobody. So a root grader's
plain worker (bwrap.plain_launch) is the system's own interpreter of the same version when
the grader's lies where nobody cannot read it (a root's pyenv in /root, mode 0700), as in the
sandbox; and where the interpreter, the grader package or the site folders stay unreadable
to nobody, the worker does not start (a grader fault, one line naming them): a notebook whose
imports failed for that reason would be graded wrong, and one run as root could forge the
grades.
"""

from __future__ import annotations

import contextlib
import functools
import grp
import os
import pwd
import stat
from collections.abc import Sequence

NOBODY = 65534


@functools.cache
def account() -> tuple[int, int]:
    """nobody's user id and nogroup's (else nobody's own group) group id."""
    try:
        entry = pwd.getpwnam("nobody")
        uid, gid = entry.pw_uid, entry.pw_gid
    except KeyError:
        uid, gid = NOBODY, NOBODY
    with contextlib.suppress(KeyError):
        gid = grp.getgrnam("nogroup").gr_gid
    return uid, gid


@functools.cache
def needed() -> bool:
    """Whether a child without the sandbox must give up root: the worker runs as root, and
    nobody is a user this user namespace can become. A namespace that maps no such user (one
    an ordinary user made, as bubblewrap does for the Gradescope machine of the tests) has a
    root that is only that user on the host: a child kept so has no more rights than an
    ordinary user's grader gives its notebooks."""
    if os.geteuid() != 0:
        return False
    uid, gid = account()
    return _mapped(uid, "uid_map") and _mapped(gid, "gid_map")


def _mapped(number: int, table: str) -> bool:
    """Whether this process's user namespace maps the user (or group) id `number`."""
    try:
        with open(f"/proc/self/{table}", encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except OSError:  # no user namespaces in this kernel: every id is the kernel's own
        return True
    for line in lines:
        inside, _, count = (int(word) for word in line.split())
        if inside <= number < inside + count:
            return True
    return False


def _allows(info: os.stat_result, want: int, uid: int, gid: int) -> bool:
    """Whether the mode bits of `info` grant `want` (stat's bits for "others") to uid:gid."""
    if info.st_uid == uid:
        return info.st_mode & (want << 6) == want << 6
    if info.st_gid == gid:
        return info.st_mode & (want << 3) == want << 3
    return info.st_mode & want == want


def readable(path: str, uid: int, gid: int) -> bool:
    """Whether uid:gid (with no other group) may list or read `path`: every folder above it
    searchable, the path itself readable (and searchable, if a folder)."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
        parents = [os.stat(p) for p in _parents(real)]
    except OSError:
        return True  # not there for anyone: nothing nobody lacks
    x, r = stat.S_IXOTH, stat.S_IROTH
    if not all(_allows(p, x, uid, gid) for p in parents):
        return False
    return _allows(info, r | x if stat.S_ISDIR(info.st_mode) else r, uid, gid)


def _parents(path: str) -> list[str]:
    found = []
    while (parent := os.path.dirname(path)) != path:
        found.append(parent)
        path = parent
    return found


def unreadable(paths: Sequence[str]) -> list[str]:
    """Those of `paths` that nobody cannot read."""
    uid, gid = account()
    return [p for p in paths if not readable(p, uid, gid)]


def drop(workdir: str) -> None:
    """In the child, after its files are placed and before any of its code: the working
    folder (and the folders in it) given to nobody, then root given up for good. OSError
    if the kernel refuses, or root is somehow kept."""
    uid, gid = account()
    for folder, _, _ in os.walk(workdir):
        os.chown(folder, uid, gid)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if 0 in os.getresuid() or 0 in os.getresgid() or os.getgroups():
        raise PermissionError("the child kept root")
