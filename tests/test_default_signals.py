"""Signals whose default action ends a process end the student's process in the sandbox too,
and are reported as they are without it: there it is the first process of its PID namespace,
to which the kernel delivers no such signal (grader/run/default_signals.py)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from grader.course.cases import assignment_cases
from grader.course.config import Config, TimeLimit
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.run import bwrap
from grader.run.sandbox import UNEXPLAINED_KILL, ChildRun, Limits, _describe_exit, _limit_child
from grader.run.workers import Workers

from conftest import write_notebook

pytestmark = pytest.mark.sandbox

LIMITS = TimeLimit(submission=20, cell=5, call=2)
MODES = ("none", "required")


def run_in(support: bwrap.Support, config: Config, tmp_path: Path, cells: list[str]) -> ChildRun:
    """One run of `cells` (and softmax's cases) on a worker of `support`."""
    assignment = config.assignment("self_attention")
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    workers = Workers(1, support)
    try:
        plan = [("softmax", assignment_cases(assignment)["softmax"])]
        return workers.run(submission.cells, plan, LIMITS)
    finally:
        workers.close()


def both(config: Config, tmp_path: Path, cells: list[str]) -> tuple[ChildRun, ChildRun]:
    """The same notebook without the sandbox and in it (which this machine must have)."""
    sandbox = bwrap.support()
    assert sandbox.sandboxed, sandbox.reason
    plain = run_in(bwrap.Support(False, "none asked for"), config, tmp_path, cells)
    return plain, run_in(sandbox, config, tmp_path, cells)


def crash(name: str) -> str:
    return f"the notebook's process crashed ({name})"


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(30)", "SIGTERM"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGUSR1)\ntime.sleep(30)", "SIGUSR1"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGHUP)\ntime.sleep(30)", "SIGHUP"),
        ("import signal\nsignal.setitimer(signal.ITIMER_PROF, 0.2)\nwhile True: pass", "SIGPROF"),
        ("import os\nos.abort()", "SIGABRT"),
    ],
)
def test_a_signal_at_its_default_action_ends_the_notebook_as_without_the_sandbox(
    config: Config, tmp_path: Path, code: str, name: str
) -> None:
    cells = ["import time\nx = 1", code, "y = 2"]
    plain, sandboxed = both(config, tmp_path, cells)
    for run in (plain, sandboxed):
        assert (run.ending, run.exit_description) == ("crashed", crash(name))
        assert not run.timed_out and run.seconds < 4
    # The same frames reach the grader: the first cell's, not the mark the child ended with.
    assert sandboxed.raw == plain.raw
    assert [head["kind"] for head, _ in sandboxed.frames] == ["cell"]


def test_the_notebooks_own_alarm_ends_it_within_a_second_or_two(
    config: Config, tmp_path: Path
) -> None:
    # Not taken for a sample of the cell's time limit (whose timer it replaced), nor ignored.
    cells = ["import signal, time\nsignal.alarm(1)\ntime.sleep(30)"]
    for run in both(config, tmp_path, cells):
        assert (run.ending, run.exit_description) == ("crashed", crash("SIGALRM"))
        assert not run.timed_out and 0.9 < run.seconds < 3


BURN = (
    "import resource\n"
    "_, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (1, hard))\n"
    "while True:\n"
    "    pass"
)


def test_a_notebook_past_its_cpu_time_is_reported_as_over_its_cpu_time(
    config: Config, tmp_path: Path
) -> None:
    for run in both(config, tmp_path, [BURN]):
        assert run.ending == "cpu_limit"
        assert run.exit_description == "the notebook used up its CPU-time limit"
        assert run.seconds < 4


def test_the_graders_cpu_limit_sends_sigxcpu_before_it_kills() -> None:
    # Soft and hard limits equal, the kernel would send SIGKILL alone ("killed").
    limits = Limits(submission=0.5)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the burning child
        try:
            _limit_child(limits)
            while True:
                pass
        finally:
            os._exit(1)
    started = time.monotonic()
    _, status = os.waitpid(pid, 0)
    assert time.monotonic() - started < 10
    assert _describe_exit(status, False, limits) == (
        "cpu_limit",
        "the notebook used up its CPU-time limit",
    )


def test_a_sigkill_at_the_cpu_limits_hard_end_is_the_cpu_limit_not_unexplained() -> None:
    """A notebook that catches or defers SIGXCPU (a long C call) is killed by the kernel a
    second later: that SIGKILL is the CPU limit's, not one from outside that a batch grades
    again at every run. A SIGKILL with little CPU used is unexplained."""
    limits = Limits(submission=0.5)
    status = signal.SIGKILL  # a wait status: killed by SIGKILL
    assert _describe_exit(status, False, limits, cpu=1.2)[0] == "cpu_limit"
    assert _describe_exit(status, False, limits, cpu=0.1) == ("killed", UNEXPLAINED_KILL)


