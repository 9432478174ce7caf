"""Find the submissions of a class: a folder, a folder of folders, or an LMS export (.zip).

Names the learning-management systems give their exports, and the student each means:
- Canvas:     `<name>_<userid>_<submissionid>_<file>.ipynb`, or `<name>_LATE_<userid>_…`
- Moodle:     a folder `<Full Name>_<userid>_assignsubmission_file_` holding the notebook, or
  (downloaded without folders) `<Full Name>_<userid>_assignsubmission_file_<file>.ipynb`
  (for both, the student is `<name>_<userid>`: two students may share a name, never an id)
- Blackboard: `<assignment>_<username>_attempt_<yyyy-mm-dd-hh-mm-ss>_<file>.ipynb`
- otherwise:  `<student>.ipynb`, or a folder `<student>/` with a notebook anywhere inside
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import time
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path, PurePosixPath

from grader.course.notebook import has_invalid_text, valid_text
from grader.errors import UsageError

SUFFIXES = (".ipynb", ".py")
MAX_ZIP_BYTES = 2 << 30

_CANVAS = re.compile(r"^(?P<student>[^_]+?)(?:_LATE)?_(?P<user>\d+)_(?P<order>\d+)_.+$")
_MOODLE = re.compile(r"^(?P<student>.+?)_(?P<user>\d+)_assignsubmission_\w*$")
_MOODLE_FILE = re.compile(r"^(?P<student>.+?)_(?P<user>\d+)_assignsubmission_file_.+$")
_BLACKBOARD = re.compile(r"^.+?_(?P<student>[^_]+)_attempt_(?P<order>[\d-]+)(?:_.*)?$")


@dataclass(frozen=True)
class Found:
    """Who handed in what, and the lines to show about the rest."""

    submissions: list[tuple[str, Path]]
    problems: list[str]
    # The student's other notebooks, by the one chosen (graded too under `keep: best`).
    others: dict[Path, list[Path]] = field(default_factory=dict)
    # The folder listed (a .zip's: where it was unpacked), and the notebooks that were its own
    # entries (a link's: where it leads): an LMS's names are read only for those
    # (lateness.handed_in), never for a notebook a student named inside a folder.
    folder: Path | None = None
    direct: frozenset[Path] = frozenset()


_ATTEMPT = re.compile(r"^(?P<head>.+?_.+?)_attempt_(?P<order>[\d-]+)(?:_.*)?$")


def blackboard_prefix(names: Iterable[str]) -> str:
    """The assignment's part of Blackboard's names in one export (`<assignment>_<username>_
    attempt_…`): the words (split at `_`) that all of them start with, leaving each at least
    one word of username. Usernames may hold `_` themselves (`john_smith`), so the username is
    what follows the export's common part, not the last word. Empty for fewer than two such
    names (the last word is then the username, as before)."""
    heads = [
        match["head"].split("_")
        for name in names
        if not _CANVAS.match(stem := Path(name).stem) and (match := _ATTEMPT.match(stem))
    ]
    if len(heads) < 2:
        return ""
    common: list[str] = []
    for words in zip(*(head[:-1] for head in heads), strict=False):  # the shortest's words
        if any(word != words[0] for word in words):
            break
        common.append(words[0])
    return "_".join(common)


def names_a_file_of_its_own(name: str) -> bool:
    """Whether a file name is Canvas's or Moodle's export name, whose end is the name of the
    file the student uploaded (anything the student chose, an `_attempt_<date>` included)."""
    stem = Path(name).stem
    return bool(_CANVAS.match(stem) or _MOODLE_FILE.match(stem))


def student_of(name: str, is_dir: bool, prefix: str = "") -> tuple[str, str]:
    """(student, ordering key) for a file or folder name in an export; `prefix`: the
    assignment's part of the export's Blackboard names (blackboard_prefix)."""
    stem = name if is_dir else Path(name).stem
    blackboard = prefix and not is_dir and not _CANVAS.match(stem) and _ATTEMPT.match(stem)
    if blackboard and blackboard["head"].startswith(prefix + "_"):
        return blackboard["head"][len(prefix) + 1 :], blackboard["order"].zfill(24)
    for pattern in (_MOODLE,) if is_dir else (_MOODLE_FILE, _CANVAS, _BLACKBOARD):
        if match := pattern.match(stem):
            groups = match.groupdict()
            student = "_".join(filter(None, (groups["student"], groups.get("user"))))
            return student, (groups.get("order") or "").zfill(24)
    return stem, ""


NOT_UTF8 = (
    "the file name is not valid UTF-8 (an archive unpacked with the wrong encoding?); "
    "skipped: rename it and run again"
)


# What `grader grade --out OUT` writes in OUT: not submissions, when OUT is the class folder.
OUTPUTS = ("gradebook.sqlite", "grades.csv", "report.html", "feedback", "grader-faults.log")
# SQLite's files beside the gradebook while it is written (or after a crash).
_SIDECARS = tuple(f"gradebook.sqlite{end}" for end in ("-wal", "-shm", "-journal"))
# Exactly these names are passed over: a student's `feedback_ada.ipynb` or `report.html.ipynb`
# is a notebook like any other, and a notebook in the feedback folder is said (never silent).
_OURS = frozenset(OUTPUTS + _SIDECARS)
IN_OUTPUT_FOLDER = (
    "inside the grader's feedback folder (--out is the class folder); skipped: "
    "move it out of feedback/ to grade it"
)


# Inside a student's folder (a clone of the student's repository, say) a link could make the
# grader read, and grade as the student's, any file it may read: the reference solution,
# another student's notebook. The class folder's own entries are the instructor's: a link
# there is followed.
LINKED = (
    "a symbolic link, inside a student's folder; skipped: a submission must be a file of its own"
)


def find_submissions(
    source: Path,
    scratch: Path | None,
    out: Path | None = None,
    untouched: Collection[str] = (),
    best: bool = False,
    zone: tzinfo | None = None,
) -> Found:
    """Every student's notebook under `source` (a folder, or a .zip unpacked into `scratch`);
    the output folder `out` and what the grader writes there are passed over. `untouched`:
    the SHA-256 of the exercise notebooks, never preferred among a student's notebooks.
    Each student's latest notebook (by the export's order, then name) is chosen; `best`: the
    others are graded too and the best kept (the line about them says so). `zone`: the
    course's time zone, which a .zip's entry times (local, without a zone) are read in."""
    if source.is_file() and source.suffix == ".zip":
        if scratch is None:
            raise ValueError("a .zip needs a scratch folder to be unpacked into")
        source, problems = unpack(source, scratch, zone)
    else:
        problems = []
    if not source.is_dir():
        raise UsageError(
            f"{valid_text(str(source))}: not a folder of submissions or a .zip of them"
        )
    if has_invalid_text(str(source.resolve())):
        raise UsageError(
            f"{valid_text(str(source.resolve()))}: the folder's path is not valid UTF-8; "
            "rename the folder (or the one it is in) and run again"
        )
    found: dict[str, list[tuple[str, Path]]] = {}
    direct: set[Path] = set()
    ours = _written_by_us(source, out)
    items = sorted(source.iterdir())
    prefix = blackboard_prefix(i.name for i in items if not i.is_dir())
    for item in items:
        if item.name.startswith((".", "__MACOSX")) or ours(item):
            if _hidden_notebook(item):
                problems.append(f"{valid_text(item.name)}: {HIDDEN}")
            elif item.name == "feedback" and item.is_dir() and not item.is_symlink():
                problems.extend(_notebooks_said(item, source))
            continue
        if has_invalid_text(item.name):
            problems.append(f"{valid_text(item.name)}: {NOT_UTF8}")
            continue
        student, order = student_of(item.name, item.is_dir(), prefix)
        if item.is_dir():
            notebooks, refused = _notebooks_in(item, source)
            problems.extend(refused)
            if notebooks:
                found.setdefault(student, []).extend((order, p) for p in notebooks)
            elif not refused:
                problems.append(f"{item.name}/: no notebook inside; skipped")
        elif item.suffix in SUFFIXES:
            # A link of the instructor's is read where it points (reading never follows one).
            if _loops(item):
                problems.append(f"{item.name}: a link that leads back to itself; skipped")
                continue
            path = item.resolve() if item.is_symlink() else item
            if path.exists() and not path.is_file():  # a pipe's read waits forever
                problems.append(f"{item.name}: {NOT_A_FILE}")
            else:  # a link to nothing is graded: "no such file", as an unreadable one
                found.setdefault(student, []).append((order, path))
                direct.add(path)
        else:
            problems.append(f"{item.name}: not a notebook (.ipynb) or script (.py); skipped")
    chosen = []
    others: dict[Path, list[Path]] = {}
    for student, paths in sorted(found.items()):
        paths.sort(key=lambda pair: (pair[0], str(pair[1])))
        candidates = [p for _, p in paths]
        if len(paths) > 1:
            # An untouched copy of the exercise (a cloned repository holds one beside the
            # student's own notebook) is graded only when there is nothing else.
            own = [p for p in candidates if _hash_or_nothing(p) not in untouched] or candidates
            names = ", ".join(_shown(p, source) for p in candidates)
            which = (
                "the last" if own == candidates else "the last that is not the exercise as given"
            )
            if len(own) > 1:
                others[own[-1]] = own[:-1]
            if best and len(own) > 1:
                which = "each, and the best is kept (keep: best); the latest is"
            problems.append(
                f"{student}: {len(paths)} submissions ({names}); graded {which}, {own[-1].name}"
            )
            candidates = own
        chosen.append((student, candidates[-1]))
    if not chosen and not problems:
        problems.append(f"{source}: no submissions found (the folder is empty)")
    return Found(chosen, problems, others, source, frozenset(direct))


HIDDEN = "a hidden file (its name starts with '.'); skipped: rename it to grade it"
NOT_A_FILE = "not a file (a named pipe, a device or a folder); skipped"


def _hidden_notebook(item: Path) -> bool:
    """A notebook or script of the class folder that is hidden (`.x.ipynb`): skipped, but
    said, as a student's file may be. Hidden folders (`.git`, checkpoints), other hidden
    files and macOS's `._x.ipynb` metadata twins are nobody's submission: passed over."""
    return (
        item.name.startswith(".")
        and not item.name.startswith("._")
        and item.suffix in SUFFIXES
        and item.is_file()
    )


def _notebooks_said(feedback: Path, source: Path) -> list[str]:
    """A line for each notebook in the output's feedback folder when it is the class folder's
    `feedback/` (a student's folder of that name, say): not graded, but never silently."""
    return [
        f"{valid_text(str(path.relative_to(source)))}: {IN_OUTPUT_FOLDER}"
        for path in sorted(feedback.rglob("*"))
        if path.suffix in SUFFIXES and path.is_file()
    ]


def _notebooks_in(folder: Path, source: Path) -> tuple[list[Path], list[str]]:
    """The notebooks anywhere in a student's folder, and a line for each one refused."""
    notebooks: list[Path] = []
    refused: list[str] = []
    for path in sorted(folder.rglob("*.ipynb")):
        inside = path.relative_to(folder).parts
        if any(part.startswith((".", "__MACOSX")) for part in inside):
            continue  # hidden, as Jupyter hides them: .ipynb_checkpoints, .git, a .venv
        if has_invalid_text(str(path)):
            refused.append(f"{valid_text(str(path.relative_to(source)))}: {NOT_UTF8}")
        elif path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
            refused.append(f"{path.relative_to(source)}: {LINKED}")
        elif path.exists() and not path.is_file():
            refused.append(f"{path.relative_to(source)}: {NOT_A_FILE}")
        else:
            notebooks.append(path)
    return notebooks, refused


def content_hash(data: bytes) -> str:
    """What identifies a submission's content (in the gradebook, and among its notebooks)."""
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> str:
    """The content hash of a file's bytes, as the gradebook stores it."""
    return content_hash(path.read_bytes())


def _hash_or_nothing(path: Path) -> str:
    try:
        return file_hash(path)
    except OSError:  # unreadable: it is refused when read for grading
        return ""


def _shown(path: Path, source: Path) -> str:
    try:
        return str(path.relative_to(source))
    except ValueError:  # a link of the instructor's, resolved to a file elsewhere
        return str(path)


def _written_by_us(source: Path, out: Path | None) -> Callable[[Path], bool]:
    """Whether an entry of the class folder `source` is the output folder `out` (itself, or
    a link to it) or a file the grader writes in it. `source` and `out` are resolved once per
    listing, an entry only when it is a link: the rest resolve to `source`'s own path."""
    if out is None:
        return lambda item: False
    where, folder = out.resolve(), source.resolve()
    inside = folder == where

    def ours(item: Path) -> bool:
        if _loops(item):
            return False  # a link that leads back to itself (listed as one, never opened)
        resolved = item.resolve() if item.is_symlink() else folder / item.name
        return resolved == where or (inside and item.name in _OURS)

    return ours


def unpack(archive: Path, scratch: Path, zone: tzinfo | None = None) -> tuple[Path, list[str]]:
    """Extract a zip safely: no absolute paths, no `..`, no more than MAX_ZIP_BYTES. An entry
    that cannot be unpacked (a file and a folder of the same name, an encrypted file) is
    skipped with a line, and every other entry is unpacked: one bad entry never stops a class.
    Each file keeps its entry's time, a local time read in `zone` (the course's), else in
    this machine's. Returns the folder of submissions and those lines."""
    target = scratch / UNPACKED
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = [m for m in bundle.infolist() if not m.is_dir()]
            for member in members:
                member.filename = entry_name(member)
            if sum(m.file_size for m in members) > MAX_ZIP_BYTES:
                raise UsageError(f"{archive}: unpacks to more than {MAX_ZIP_BYTES >> 30} GB")
            kept, problems = _without_clashes([m for m in members if _safe_parts(m)])
            problems[:0] = [
                f"{valid_text(m.filename)}: {OUTSIDE}" for m in members if not _safe_parts(m)
            ]
            for member in kept:
                if problem := _extract(bundle, member, target, zone):
                    problems.append(problem)
    except zipfile.BadZipFile as exc:
        raise UsageError(f"{archive}: not a valid zip file ({exc})") from None
    entries = [p for p in target.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    # An export that wraps everything in one folder: look inside it.
    if len(entries) == 1 and entries[0].is_dir() and not _MOODLE.match(entries[0].name):
        return entries[0], problems
    return target, problems


def entry_name(member: zipfile.ZipInfo) -> str:
    """An entry's name as its maker meant it: one without the zip's UTF-8 flag is read as
    cp437 (the format's old default), but most tools that leave the flag off write UTF-8
    (`ödegaard` came out `├╢degaard`, matching no student); cp437 stays where it is not."""
    if member.flag_bits & 0x800:
        return member.filename
    try:
        return member.filename.encode("cp437").decode("utf-8")
    except UnicodeError:
        return member.filename


UNPACKED = "unpacked"  # the folder of the scratch folder a .zip is unpacked into
OUTSIDE = "a path out of the zip's folder (absolute, or with ..): not unpacked; skipped"


def _safe_parts(member: zipfile.ZipInfo) -> tuple[str, ...]:
    """The entry's path, or () for one that would land outside the folder (never unpacked)."""
    parts = PurePosixPath(member.filename).parts
    if member.filename.startswith("/") or ".." in parts:
        return ()
    return parts


MAX_NAMED = 3


def _without_clashes(
    members: list[zipfile.ZipInfo],
) -> tuple[list[zipfile.ZipInfo], list[str]]:
    """The entries to unpack, and a line for each path the zip holds both as a file and as a
    folder (`alice`, `alice/hw.ipynb`): a file system holds only one of them, and which one
    would depend on the order of the entries, so neither is unpacked."""
    files = {_safe_parts(m) for m in members}
    folders = {path[:n] for path in files for n in range(1, len(path))}
    clashes = files & folders
    # A clash inside another one (`a`, `a/b`, `a/b/c`) is named by the outer one only.
    outer = sorted(c for c in clashes if not any(_within(c, o) for o in clashes if o != c))
    problems = []
    for clash in outer:
        names = [m.filename for m in members if _within(_safe_parts(m), clash)]
        shown = ", ".join(names[:MAX_NAMED])
        more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
        problems.append(
            f"{'/'.join(clash)}: the zip holds both a file and a folder of this name "
            f"({shown}{more}); skipped: rename one and run again"
        )
    kept = [m for m in members if not any(_within(_safe_parts(m), c) for c in outer)]
    return kept, problems


def _within(path: tuple[str, ...], folder: tuple[str, ...]) -> bool:
    """Whether `path` is `folder` itself or lies under it."""
    return path[: len(folder)] == folder


# What unpacking one entry may raise: a name the file system refuses (OSError, ValueError),
# an encrypted entry (RuntimeError), an unknown compression (NotImplementedError), damaged
# data (BadZipFile, zlib.error, EOFError).
_ENTRY_ERRORS = (
    OSError,
    ValueError,
    RuntimeError,
    NotImplementedError,
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
)


def _extract(
    bundle: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, zone: tzinfo | None = None
) -> str | None:
    """Unpack one entry; None when done, else the line that says why it was skipped."""
    destination = target.joinpath(*_safe_parts(member))
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        with bundle.open(member) as src, destination.open("wb") as dst:
            shutil.copyfileobj(src, dst)
        # The entry's own time (when the LMS wrote it), for a submission time of last resort.
        stamp = _entry_time(member.date_time, zone)
        os.utime(destination, (stamp, stamp))
    except _ENTRY_ERRORS as exc:
        with contextlib.suppress(OSError):
            destination.unlink()  # a half-written file would be graded as a submission
        return f"{member.filename}: could not be unpacked ({exc}); skipped"
    return None


def _entry_time(fields: tuple[int, int, int, int, int, int], zone: tzinfo | None) -> float:
    """A zip entry's time (local, as the LMS's machine wrote it) as a timestamp: read in the
    course's `zone`, else this machine's; a date no calendar holds (month 0) as mktime
    makes it, never a reason to skip the file."""
    if zone is not None:
        with contextlib.suppress(ValueError):
            return datetime(*fields, tzinfo=zone).timestamp()
    return time.mktime((*fields, 0, 0, -1))


def _loops(item: Path) -> bool:
    """Whether `item` is a link that leads back to itself (ELOOP): pathlib's resolve() raises
    RuntimeError for one up to Python 3.12 and returns a path from 3.13 on."""
    try:
        os.stat(item)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
