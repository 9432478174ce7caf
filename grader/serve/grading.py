"""The service's grader: a thread that takes queued uploads from the store, runs them on the
batch's pool of warm sandboxed workers (or a Dask cluster's, with `cluster`), judges them here
and records each result with its feedback page. Stopping lets the uploads in hand finish (up
to a grace period); what is left stays queued in the database for the next start."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeVar

from grader.batch.entries import Entry, log_fault
from grader.batch.gradebook import Gradebook, config_hash, locked_out
from grader.batch.pool import Done, Job, Pool, PoolLost
from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, Mode
from grader.course.per_student import course_secret, needs_secret
from grader.course.recognise import asked_otherwise
from grader.engine import finish, with_choice
from grader.errors import GraderError
from grader.judge.expected import Expected, build_expected
from grader.render.escape import one_line
from grader.report import Report
from grader.run import bwrap
from grader.run.sandbox import GRADER_FAULTS
from grader.serve.checks import graded_as
from grader.serve.semester import (
    Extensions,
    extension_files,
    graded_view,
    hours_now,
    read_extensions,
    record_late,
)
from grader.serve.store import Store, Upload, View

IN_FLIGHT_PER_WORKER = 2
# The other assignments are prepared while the queue is idle, but only once no upload came
# for this long: during a burst (a restart's backlog, a deadline) every worker grades.
IDLE_BEFORE_PREPARING = 2.0
# How often, while idle, the service looks whether the roster or extensions.csv changed.
WATCH_EXTENSIONS = 2.0


T = TypeVar("T")


class Abandoned(Exception):
    """The service stopped while a database was still locked, past its grace period."""


@dataclass(frozen=True)
class Outcome:
    """What is recorded for one upload: a score and its page, or a problem; `counts` False
    when the problem is the service's own fault (the upload uses none of the attempts)."""

    score: float | None
    max_score: float | None
    page: str
    problem: str
    report: Report | None = None
    view: View | None = None
    spec: AssignmentSpec | None = None
    counts: bool = True
    extensions: Extensions | None = None  # as read once for this upload (late ones only)


