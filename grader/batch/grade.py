"""Grade a class: find the submissions, skip what the gradebook already has, run the rest on
warm workers, judge each in this process, and record it as soon as it is done.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from grader.batch.gradebook import Gradebook, config_hash
from grader.batch.keep import Candidate, alt_key, base_of, choose
from grader.batch.lateness import (
    MTIME,
    Handed,
    clear_late,
    handed_in,
    late_of,
    load_extensions,
    save_late,
    stored_late,
)
from grader.batch.pool import Done, Job, Pool, PoolLost
from grader.batch.records import Comment, Override, comments, overrides, save_roster
from grader.batch.roster import Student, course_roster, match
from grader.batch.standing import NO_SUBMISSION, Standing, standings, write_grades
from grader.batch.submissions import content_hash, file_hash, find_submissions
from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, Mode
from grader.course.deadline import Late
from grader.course.locate import is_bundle
from grader.course.notebook import Submission, assignment_hint, load_submission
from grader.course.per_student import course_secret, needs_secret, settings_tag
from grader.engine import finish, require, with_choice
from grader.errors import ConfigError, UsageError
from grader.judge.aggregate import scores_only
from grader.judge.expected import Expected, build_expected
from grader.judge.preflight import check_files, preflight
from grader.render.escape import one_line, safe_lines, safe_name
from grader.render.feedback import Adjusted, write_feedback
from grader.report import Report
from grader.run import bwrap
from grader.run.workers import Workers

if TYPE_CHECKING:
    from grader.batch.cluster import ClusterPool


@dataclass(frozen=True)
class Entry:
    """One student's outcome: a report, or why there is none."""

    student: str
    path: Path | None
    report: Report | None
    problem: str = ""
    skipped: bool = False  # unchanged since the gradebook last graded it
    fault: str = ""  # a traceback: the problem is a bug in the grader, not the student's doing
    absent: bool = False  # on the roster, no submission found


@dataclass
class Batch:
    """The outcome of grading a class: one entry per student, problems, lost submissions, the time
    taken, and the roster when the course has one."""

    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # not graded: a worker died (run again)
    seconds: float = 0.0
    roster: list[Student] | None = None  # the course's roster.csv, when it has one
    unmatched: list[str] = field(default_factory=list)  # submissions of no roster student
    file_times: list[str] = field(default_factory=list)  # handed in when the file says

    @property
    def ungraded(self) -> list[Entry]:
        """Submissions found but not graded (unreadable, …); not roster students without one."""
        return [e for e in self.entries if e.report is None and not e.absent]

    @property
    def graded(self) -> int:
        """How many submissions were graded in this run (not those skipped as unchanged)."""
        return sum(e.report is not None and not e.skipped for e in self.entries)

    @property
    def skipped(self) -> int:
        """How many submissions were skipped as unchanged since the gradebook last graded them."""
        return sum(e.skipped for e in self.entries)

    @property
    def faults(self) -> list[Entry]:
        """The entries whose grading hit a bug in the grader (they carry a traceback)."""
        return [e for e in self.entries if e.fault]


