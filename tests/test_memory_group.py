"""The memory limit for all of a notebook's processes together (grader/run/memory_group.py):
where the grader may make a memory cgroup (root here: cgroup v1), a notebook whose processes
together go over the limit is killed and reported so; elsewhere (the ordinary user
`grader-ci`) the per-process limit alone applies, as docs/sandbox.md says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.course.config import TimeLimit
from grader.course.notebook import CodeCell
from grader.run import bwrap, memory_group, sandbox
from grader.run.workers import Workers

pytestmark = pytest.mark.sandbox

GB = 1 << 30
# Four processes, each touching 700 MB and holding it for a moment: 2.8 GB together, under
# the per-process limit each.
FOUR_HOGS = """\
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (700 << 20)
        time.sleep(1.5)
        os._exit(0)
    children.append(pid)
ENDS = [os.waitpid(pid, 0)[1] for pid in children]
"""


def run_hogs(support: bwrap.Support) -> sandbox.ChildRun:
    workers = Workers(1, support)
    try:
        cells = [CodeCell(1, FOUR_HOGS, FOUR_HOGS)]
        return workers.run(cells, [], TimeLimit(submission=20, cell=15, call=2))
    finally:
        workers.close()


@pytest.mark.parametrize("sandboxed", [True, False])
def test_a_notebooks_processes_together_stay_under_the_memory_limit(
    sandboxed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "MEMORY_LIMIT", GB)  # the cgroup's (the grader's side)
    support = bwrap.support() if sandboxed else bwrap.Support(False, "test")
    assert support.sandboxed is sandboxed
    run = run_hogs(support)
    if memory_group.place() is not None:
        assert run.ending == "killed", run
        assert run.exit_description == (
            "the notebook's process was killed (memory limit: its processes together went "
            "over 1 GB)"
        )
        assert not run.finished and run.raw == b""
    else:  # the documented fallback: 2 GB per process only, so 2.8 GB together ran
        assert run.finished and run.ending == "", run
        assert "per process" in memory_group.describe(GB)


def test_a_workers_cgroup_goes_with_it_and_a_dead_graders_are_pruned() -> None:
    where = memory_group.place()
    workers = Workers(1, bwrap.Support(False, "test"))
    worker = workers.all[0]
    if where is None:  # nothing to make, nothing to clean
        workers.close()
        assert worker.memory is None
        assert memory_group.make([os.getpid()], GB) is None
        return
    group = worker.memory
    assert group is not None
    assert Path(group.folder).parent == Path(where.folder)
    procs = (Path(group.folder) / "cgroup.procs").read_text().split()
    assert str(worker.process.pid) in procs
    assert (Path(group.folder) / "memory.limit_in_bytes").read_text().strip() == str(
        sandbox.MEMORY_LIMIT
    ) or (Path(group.folder) / "memory.max").read_text().strip() == str(sandbox.MEMORY_LIMIT)
    workers.close()
    assert not Path(group.folder).exists()
    # a cgroup a killed grader left: its process is gone
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    stale = Path(where.folder) / f"{memory_group.PREFIX}{dead}-0"
    stale.mkdir()
    mine = Path(where.folder) / f"{memory_group.PREFIX}{os.getpid()}-999"
    mine.mkdir()
    try:
        made = memory_group.make([], GB)
        assert made is not None
        made.remove()
        assert not stale.exists()
        assert mine.exists()  # this grader's own are its own to remove
    finally:
        for folder in (stale, mine):
            if folder.exists():
                folder.rmdir()


def test_the_memory_limit_says_how_it_applies_here() -> None:
    said = memory_group.describe(2 * GB)
    if memory_group.place() is None:
        assert said.startswith("memory: 2 GB per process (no memory cgroup")
    else:
        assert said.startswith("memory: 2 GB for all of a notebook's processes together")
