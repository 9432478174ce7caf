"""A memory cgroup per worker: the memory limit for all of a notebook's processes together.

The child's address-space limit (sandbox.MEMORY_LIMIT, RLIMIT_AS) is per process, and a
notebook may start 64 of them. Where the grader may make a memory cgroup (as root with
cgroup v1's memory hierarchy, or under a cgroup v2 subtree delegated to it, with the memory
controller on), each worker, once ready, is moved with its processes into a cgroup of its
own whose limit is the memory limit; every child it forks after is in it, and so is all the
child starts. Memory the worker touched before it was moved stays charged where it was, so
the limit bounds what the child and its processes add. When they go over it, the kernel kills
one of them (the student's, first: their oom_score_adj is 1000); the grader reads the cgroup's
count of such kills after each run and reports the run as killed by the memory limit, its
answers dropped. Nothing is added to a child's own start: the cost is one small read per run
in the grader.

Elsewhere (an ordinary user without a delegated cgroup, a read-only /sys) the per-process
limit alone applies; `describe()` says which, for the docs and the instructor.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass

V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup"
PREFIX = "grader-"
_NAMES = itertools.count()


@dataclass(frozen=True)
class Place:
    """Where this process may make memory cgroups: a folder, and the cgroup version."""

    folder: str
    version: int


def _own_cgroups() -> list[tuple[str, str]]:
    """(controllers, path) of each line of /proc/self/cgroup."""
    try:
        with open("/proc/self/cgroup") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [tuple(line.split(":", 2)[1:]) for line in lines if line.count(":") >= 2]  # type: ignore[misc]


def _candidate() -> Place | None:
    """This process's own memory cgroup: v1's memory line, else v2's single one."""
    unified = None
    for controllers, path in _own_cgroups():
        if "memory" in controllers.split(","):
            return Place(os.path.join(V1_ROOT, path.lstrip("/")), 1)
        if controllers == "":
            unified = Place(os.path.join(V2_ROOT, path.lstrip("/")), 2)
    return unified


@functools.cache
def place() -> Place | None:
    """The folder under which this process may make memory cgroups (its own cgroup's, v1
    or v2), or None where it may not."""
    found = _candidate()
    if found is None or not os.path.isdir(found.folder):
        return None
    if found.version == 2 and "memory" not in _read(found.folder, "cgroup.subtree_control"):
        return None  # the memory controller is not handed down here
    return found if os.access(found.folder, os.W_OK) else None


def describe(limit: int) -> str:
    """One line for an instructor: how the memory limit applies on this machine."""
    size = f"{limit / (1 << 30):g} GB"
    where = place()
    if where is None:
        return (
            f"memory: {size} per process (no memory cgroup can be made here, so a notebook's "
            "processes together may hold more)"
        )
    return f"memory: {size} for all of a notebook's processes together (cgroup v{where.version})"


def _read(folder: str, name: str) -> str:
    try:
        with open(os.path.join(folder, name)) as handle:
            return handle.read()
    except OSError:
        return ""


def _write(folder: str, name: str, text: str) -> None:
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(text)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prune(where: Place) -> None:
    """Remove the cgroups a grader that is gone left behind (killed: nothing removed them)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(where.folder):
            owner = name[len(PREFIX) :].split("-", 1)[0]
            if name.startswith(PREFIX) and owner.isdigit() and not _alive(int(owner)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(where.folder, name))


def tree(pid: int) -> list[int]:
    """`pid` and every process below it, parents first (from /proc: each process's parent)."""
    parents: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        stat = _read(f"/proc/{entry}", "stat")
        if stat:
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        found.append(current := todo.pop(0))
        todo.extend(parents.get(current, []))
    return found


CAP_SYS_RESOURCE = 24
OOM_FIRST = "1000"


@functools.cache
def can_pin_oom_mark() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE: the mark it writes into another's
    oom_score_adj is then also that process's floor, which no process without the
    capability (nothing in the sandbox) can go below again."""
    for line in _read("/proc/self", "status").splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False


def pin_oom_mark(pids: Iterable[int]) -> None:
    """Mark `pids` (a ready worker's processes) for the OOM killer first, for good: every
    child a worker forks after inherits the mark and its floor, so a notebook can no longer
    lower its own back to 0. Nothing where this process may not (see can_pin_oom_mark):
    each child raises its own mark then (sandbox.py), which it may lower again."""
    if not can_pin_oom_mark():
        return
    for pid in pids:
        with contextlib.suppress(OSError):  # gone meanwhile
            _write(f"/proc/{pid}", "oom_score_adj", OOM_FIRST)


class Group:
    """One worker's memory cgroup."""

    def __init__(self, folder: str, version: int, limit: int) -> None:
        """A cgroup at `folder` (made by `make`) and its memory `limit` in bytes."""
        self.folder, self.version, self.limit = folder, version, limit
        self.kills = self._kills()

    def _kills(self) -> int:
        """How many processes the kernel has killed in it for going over the limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        for line in _read(self.folder, name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def killed(self) -> bool:
        """Whether the kernel killed one of its processes for memory since the last ask."""
        kills = self._kills()
        fresh, self.kills = kills > self.kills, kills
        return fresh

    def remove(self) -> None:
        """Remove it, once its processes (all killed by the caller) are gone."""
        for _ in range(50):
            try:
                os.rmdir(self.folder)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def make(pids: Iterable[int], limit: int) -> Group | None:
    """A new memory cgroup limited to `limit` bytes holding `pids`, or None where none can
    be made (the per-process limit alone applies then)."""
    where = place()
    if where is None:
        return None
    prune(where)
    folder = os.path.join(where.folder, f"{PREFIX}{os.getpid()}-{next(_NAMES)}")
    try:
        os.mkdir(folder)
    except OSError:
        return None
    try:
        if where.version == 1:
            _write(folder, "memory.limit_in_bytes", str(limit))
            with contextlib.suppress(OSError):  # no swap beyond it either, where swap is counted
                _write(folder, "memory.memsw.limit_in_bytes", str(limit))
        else:
            _write(folder, "memory.max", str(limit))
            with contextlib.suppress(OSError):
                _write(folder, "memory.swap.max", "0")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                _write(folder, "cgroup.procs", str(pid))
    except OSError:
        Group(folder, where.version, limit).remove()
        return None
    return Group(folder, where.version, limit)
