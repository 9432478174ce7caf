"""The red team's probes against the sandbox, one test per class they broke. Each stub earns
more than its honest work (0) only if the hole is open. The suite runs these as root and,
through test_unprivileged.py, again as an ordinary user."""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_attacks import WRONG

from grader.batch.grade import grade_batch
from grader.course.config import Config
from grader.engine import grade_path
from grader.report import Report
from grader.run import bwrap

import students
from conftest import REPO, write_notebook

pytestmark = pytest.mark.sandbox

NAMES = (
    "softmax_cols",
    "self_attention",
    "scaled_dot_product_self_attention",
    "softmax",
    "attention_loop",
    "qkv_loop",
)

# Finds any function of a target's name that this stub did not define, anywhere in the
# process's memory, and answers with it (a classmate's, or the reference solution).
BORROW = f"""
import gc, types
_MINE = set()
def _compiled_cells():
    for obj in gc.get_objects():  # caches of compiled cells: dicts whose values are code
        if isinstance(obj, dict):
            for value in list(obj.values()):
                if isinstance(value, types.CodeType) and value.co_filename.startswith("<cell"):
                    yield value
def _borrowed(name):
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == name and obj not in _MINE:
            if "<cell" not in obj.__code__.co_filename or obj.__globals__ is not globals():
                return obj
    space = {{"__name__": "__main__"}}
    cells = sorted(set(_compiled_cells()), key=lambda c: int(c.co_filename[6:-1]))
    for code in cells:  # a classmate's notebook, run again here
        try:
            exec(code, space)
        except Exception:
            continue
    if callable(space.get(name)):
        return space[name]
    return None
for _name in {NAMES!r}:
    def _make(name):
        def answer(*args):
            found = _borrowed(name)
            if found is None:
                raise LookupError("nothing to borrow")
            return found(*args)
        answer.__name__ = name
        _MINE.add(answer)
        return answer
    globals()[_name] = _make(_name)
"""


def total(report: Report | None) -> float:
    assert report is not None
    return report.score


def test_no_classmate_code_and_no_reference_in_a_batch(fast_config: Config, tmp_path: Path) -> None:
    """One worker grades an honest notebook, then the stub: nothing of the first student
    (compiled cells, trees, functions) nor any reference is in the memory it is forked from."""
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "a_honest.ipynb", students.cells())
    write_notebook(folder / "b_borrower.ipynb", [BORROW])
    batch = grade_batch(folder, fast_config, None, "self_attention", jobs=1)
    scores = {e.student: total(e.report) for e in batch.entries}
    assert scores["a_honest"] == 10 and scores["b_borrower"] == 0, scores


def test_no_reference_after_a_first_grade(fast_config: Config, tmp_path: Path) -> None:
    """A process that grades twice (a loop over grade_path, pytest --notebook a b) has the
    references by then: its later students' processes never descend from it."""
    grade_path(REPO / "solutions" / "self_attention.ipynb", fast_config, "self_attention")
    stub = write_notebook(tmp_path / "b.ipynb", [BORROW])
    report = grade_path(stub, fast_config, "self_attention")
    assert report.score == 0, [(t.name, t.messages[:1]) for t in report.targets]


LOCKS = """
import sys, threading, _thread
def _grab():
    frame = sys._getframe()
    taken = 0
    while frame is not None:
        for space in (frame.f_locals, frame.f_globals):
            for value in list(space.values()):
                for lock in (value, getattr(value, "_wlock", None), getattr(value, "_rlock", None)):
                    if isinstance(lock, (_thread.LockType, _thread.RLock)):
                        taken += lock.acquire(timeout=0.01)
        frame = frame.f_back
    return taken
_grab()
"""


def test_no_lock_a_student_can_take_stalls_the_batch(fast_config: Config, tmp_path: Path) -> None:
    """The red team's five lines held the process pool's queue lock and hung every batch."""
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "locker.ipynb", [WRONG, LOCKS])
    for name in ("b", "c", "d"):
        write_notebook(folder / f"{name}.ipynb", students.cells())
    batch = grade_batch(folder, fast_config, None, "self_attention", jobs=2)
    scores = {e.student: total(e.report) for e in batch.entries}
    assert scores == {"locker": 0, "b": 10, "c": 10, "d": 10}


WALK = """
import os, time
FOUND = []
START = time.monotonic()
SYSTEM = ("usr", "proc", "sys", "dev")  # the system's own files, and kernel views
for top in ("/", "/proc/self/root"):
    for root, dirs, files in os.walk(top):
        if time.monotonic() - START > SECONDS:
            break
        if os.path.normpath(root) == os.path.normpath(top):
            dirs[:] = [d for d in dirs if d not in SYSTEM]
        kinds = (".ipynb", ".yaml", ".sqlite")
        FOUND += [os.path.join(root, f) for f in files if f.endswith(kinds)]
ALLOWED = ("/", "/usr", "/etc/ld.so.cache", "/tmp", "/dev", "/proc", "/sandbox/")
TABLE = [line.split() for line in open("/proc/self/mountinfo")]
MOUNTS = [f[4] for f in TABLE if not (f[4] == "/" or f[4].startswith(ALLOWED[1:]))]
ROOTS = [f[3] for f in TABLE if any(f[3].startswith(p) for p in FORBIDDEN)]
ENV = sorted(set(os.environ) - {"GRADER_CHILD", "HOME", "TMPDIR", "PWD"})
def softmax(items_in):
    raise ValueError(repr((FOUND, ENV, MOUNTS, ROOTS)))
"""


