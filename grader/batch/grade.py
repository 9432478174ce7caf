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
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from grader.batch.entries import Batch, Entry
from grader.batch.gradebook import Gradebook, config_hash
from grader.batch.keep import Candidate, alt_key, base_of, choose
from grader.batch.lateness import (
    CANVAS_FLAG,
    COPY_FILES,
    COPY_SECONDS,
    FILE_TIMES,
    GIVEN,
    MTIME,
    copied_files,
    copied_time,
    given_before,
    handed_in,
    read_course_extensions,
    same_student,
)
from grader.batch.pool import Done, Job, Pool, PoolLost, read_key
from grader.batch.recorder import Recorder
from grader.batch.records import carry_records, recorded_students, save_roster, stored_roster
from grader.batch.roster import course_roster, match
from grader.batch.standing import NO_SUBMISSION
from grader.batch.submissions import UNPACKED, content_hash, file_hash, find_submissions
from grader.course.cases import CaseSet, build_cases
from grader.course.config import AssignmentSpec, Config, Mode
from grader.course.locate import is_bundle
from grader.course.notebook import Submission, assignment_hint, load_submission
from grader.course.per_student import course_secret, needs_secret, settings_tag
from grader.course.recognise import choose_assignment, settle_assignment
from grader.engine import finish, require, with_choice
from grader.errors import ConfigError, UsageError
from grader.judge.expected import Expected, build_expected
from grader.judge.preflight import check_files, preflight
from grader.render.escape import twins
from grader.render.feedback import remove_feedback
from grader.report import Report
from grader.run import bwrap, collector
from grader.run.sandbox import GRADER_FAULTS, UNEXPLAINED_KILL
from grader.run.workers import Workers

if TYPE_CHECKING:
    from grader.batch.cluster import ClusterPool


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
    recorder = Recorder(Batch(), book, out, settings, on_entry, keep_reports)
    recorder.config = config
    try:
        # A scratch folder only to unpack a .zip into: a grader killed outright leaves none
        # behind for a folder of notebooks.
        zipped = source.is_file() and source.suffix == ".zip"
        unpacked = tempfile.TemporaryDirectory(prefix="grader-batch-") if zipped else None
        with unpacked or contextlib.nullcontext():
            scratch = Path(unpacked.name) if unpacked else None
            if scratch is not None:
                recorder.unpacked = (scratch / UNPACKED, source)
            exercises = [a.exercise for a in config.assignments.values() if a.exercise]
            untouched = {file_hash(path) for path in exercises if path.is_file()}
            best = any(spec.keep == "best" for spec in specs)
            found = find_submissions(source, scratch, out, untouched, best, config.zone())
            if not found.submissions and not found.others:  # a wrong folder, most likely
                said = [p.removeprefix(f"{source}: ") for p in found.problems[:3]]
                raise UsageError(f"{source}: nothing to grade: {'; '.join(said) or 'no file'}")
            recorder.batch.problems = found.problems
            submissions = _on_roster(found.submissions, config, recorder)
            if book is not None:  # the class of OUT: this batch's students and earlier ones
                recorder.clashing = twins([*book.names(), *(s for s, _ in submissions)])
            others = _others(submissions, found.others, recorder, best)
            if any(spec.late for spec in specs):
                everyone = [*submissions, *others]
                listed = found.folder or source
                given = submitted_at or {}
                # every notebook found counts to tell a copy, set aside by the roster or not
                extra = (path for paths in found.others.values() for path in paths)
                files = [*(path for _, path in found.submissions), *extra]
                _when_handed(everyone, listed, found.direct, files, config, recorder, given, specs)
            if on_total:
                on_total(len(submissions))
            kept, todo = _unchanged(submissions, recorder, force)
            todo += [Job(key, path) for key, path in others]
            read: dict[Path, tuple[bytes, Submission]] = {}
            settled = None
            if not assignment and (todo or len({old.assignment for _, _, old in kept}) > 1):
                votes = [old.assignment for student, _, old in kept if base_of(student) == student]
                settled = _settle(todo, config, source, read, votes)
                # Every notebook of a batch is graded as the one it settles: one kept from an
                # earlier run that settled another is graded again (as this class's).
                again = [(s, p) for s, p, old in kept if settled and old.assignment != settled]
                kept = [k for k in kept if not settled or k[2].assignment == settled]
                todo = [Job(student, path) for student, path in again] + todo
            only = next(iter(config.assignments)) if len(config.assignments) == 1 else ""
            recorder.assignment = assignment or settled or only
            _record_unchanged(kept, recorder)
            if todo:
                workers = max(1, min(jobs or available_cores(), len(todo)))
                present = _present(specs, assignment, settled, config)
                mode = sandbox or config.sandbox
                check_files(config, present)  # a missing file: exit 2 before any worker starts
                support = require(mode)
                if cluster is None and not support.sandboxed:  # said once, not only per page
                    recorder.batch.warnings.append(bwrap.note(support))
                if cluster is None:
                    pool = Pool(config, assignment, workers, present, support, secret)
                else:  # Dask is imported only here: without --cluster it is never needed
                    pool = _cluster_pool(cluster, config, assignment, present, support, mode)
                    pool.secret = secret
                    workers = pool.slots
                pool.settled, pool.read = settled, read
                try:
                    # The course's own code first, on the class's workers: a solution that
                    # fails is the course's error (exit 2), not one fault per student.
                    for spec in present:
                        preflight(config, spec, pool.workers)
                    prepared = {a.id: _prepare(a, pool.workers) for a in present}
                    with collector.for_the_class():  # what exists now is kept all batch
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
    submissions: list[tuple[str, Path]], config: Config, recorder: Recorder
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
        earlier = {s.id for s in stored_roster(recorder.book) or ()}
        save_roster(recorder.book, roster)
        # what was recorded under a submission's own name before the roster came
        named, ids = {path: name for name, path in submissions}, {s.id for s in roster}
        renamed = [(named[p], sid) for sid, p in matched.submissions if named[p] not in ids]
        # and under an id the roster before spelled in another case (`S001`, now `s001`):
        # only its ids, never a student of no roster (`Ada` and `ada` were two of those)
        by_key = {same_student(sid): sid for sid in ids}
        renamed += [
            (name, by_key[same_student(name)])
            for name in sorted(recorded_students(recorder.book) & earlier)
            if name not in ids and same_student(name) in by_key
        ]
        carry_records(recorder.book, renamed)
        for name, sid in renamed:
            recorder.former.setdefault(sid, []).append(name)
            if recorder.out is not None:  # its page is written again under the id
                remove_feedback(recorder.out, name)
    return matched.submissions


