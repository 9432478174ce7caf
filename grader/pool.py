"""Warm workers for batch grading: interpreters that imported numpy (and the config's
`preload` list) once, and fork a fresh, limited child for every submission.

Workers are forked when the pool starts, before the trusted side has computed any reference,
so neither they nor the children they fork ever hold a reference solution in memory. Each
warms up, then enters its sandbox namespaces once (isolation.enter_worker); for every job it
parses the bytes the parent read, forks the child and sends back its raw frames; judging
happens in the parent.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import isolation
from .child import precompile
from .config import AssignmentSpec, Config
from .engine import choose_assignment
from .errors import GraderError
from .notebook import Submission, load_submission
from .prepared import build_cases
from .sandbox import Child, ChildRun
from .warmup import warm_up


@dataclass(frozen=True)
class Job:
    """One submission to grade. `data` is its bytes, read by the parent: a worker's view of
    the file system no longer includes the submissions."""

    student: str
    path: Path
    data: bytes = b""
    problem: str = ""  # why the parent could not read it


@dataclass(frozen=True)
class Done:
    """A worker's answer: the submission it read and the child's run, or why not."""

    job: Job
    submission: Submission | None = None
    assignment: str = ""
    chosen: str = ""
    run: ChildRun | None = None
    problem: str = ""
    fault: str = ""  # the traceback, when the problem is a bug of the grader's own


_WORKER: dict[str, object] = {}


def _start_worker(
    config: Config,
    requested: str | None,
    preload: Sequence[str],
    hidden: Sequence[str],
    assignments: Sequence[AssignmentSpec],
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    isolation.die_with_parent()  # a grader killed outright leaves no worker behind
    os.environ.setdefault("MPLBACKEND", "Agg")
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # an optional library that is not installed: students' cells will say
            continue
    for assignment in assignments:
        warm_up(build_cases(assignment).plan(assignment))
    # Half entered on failure: each child then makes its whole sandbox itself.
    with contextlib.suppress(Exception):
        isolation.enter_worker(hidden, f"{os.getppid()}-{os.getpid()}")
    _WORKER.update(config=config, requested=requested, hidden=tuple(hidden))


def grade_job(job: Job) -> Done:
    """In a worker: parse the submission, fork its child, collect the child's frames."""
    config = _WORKER["config"]
    assert isinstance(config, Config)
    requested = _WORKER["requested"]
    if job.problem:
        return Done(job, problem=job.problem)
    try:
        submission = load_submission(job.path, job.data)
        assignment, chosen = choose_assignment(
            config, submission, requested if isinstance(requested, str) else None
        )
    except GraderError as exc:
        return Done(job, problem=str(exc))
    except Exception as exc:  # a grader fault on one file must not stop the class
        problem = f"{job.path}: could not be read (grader fault: {exc!r:.200})"
        return Done(job, problem=problem, fault=traceback.format_exc())
    case_set = build_cases(assignment)
    hidden = _WORKER["hidden"]
    assert isinstance(hidden, tuple)
    precompile(submission.cells)
    child = Child(submission.cells, case_set.plan(assignment), assignment.time_limit, hidden)
    return Done(job, submission, assignment.id, chosen, child.collect())


def start_pool(
    config: Config,
    requested: str | None,
    jobs: int,
    assignments: Sequence[AssignmentSpec],
    hidden: Sequence[str],
) -> ProcessPoolExecutor:
    """Fork the workers now, while this process holds cases but no reference.

    A ProcessPoolExecutor with the fork method forks all its workers at the first
    submission and never again: a worker that dies breaks the pool (the batch is told)
    instead of being replaced by a fork of a process that by then holds the references.
    """
    for assignment in assignments:
        build_cases(assignment)  # inherited by every worker: built once, not per worker
    isolation.available()  # probed once, here, not in every worker
    isolation.sweep_cgroups()  # what graders killed outright left behind
    context = multiprocessing.get_context("fork")
    preload = list(dict.fromkeys(name for a in assignments for name in a.preload))
    initargs = (config, requested, preload, hidden, tuple(assignments))
    pool = ProcessPoolExecutor(jobs, context, _start_worker, initargs)
    pool.submit(os.getpid).result()  # every worker is forked by this first submission
    return pool


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, even mid-submission (their children die with them)."""
    workers = list(getattr(pool, "_processes", {}).values())
    for worker in workers:
        with contextlib.suppress(Exception):
            worker.kill()
    pool.shutdown(wait=True, cancel_futures=True)
    isolation.remove_worker_cgroups(str(os.getpid()))