class Grading:
    """The thread that grades the queue. `wake` after an upload is accepted."""

    def __init__(
        self,
        config: Config,
        store: Store,
        support: bwrap.Support,
        jobs: int,
        cluster: str | None = None,
        mode: Mode = "required",
    ) -> None:
        """`jobs` local workers, or the workers of the Dask scheduler at `cluster` (each
        machine makes its own sandbox, as `mode` asks)."""
        self.config, self.store, self.support, self.jobs = config, store, support, jobs
        self.cluster, self.mode = cluster, mode
        self.wakeup = threading.Event()
        self.stopping = threading.Event()
        self.ready = threading.Event()
        self.failed = ""
        self.extensions = ""  # why the extensions cannot be read, while they cannot
        self.busy = ""  # the database another program holds locked, while it does
        self.unprepared: set[str] = set()
        # the extension files as last read (extension_files), and when to look again
        self.looked_at: tuple[tuple[str, int, int], ...] | None = None
        self.next_look = 0.0
        self.grace = 0.0
        self.stop_by = float("inf")  # the end of the grace period, once stopping
        self.started = False
        # When (time.monotonic) the start began, the workers were ready and the first upload
        # was recorded: where a restart's time goes (`grader serve` prints it).
        self.timings: dict[str, float] = {}
        self.announce: Callable[[str], None] = lambda line: None
        self.thread = threading.Thread(target=self._main, name="grader-serve", daemon=True)

    def start(self) -> None:
        """Start the workers and grade whatever is queued, this start's and the last's, oldest
        first (an upload a stopped server was grading keeps its place). Once only: the server
        starts it before the web side, so the workers warm up while that loads."""
        if self.started:
            return
        self.started = True
        self.timings["start"] = time.monotonic()
        self.timings["recovered"] = float(self.store.requeue_running())
        self.thread.start()

    def wake(self) -> None:
        """Something was queued."""
        self.wakeup.set()

    def stop(self, grace: float = 10.0) -> None:
        """Stop taking uploads; let those in hand finish for up to `grace` seconds."""
        self.grace = grace
        self.stop_by = time.monotonic() + grace
        self.stopping.set()
        self.wakeup.set()
        self.thread.join(grace + 15)

    def _main(self) -> None:
        assignments = list(self.config.assignments.values())
        try:
            pool = self._pool(assignments)
            self.timings["workers"] = now = time.monotonic()
            waiting = self.store.counts().get("queued", 0)
            self.announce(
                f"{self.jobs} grading workers ready in {now - self.timings['start']:.2f} s; "
                f"{waiting} uploads waiting ({self.timings['recovered']:.0f} were being graded "
                "when the last server stopped)"
            )
        except Exception as exc:  # the service stays up and says so on the class page
            self._fail(f"the grading workers could not start: {exc}")
            self.ready.set()
            return
        book = None
        try:
            # The course's gradebook too, as a batch writes it: `grader report OUT` and the
            # exports read the served class as they read a graded one.
            book = self._patiently(lambda: Gradebook(self.store.gradebook()))
            settings = config_hash(self.config, assignments)
            # Each assignment's expected outputs are made when an upload needs them, or when
            # the queue is empty: a restart grades what waits without making all of them first.
            prepared: dict[str, tuple[CaseSet, Expected]] = {}
            self.ready.set()
            self._loop(pool, prepared, book, settings)
        except PoolLost as exc:  # the uploads in hand are queued again for the next start
            self._fail(f"grading stopped: {exc}")
        except Abandoned as exc:  # the same: 'running' in the store, queued again at start
            if book is not None:
                book.pending.clear()  # written when the upload is graded again
            self.announce(
                f"stopped while {exc}: the uploads in hand are graded again at the next start"
            )
        except Exception as exc:
            self._fail(f"grading stopped (grader fault: {exc!r:.200})")
            log_fault(self.store.out, Entry("(service)", None, None, fault=traceback.format_exc()))
        finally:
            self.ready.set()
            pool.close()
            if book is not None:
                book.close()

    def _fail(self, why: str) -> None:
        """Grading stopped or never started: said on the class page and on the terminal
        (where the instructor who started the service with a mistyped --cluster looks)."""
        self.failed = why
        self.announce(f"Error: {one_line(why)}; uploads wait in the queue for the next start")

    def _pool(self, assignments: list[AssignmentSpec]) -> Pool:
        # Per-student inputs: each student's public cases from the course secret, as in a
        # batch (grader serve checked at start-up that there is one), on either pool.
        secret = course_secret(self.config) if needs_secret(self.config, assignments) else None
        if self.cluster is None:
            return Pool(self.config, None, self.jobs, assignments, self.support, secret)
        from grader.batch.cluster import ClusterPool  # Dask only with --cluster

        pool = ClusterPool(self.cluster, self.config, None, assignments, self.support, self.mode)
        pool.secret = secret  # as the batch's cluster pool: none, and every upload was a fault
        self.jobs = pool.slots
        return pool

    def _loop(
        self,
        pool: Pool,
        prepared: dict[str, tuple[CaseSet, Expected]],
        book: Gradebook,
        settings: str,
    ) -> None:
        running: dict[Future[Done], Upload] = {}
        limit = IN_FLIGHT_PER_WORKER * self.jobs
        deadline: float | None = None
        last_upload = time.monotonic()
        while True:
            if self.stopping.is_set():
                deadline = deadline or time.monotonic() + self.grace
                if not running or time.monotonic() > deadline:
                    return  # the rest is 'running' in the store: queued again on restart
            else:
                for upload in self._patiently(lambda: self.store.claim(limit - len(running))):
                    running[pool.submit(self._job(upload))] = upload
                    last_upload = time.monotonic()
            if not running:
                idle = time.monotonic() - last_upload > IDLE_BEFORE_PREPARING
                if not idle or not self._prepare_one(pool, prepared):
                    self.wakeup.wait(1.0)
                    self.wakeup.clear()
                    # a replica that died: its uploads, here
                    self._patiently(self.store.requeue_orphans)
                    self._reweigh()
                continue
            # Short: an upload queued while all are busy is claimed within this.
            finished, _ = wait(running, timeout=0.05, return_when=FIRST_COMPLETED)
            for future in finished:
                upload = running.pop(future)
                if isinstance(future.exception(), PoolLost):  # the cluster's scheduler
                    for lost in [upload, *running.values()]:
                        self.store.release(lost.id)
                    raise PoolLost(str(future.exception()))
                outcome = self._outcome(upload, future, prepared, pool)
                report = outcome.report
                # The gradebook first, the store's 'graded' after: stopped in between (the
                # gradebook locked past the grace period), the upload is still 'running' and
                # graded again at the next start, never marked graded without its record. The
                # gradebook's latest is the student's last upload, as the class page's: one
                # graded after a later upload of theirs was (out of order) is not written there.
                # Under `keep: best` it is their best (after the late penalty; ties: the latest).
                if report is not None and self._kept(upload, outcome, report):
                    try:
                        self._record(book, upload, outcome, settings, report)
                    except Abandoned:
                        raise
                    except Exception:  # the grader's fault: logged; the upload is finished
                        book.pending.clear()  # (never retried at every start, the queue stuck)
                        entry = Entry(upload.student, None, None, fault=traceback.format_exc())
                        log_fault(self.store.out, entry)
                self._patiently(
                    partial(
                        self.store.finish,
                        upload.id,
                        outcome.score,
                        outcome.max_score,
                        outcome.page,
                        outcome.problem,
                        outcome.view,
                        outcome.counts,
                    )
                )
                self.timings.setdefault("first", time.monotonic())

    def _reweigh(self) -> None:
        """While idle, every WATCH_EXTENSIONS seconds: where the roster or `extensions.csv`
        changed, the graded uploads of each student whose extension changed (since the last
        look, this start's or an earlier one's) are graded again, so that their lateness,
        their best and the gradebook count it; no Regrade of the class is needed."""
        late = any(s.late is not None for s in self.config.assignments.values())
        now = time.monotonic()
        if not late or now < self.next_look:
            return
        self.next_look = now + WATCH_EXTENSIONS
        course = self.config.path.parent
        files = extension_files(course)
        if files == self.looked_at:
            return
        best = [s.id for s in self.config.assignments.values() if s.keep == "best"]
        hours = hours_now(course)
        queued = self._patiently(partial(self.store.reweigh_extensions, hours, best))
        self.looked_at = files
        if queued:
            self.announce(
                f"extensions changed for {len(queued)} student(s) with graded uploads: "
                "those uploads are graded again"
            )

    def _kept(self, upload: Upload, outcome: Outcome, report: Report) -> bool:
        """Whether the gradebook keeps this graded upload as the student's grade of its
        assignment (`keep:`): their latest, or their best so far."""
        if outcome.spec is None or outcome.spec.keep != "best":
            return not self.store.superseded(upload.id, report.assignment)
        late = outcome.view.late_percent if outcome.view is not None else 0.0
        points = report.score * (1 - late / 100)
        return not self.store.beaten(upload.id, report.assignment, points)

    def _record(
        self, book: Gradebook, upload: Upload, outcome: Outcome, settings: str, report: Report
    ) -> None:
        """The graded upload into the course's gradebook, as a batch records it; waited for
        while another program holds the gradebook locked (never dropped)."""
        path = Path(upload.filename)
        try:
            book.record(upload.student, path, upload.content_hash, settings, report)
        except Exception as exc:  # queued, not written: the flush below writes it
            if not locked_out(exc):
                raise
        self._patiently(book.flush)
        if outcome.spec is not None:
            spec, course = outcome.spec, self.config.path.parent
            self._patiently(
                lambda: record_late(
                    book, course, upload.student, spec, upload.received_at, outcome.extensions
                )
            )

    def _patiently(self, write: Callable[[], T]) -> T:
        """`write()`, again each second while another program holds the database locked
        (SQLite; said once on the terminal and the class page, and cleared once it is
        written): grading waits, and no upload is marked graded without its record."""
        said = False
        while True:
            try:
                done = write()
            except Exception as exc:
                if not locked_out(exc):
                    raise
                if not said:
                    said, self.busy = True, f"the database is locked by another program ({exc})"
                    self.announce(f"waiting: {self.busy}; grading goes on once it is free")
                if self.stopping.is_set() and time.monotonic() > self.stop_by:
                    raise Abandoned(self.busy) from exc
                time.sleep(min(1.0, max(0.05, self.stop_by - time.monotonic())))
                continue
            if said:
                self.busy = ""
                self.announce("the database is free again: grading goes on")
            return done

    def _prepare_one(self, pool: Pool, prepared: dict[str, tuple[CaseSet, Expected]]) -> bool:
        """Prepare one assignment not prepared yet (while idle); False when none is left. A
        course whose solution fails is told on the class page, as soon as it is found."""
        for spec in self.config.assignments.values():
            if spec.id not in prepared and spec.id not in self.unprepared:
                try:
                    prepared[spec.id] = _prepare(spec, pool)
                except GraderError as exc:
                    self.unprepared.add(spec.id)
                    self.failed = f"{spec.id} cannot be graded: {exc}"
                return True
        return False

    def _job(self, upload: Upload) -> Job:
        # The student's file name is shown, never opened: the bytes come from the store.
        path = graded_as(upload.filename)
        try:
            data = self.store.read(upload.content_hash)
        except OSError as exc:
            return Job(upload.student, path, problem=f"the upload cannot be read ({exc.strerror})")
        return Job(upload.student, path, data)

    def _outcome(
        self,
        upload: Upload,
        future: Future[Done],
        prepared: dict[str, tuple[CaseSet, Expected]],
        pool: Pool,
    ) -> Outcome:
        try:
            done = future.result()
            if done.submission is None or done.run is None:
                # The stored bytes unreadable, or the grader's bug reading them: not the student's.
                ours = bool(done.job.problem or done.fault)
                problem = asked_otherwise(done.problem, UPLOAD_ONE_OF)
                return Outcome(None, None, "", problem, counts=not ours)
            if done.run.ending in GRADER_FAULTS:  # the machine's doing: no zero for it
                problem = (
                    f"not graded: {done.run.exit_description}; upload it again in a while, "
                    "and tell your instructor if this stays"
                )
                return Outcome(None, None, "", problem, counts=False)
            spec = done.spec or self.config.assignment(done.assignment)
            if spec.public_seed is not None:  # the student's own public cases
                case_set, expected = _prepare(spec, pool)
            else:
                if spec.id not in prepared:
                    prepared[spec.id] = _prepare(spec, pool)
                case_set, expected = prepared[spec.id]
            report = finish(done.submission, spec, case_set, expected, done.run, done.run.seconds)
            report = with_choice(report, done.chosen)
            course, student, received = self.config.path.parent, upload.student, upload.received_at
            # Read once for the class page, the feedback page and the gradebook alike.
            extensions = read_extensions(course) if spec.late is not None else None
            if extensions is not None:
                self.extensions = extensions.problem
            page, view = graded_view(
                course, student, spec, report, done.submission, received, extensions
            )
            return Outcome(
                report.score, report.max_score, page, "", report, view, spec, True, extensions
            )
        except Exception as exc:  # one upload's grader fault must not stop the service
            entry = Entry(upload.student, None, None, fault=traceback.format_exc())
            log_fault(self.store.out, entry)
            problem = f"could not be graded (grader fault: {exc!r:.200})"
            return Outcome(None, None, "", problem, counts=False)


# What a student who uploaded a notebook no assignment can be told from does about it.
UPLOAD_ONE_OF = (
    "upload the notebook of one of this course's assignments (handed out with its functions "
    "and metadata; keep their names)"
)


def _prepare(spec: AssignmentSpec, pool: Pool) -> tuple[CaseSet, Expected]:
    """An assignment's cases and what is expected on them (the course's code, sandboxed)."""
    case_set = build_cases(spec)
    return case_set, build_expected(spec, case_set, pool.workers)