@dataclass
class _Recorder:
    """Where each finished entry goes: the batch, the gradebook, the feedback folder."""

    batch: Batch
    book: Gradebook | None
    out: Path | None
    settings: str
    on_entry: Callable[[Entry], None] | None
    keep_reports: bool = True
    hashes: dict[str, str] = field(default_factory=dict)
    notes: dict[str, tuple[dict[str, list[Override]], dict[str, list[Comment]]]] = field(
        default_factory=dict
    )
    config: Config | None = None
    handed: dict[str, Handed] = field(default_factory=dict)  # when each was handed in
    extensions: dict[str, float] = field(default_factory=dict)  # hours, by student
    cleared: set[str] = field(default_factory=set)  # assignments without a late policy
    groups: dict[str, list[str]] = field(default_factory=dict)  # keys of several notebooks
    waiting: dict[str, dict[str, tuple[Entry, Submission | None, bool]]] = field(
        default_factory=dict
    )
    kept: dict[str, str] = field(default_factory=dict)  # which notebook was kept, and why

    def late(self, student: str, report: Report, save: bool = True) -> Late | None:
        """The lateness of a student's submission under its assignment's policy, stored in
        the gradebook (None, and any stored lateness forgotten, without a policy)."""
        spec = self.config.assignments.get(report.assignment) if self.config else None
        handed = self.handed.get(student)
        if spec is None or spec.late is None or handed is None:
            if save and self.book is not None and spec is not None and spec.id not in self.cleared:
                clear_late(self.book, spec.id)
                self.cleared.add(spec.id)
            return None
        late = late_of(spec.late, handed, self.extensions.get(base_of(student), 0.0))
        if save and self.book is not None:
            save_late(self.book, student, spec.id, handed, late)
        return late

    def _held(
        self, entry: Entry, submission: Submission | None, new: bool
    ) -> tuple[Entry, Submission | None, bool] | None:
        """One of a student's several notebooks: held until all are graded, then the kept
        one (under the student's own key); None while some are still out."""
        base = base_of(entry.student)
        waiting = self.waiting.setdefault(base, {})
        waiting[entry.student] = (entry, submission, new)
        if len(waiting) < len(self.groups[base]):
            return None
        return self._keep(base)

    def _keep(self, base: str) -> tuple[Entry, Submission | None, bool]:
        waiting = self.waiting.pop(base)
        keys = [key for key in self.groups.pop(base) if key in waiting]
        candidates = []
        for key in keys:
            report = waiting[key][0].report
            late = self.late(key, report, save=False) if report is not None else None
            points = None if report is None else late.apply(report.score) if late else report.score
            candidates.append(Candidate(key, waiting[key][0].path, points))
        reports = [r for k in reversed(keys) if (r := waiting[k][0].report) is not None]
        spec = (
            self.config.assignments.get(reports[0].assignment) if reports and self.config else None
        )
        kept, line = choose(candidates, spec.keep if spec else "latest")
        entry, submission, new = waiting[kept.key]
        if kept.key != base:
            self.hashes[base] = self.hashes.get(kept.key, "")
            if kept.key in self.handed:
                self.handed[base] = self.handed[kept.key]
            entry, new = replace(entry, student=base), True
        self.kept[base] = line
        self.batch.problems.append(f"{base}: {line}")
        return entry, submission, new

    def settle(self) -> None:
        """Keep one notebook of each student some of whose notebooks never came back."""
        for base in list(self.waiting):
            self.add(*self._keep(base))

    def adjusted(self, student: str, report: Report) -> Adjusted | None:
        """The instructor's overrides and comments for a student's feedback page."""
        if self.book is None:
            return None
        aid = report.assignment
        if aid not in self.notes:
            self.notes[aid] = (overrides(self.book, aid), comments(self.book, aid))
        overridden, commented = self.notes[aid]
        return Standing(
            student,
            report,
            overrides=tuple(overridden.get(student, ())),
            comments=tuple(commented.get(student, ())),
            late=self.late(student, report),
        ).adjusted()

    def add(self, entry: Entry, submission: Submission | None = None, new: bool = True) -> None:
        """Record a finished entry (one of several notebooks: once the kept one is known)."""
        if base_of(entry.student) in self.groups:
            held = self._held(entry, submission, new)
            if held is None:
                return
            entry, submission, new = held
        line = self.kept.get(entry.student, "")
        if entry.report is not None and line and line not in entry.report.notes:
            entry = replace(entry, report=replace(entry.report, notes=(line, *entry.report.notes)))
        if entry.fault and self.out is not None:
            log_fault(self.out, entry)
        if entry.report is None and self.book is not None and entry.path:
            self.book.record_problem(entry.student, entry.path, entry.problem)
        if entry.report is not None and new and self.book is not None and entry.path:
            content = self.hashes[entry.student]
            self.book.record(entry.student, entry.path, content, self.settings, entry.report)
        if entry.report is not None and self.out is not None:
            page = self.out / "feedback" / f"{safe_name(entry.student)}.html"
            # An unchanged submission's page again when its lateness (an extension, a
            # deadline) may have changed since.
            if new or not page.exists() or self.handed:
                try:
                    adjusted = self.adjusted(entry.student, entry.report)
                    write_feedback(self.out, entry.student, entry.report, submission, adjusted)
                except Exception as exc:  # the grade is recorded; one page must not stop all
                    problem = f"feedback page not written (grader fault: {exc!r:.200})"
                    entry = replace(entry, problem=problem, fault=traceback.format_exc())
                    log_fault(self.out, entry)
        if self.on_entry:
            self.on_entry(entry)
        if entry.report is not None and not self.keep_reports:
            entry = replace(entry, report=scores_only(entry.report))
        self.batch.entries.append(entry)


