"""More of the red team's probes against the sandbox, each one a class of attack the first
rounds (test_redteam.py, test_attacks.py) did not try. The suite runs them as root and,
through test_unprivileged.py, again as an ordinary user."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_attacks import WRONG
from test_redteam import NAMES

from grader.batch.grade import grade_batch
from grader.course.config import Config
from grader.engine import grade_path

import students
from conftest import REPO, write_notebook

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
open("/tmp/held", "w").close()
try:
    os.setxattr("/tmp/held", "user.a", b"x" * 65536)
    HELD["xattr"] = 65536
except OSError as exc:
    HELD["xattr"] = -exc.errno
# setxattrat (Linux 6.13, number 463 on x86_64 and arm64): refused before any kernel reads it
done = libc.syscall(463, -100, b"/tmp/held", 0, b"user.b", None, 0)
HELD["xattrat"] = -ctypes.get_errno() if done < 0 else done
def softmax(items_in):
    raise ValueError(repr(sorted(HELD.items())))
"""


def test_no_memory_outside_the_address_space_limit(fast_config: Config, tmp_path: Path) -> None:
    """The red team held System V shared memory without bound from one process (3 GB in a
    second, never in its address space, and no OOM killer sees it as the process's), and
    16 MB per memfd, and gigabytes of extended attributes on its tmpfs: the system calls that
    make such memory are refused (EPERM)."""
    path = write_notebook(tmp_path / "hoard.ipynb", [WRONG, HOARD])
    eperm = 1
    assert said_by_softmax(fast_config, path) == [
        ("memfd", -eperm),
        ("msg", -eperm),
        ("shm", -eperm),
        ("xattr", -eperm),  # r51: kernel memory on the tmpfs, in no process and no size
        ("xattrat", -eperm),
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


# Reads the frames a classmate's child sent, from what the worker freed but did not wipe (the
# child's memory is a copy of the worker's), and answers each call with the classmate's
# value for the same arguments.
STEAL = """
import ctypes, re, struct
import numpy as np
from grader.run.wire import Seq, decode_frame
def plain(v):
    if isinstance(v, Seq):
        items = [plain(i) for i in v.items]
        return items if v.kind == "list" else tuple(items)
    return v
def flat(v):
    if isinstance(v, (list, tuple)):
        return np.concatenate([flat(i) for i in v]) if v else np.zeros(0)
    return np.ravel(np.asarray(v, dtype=float))
STOLEN = {}
for line in open("/proc/self/maps"):
    f = line.split()
    if not f[1].startswith("rw") or (len(f) > 5 and not f[5].startswith("[")):
        continue
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if hi - lo > 256 << 20:
        continue
    data = ctypes.string_at(lo, hi - lo)
    for m in re.finditer(rb'\\{"kind": "result"', data):
        if m.start() < 8:
            continue
        head_len, pay_len = struct.unpack(">II", data[m.start() - 8 : m.start()])
        end = m.start() + head_len
        try:
            head, values = decode_frame(data[m.start() : end], data[end : end + pay_len])
        except Exception:
            continue
        if head.get("status") == "ok" and "value" in values and "args" in values:
            kept = (flat(plain(values["args"])), plain(values["value"]))
            STOLEN.setdefault(head["target"], []).append(kept)
def _answer(name):
    def answer(*args):
        mine = flat(list(args))
        for given, value in STOLEN.get(name, []):
            if given.shape == mine.shape and np.array_equal(given, mine):
                return value
        raise LookupError("not seen")
    return answer
for _name in NAMES:
    globals()[_name] = _answer(_name)
"""


def test_no_classmate_answers_in_the_memory_a_child_is_forked_from(
    fast_config: Config, tmp_path: Path
) -> None:
    """The worker read each child's frames into memory it freed and did not wipe: the next
    student's child, a copy of the worker, found the classmate's answers there (with the
    arguments of each call) and scored 10 of 10 without a line of its own."""
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "a_honest.ipynb", students.cells())
    names = f"NAMES = {NAMES!r}\n"
    write_notebook(folder / "b_stealer.ipynb", [names + STEAL])
    batch = grade_batch(folder, fast_config, None, "self_attention", jobs=1)
    scores = {e.student: e.report.score if e.report else None for e in batch.entries}
    assert scores == {"a_honest": 10, "b_stealer": 0}, scores


def test_no_reference_answers_for_the_next_notebook_of_one_process(
    fast_config: Config, tmp_path: Path
) -> None:
    """One process grading notebook after notebook (`grader check` computing the references,
    a loop over grade_path, the service) runs them on one shared worker: what the solution's
    child answered must not be found by the next notebook's child either."""
    solution = REPO / "solutions" / "self_attention.ipynb"
    assert grade_path(solution, fast_config, "self_attention").score == 10
    names = f"NAMES = {NAMES!r}\n"
    stealer = write_notebook(tmp_path / "stealer.ipynb", [names + STEAL])
    report = grade_path(stealer, fast_config, "self_attention")
    assert report.score == 0, [(t.name, t.status) for t in report.targets]
