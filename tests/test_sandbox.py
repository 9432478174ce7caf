"""The child process: limits, clean-up, and what the parent makes of its ending."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import numpy as np

from grader.cases import assignment_cases
from grader.child import _COMPILED, precompile, same
from grader.config import Config
from grader.notebook import load_submission
from grader.sandbox import Child, ChildRun

from conftest import processes_with, write_notebook


def run_cells(config: Config, tmp_path: Path, cells: list[str]) -> tuple[Child, ChildRun]:
    assignment = config.assignment("self_attention")
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    cases = assignment_cases(assignment)
    child = Child(submission.cells, [("softmax", cases["softmax"])], assignment.time_limit)
    return child, child.collect()


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


SWALLOW = (
    "import time\n"
    "while True:\n"
    "    try:\n"
    "        while True:\n"
    "            time.sleep(0.01)\n"
    "    except BaseException:\n"
    "        pass"
)


def test_a_child_that_goes_silent_is_stopped(fast_config: Config, tmp_path: Path) -> None:
    # Swallowing the per-cell alarm keeps the cell alive; the parent's watchdog hears
    # nothing for longer than a cell may take, and stops it long before the deadline.
    started = time.monotonic()
    _, run = run_cells(fast_config, tmp_path, [SWALLOW])
    assert time.monotonic() - started < 3.5
    assert run.timed_out and run.went_silent
    assert "stopped answering for 2 s" in run.exit_description


def test_whole_submission_deadline_kills_and_reports(fast_config: Config, tmp_path: Path) -> None:
    # Cells that each stay within their limit, but not together: the overall deadline holds.
    cells = ["import time\ntime.sleep(0.8)"] * 8
    started = time.monotonic()
    _, run = run_cells(fast_config, tmp_path, cells)
    assert time.monotonic() - started < 6
    assert run.timed_out and not run.went_silent
    assert "did not finish within the 4 s time limit" in run.exit_description


def test_child_works_in_a_private_directory_that_is_removed(config: Config, tmp_path: Path) -> None:
    cells = ["import os\nopen('scratch.txt', 'w').write(os.getcwd())"]
    child, run = run_cells(config, tmp_path, cells)
    assert run.finished
    assert not os.path.exists(child.workdir)
    assert not (Path.cwd() / "scratch.txt").exists()


def test_crash_is_described(config: Config, tmp_path: Path) -> None:
    cells = ["import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"]
    _, run = run_cells(config, tmp_path, cells)
    assert not run.finished
    assert "crashed (SIGSEGV)" in run.exit_description


def test_precompiled_cells_run_as_compiled_in_the_child(
    fast_config: Config, tmp_path: Path
) -> None:
    """A worker compiles cells before forking (cached by cell number and source): the child
    must run exactly those cells, numbered as they are, and still report what does not
    compile."""
    cells = [
        "import numpy as np\ndef softmax(items_in):\n    return np.ones(len(items_in)) / 1",
        "def broken(:\n    pass",
        "x = float(np.ones((1, 1)))",
    ]
    submission = load_submission(write_notebook(tmp_path / "s.ipynb", cells))
    precompile(submission.cells)
    assert {(c.index, c.source) for c in submission.cells[::2]} <= set(_COMPILED)
    assert (submission.cells[1].index, submission.cells[1].source) not in _COMPILED
    run = Child(submission.cells, [], fast_config.assignment("self_attention").time_limit).collect()
    cell_frames = [h for h, _ in run.frames if h.get("kind") == "cell"]
    assert [h["cell"] for h in cell_frames] == [c.index for c in submission.cells]
    assert "error" not in cell_frames[0] and "error" not in cell_frames[2]
    assert cell_frames[1]["error"]["type"] == "SyntaxError"
    assert cell_frames[1]["error"]["where"]["cell"] == submission.cells[1].index
    assert cell_frames[2]["scalar_fixes"]  # the float() rewrite is in the cached code too


def test_same_is_exact_about_what_a_call_may_have_changed() -> None:
    kept = [np.ones((3, 1)), (2.0, None)]
    assert same(kept, [np.ones((3, 1)), (2.0, None)])
    assert not same(kept, [np.ones((3, 1)) + 1e-12, (2.0, None)])  # one bit is a change
    assert not same(kept, [np.ones((1, 3)), (2.0, None)])  # reshaped in place
    assert not same(kept, [np.ones((3, 1), dtype=np.float32), (2.0, None)])
    assert not same(kept, [np.ones((3, 1)), [2.0, None]])  # a tuple became a list
    assert not same(kept, [np.ones((3, 1))])  # an item removed

    class Liar(np.ndarray):
        def __eq__(self, other: object) -> bool:  # type: ignore[override]
            return True

    assert not same(np.zeros(2), np.ones(2).view(Liar))  # a lying subclass is not the array