def grade_batch(
    source: Path,
    config: Config,
    out: Path | None,
    assignment: str | None = None,
    jobs: int | None = None,
    force: bool = False,
    on_total: Callable[[int], None] | None = None,
    on_entry: Callable[[Entry], None] | None = None,
    keep_reports: bool = True,
    sandbox: Mode | None = None,
    submitted_at: Mapping[str, datetime] | None = None,
    cluster: str | None = None,
    database: str | None = None,
) -> Batch:
    """`keep_reports=False` keeps only scores and statuses in the entries: the whole reports
    are in the gradebook and the feedback pages, and a class of thousands then grades in
    flat memory. `sandbox`: the config's `sandbox:` unless given. `submitted_at`: when
    students handed in, by student (see grader/batch/lateness.py for the other sources).
    `cluster`: a Dask scheduler's address; the notebooks then run on its workers (see
    cluster.py). `database`: a PostgreSQL URL for the gradebook instead of
    OUT/gradebook.sqlite (see database.py)."""
    started = time.monotonic()
    if is_bundle(config.path):
        raise ConfigError(
            f"{config.path} is a student bundle (public cases only): grade against the course"
        )
    sweep_scratch()
    specs = [config.assignment(assignment)] if assignment else list(config.assignments.values())
    # Per-student inputs: the secret first (no secret, exit 2 before anything is written).
    secret = course_secret(config) if needs_secret(config, specs) else None
    settings = config_hash(config, specs) + settings_tag(secret)
    book = Gradebook(database or out / "gradebook.sqlite") if out else None
    recorder = _Recorder(Batch(), book, out, settings, on_entry, keep_reports)
    recorder.config = config
    try:
        # A scratch folder only to unpack a .zip into: a grader killed outright leaves none
        # behind for a folder of notebooks.
        zipped = source.is_file() and source.suffix == ".zip"
        unpacked = tempfile.TemporaryDirectory(prefix="grader-batch-") if zipped else None
        with unpacked or contextlib.nullcontext():
            scratch = Path(unpacked.name) if unpacked else None
            exercises = [a.exercise for a in config.assignments.values() if a.exercise]
            untouched = {file_hash(path) for path in exercises if path.is_file()}
            best = any(spec.keep == "best" for spec in specs)
            found = find_submissions(source, scratch, out, untouched, best)
            recorder.batch.problems = found.problems
            submissions = _on_roster(found.submissions, config, recorder)
            others = _others(submissions, found.others, recorder, best)
            if any(spec.late for spec in specs):
                everyone = [*submissions, *others]
                _when_handed(everyone, source, config, recorder, submitted_at or {})
            if on_total:
                on_total(len(submissions))
            todo = _unchanged_first(submissions, recorder, force)
            todo += [Job(key, path) for key, path in others]
            if todo:
                workers = max(1, min(jobs or available_cores(), len(todo)))
                present = specs if assignment else _assignments_in(todo, config)
                mode = sandbox or config.sandbox
                check_files(config, present)  # a missing file: exit 2 before any worker starts
                support = require(mode)
                if cluster is None:
                    pool = Pool(config, assignment, workers, present, support, secret)
                else:  # Dask is imported only here: without --cluster it is never needed
                    pool = _cluster_pool(cluster, config, assignment, present, support, mode)
                    pool.secret = secret
                    workers = pool.slots
                try:
                    # The course's own code first, on the class's workers: a solution that
                    # fails is the course's error (exit 2), not one fault per student.
                    for spec in present:
                        preflight(config, spec, pool.workers)
                    prepared = {a.id: _prepare(a, pool.workers) for a in present}
                    _run(pool, todo, recorder, config, prepared, IN_FLIGHT_PER_WORKER * workers)
                    recorder.settle()
                finally:
                    pool.close()
    finally:
        if book is not None:
            book.close()
    _add_absent(recorder.batch)
    recorder.batch.entries.sort(key=lambda e: e.student)
    recorder.batch.seconds = time.monotonic() - started
    return recorder.batch


def _on_roster(
    submissions: list[tuple[str, Path]], config: Config, recorder: _Recorder
) -> list[tuple[str, Path]]:
    """With a roster at the course's root, the submissions renamed to its ids (the rest
    listed as unmatched) and the roster kept in the gradebook; else the submissions as found."""
    roster = course_roster(config.path.parent)
    if roster is None:
        if recorder.book is not None:  # a roster stored by an earlier batch no longer holds
            save_roster(recorder.book, [])
        return submissions
    matched = match(roster, submissions)
    recorder.batch.roster, recorder.batch.unmatched = roster, matched.unmatched
    if recorder.book is not None:
        save_roster(recorder.book, roster)
    return matched.submissions


