"""The red team's probe of the OOM killer's mark: a notebook lowered its processes'
oom_score_adj back to 0, so that under memory pressure the kernel would take the grader's
own processes before the student's. Run as root and, through test_unprivileged.py, again as
an ordinary user (who cannot forbid the lowering: see docs/sandbox.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_attacks import WRONG
from test_redteam_more import said_by_softmax

from grader.course.config import Config
from grader.run import bwrap, memory_group
from grader.run.workers import Workers

from conftest import write_notebook

pytestmark = pytest.mark.sandbox

# Lowers the mark in this process and reads it back; a child it forks after lowers its own.
LOWER = """
import os
def lower():
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("0")
    except OSError as exc:
        return f"refused {exc.errno}"
    return "lowered"
TRIED = lower()
r, w = os.pipe()
if os.fork() == 0:
    os.write(w, (lower() + " " + open("/proc/self/oom_score_adj").read().strip()).encode())
    os._exit(0)
os.wait()
SAID = (TRIED, open("/proc/self/oom_score_adj").read().strip(), os.read(r, 64).decode())
def softmax(items_in):
    raise ValueError(repr(SAID))
"""


def test_a_notebook_cannot_lower_its_oom_mark(fast_config: Config, tmp_path: Path) -> None:
    """Where the grader may pin the mark (it holds CAP_SYS_RESOURCE: run as root), the
    notebook's write is refused (EACCES), in its process and in one it forks, and the mark
    stays 1000; elsewhere nothing can forbid it (the write succeeds, down to 0)."""
    path = write_notebook(tmp_path / "lower.ipynb", [WRONG, LOWER])
    eacces = 13
    if memory_group.can_pin_oom_mark():
        expected = (f"refused {eacces}", "1000", f"refused {eacces} 1000")
    else:
        expected = ("lowered", "0", "lowered 0")
    assert said_by_softmax(fast_config, path) == expected


def test_a_ready_workers_processes_get_the_mark_where_it_can_be_pinned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the grader holds CAP_SYS_RESOURCE, a worker's processes are marked 1000 once it
    is ready (before any child is forked), which makes 1000 their floor too. Here the
    capability is pretended (raising a mark needs none, so the write itself is real)."""
    monkeypatch.setattr(memory_group, "can_pin_oom_mark", lambda: True)
    workers = Workers(1, bwrap.Support(False, "test"))
    try:
        pid = workers.all[0].process.pid
        assert Path(f"/proc/{pid}/oom_score_adj").read_text().strip() == memory_group.OOM_FIRST
    finally:
        workers.close()
