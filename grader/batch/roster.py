"""The class list: `roster.csv` at the course's root, and which student each submission is.

    id,name,email,section,lms_id,github
    s001,Ada Lovelace,ada@uni.edu,A,4242,adal

Only `id` and `name` are required; the other columns may be left out or empty. With a roster,
a batch covers exactly its students (one without a submission gets 0 and "no submission"), and
a submission that matches nobody is listed, not graded. The public API is small on purpose:
`Student`, `load_roster`, `course_roster` and `match` (the service reuses them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.batch.tables import csv_rows, semicolon_hint
from grader.errors import ConfigError, GraderError
from grader.render.escape import folded

ROSTER_FILE = "roster.csv"
COLUMNS = ("id", "name", "email", "section", "lms_id", "github")
REQUIRED = ("id", "name")
EXTENSION_COLUMN = "extension_hours"  # hours of extension, read by lateness.py
OPTIONAL = (*COLUMNS[2:], EXTENSION_COLUMN)
# Columns a course may add for its own use (an extension, say) are kept, never refused.
_DIGITS = re.compile(r"_(\d+)$")


@dataclass(frozen=True)
class Student:
    """One row of the roster. `id` is the key of every output (gradebook, CSV, exports)."""

    id: str
    name: str
    email: str = ""
    section: str = ""
    lms_id: str = ""
    github: str = ""


def load_roster(path: Path, error: type[GraderError] = ConfigError) -> list[Student]:
    """The students of `path`, in file order. A bad file or row raises `error` (exit 2;
    UsageError for a roster named on the command line, as `grader serve tokens --roster`
    does) with one line naming the file and the line: a missing column, an empty id or
    name, an id or lms_id given twice, no student at all."""
    reader = csv_rows(path, error, "the roster")
    header = [name.strip().lower() for name in reader.fieldnames or []]
    twice = sorted({name for name in header if name and header.count(name) > 1})
    if twice:  # csv keeps the last of them: which id or name was meant is a guess
        raise error(f"{path} line 1: the column {twice[0]!r} is given twice")
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        hint = semicolon_hint(header)
        raise error(
            f"{path} line 1: the roster needs the columns {', '.join(REQUIRED)} "
            f"(missing: {', '.join(missing)}); optional: {', '.join(OPTIONAL)}{hint}"
        )
    reader.fieldnames = header
    students: list[Student] = []
    seen: dict[str, int] = {}
    lms_ids: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        values = {k: (v or "").strip() for k, v in row.items() if isinstance(k, str)}
        if None in row:
            raise error(f"{path} line {line}: more cells than columns")
        for name in REQUIRED:
            if not values.get(name):
                raise error(f"{path} line {line}: the {name} is empty")
        if values["id"] in (".", ".."):  # links and paths would name a folder, not them
            raise error(f"{path} line {line}: the id {values['id']!r} cannot be a student's")
        key = folded(values["id"])  # ids that differ in case or form only are one student
        if key in seen:
            raise error(
                f"{path} line {line}: the id {values['id']!r} is already on line {seen[key]}"
            )
        seen[key] = line
        lms_id = folded(values.get("lms_id", ""))  # the LMS's own key: one person's
        if lms_id and lms_id in lms_ids:
            raise error(
                f"{path} line {line}: the lms_id {values['lms_id']!r} is already on line "
                f"{lms_ids[lms_id]}"
            )
        lms_ids[lms_id] = line
        students.append(Student(**{name: values.get(name, "") for name in COLUMNS}))
    if not students:  # a roster of no one would match no notebook, and replace the stored one
        raise error(f"{path}: no student in it, only its header: add one row per student")
    return students


def course_roster(course: Path) -> list[Student] | None:
    """The roster of the course folder `course` (its `roster.csv`), or None without one."""
    path = course / ROSTER_FILE
    return load_roster(path) if path.is_file() else None


@dataclass(frozen=True)
class Matched:
    """Submissions renamed to roster ids, and a line for each one that matched no one."""

    submissions: list[tuple[str, Path]]
    unmatched: list[str]


def _plain(text: str) -> str:
    return "".join(c for c in folded(text) if c.isalnum())


def _keys(student: Student) -> Iterable[str]:
    """What an export or a folder may call a student: ids (a Blackboard user name is the
    `lms_id`), user names, the name either way round (Canvas writes `lastfirst` from its
    sortable name, `Cruz, Maria de la`: the last word first; a course's own `Last, First`
    may put a first word of one and a last name of several, `de la Cruz, Maria`)."""
    yield folded(student.id)
    for value in (student.lms_id, student.github, student.email, student.email.split("@")[0]):
        if value:
            yield folded(value)
    words = student.name.split()
    yield _plain(student.name)
    if len(words) > 1:
        yield _plain("".join(words[-1:] + words[:-1]))
        yield _plain("".join(words[1:] + words[:1]))


def match(roster: Sequence[Student], submissions: Sequence[tuple[str, Path]]) -> Matched:
    """Each submission's student: by the whole name when it is exactly one student's id,
    LMS id, GitHub or e-mail user name (`bo_7`, a GitHub user, is never the student whose
    LMS id is 7); else by LMS id (the `_<digits>` a Canvas or Moodle name ends with); else
    by name. A name that fits several students or none is listed as unmatched. Two
    submissions of one student: the later one (by name) is kept and the other listed."""
    by_lms = {s.lms_id: s for s in roster if s.lms_id}
    by_key: dict[str, list[Student]] = {}
    for student in roster:
        for key in set(_keys(student)):
            by_key.setdefault(key, []).append(student)
    handed: dict[str, list[tuple[str, Path]]] = {}  # each student's submissions, found order
    unmatched: list[str] = []
    for name, path in submissions:
        digits = _DIGITS.search(name)
        found = by_key.get(folded(name)) or []
        if len(found) != 1 and digits and digits[1] in by_lms:
            found = [by_lms[digits[1]]]
        if not found:
            bare = name[: digits.start()] if digits else name
            found = by_key.get(_plain(bare)) or []
        if len(found) != 1:
            why = "fits several students" if found else "matches no student"
            unmatched.append(f"{name}: {why} of the roster; not graded ({path.name})")
            continue
        handed.setdefault(found[0].id, []).append((name, path))
    chosen: list[tuple[str, Path]] = []
    for sid, theirs in handed.items():
        kept = max(theirs, key=lambda pair: pair[0])  # the later by name
        chosen.append((sid, kept[1]))
        # said once the choice is made: with three, each line names the one graded (r56)
        unmatched += [
            f"{name}: {sid} also handed in {kept[0]}; graded {kept[0]}"
            for name, _ in sorted(theirs)
            if name != kept[0]
        ]
    return Matched(sorted(chosen), unmatched)