def _others(
    submissions: Sequence[tuple[str, Path]],
    others: Mapping[Path, Sequence[Path]],
    recorder: Recorder,
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
    exported: Collection[Path],
    found: Sequence[Path],
    config: Config,
    recorder: Recorder,
    given: Mapping[str, datetime],
    specs: Sequence[AssignmentSpec],
) -> None:
    """When each submission was handed in, and each student's extension; the students
    whose time is only their file's are listed in the batch. A Blackboard time without the
    course's `time_zone:` is read at the offset of the due date of the assignment graded
    (`specs`: the one asked for, else the course's, the first with a late policy).
    `exported`: the notebooks that were the class folder's own entries, whose LMS names count;
    `found`: every notebook of the batch, whose file times tell a copy (copied_files)."""
    extensions = read_course_extensions(config.path.parent)
    named = [base_of(student) for student, _ in submissions]
    recorder.extensions = extensions.matched(named)
    recorder.batch.warnings += extensions.strays(named)
    zone = next(spec.late.due for spec in specs if spec.late)
    only = specs[0].id if len(specs) == 1 else None  # --assignment: that one's time alone
    course_zone = config.zone()
    used: set[str] = set()  # the keys a time given could be found by (folded)
    copied = copied_files(found)
    copies: list[str] = []  # the students left with no time: their files are a copy's
    for student, path in submissions:
        keys: tuple[str, ...] = (student, path.stem, path.parent.name)
        if base_of(student) != student:  # another notebook of a student's
            keys = (path.stem, base_of(student))
        used.update(same_student(key) for key in keys)
        handed = handed_in(keys, path, source, given, zone, course_zone, path in exported)
        if handed.source != GIVEN and recorder.book is not None:  # given to an earlier run?
            names = (student, *recorder.former.get(base_of(student), ()), *keys)
            handed = given_before(recorder.book, names, path, only) or handed
        if handed.source.startswith(MTIME) and path in copied:
            # a copy's time: the same bytes' own file time kept from an earlier run, else none
            names = (student, *recorder.former.get(base_of(student), ()), *keys)
            earlier = None
            if recorder.book is not None:
                earlier = given_before(recorder.book, names, path, only, FILE_TIMES)
            # the copy's own time, stored by a run before (or a grader before copies were
            # told): no hand-in time either
            if earlier and earlier.at and handed.at and _near(earlier.at, handed.at):
                earlier = None
            handed = earlier or copied_time(handed)
            if handed.at is None:
                copies.append(student)
        recorder.handed[student] = handed
        if handed.source.startswith(MTIME):
            recorder.batch.file_times.append(student)
    if copies:
        extended = recorder.extensions  # Canvas's flag does not count beside an extension
        flagged = sum(
            recorder.handed[s].source.endswith(CANVAS_FLAG) and not extended.get(base_of(s))
            for s in copies
        )
        charged = f" ({flagged} flagged _LATE_ by Canvas: charged one period)" * bool(flagged)
        recorder.batch.warnings.append(
            f"{len(copies)} submission file(s) were modified within one span of "
            f"{COPY_SECONDS:.0f} s with {COPY_FILES - 1} others or more, a copy's times, not "
            "hand-in times "
            f"({', '.join(copies[:5])}{' …' * (len(copies) > 5)}): no late penalty was taken "
            f"from their times{charged}; "
            "give --submitted-at FILE (student,timestamp) for the real ones"
        )
    if unused := [name for name in given if same_student(name) not in used]:
        shown = ", ".join(map(repr, unused[:5])) + (" …" if len(unused) > 5 else "")
        recorder.batch.warnings.append(
            f"--submitted-at: {len(unused)} time(s) match no submission of this batch "
            f"({shown}); not used"
        )


