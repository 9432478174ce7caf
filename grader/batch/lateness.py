"""When each submission was handed in, each student's extension, and the lateness a batch
stores in the gradebook (table `late`), so that every output and a later regrade read the same.

Where a submission's time comes from, first found first:
1. `--submitted-at FILE` (CSV student,timestamp): given by the instructor;
2. the LMS's file name: Blackboard's `_attempt_<yyyy-mm-dd-hh-mm-ss>` (local time: in the
   course's `time_zone:`, each with its own day's offset; else at the due date's offset), in
   a name that is not Canvas's or Moodle's (their names end in the student's own file name);
3. the last git commit touching the notebook, in a cloned repository;
4. a Canvas name without `_LATE_`: Canvas says it was on time;
5. the file's modification time: the last resort, and every output says so; not even that
   for a file modified within one span of a minute with two others of the batch or more (a
   copy's time: the time the same bytes had in an earlier run, else none and no penalty, and
   a warning).
The LMS's names (2 and 4) are read only for a file of the class folder itself, where an export
puts them: a notebook inside a student's folder is named by the student, who could otherwise
name it `hw_attempt_<the due date>` and be on time.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from grader.batch.gradebook import Gradebook
from grader.batch.roster import EXTENSION_COLUMN, ROSTER_FILE, course_roster
from grader.batch.submissions import file_hash, names_a_file_of_its_own
from grader.batch.tables import csv_rows
from grader.course.deadline import Late, LatePolicy, lateness, parse_time
from grader.errors import ConfigError, UsageError
from grader.render.escape import folded

EXTENSIONS_FILE = "extensions.csv"
# The longest extension: a century, far from where a due date plus it leaves the calendar.
MAX_EXTENSION_HOURS = 100 * 366 * 24
MTIME = "the file's modification time (no better source: give --submitted-at)"

# The file times of a copy, not of hand-ins: COPY_FILES notebooks of the batch or more modified
# within one span of COPY_SECONDS, however the others are timed (a `cp -r` or a download of
# the class after the due date would otherwise charge everyone late; r55, r56).
COPY_FILES = 3
COPY_SECONDS = 60.0
COPIED = "the files' modification times, a copy's"
CANVAS_FLAG = " (flagged _LATE_ by Canvas)"  # after a file's time: charged late at least
FILE_TIMES = (MTIME, f"{MTIME}{CANVAS_FLAG}")  # the sources of a time that is a file's own

_CANVAS_LATE = re.compile(r"^[^_]+_LATE_\d+_\d+_")
_CANVAS = re.compile(r"^[^_]+_\d+_\d+_")
_BLACKBOARD = re.compile(r"_attempt_(\d{4})-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)")


@dataclass(frozen=True)
class Handed:
    """When a submission was handed in (None: unknown, Canvas only says it was on time)."""

    at: datetime | None
    source: str


def _number(text: str, where: str) -> float:
    """Hours of extension: a number from 0 to MAX_EXTENSION_HOURS (NaN, an infinity or a
    century more would stop the student's grading with an overflow)."""
    try:
        hours = float(text)
    except ValueError:
        raise ConfigError(f"{where}: {text!r} is not a number of hours") from None
    if not (math.isfinite(hours) and 0 <= hours <= MAX_EXTENSION_HOURS):
        raise ConfigError(
            f"{where}: {text!r} is not a number of hours from 0 to {MAX_EXTENSION_HOURS}"
        )
    return hours


def same_student(name: str) -> str:
    """The key an extension's `student` is matched by, to a roster id or (without a roster)
    to a submission's name: case and Unicode form aside (render/escape.folded), `S001` and
    `s001` alike."""
    return folded(name)


def matched_hours(hours: Mapping[str, float], students: Iterable[str]) -> dict[str, float]:
    """Hours by each of `students` that has an extension in `hours` (by the name
    `extensions.csv` or the roster writes), matched case and Unicode form aside
    (same_student): the one rule of a batch (CourseExtensions.matched) and of `grader
    serve`, whose uploads are named as their student signs in."""
    by_key = {same_student(name): extra for name, extra in hours.items()}
    found = {name: by_key.get(same_student(name)) for name in students}
    return {name: extra for name, extra in found.items() if extra is not None}


@dataclass(frozen=True)
class CourseExtensions:
    """The course's extensions, read once: hours by student (a roster id with a roster, else
    the name as `extensions.csv` writes it), and without a roster each `extensions.csv` row
    with hours as (where, student), to match to the batch's submissions."""

    hours: dict[str, float]
    rows: tuple[tuple[str, str], ...] = ()

    def matched(self, students: Iterable[str]) -> dict[str, float]:
        """Hours by each of `students` (the batch's names) that has an extension, its name
        matched as a roster id is (same_student); with a roster, the ids' own."""
        return matched_hours(self.hours, students)

    def strays(self, students: Iterable[str]) -> list[str]:
        """Without a roster, a line for each `extensions.csv` row whose student is none of
        `students` (the batch's, matched as `matched` matches): its extension would be
        silently lost, as with a typo in the name. The line names the file, the line and
        the student. With a roster (no rows kept: such a row was refused), nothing."""
        known = {same_student(name) for name in students}
        return [
            f"{where}: {student!r} matches no submission (and the course has no roster); "
            "the extension is not applied"
            for where, student in self.rows
            if same_student(student) not in known
        ]


def stray_extensions(course: Path, students: Iterable[str]) -> list[str]:
    """Without a roster, a line for each `extensions.csv` row whose student is none of
    `students` (CourseExtensions.strays); with a roster or without the file, nothing (the
    roster's check is load_extensions's). A batch reads the file once instead, through
    read_course_extensions."""
    if course_roster(course) is not None or not (course / EXTENSIONS_FILE).is_file():
        return []
    return read_course_extensions(course).strays(students)


def load_extensions(course: Path) -> dict[str, float]:
    """Hours of extension by student id (read_course_extensions)."""
    return read_course_extensions(course).hours


def read_course_extensions(course: Path) -> CourseExtensions:
    """Hours of extension by student id: the roster's `extension_hours` column, then
    `extensions.csv` (student,hours) beside it, which wins; each file read once. A bad
    number, an extensions.csv row with a student and no hours (or hours and no student), or
    with a roster a student on no line of it (an id is matched as the roster matches: case
    and Unicode form aside): ConfigError, exit 2, rather than an extension silently lost.
    Without a roster, the rows are kept to match to submissions."""
    roster = course_roster(course)
    ids = None if roster is None else {same_student(s.id): s.id for s in roster}
    found: dict[str, float] = {}
    rows: list[tuple[str, str]] = []
    for name, key, column in (
        (ROSTER_FILE, "id", EXTENSION_COLUMN),
        (EXTENSIONS_FILE, "student", "hours"),
    ):
        path = course / name
        if not path.is_file():
            continue
        reader = csv_rows(path, ConfigError)
        if name == EXTENSIONS_FILE:
            reader.columns((key, column), "needs the columns student, hours")
        elif column not in [(h or "").strip().lower() for h in reader.fieldnames or []]:
            continue
        else:
            reader.columns((key, column), "")
        seen: dict[str, tuple[int, float]] = {}  # this file's rows, by student matched
        for row in reader:
            value = (row.get(column) or "").strip()
            student = (row.get(key) or "").strip()
            where = f"{path} line {reader.line_num}"
            if name == EXTENSIONS_FILE and bool(value) != bool(student):
                # half a row: an extension meant and silently not given (a roster's empty
                # extension_hours is only a student without one)
                half = f"{student!r} has no hours" if student else f"{value!r} names no student"
                raise ConfigError(f"{where}: {half}; a row needs both student and hours")
            if value and student:
                if ids is not None and name == EXTENSIONS_FILE:
                    if same_student(student) not in ids:
                        raise ConfigError(f"{where}: {student!r} is not on the roster")
                    student = ids[same_student(student)]
                hours = _number(value, where)
                _one_row_each(seen, student, hours, where, reader.line_num)
                found[student] = hours
                if ids is None and name == EXTENSIONS_FILE:
                    rows.append((where, student))
    return CourseExtensions(found, tuple(rows))


def _one_row_each(
    seen: dict[str, tuple[int, float]], student: str, hours: float, where: str, line: int
) -> None:
    """Two rows of one file for the same student (matched as same_student) with different
    hours: ConfigError naming both lines, rather than the last row silently winning."""
    earlier = seen.setdefault(same_student(student), (line, hours))
    if earlier[1] != hours:
        raise ConfigError(
            f"{where}: {student!r} has {hours:g} hours here and {earlier[1]:g} on line "
            f"{earlier[0]}; keep one row per student"
        )


FIRST_YEAR, LAST_YEAR = 1970, 9000  # what a time handed in may say


def read_submitted_at(path: Path) -> dict[str, datetime]:
    """`--submitted-at FILE`: student,timestamp lines (ISO 8601 with a zone); one line with
    the line number for a bad one (UsageError, exit 2)."""
    reader = csv_rows(path, UsageError)
    reader.columns(("student", "timestamp"), "needs the columns student, timestamp")
    times = {}
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        student, stamp = (row["student"] or "").strip(), (row["timestamp"] or "").strip()
        if not student and not stamp:
            continue  # an empty row
        if not student:
            raise UsageError(f"{path} line {line}: a time without a student")
        match = same_student(student)  # as extensions and the roster match: one time each
        if match in seen:
            raise UsageError(
                f"{path} line {line}: {student!r} is already on line {seen[match]}; "
                "keep one row per student"
            )
        seen[match] = line
        try:
            times[student] = parse_time(stamp)
        except ValueError as exc:
            raise UsageError(f"{path} line {line}: {exc}") from None
        if not FIRST_YEAR <= times[student].year <= LAST_YEAR:  # days counted must stay dates
            raise UsageError(
                f"{path} line {line}: {stamp!r} is not between the years {FIRST_YEAR} and "
                f"{LAST_YEAR}"
            )
    return times


GIVEN = "--submitted-at"


def given_before(
    book: Gradebook,
    keys: Sequence[str],
    path: Path,
    assignment: str | None = None,
    sources: Sequence[str] = (GIVEN,),
) -> Handed | None:
    """The time an earlier run was given with --submitted-at for the notebook at `path`,
    while it is the one graded then (the same bytes, whichever of the course's assignments
    was graded since): a later run without the file keeps it, rather than fall back to the
    file's time (a 50% penalty for everyone whose notebook was copied after the due date).
    `keys`: the student's id first, then the names their notebook had (the id an earlier
    run knew them by, before the course had a roster); `assignment`: the one graded, when
    the batch names it (the same bytes graded as another were given that one's time). None
    otherwise. `sources`: the stored times' sources that count (also a file's own time,
    for a notebook whose file was copied since: copied_files)."""
    names = list(dict.fromkeys(keys))
    marks, kinds = ", ".join("?" * len(names)), ", ".join("?" * len(sources))
    which = " AND l.assignment = ?" if assignment else ""
    rows = book.db.execute(
        "SELECT l.submitted_at, l.source FROM late l JOIN submissions s"
        " ON s.student = l.student AND s.assignment = l.assignment"
        f" WHERE l.student IN ({marks}) AND l.source IN ({kinds}) AND s.content_hash = ?{which}"
        " ORDER BY s.graded_at DESC",
        (*names, *sources, file_hash(path), *([assignment] if assignment else [])),
    )
    row = next(iter(rows), None)
    if row is None or not row[0]:
        return None
    try:
        return Handed(parse_time(str(row[0])), str(row[1]))
    except ValueError:
        return None


def handed_in(
    keys: tuple[str, ...],
    path: Path,
    source: Path,
    given: Mapping[str, datetime],
    zone: datetime,
    course_zone: tzinfo | None = None,
    exported: bool | None = None,
) -> Handed:
    """When the submission at `path` (found under the class folder `source`, known by `keys`:
    its roster id and the name it was found under) was handed in. Blackboard's local times
    are read in `course_zone` (the config's `time_zone:`), each with the offset of its own
    day; without one, with the offset of `zone` (the due date). The LMS's names are read
    only for a file of the export itself (`exported`; by default, one directly in `source`),
    never for a notebook a student named inside a folder."""
    for key in keys:
        if key in given:
            return Handed(given[key], GIVEN)
    # as the roster and extensions.csv match ids: case and Unicode form aside (`S001`)
    loose = {folded(name): when for name, when in given.items()}
    for key in keys:
        if folded(key) in loose:
            return Handed(loose[folded(key)], GIVEN)
    if exported is None:
        exported = path.parent == source
    if exported and (local := _blackboard_time(path)) is not None:
        where = course_zone or zone.tzinfo
        return Handed(local.replace(tzinfo=where), "the Blackboard file name")
    if (commit := _last_commit(path, source)) is not None:
        return Handed(commit, "the last git commit touching the notebook")
    if exported and _CANVAS.match(path.name) and not _CANVAS_LATE.match(path.name):
        return Handed(None, "the Canvas export (not flagged _LATE_)")
    mtime = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
    flagged = CANVAS_FLAG if exported and _CANVAS_LATE.match(path.name) else ""
    return Handed(mtime, f"{MTIME}{flagged}")


def copied_files(paths: Iterable[Path]) -> set[Path]:
    """The files of `paths` modified together with others: COPY_FILES or more within
    COPY_SECONDS, a spread no class hands in at, whatever else the batch holds (a straggler
    copied later, files timed by an LMS name or a commit, files the roster set aside)."""
    stamped = []
    for path in set(paths):
        try:
            stamped.append((path.stat().st_mtime, str(path), path))
        except OSError:
            continue
    stamped.sort()
    copied: set[Path] = set()
    last = 0  # the last file within COPY_SECONDS of file `first`
    marked = 0  # the files before this one are in `copied` already, or never will be
    for first, (start, _, _) in enumerate(stamped):
        last = max(last, first)
        while last + 1 < len(stamped) and stamped[last + 1][0] - start <= COPY_SECONDS:
            last += 1
        if last - first + 1 >= COPY_FILES:
            copied.update(path for _, _, path in stamped[max(first, marked) : last + 1])
            marked = last + 1
    return copied


def copied_time(handed: Handed) -> Handed:
    """In place of a time from a file's modification time alone, when the file is a copy's
    (copied_files): no time at all, and why (a Canvas `_LATE_` flag is kept: late_of still
    charges it a period)."""
    why = (
        f"{COPIED} (modified within one span of {COPY_SECONDS:.0f} s with {COPY_FILES - 1} "
        "other files or more, not at a hand-in time; give --submitted-at FILE)"
    )
    return Handed(None, why + handed.source.removeprefix(MTIME))


def _blackboard_time(path: Path) -> datetime | None:
    """The local time a Blackboard name's `_attempt_<yyyy-mm-dd-hh-mm-ss>` says; None for a
    name without one, or with one that is no date of the years a time may say (a folder
    of the student's own may name its notebook anything: a month 13 stopped the class).
    Never in a name the class folder reads as Canvas's or Moodle's: their prefix is followed by
    the file name the student chose, who could write `hw_attempt_<the due date>` there (r51:
    a `_LATE_` Canvas upload so named lost no points)."""
    if names_a_file_of_its_own(path.name):
        return None
    stamp = _BLACKBOARD.search(path.stem)
    if stamp is None:
        return None
    year, month, day, hour, minute, second = map(int, stamp.groups())
    try:
        local = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return local if FIRST_YEAR <= year <= LAST_YEAR else None


# The repository is the student's, and so is its .git/config: git must run nothing it names.
# Each setting below is one git would otherwise follow for `git log`: an fsmonitor hook,
# a "signature" checked by a `gpg.program` (log.showSignature; --no-show-signature wins over
# it), and a fetch of missing objects from a "promisor" remote through `core.sshCommand` or
# any other transport (a partial clone).
_GIT = ("git", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never")
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1"}


def _last_commit(path: Path, source: Path) -> datetime | None:
    """The commit time of the last commit touching `path`, when a folder between it and the
    class folder is a git repository (a clone); None otherwise or when git cannot tell."""
    folder = path.parent
    while folder != source and source in folder.parents:
        if (folder / ".git").exists():
            break
        folder = folder.parent
    else:
        return None
    try:
        done = subprocess.run(
            [*_GIT, "log", "-1", "--format=%cI", "--no-show-signature", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=10,
            env={**os.environ, **_GIT_ENV},
        )
        return parse_time(done.stdout.strip()) if done.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def late_of(policy: LatePolicy, handed: Handed, extension: float) -> Late:
    """The lateness of a submission; a Canvas `_LATE_` file whose time is not after the
    grace period is charged as late by one second past it (Canvas knows better), unless the
    student has an extension: Canvas's flag says "after the due date", not after the
    extension, so the file's time counts."""
    flagged = handed.source.endswith(CANVAS_FLAG) and not extension
    past_grace = policy.due + timedelta(minutes=policy.grace_minutes, seconds=1)
    if handed.at is None and not flagged:
        if handed.source.startswith(COPIED):
            return Late(0.0, 0.0, f"no late penalty taken: the only time known is {handed.source}")
        return Late(0.0, 0.0, f"on time, as {handed.source} says")
    at = past_grace if handed.at is None else handed.at
    if flagged:
        at = max(at, past_grace)
    late = lateness(policy, at, extension)
    # no time of the student's is made up: one moved to Canvas's flag is said to be
    charged = "flagged _LATE_ by Canvas, so charged as " * (at != handed.at)
    return Late(late.minutes, late.percent, f"{charged}{late.note}; time from {handed.source}")


def save_late(book: Gradebook, student: str, assignment: str, handed: Handed, late: Late) -> None:
    """Store (or replace) a student's lateness on an assignment."""
    at = handed.at.isoformat() if handed.at is not None else ""
    book.flush()
    with book.db.transaction() as db:
        db.execute(
            "INSERT INTO late VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (student, assignment)"
            " DO UPDATE SET submitted_at=excluded.submitted_at, source=excluded.source,"
            " minutes=excluded.minutes, percent=excluded.percent, note=excluded.note",
            (student, assignment, at, handed.source, late.minutes, late.percent, late.note),
        )


def clear_late(book: Gradebook, assignment: str) -> None:
    """Forget the stored lateness of an assignment (its late policy was removed)."""
    with book.db.transaction() as db:
        db.execute("DELETE FROM late WHERE assignment=?", (assignment,))


def stored_late(book: Gradebook, assignment: str) -> dict[str, Late]:
    """Each student's stored lateness on an assignment."""
    rows = book.db.execute(
        "SELECT student, minutes, percent, note FROM late WHERE assignment=?", (assignment,)
    )
    return {str(r[0]): Late(float(r[1]), float(r[2]), str(r[3])) for r in rows}