def walk(forbidden: Sequence[str], seconds: float = 2) -> str:
    """The walk probe, told the host paths no mount may come from; they are spelt in hex, so
    that a page quoting the probe's code does not name them either."""
    spelt = tuple(path.encode().hex() for path in forbidden)
    head = f"FORBIDDEN = tuple(bytes.fromhex(h).decode() for h in {spelt!r})\n"
    return head + f"SECONDS = {seconds!r}\n" + WALK


def said_by_walk(messages: Sequence[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    """What the walk probe saw (notebooks found, environment, mounts, roots), from its
    softmax's messages."""
    said = next(m for m in messages if "raised ValueError" in m)
    seen = ast.literal_eval(said.split("raised ValueError: ")[1].rsplit(" (cell ", 1)[0])
    found, env, mounts, roots = seen
    return found, env, mounts, roots


def test_an_allow_list_view_and_a_cleared_environment(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No notebook, config or gradebook anywhere in view; no host path in the mount table;
    none of the grader's environment."""
    monkeypatch.setenv("GRADER_TEST_SECRET", "s3cr3t-token-for-the-grader")
    forbidden = (str(tmp_path), str(REPO / "solutions"), str(REPO / "tests"), str(REPO) + "/c")
    path = write_notebook(tmp_path / "walker.ipynb", [WRONG, walk(forbidden)])
    report = grade_path(path, config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    found, env, mounts, roots = said_by_walk(softmax.messages)
    assert found == []
    assert env == sorted(set(bwrap.ENVIRONMENT) - {"HOME"} | {"GRADER_SANDBOX"})
    # Only what bubblewrap was told to show; what is bound shows where it comes from (the
    # interpreter, its packages, the grader package), never the course, the class folder or
    # this notebook's folder.
    assert mounts == [] and roots == []


USERNS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
TRIES = {}
for name, flag in (("user", 0x10000000), ("net", 0x40000000), ("mount", 0x00020000)):
    TRIES[name] = (libc.unshare(flag), ctypes.get_errno())
TRIES["ptrace"] = (libc.ptrace(16, 1, 0, 0), ctypes.get_errno())  # PTRACE_ATTACH to PID 1
STATUS = open("/proc/self/status").read()
TRIES["caps"] = STATUS.split("CapEff:")[1].split()[0]
TRIES["bounding"] = STATUS.split("CapBnd:")[1].split()[0]  # none to regain through an exec
TRIES["nnp"] = STATUS.split("NoNewPrivs:")[1].split()[0]
def softmax(items_in):
    raise ValueError(repr(sorted(TRIES.items())))
"""


def test_no_new_namespace_no_capability_no_tracing(fast_config: Config, tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "ns.ipynb", [WRONG, USERNS])
    report = grade_path(path, fast_config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    said = " ".join(softmax.messages)
    eperm = 1
    for name in ("mount", "net", "ptrace", "user"):
        assert f"('{name}', (-1, {eperm}))" in said, said
    assert "('caps', '0000000000000000')" in said, said
    assert "('bounding', '0000000000000000')" in said and "('nnp', '1')" in said, said


THREADS = """
import ctypes, threading
libc = ctypes.CDLL(None, use_errno=True)
MUTEX, ATTR = ctypes.create_string_buffer(64), ctypes.create_string_buffer(64)
libc.pthread_mutexattr_init(ATTR)
libc.pthread_mutexattr_settype(ATTR, 1)  # PTHREAD_MUTEX_RECURSIVE: its owner is a thread id
libc.pthread_mutex_init(MUTEX, ATTR)
libc.pthread_mutex_lock(MUTEX)
SEEN = []
worker = threading.Thread(target=lambda: SEEN.append(libc.pthread_mutex_trylock(MUTEX)))
worker.start()
worker.join()
def softmax(items_in):
    raise ValueError(f"trylock={SEEN[0]}")
"""


def test_the_students_threads_are_told_apart_by_the_c_library(
    fast_config: Config, tmp_path: Path
) -> None:
    # The student's process must be a whole process to its C library: a lock its main thread
    # holds is busy (EBUSY, 16) for another thread, not owned by both (a stale thread id).
    path = write_notebook(tmp_path / "threads.ipynb", [WRONG, THREADS])
    report = grade_path(path, fast_config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    assert "trylock=16" in " ".join(softmax.messages), softmax.messages


WHO = (
    "import os\nSEEN = (os.getuid(), os.getpid(), sorted(p for p in os.listdir('/proc') "
    "if p.isdigit()), open('/proc/1/cmdline').read())\n"
    "def softmax(items_in):\n    raise ValueError(repr(SEEN))"
)


def test_the_student_process_is_nobody_in_a_namespace_of_its_own(
    fast_config: Config, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path / "who.ipynb", [WRONG, WHO])
    report = grade_path(path, fast_config, "self_attention")
    softmax = next(t for t in report.targets if t.name == "softmax")
    said = " ".join(softmax.messages)
    assert "(65534, 1, ['1'], " in said, said  # nobody, PID 1, alone in its /proc
    assert str(os.getpid()) not in said.split("['1']")[0]


def red_team(forbidden: Sequence[str], walk_seconds: float = 2) -> dict[str, list[str]]:
    """Every probe above as a notebook's code cells, for a batch of them all (the acceptance
    test, bench/attack_batch.py). Each one's honest work is WRONG's, or none for the
    borrower: anything more is a hole. The walk is told the host paths of `forbidden`."""
    return {
        "redteam_borrow": [BORROW],
        "redteam_locks": [WRONG, LOCKS],
        "redteam_walk": [WRONG, walk(forbidden, walk_seconds)],
        "redteam_namespaces": [WRONG, USERNS],
        "redteam_who": [WRONG, WHO],
    }