def _near(one: datetime, other: datetime) -> bool:
    """Whether two file times lie within one copy's span (COPY_SECONDS)."""
    return abs((one - other).total_seconds()) <= COPY_SECONDS


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


def _unchanged(
    submissions: Sequence[tuple[str, Path]], recorder: Recorder, force: bool
) -> tuple[list[tuple[str, Path, Report]], list[Job]]:
    """What the gradebook already graded (same content, same config), each with its report;
    and the rest, to grade (a notebook whose process was killed by nothing the grader can
    name, too: a signal from outside is no reason for a zero kept run after run). Nothing
    is recorded yet (see _record_unchanged)."""
    todo = []
    kept = []
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
        if old is None or UNEXPLAINED_KILL in old.errors:  # killed from outside, perhaps
            todo.append(Job(student, path))
        else:
            kept.append((student, path, old))
    return kept, todo


def _record_unchanged(kept: Sequence[tuple[str, Path, Report]], recorder: Recorder) -> None:
    """Record the submissions kept from the gradebook, first (as skipped). One that is not
    the student's latest there (they went back to an earlier notebook; the course's config
    went back), or after which a notebook of theirs could not be graded, is recorded again,
    as graded now, with its feedback page: the exports and the report read the latest."""
    book = recorder.book
    latest = book.latest_hashes() if kept and book is not None else {}
    not_graded: dict[str, set[str]] = {}  # by assignment: students whose latest was not graded
    for student, path, old in kept:
        now = (recorder.hashes[student], recorder.settings)
        if book is not None and old.assignment not in not_graded:
            problems = book.unreadable(old.assignment)
            not_graded[old.assignment] = {name for name, _, _ in problems}
        broken = student in not_graded.get(old.assignment, ())
        again = latest.get((student, old.assignment)) != now or broken
        recorder.add(Entry(student, path, old, skipped=True), _load(path), new=again)


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


def _settle(
    todo: Sequence[Job],
    config: Config,
    source: Path,
    read: dict[Path, tuple[bytes, Submission]] | None = None,
    kept: Sequence[str] = (),
) -> str | None:
    """The one assignment a batch without --assignment grades every notebook as: the one
    most of its notebooks look like (`kept`: the assignments of those kept from the gradebook,
    one a student), each of `todo` recognised here as it would be alone; a UsageError when
    none is most. Each notebook parsed to be recognised is kept in `read` with its bytes'
    digest (its trees dropped), for the pool to grade without parsing it again when the
    bytes it reads are the same."""
    # one vote a student (their own key): with `keep: best` each other notebook is a job too
    recognised: list[str | None] = list(kept)
    for job in todo:
        if base_of(job.student) == job.student:
            recognised.append(_recognised(job.path, config, read))
    return settle_assignment(config, recognised, str(source))


def _recognised(
    path: Path, config: Config, read: dict[Path, tuple[bytes, Submission]] | None = None
) -> str | None:
    """The assignment a notebook alone is recognised as (its metadata, else its names), or
    None when it cannot be read or told; the submission parsed, if it was, kept in `read`."""
    try:
        data = path.read_bytes()
        hint = assignment_hint(json.loads(data)) if path.suffix == ".ipynb" else None
        if hint is not None and hint in config.assignments:
            return hint
        submission = load_submission(path, data)
        try:
            return choose_assignment(config, submission, None)[0].id
        finally:
            submission.forget_trees()  # parsed again when judged: no class's trees held
            if read is not None:
                read[path] = (read_key(data), submission)
    except Exception:  # unreadable, untellable, or a fault met (and reported) when graded
        return None


def _present(
    specs: list[AssignmentSpec], requested: str | None, settled: str | None, config: Config
) -> list[AssignmentSpec]:
    """The assignments whose files are checked and which the workers preload and warm up
    for: the one asked for, else the one the class settled on (every notebook runs as it,
    whatever another names or looks like: not every assignment's modules, matplotlib's
    included, because one notebook has no metadata), else none: no notebook was recognised
    (each is told alone, and is a problem, as `grader check` would say; one that was
    rewritten meanwhile and is recognised has its assignment prepared when it is judged)."""
    if requested:
        return specs
    return [config.assignment(settled)] if settled else []


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
    recorder: Recorder,
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


def _read(job: Job, recorder: Recorder) -> Job:
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
    if done.run.ending in GRADER_FAULTS:  # the machine's doing, not the notebook's: no zero
        problem = f"{done.job.path}: not graded: {done.run.exit_description}"
        return Entry(done.job.student, done.job.path, None, problem, lost=True)
    report = finish(done.submission, spec, case_set, expected, done.run, done.run.seconds)
    return Entry(done.job.student, done.job.path, with_choice(report, done.chosen))


def _load(path: Path) -> Submission | None:
    try:
        return load_submission(path)
    except Exception:
        return None
