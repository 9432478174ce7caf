"""The child process, run on a real worker: limits, clean-up, and what the grader makes of its
ending."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.course.cases import assignment_cases
from grader.course.config import Config, TimeLimit
from grader.course.notebook import CodeCell, load_submission
from grader.engine import grade_path
from grader.errors import GraderError
from grader.judge.reference import normalise
from grader.judge.score import identical
from grader.run import bwrap
from grader.run.sandbox import ChildRun
from grader.run.wire import Value
from grader.run.workers import Worker, Workers

from conftest import REPO, processes_with, write_notebook

pytestmark = pytest.mark.sandbox


def run_cells(config: Config, tmp_path: Path, cells: list[str]) -> tuple[None, ChildRun]:
    assignment = config.assignment("self_attention")
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    cases = assignment_cases(assignment)
    workers = Workers(1, bwrap.support())
    try:
        plan = [("softmax", cases["softmax"])]
        return None, workers.run(submission.cells, plan, assignment.time_limit)
    finally:
        workers.close()


def test_unseeded_random_numbers_do_not_depend_on_the_process_that_forked(
    config: Config, tmp_path: Path
) -> None:
    cells = ["import random\nimport numpy as np\nprint(np.random.rand(3), random.random())"]
    outputs = []
    for _ in range(3):
        np.random.rand(5)  # the forking process's own state moves on between runs
        random.random()
        _, run = run_cells(config, tmp_path, cells)
        said = [head["output"] for head, _ in run.frames if head["kind"] == "cells_done"]
        outputs.append(said[0])
    assert outputs[0].count(" ") >= 3 and outputs[0] == outputs[1] == outputs[2]


def test_background_processes_die_with_the_child(fast_config: Config, tmp_path: Path) -> None:
    marker = "31.41592"
    cells = [f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])"]
    _, run = run_cells(fast_config, tmp_path, cells)
    assert run.finished
    time.sleep(0.05)
    assert processes_with(marker) == []


# Silent: the notebook ignores SIGALRM, the alarm that stops a cell at its limit (code that
# only catches the limit's exception is ended by the child itself: test_unreadable_values).
SWALLOW = (
    "import signal, time\n"
    "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
    "while True:\n"
    "    time.sleep(0.01)"
)


def test_a_child_that_goes_silent_is_stopped(fast_config: Config, tmp_path: Path) -> None:
    # Ignoring the per-cell alarm keeps the cell alive; the parent's watchdog hears
    # nothing for longer than a cell may take (and than the child takes to end code that
    # goes on catching its limit), and stops it before the deadline.
    from grader.run.caught import CAUGHT_SHARE

    limits = fast_config.assignment("self_attention").time_limit
    silence = max(limits.cell, limits.call) * (1 + CAUGHT_SHARE) + 1
    assert silence < limits.submission
    started = time.monotonic()
    _, run = run_cells(fast_config, tmp_path, [SWALLOW])
    assert time.monotonic() - started < limits.submission
    assert run.timed_out and run.went_silent
    assert f"stopped answering for {silence:g} s" in run.exit_description


def test_whole_submission_deadline_kills_and_reports(fast_config: Config, tmp_path: Path) -> None:
    # Cells that each stay within their limit, but not together: they stop at their share
    # of the submission's time (3 of its 4 s; the later cells are not run), and calls that
    # each stay within theirs, but not together with the cells: the overall deadline holds.
    slow = "import time\ndef softmax(x):\n    time.sleep(0.45)\n    return x"
    cells = [slow, *["import time\ntime.sleep(0.8)"] * 8]
    started = time.monotonic()
    _, run = run_cells(fast_config, tmp_path, cells)
    assert time.monotonic() - started < 6
    assert run.timed_out and not run.went_silent
    assert "did not finish within the 4 s time limit" in run.exit_description
    errors = [head.get("error") or {} for head, _ in run.frames if head["kind"] == "cell"]
    kinds = [error.get("type") for error in errors]
    assert kinds[:4] == [None] * 4 and kinds[-1] == "NotRun" and len(kinds) == 9, kinds
    assert any(head["kind"] == "result" for head, _ in run.frames)  # calls were made


def test_child_works_in_a_private_directory_of_its_own(config: Config, tmp_path: Path) -> None:
    cells = ["import os\nopen('scratch.txt', 'w').write('x')\nprint(os.getcwd())"]
    _, run = run_cells(config, tmp_path, cells)
    assert run.finished
    said = [head["output"] for head, _ in run.frames if head["kind"] == "cells_done"]
    assert said == ["/tmp/work\n"]
    assert not (Path.cwd() / "scratch.txt").exists()


def test_crash_is_described(config: Config, tmp_path: Path) -> None:
    # A real fault: the notebook is PID 1 of its namespace, which ignores a kill of itself.
    cells = ["import ctypes\nctypes.string_at(0)"]
    _, run = run_cells(config, tmp_path, cells)
    assert not run.finished
    assert "crashed (SIGSEGV)" in run.exit_description


def test_cells_run_numbered_as_they_are_and_what_does_not_compile_is_said(
    fast_config: Config, tmp_path: Path
) -> None:
    cells = [
        "import numpy as np\ndef softmax(items_in):\n    return np.ones(len(items_in)) / 1",
        "def broken(:\n    pass",
        "x = float(np.ones((1, 1)))",
    ]
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    workers = Workers(1, bwrap.support())
    try:
        limits = fast_config.assignment("self_attention").time_limit
        run = workers.run(submission.cells, [], limits)
    finally:
        workers.close()
    cell_frames = [h for h, _ in run.frames if h.get("kind") == "cell"]
    assert [h["cell"] for h in cell_frames] == [c.index for c in submission.cells]
    assert "error" not in cell_frames[0] and "error" not in cell_frames[2]
    assert cell_frames[1]["error"]["type"] == "SyntaxError"
    assert cell_frames[1]["error"]["where"]["cell"] == submission.cells[1].index
    assert cell_frames[2]["scalar_fixes"]  # the float() rewrite is in the compiled code


def test_identical_is_exact_about_what_a_call_may_have_changed() -> None:
    """Judged in the grader on values as they crossed the wire, not by the child."""

    def wire(value: object) -> Value:
        return normalise(value)

    kept = wire([np.ones((3, 1)), (2.0, None)])
    assert identical(kept, wire([np.ones((3, 1)), (2.0, None)]))
    assert not identical(kept, wire([np.ones((3, 1)) + 1e-12, (2.0, None)]))  # one bit
    assert not identical(kept, wire([np.ones((1, 3)), (2.0, None)]))  # reshaped in place
    assert not identical(kept, wire([np.ones((3, 1)), [2.0, None]]))  # a tuple became a list
    assert not identical(kept, wire([np.ones((3, 1))]))  # an item removed
    assert not identical(wire(np.zeros(2)), wire("zeros"))  # replaced by something else


def test_a_child_cannot_hide_that_it_changed_its_input(config: Config, tmp_path: Path) -> None:
    """The red team's stub replaced the child's own comparison; there is none to replace."""
    cells = [
        "import numpy as np\n"
        "def softmax_cols(data_in):\n"
        "    data_in -= data_in.max(axis=0)\n"
        "    e = np.exp(data_in)\n"
        "    return e / e.sum(axis=0)",
        "import grader.run.child\ngrader.child.same = lambda *a: True",
    ]
    report = grade_path(write_notebook(tmp_path / "m.ipynb", cells), config, "self_attention")
    result = next(t for t in report.targets if t.name == "softmax_cols")
    assert result.mistakes == ("mutates_input",), result.messages
    assert any("changed its argument `data_in` in place" in m for m in result.messages)


def test_a_worker_that_cannot_restart_stops_one_run_not_the_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cells = [CodeCell(1, "x = 1", "x = 1")]
    workers = Workers(1, bwrap.support())
    try:
        workers.all[0].kill()  # killed from outside; no fresh one can start for now

        def refuse(self: Worker) -> Worker:
            raise GraderError("a grading worker could not start: out of processes")

        monkeypatch.setattr(Worker, "ready", refuse)
        stopped = workers.run(cells, [], TimeLimit())
        assert not stopped.finished and "could not start" in stopped.exit_description
        monkeypatch.undo()
        assert workers.run(cells, [], TimeLimit()).finished  # the next job gets a fresh one
    finally:
        workers.close()


def test_check_gives_no_grade_for_a_run_the_grader_could_not_make(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from grader.cli import main
    from grader.run.workers import unstarted_run

    notebook = REPO / "demo" / "submissions" / "ada.ipynb"
    students_cells = [c.source for c in load_submission(notebook).cells]
    real = Workers.run

    def out_of_processes(self: Workers, cells: Any, *args: Any, **kw: Any) -> ChildRun:
        if [c.source for c in cells] != students_cells:  # the course's own runs
            return real(self, cells, *args, **kw)
        return unstarted_run("a grading worker could not start: out of processes")

    monkeypatch.setattr(Workers, "run", out_of_processes)
    result = CliRunner().invoke(main, ["check", str(notebook), "--course", str(REPO)])
    assert result.exit_code == 3, result.output
    assert "could not start: out of processes" in result.output
    assert "Traceback" not in result.output and "passed" not in result.output


def test_closed_workers_start_no_fresh_one_for_a_job_still_held() -> None:
    # Ctrl-C closes a batch's workers while its threads may still hold jobs: none of them
    # may start a new worker and run a whole notebook (the batch waits for its threads)
    cells = [CodeCell(1, "x = 1", "x = 1")]
    workers = Workers(1, bwrap.Support(False, "test"))
    workers.close()
    stopped = workers.run(cells, [], TimeLimit())
    assert not stopped.finished and "stopped" in stopped.exit_description
    assert all(not w.alive() for w in workers.all)