def _others(
    submissions: Sequence[tuple[str, Path]],
    others: Mapping[Path, Sequence[Path]],
    recorder: _Recorder,
    best: bool,
) -> list[tuple[str, Path]]:
    """A student's other notebooks, each under a key of its own, when the best is kept;
    when the latest is, only the line saying so (for the feedback page)."""
    extra = []
    for student, path in submissions:
        if not others.get(path):
            continue
        keys = [alt_key(student, n) for n in range(1, len(others[path]) + 1)]
        if best:
            recorder.groups[student] = [*keys, student]
            extra += list(zip(keys, others[path], strict=True))
        else:
            older = [Candidate(k, p, None) for k, p in zip(keys, others[path], strict=True)]
            recorder.kept[student] = choose([*older, Candidate(student, path, None)], "latest")[1]
    return extra


def _when_handed(
    submissions: Sequence[tuple[str, Path]],
    source: Path,
    config: Config,
    recorder: _Recorder,
    given: Mapping[str, datetime],
) -> None:
    """When each submission was handed in, and each student's extension; the students
    whose time is only their file's are listed in the batch."""
    recorder.extensions = load_extensions(config.path.parent)
    zone = next(spec.late.due for spec in config.assignments.values() if spec.late)
    for student, path in submissions:
        keys: tuple[str, ...] = (student, path.stem, path.parent.name)
        if base_of(student) != student:  # another notebook of a student's
            keys = (path.stem, base_of(student))
        handed = recorder.handed[student] = handed_in(keys, path, source, given, zone)
        if handed.source.startswith(MTIME):
            recorder.batch.file_times.append(student)


def _add_absent(batch: Batch) -> None:
    """An entry for each roster student no submission was found for."""
    present = {e.student for e in batch.entries}
    for student in batch.roster or ():
        if student.id not in present:
            batch.entries.append(Entry(student.id, None, None, NO_SUBMISSION, absent=True))


SCRATCH_PREFIXES = ("grader-batch-", "grader-child-")
STALE_SCRATCH_SECONDS = 24 * 3600


def sweep_scratch(now: float | None = None) -> int:
    """Remove this user's scratch folders that graders killed outright left in the temporary
    directory (a day old at least: no running batch can still be using one)."""
    now = time.time() if now is None else now
    removed = 0
    for prefix in SCRATCH_PREFIXES:
        for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
            try:
                info = folder.stat()
            except OSError:
                continue
            if info.st_uid == os.getuid() and now - info.st_mtime > STALE_SCRATCH_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
                removed += 1
    return removed


def _unchanged_first(
    submissions: Sequence[tuple[str, Path]], recorder: _Recorder, force: bool
) -> list[Job]:
    """Record what the gradebook already graded (same content, same config); return the rest."""
    todo = []
    book = recorder.book
    # Only a student the gradebook knows under this configuration can be skipped: the others
    # are read once, when a worker takes them.
    known = set() if force or book is None else book.graded_students(recorder.settings)
    for student, path in submissions:
        if student not in known:
            todo.append(Job(student, path))
            continue
        content = recorder.hashes[student] = file_hash(path)
        old = None if book is None else book.find(student, content, recorder.settings)
        if old is None:
            todo.append(Job(student, path))
        else:
            recorder.add(Entry(student, path, old, skipped=True), _load(path), new=False)
    return todo


def _cluster_pool(
    address: str,
    config: Config,
    assignment: str | None,
    present: Sequence[AssignmentSpec],
    support: bwrap.Support,
    mode: Mode,
) -> ClusterPool:
    """The pool on the Dask cluster at `address`; a UsageError when Dask is not installed."""
    try:
        from grader.batch.cluster import ClusterPool
    except ImportError as exc:
        raise UsageError(
            f"--cluster needs Dask ({exc}): pip install 'attention-grader[cluster]'"
        ) from None
    return ClusterPool(address, config, assignment, present, support, mode)


def _assignments_in(todo: Sequence[Job], config: Config) -> list[AssignmentSpec]:
    """The assignments the notebooks name in their metadata, so that workers preload and
    warm up for those only; every assignment as soon as one notebook names none (it is
    recognised by its function names, in the worker)."""
    named: set[str] = set()
    for job in todo:
        try:
            hint = assignment_hint(json.loads(job.path.read_bytes()))
        except (OSError, ValueError, RecursionError):
            hint = None
        if hint is None or hint not in config.assignments:
            return list(config.assignments.values())
        named.add(hint)
    return [config.assignments[name] for name in sorted(named)]


