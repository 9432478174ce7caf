"""More of the red team's probes against the sandbox, each one a class of attack the first
rounds (test_redteam.py, test_attacks.py) did not try. The suite runs them as root and,
through test_unprivileged.py, again as an ordinary user."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_attacks import WRONG

from grader.course.config import Config
from grader.engine import grade_path

import students
from conftest import write_notebook

pytestmark = pytest.mark.sandbox


def said_by_softmax(config: Config, path: Path) -> object:
    """What a probe's softmax raised (a ValueError whose message is a Python literal)."""
    report = grade_path(path, config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    said = next(m for m in softmax.messages if "raised ValueError: " in m)
    return ast.literal_eval(said.split("raised ValueError: ", 1)[1].rsplit(" (cell ", 1)[0])


# Memory a process holds outside its address space, where the 2 GB limit on it does not
# count: System V shared memory (attached, filled, detached: it stays, and the IPC namespace
# has no size limit), a memfd (a file in no mounted file system) and message queues.
HOARD = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
SIZE = 8 << 20
HELD = {}
for _ in range(3):
    segment = libc.shmget(0, SIZE, 0o1600)  # IPC_PRIVATE, IPC_CREAT
    if segment < 0:
        HELD["shm"] = -ctypes.get_errno()
        break
    where = libc.shmat(segment, None, 0)
    ctypes.memset(where, 1, SIZE)
    libc.shmdt(where)
    HELD["shm"] = HELD.get("shm", 0) + SIZE
try:
    fd = os.memfd_create("hoard")
    HELD["memfd"] = os.write(fd, b"x" * SIZE)
except OSError as exc:
    HELD["memfd"] = -exc.errno
queue = libc.msgget(0, 0o1600)
HELD["msg"] = queue if queue < 0 else 0
if queue < 0:
    HELD["msg"] = -ctypes.get_errno()
def softmax(items_in):
    raise ValueError(repr(sorted(HELD.items())))
"""


def test_no_memory_outside_the_address_space_limit(fast_config: Config, tmp_path: Path) -> None:
    """The red team held System V shared memory without bound from one process (3 GB in a
    second, never in its address space, and no OOM killer sees it as the process's), and
    16 MB per memfd: the system calls that make such memory are refused (EPERM)."""
    path = write_notebook(tmp_path / "hoard.ipynb", [WRONG, HOARD])
    eperm = 1
    assert said_by_softmax(fast_config, path) == [
        ("memfd", -eperm),
        ("msg", -eperm),
        ("shm", -eperm),
    ]


# What the host's OOM killer makes of the student's processes: 64 processes of 2 GB each
# are more than most machines hold, and without a mark the killer may take the grader, or
# any process of the machine that is larger than each of the student's.
OOM = """
import os
r, w = os.pipe()
if os.fork() == 0:
    os.write(w, open("/proc/self/oom_score_adj").read().strip().encode())
    os._exit(0)
os.wait()
ADJUST = (open("/proc/self/oom_score_adj").read().strip(), os.read(r, 16).decode())
def softmax(items_in):
    raise ValueError(repr(ADJUST))
"""


def test_the_oom_killer_takes_the_students_processes_first(
    fast_config: Config, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path / "oom.ipynb", [WRONG, OOM])
    assert said_by_softmax(fast_config, path) == ("1000", "1000")


def test_a_cell_too_deep_to_compile_is_its_own_error(fast_config: Config, tmp_path: Path) -> None:
    """A cell whose compiling runs out of recursion (a sum of 60,000 terms) is an error of
    that cell, as in Jupyter: the child went on to nothing else and every target scored 0."""
    deep = "x = " + "+".join(["1"] * 60_000)
    path = write_notebook(tmp_path / "deep.ipynb", [*students.cells(), deep])
    report = grade_path(path, fast_config, "self_attention")
    assert report.score == report.max_score, report.errors
    assert any("RecursionError" in error for error in report.errors), report.errors
