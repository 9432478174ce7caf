"""Start the shared worker early, on a thread, while this process goes on importing and
reading: `grader check` spends most of its time starting processes (the sandbox's probe, the
worker's interpreter and NumPy), and those can run beside the grader's own imports.

Nothing here changes what happens: `shared_workers` is what the engine calls anyway. A
start-up that fails is forgotten here; the engine's own call meets the same failure and
reports it as it always has.

The student's run itself starts here too, as soon as the notebook and its assignment are
known (`begin_for`), while this process goes on importing the judging side: the engine takes
that run (`early_run`) only when it would have made the very same one (the same cells, the
same assignment, the same workers and the same cases), and otherwise makes its own.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, Mode
from grader.course.files import DataFile
from grader.course.notebook import CodeCell, Submission, reread
from grader.course.recognise import choose_assignment
from grader.run import bwrap, head_start, programs
from grader.run.sandbox import ChildRun
from grader.run.workers import Plan, Workers, shared_workers

_STARTED: list[threading.Thread] = []


class _EarlyRun:
    """A student's run started by `begin_for`: what it was made with, once known, and the run."""

    def __init__(self, cells: Sequence[CodeCell], spec: AssignmentSpec) -> None:
        self.cells, self.spec = list(cells), spec
        self.made_with: tuple[Workers, CaseSet] | None = None
        self.known = threading.Event()  # made_with is set, or it will never be
        self.done = threading.Event()
        self.run: ChildRun | None = None


_EARLY: list[_EarlyRun] = []


def _plans(spec: AssignmentSpec | None) -> list[Plan]:
    """The plan the shared worker holds from its start: `spec`'s cases (none without one)."""
    return [] if spec is None else [build_cases(spec).plan(spec)]


def _start(
    mode: Mode,
    files: tuple[DataFile, ...],
    importable: tuple[str, ...],
    spec: AssignmentSpec | None = None,
) -> None:
    try:
        _start_settling(mode, files, importable, spec)
    finally:
        bwrap.SETTLED.set()


def _start_settling(
    mode: Mode,
    files: tuple[DataFile, ...],
    importable: tuple[str, ...],
    spec: AssignmentSpec | None,
) -> None:
    try:
        support = bwrap.choose(mode, settled=False)
        if mode == "required" and not support.sandboxed:
            return  # the engine refuses it (exit 2); no worker to start
        try:
            shared_workers(support, files, importable, _plans(spec))
        except Exception:
            # A remembered 'the sandbox works' that no longer holds: probe afresh, so that
            # the engine's own call gets today's answer (and says why, as always).
            if not support.sandboxed or (fresh := bwrap.recheck()) is None:
                raise
            if fresh.sandboxed or mode != "required":
                shared_workers(fresh, files, importable, _plans(spec))
    except Exception:  # the engine's own call meets it and reports it
        return


def _speculate(
    files: tuple[DataFile, ...], importable: tuple[str, ...], spec: AssignmentSpec | None
) -> None:
    """Start the sandboxed worker while the probe still runs: where the sandbox can be made
    (nearly everywhere bubblewrap is installed) it is the one the engine will ask for; where
    it cannot, it fails to start and is forgotten (the probe says why, as always)."""
    try:
        shared_workers(bwrap.Support(True), files, importable, _plans(spec))
    except Exception:  # no sandbox here: the probe's answer decides
        return


def begin(
    mode: Mode,
    files: Sequence[DataFile] = (),
    importable: Sequence[str] = (),
    spec: AssignmentSpec | None = None,
) -> None:
    """Begin probing the sandbox and starting the shared worker for these course `files`
    and `importable` modules, in the background (the sandboxed worker beside the probe),
    holding `spec`'s cases from its start when given (its notebook's job is then the cells
    alone: workers.py)."""
    args = (tuple(files), tuple(importable), spec)
    threads = [threading.Thread(target=_start, args=(mode, *args), daemon=True)]
    if mode != "none" and sys.platform == "linux" and programs.which("bwrap"):
        threads.append(threading.Thread(target=_speculate, args=args, daemon=True))
    bwrap.SETTLED.clear()  # the engine's answer waits for this start's (bwrap.choose)
    try:
        threads[0].start()
    except BaseException:
        bwrap.SETTLED.set()
        raise
    for thread in threads[1:]:
        thread.start()
    _STARTED.extend(threads)


def finish() -> None:
    """Wait for what `begin` started (so that nothing is probed or started twice); a worker
    given a head start that no one adopted is not needed."""
    while _STARTED:
        _STARTED.pop().join()
    head_start.discard()


def begin_for(
    config: Config,
    notebook: Path,
    assignment_id: str | None,
    mode: Mode | None,
    student: str | None = None,
) -> None:
    """`begin` for the assignment `notebook` will be graded as (the one named, else the one
    it is recognised as), and the notebook's run on it; nothing when that cannot be told
    (the engine will say why). No early run for a student's own inputs or a student bundle
    (the engine's cases differ from the config's there)."""
    try:
        submission = reread(notebook)
        spec, _ = choose_assignment(config, submission, assignment_id)
    except Exception:  # the engine reads it again and reports what is wrong
        return
    chosen = mode or config.sandbox
    early = student is None and not spec.per_student_inputs and spec.released is None
    begin(chosen, spec.files, spec.preload, spec if early else None)
    if early:
        head_start.note_notebook(notebook)  # the next identical check sends it at once
        run = _EarlyRun(submission.cells, spec)
        thread = threading.Thread(target=_run_early, args=(run, chosen), daemon=True)
        thread.start()
        _EARLY.append(run)


def _run_early(early: _EarlyRun, mode: Mode) -> None:
    try:
        support = bwrap.choose(mode)  # once the start above has settled it, as the engine's
        if mode == "required" and not support.sandboxed:
            return  # the engine refuses it (exit 2)
        spec = early.spec
        workers = shared_workers(support, spec.files, spec.preload, _plans(spec))
        case_set = build_cases(spec)
        plan = case_set.plan(spec)
        early.made_with = (workers, case_set)
        early.known.set()
        early.run = workers.run(early.cells, plan, spec.time_limit, spec.files)
    except Exception:  # the engine makes the run itself, and meets whatever this met
        return
    finally:
        early.known.set()
        early.done.set()


def drop_early() -> None:
    """Forget the early runs not taken (the grade stopped before it reached them)."""
    _EARLY.clear()


def early_run(
    submission: Submission, spec: AssignmentSpec, workers: Workers, case_set: CaseSet
) -> ChildRun | None:
    """The run `begin_for` started, when it is the one the engine is about to make (the same
    cells, assignment, workers and cases), waited for; None otherwise (none, or another)."""
    while _EARLY:
        early = _EARLY.pop()
        early.known.wait()
        if (
            early.made_with is not None
            and early.made_with[0] is workers
            and early.made_with[1] is case_set
            and repr(early.spec) == repr(spec)
            and early.cells == list(submission.cells)
        ):
            early.done.wait()
            return early.run
    return None