def available_cores() -> int:
    """The cores this process may run on (a container's or `taskset`'s share, not the
    host's count, which can be far larger than what a CI job is given)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


IN_FLIGHT_PER_WORKER = 4


Prepared = dict[str, tuple[CaseSet, Expected]]


def _prepare(spec: AssignmentSpec, workers: Workers) -> tuple[CaseSet, Expected]:
    """An assignment's cases and what is expected on them (the course's code, sandboxed)."""
    case_set = build_cases(spec)
    return case_set, build_expected(spec, case_set, workers)


def _run(
    pool: Pool,
    todo: Sequence[Job],
    recorder: _Recorder,
    config: Config,
    prepared: Prepared,
    limit: int,
) -> None:
    """Hand out jobs, at most `limit` at a time (when judging falls behind the workers,
    reading waits, so neither bytes nor answers pile up in memory), and record each answer
    as it comes. A worker that stops answering is replaced by the pool; its student's run
    is recorded as stopped."""
    waiting = deque(todo)
    running: dict[Future[Done], Job] = {}
    while waiting or running:
        while waiting and len(running) < limit:
            job = _read(waiting.popleft(), recorder)
            running[pool.submit(job)] = job
        finished, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in finished:
            job = running.pop(future)
            done: Done | None = None
            try:
                done = future.result()
                entry = _judge(done, config, prepared, pool.workers)
            except PoolLost:
                raise
            except Exception as exc:  # a grader bug on one notebook must not stop the class
                problem = f"{job.path}: could not be judged (grader fault: {exc!r:.200})"
                entry = Entry(job.student, job.path, None, problem, fault=traceback.format_exc())
            recorder.add(entry, done.submission if done else None)


def _read(job: Job, recorder: _Recorder) -> Job:
    """The job with its bytes, read as it is handed out; the hash is taken from exactly the
    bytes graded."""
    try:  # never through a link (one put in place after the folder was listed included)
        with os.fdopen(os.open(job.path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return Job(job.student, job.path, problem=f"{job.path}: cannot be read ({exc.strerror})")
    recorder.hashes[job.student] = content_hash(data)
    return Job(job.student, job.path, data)


def _judge(done: Done, config: Config, prepared: Prepared, workers: Workers) -> Entry:
    if done.submission is None or done.run is None:
        return Entry(done.job.student, done.job.path, None, done.problem, fault=done.fault)
    spec = done.spec or config.assignment(done.assignment)
    if spec.public_seed is not None:  # the student's own cases (build_* cache by seed)
        case_set, expected = _prepare(spec, workers)
    else:
        if spec.id not in prepared:  # an assignment the batch did not expect: prepared now
            prepared[spec.id] = _prepare(spec, workers)
        case_set, expected = prepared[spec.id]
    report = finish(done.submission, spec, case_set, expected, done.run, done.run.seconds)
    return Entry(done.job.student, done.job.path, with_choice(report, done.chosen))


FAULT_LOG = "grader-faults.log"  # one of submissions.OUTPUTS


def log_fault(out: Path, entry: Entry) -> Path:
    """Append a grader fault's whole traceback to OUT/grader-faults.log, for a bug report.
    The name, the path and the exception's message may be the student's: the header stays
    one line, and no line of the log can move a terminal's cursor or be a CI command."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / FAULT_LOG
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    head = one_line(f"--- {stamp} {entry.student} ({entry.path})")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{head}\n{safe_lines(entry.fault.rstrip())}\n\n")
    return path


def _load(path: Path) -> Submission | None:
    try:
        return load_submission(path)
    except Exception:
        return None


def write_csv(
    entries: Sequence[Entry],
    assignment: AssignmentSpec,
    out: Path,
    roster: Sequence[Student] | None = None,
    database: str | None = None,
) -> Path:
    """OUT/grades.csv for this batch: one row per student (per roster student, with a
    roster), with the overrides and comments the gradebook in OUT (or `database`) holds.
    Names and problems come from file names: no cell may be a formula to a spreadsheet."""
    results = [(e.student, e.report, e.problem) for e in entries if not e.absent]
    overridden, commented, late = {}, {}, {}
    if database is not None or (out / "gradebook.sqlite").is_file():
        book = Gradebook(database or out / "gradebook.sqlite")
        try:
            overridden, commented = overrides(book, assignment.id), comments(book, assignment.id)
            late = stored_late(book, assignment.id)
        finally:
            book.close()
    rows = standings(results, roster, overridden, commented, late)
    names = [t.name for t in assignment.targets]
    return write_grades(rows, names, sum(t.points for t in assignment.targets), out / "grades.csv")