OWN_HANDLERS = [
    "import os, signal, time\n"
    "def mine(signum, frame):\n"
    "    raise KeyError('mine')\n"
    "signal.signal(signal.SIGALRM, mine)\n"
    "signal.alarm(1)\n"
    "time.sleep(5)",
    "def theirs(signum, frame):\n"
    "    raise LookupError('theirs')\n"
    "signal.signal(signal.SIGTERM, theirs)\n"
    "os.kill(os.getpid(), signal.SIGTERM)\n"
    "time.sleep(5)",
    "os.kill(os.getpid(), signal.SIGUSR2)\ntime.sleep(30)",
]


def test_a_notebooks_own_handlers_win_and_the_others_keep_their_default_action(
    config: Config, tmp_path: Path
) -> None:
    plain, sandboxed = both(config, tmp_path, OWN_HANDLERS)
    for run in (plain, sandboxed):
        errors = [head["error"]["type"] for head, _ in run.frames if head["kind"] == "cell"]
        assert errors == ["KeyError", "LookupError"]
        assert (run.ending, run.exit_description) == ("crashed", crash("SIGUSR2"))
        assert run.seconds < 5
    assert sandboxed.raw == plain.raw


def test_the_cells_time_limit_still_stops_the_notebook_in_the_sandbox(tmp_path: Path) -> None:
    fast = TimeLimit(submission=6, cell=1, call=0.5)
    cells = ["import time\ntime.sleep(30)", "import os\nos.kill(os.getpid(), 15)"]
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    workers = Workers(1, bwrap.support())
    try:
        run = workers.run(submission.cells, [("softmax", ())], fast)
    finally:
        workers.close()
    timeouts = [head["error"] for head, _ in run.frames if head["kind"] == "cell"]
    where = {"cell": submission.cells[0].index, "line": 2}
    assert timeouts[0] == {"type": "TimeLimit", "message": "", "where": where}
    assert run.exit_description == crash(signal.SIGTERM.name)


@pytest.mark.parametrize(
    ("code", "ending"),
    [
        ("import signal, time\nsignal.alarm(1)\ntime.sleep(30)", crash("SIGALRM")),
        ("import os\nos.abort()", crash("SIGABRT")),
        (BURN, "the notebook used up its CPU-time limit"),
    ],
)
def test_the_report_reads_the_same_with_and_without_the_sandbox(
    config: Config, tmp_path: Path, code: str, ending: str
) -> None:
    path = write_notebook(tmp_path / "s.ipynb", [code])
    reports = [grade_path(path, config, "self_attention", sandbox=mode) for mode in MODES]
    said = [(r.errors, r.did_not_run, [(t.status, t.messages) for t in r.targets]) for r in reports]
    assert said[0] == said[1]
    assert ending in (reports[0].did_not_run or "")


def test_an_alarm_set_in_one_cell_ends_the_notebook_in_a_later_one(
    config: Config, tmp_path: Path
) -> None:
    # The cell's time limit takes the same timer; the notebook's alarm is kept across cells.
    cells = ["import signal, time\nsignal.alarm(1)", "x = 1", "time.sleep(30)"]
    for run in both(config, tmp_path, cells):
        assert (run.ending, run.exit_description) == ("crashed", crash("SIGALRM"))
        assert 0.9 < run.seconds < 3
        assert [head.get("error") for head, _ in run.frames] == [None, None]


def test_an_alarm_cancelled_or_handled_in_a_later_cell_is_as_in_python(
    config: Config, tmp_path: Path
) -> None:
    cancelled = ["import signal, time\nsignal.alarm(1)", "signal.alarm(0)", "time.sleep(1.5)"]
    for run in both(config, tmp_path, cancelled):
        assert run.finished and not run.exit_description
    handled = [OWN_HANDLERS[0].replace("time.sleep(5)", ""), "time.sleep(5)", "y = 2"]
    for run in both(config, tmp_path, handled):
        errors = [head.get("error") for head, _ in run.frames if head["kind"] == "cell"]
        assert [e and e["type"] for e in errors] == [None, "KeyError", None]
        # At the alarm (1 s), not when the cell's limit samples first (4 s) and calls it.
        assert run.finished and run.seconds < 3


def test_os_abort_in_a_thread_ends_the_notebook_as_without_the_sandbox(
    config: Config, tmp_path: Path
) -> None:
    cells = ["import os, threading, time\nthreading.Thread(target=os.abort).start()\ntime.sleep(9)"]
    plain, sandboxed = both(config, tmp_path, cells)
    for run in (plain, sandboxed):
        assert (run.ending, run.exit_description) == ("crashed", crash("SIGABRT"))
        assert run.seconds < 4
    assert sandboxed.raw == plain.raw
