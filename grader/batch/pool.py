"""A class's submissions handed to the workers: each is read and parsed here (trusted,
bounded), its assignment chosen, and its cells run on the next free sandboxed worker."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from grader.batch.keep import base_of
from grader.course.blake import blake2b
from grader.course.cases import build_cases
from grader.course.config import AssignmentSpec, Config
from grader.course.notebook import Submission, load_submission
from grader.course.per_student import for_student
from grader.course.recognise import choose_for_batch
from grader.errors import GraderError
from grader.run import bwrap
from grader.run.sandbox import ChildRun
from grader.run.workers import Plan, Workers

# Two jobs per worker at a time: while one runs on the worker, the other's notebook is read
# and parsed, and waits for that worker; with one each, a worker would sit idle between two
# notebooks for as long as the next one takes to parse (longer while judging holds the GIL).
THREADS_PER_WORKER = 2
# How long a thread that wants Python's interpreter lock may wait for it, while a pool is open
# (Python's own default is 5 ms). A job thread woken by a worker's answer, or by a worker
# coming free, needs the lock to hand that worker its next notebook, while the main thread
# judges for milliseconds at a stretch: at 5 ms, workers sat idle waiting for it.
SWITCH_SECONDS = 0.0005


@dataclass(frozen=True)
class Job:
    """One submission to grade: its bytes, read by the batch (or why they could not be)."""

    student: str
    path: Path
    data: bytes = b""
    problem: str = ""


@dataclass(frozen=True)
class Done:
    """A job's outcome: the submission and the child's run, or why not."""

    job: Job
    submission: Submission | None = None
    assignment: str = ""
    chosen: str = ""
    run: ChildRun | None = None
    problem: str = ""
    fault: str = ""  # the traceback, when the problem is a bug of the grader's own
    spec: AssignmentSpec | None = None  # as run: with the student's own public seed, if any


class PoolLost(GraderError):
    """Where the children run is gone as a whole (a cluster's scheduler): the batch stops,
    keeping what it graded; the same command grades the rest."""


class Pool:
    """Batch grading: each job is parsed here (trusted) and run on a sandboxed worker."""

    def __init__(
        self,
        config: Config,
        requested: str | None,
        jobs: int,
        assignments: Sequence[AssignmentSpec],
        support: bwrap.Support,
        secret: bytes | None = None,
        threads: int | None = None,
    ) -> None:
        """`jobs` sandboxed workers on this machine; `threads` jobs handled at a time
        (THREADS_PER_WORKER per worker unless given); `secret`: the course's, for
        per-student inputs."""
        self.config, self.requested, self.secret = config, requested, secret
        self.settled: str | None = None  # without `requested`: the batch's one assignment
        # Notebooks the batch parsed already to settle that assignment, with their bytes:
        # each taken (once) when its job's bytes are the very same, else parsed again.
        self.read: dict[Path, tuple[bytes, Submission]] = {}
        plans = [build_cases(a).plan(a) for a in assignments]
        preload = list(dict.fromkeys(name for a in assignments for name in a.preload))
        files = [file for a in assignments for file in a.files]
        self.workers = Workers(jobs, support, plans, preload, files)
        count = threads or THREADS_PER_WORKER * jobs
        self.threads = ThreadPoolExecutor(count, thread_name_prefix="grader-job")
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch, SWITCH_SECONDS))

    def submit(self, job: Job) -> Future[Done]:
        """Grade `job` on the next free worker."""
        return self.threads.submit(self._grade, job)

    def _grade(self, job: Job) -> Done:
        if job.problem:
            return Done(job, problem=job.problem)
        try:
            submission = parsed(job, self.read)
            assignment, chosen = choose_for_batch(
                self.config, submission, self.requested, self.settled
            )
            assignment = for_student(assignment, base_of(job.student), self.secret)
        except GraderError as exc:
            return Done(job, problem=str(exc))
        except Exception as exc:  # a grader fault on one file must not stop the class
            problem = f"{job.path}: could not be read (grader fault: {exc!r:.200})"
            return Done(job, problem=problem, fault=traceback.format_exc())
        plan = build_cases(assignment).plan(assignment)
        run = self.execute(job, submission, assignment, plan)
        return Done(job, submission, assignment.id, chosen, run, spec=assignment)

    def execute(
        self, job: Job, submission: Submission, assignment: AssignmentSpec, plan: Plan
    ) -> ChildRun:
        """Run the submission's cells and `plan`'s calls in a sandboxed child; only the
        child's numbers come back (a cluster pool runs them elsewhere)."""
        return self.workers.run(submission.cells, plan, assignment.time_limit, assignment.files)

    def close(self) -> None:
        """Stop the workers (even mid-submission) and the threads."""
        self.workers.close()
        self.threads.shutdown(wait=True, cancel_futures=True)
        if sys.getswitchinterval() == min(self._switch, SWITCH_SECONDS):  # still as we set it
            sys.setswitchinterval(self._switch)


def read_key(data: bytes) -> bytes:
    """What a notebook parsed early is kept under beside its submission (a digest of its
    bytes): a class's files are not held in memory until each is graded."""
    return blake2b(data, digest_size=16).digest()


def parsed(job: Job, read: dict[Path, tuple[bytes, Submission]]) -> Submission:
    """The job's submission: the one in `read` (taken out) when it was parsed from the very
    same bytes (their `read_key`; a file rewritten since is parsed again), else parsed now."""
    earlier = read.pop(job.path, None)
    if earlier is not None and earlier[0] == read_key(job.data):
        return earlier[1]
    return load_submission(job.path, job.data)
