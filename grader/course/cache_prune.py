"""The cache folder kept bounded (course/cache_home.py): entries unused for STALE_DAYS go, and
while the folder is over its budget (BUDGET_BYTES, or $GRADER_CACHE_BUDGET) the least
recently used go first.

"Used" is a file's modification time: each memo that reads an entry marks it (cache_home.used:
one `os.utime` per hit, a few microseconds), so a course run that is only ever read stays.
Compiled templates (render/html.py) are the exception: their modification time says when
jinja wrote them, so a read sets their access time alone, and for them the later of the two
counts. (Access times alone would not do: a folder mounted `noatime` never updates them, and
`relatime` only daily.)

When: at most once a day per folder (the marker LAST_PRUNED's modification time), decided at
the exit of a `grader` command (one `stat`, cache_home.prune_due: this module is imported
only when a prune is due), and done in a detached child process at the
lowest priority (`python -P -m grader.course.cache_prune FOLDER`, in `/`). Not on a thread: `grader`
ends with `os._exit` after its exit handlers, which would cut a thread off, and the scan of
tens of thousands of files would hold the interpreter's lock while the command still works;
not inline: a day's first check would wait for it. The child outlives the command and costs
the command one process spawn a day.

What: only files whose names are the grader's own (ENTRY); links are never followed nor
removed; an entry of several files is removed whole, the file its readers look up first
before the files it names (derived fingerprints before their pairs, a head start's plan
before its first messages), so that a removal cut off half way leaves a miss, never an
entry read without part of itself. Temporary files (`*.tmp`) go only once untouched for
TMP_SECONDS: a writer renames its own within milliseconds.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.course.cache_home import (
    LAST_PRUNED,
    PRUNE_EVERY,
    last_pruned,
    mark,
    private,
    prune_due,
)

STALE_DAYS = 30  # an entry unused this long goes
BUDGET_BYTES = 1 << 30  # the folder's size past which the least recently used go
BUDGET_ENV = "GRADER_CACHE_BUDGET"  # e.g. 500M, 2G, or a number of bytes
TMP_SECONDS = 3600  # a temporary file untouched this long is left over from a dead writer
CHECK_SECONDS = 3600  # how often a long-running process (grader serve) asks whether one is due
TEMPLATES = "templates"  # render/html.py's compiled templates, the only sub-folder

_HEX = "[0-9a-f]{16,64}"
# Each name the grader writes, as a pattern whose group 1 is the entry it belongs to: its
# readers look up the file named by that key and the suffix of its first alternative first.
ENTRY = (
    rf"(course-run-{_HEX})\.bin",
    rf"(cases-{_HEX})\.pickle",
    rf"(derived-.+?-{_HEX})(?:\.bin|-pairs-.+\.bin)",
    rf"(head-start-{_HEX})(?:\.json|-{_HEX}\.init)",
    rf"(config-parsed-{_HEX})\.json",
    rf"(config-valid-{_HEX})",
    rf"(preflight-.+-{_HEX})\.ok",
    rf"(sandbox-probe-{_HEX})\.ok",
    rf"(view-stage-{_HEX})\.json",
    rf"(dataclass-methods-{_HEX})\.marshal",
    rf"(__jinja2_{_HEX})\.cache",
)
# A writer's temporary file: one of those names, or a prefix of one, then `.tmp`.
PREFIXES = (
    "course-run-",
    "cases-",
    "derived-",
    "head-start-",
    "config-parsed-",
    "config-valid-",
    "preflight-",
    "sandbox-probe-",
    "view-stage-",
    "dataclass-methods-",
    "__jinja2_",
    LAST_PRUNED,
)


@dataclass
class Entry:
    """One cache entry: its files (the first is the one its readers look up first), their
    size and the latest time one of them was used (see the module)."""

    files: list[Path] = field(default_factory=list)
    size: int = 0
    used: float = 0.0


@dataclass(frozen=True)
class Outcome:
    """What a prune or clean removed, and what is left."""

    removed: int
    freed: int
    left: int
    size: int


@functools.cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    """ENTRY, compiled when first needed (not by a command's exit that prunes nothing)."""
    return tuple(map(re.compile, ENTRY))


def budget() -> int:
    """The size budget in bytes: $GRADER_CACHE_BUDGET (`500M`, `2G`, `800K` or bytes), else
    BUDGET_BYTES (also for a value that is no size)."""
    given = parse_size(os.environ.get(BUDGET_ENV, ""))
    return BUDGET_BYTES if given is None else given


def parse_size(text: str) -> int | None:
    """Bytes from `500M`, `2G`, `1.5G`, `800K` or a plain number; None for anything else."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMG]?)B?\s*", text.upper())
    if not found:
        return None
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[found.group(2)]
    return int(float(found.group(1)) * scale)


def entries(folder: Path) -> tuple[dict[str, Entry], list[Path]]:
    """The grader's entries in `folder` and its templates folder, by key, and the temporary
    files left there. Links and names that are not the grader's are left out."""
    found: dict[str, Entry] = {}
    temporary: list[Path] = []
    for place in (folder, folder / TEMPLATES):
        if place != folder and not _real_folder(place):
            continue
        try:
            listing = list(os.scandir(place))
        except OSError:
            continue
        for item in listing:
            _add(found, temporary, place, item)
    for entry in found.values():
        entry.files.sort(key=lambda f: (len(f.name), f.name))  # the key's own file first
    return found, temporary


def _real_folder(place: Path) -> bool:
    try:
        return os.path.isdir(place) and not os.path.islink(place)
    except OSError:
        return False


def _add(
    found: dict[str, Entry], temporary: list[Path], place: Path, item: os.DirEntry[str]
) -> None:
    """File `item` counted in its entry, or as a temporary file; anything else (a name that
    is not the grader's, a link, a folder) left out."""
    name = item.name
    try:
        if not name.startswith(PREFIXES) or not item.is_file(follow_symlinks=False):
            return
        info = item.stat(follow_symlinks=False)
    except OSError:
        return
    if name.endswith(".tmp"):
        temporary.append(Path(place, name))
        return
    matched = next((m for m in (p.fullmatch(name) for p in _patterns()) if m), None)
    if matched is None:
        return
    entry = found.setdefault(str(Path(place, matched.group(1))), Entry())
    entry.files.append(Path(place, name))
    entry.size += info.st_size
    read = info.st_atime if place.name == TEMPLATES else 0.0  # see the module
    entry.used = max(entry.used, info.st_mtime, read)


def _remove(entry: Entry) -> int:
    """Remove an entry's files, the one its readers look up first first; the bytes freed."""
    freed = 0
    for path in entry.files:
        try:
            size = os.lstat(path).st_size
            os.unlink(path)
        except OSError:
            continue
        freed += size
    return freed


def _old_temporary(temporary: list[Path], now: float) -> list[Path]:
    """The temporary files no writer has touched for TMP_SECONDS."""
    old = []
    for path in temporary:
        try:
            if now - os.lstat(path).st_mtime > TMP_SECONDS:
                old.append(path)
        except OSError:
            continue
    return old


def prune(folder: Path, now: float | None = None, limit: int | None = None) -> Outcome:
    """Remove from `folder` the entries unused for STALE_DAYS, then, while it is over
    `limit` bytes (default: budget()), the least recently used; and temporary files left
    over. Nothing in a folder that is not private."""
    if not private(folder):
        return Outcome(0, 0, 0, 0)
    now = time.time() if now is None else now
    limit = budget() if limit is None else limit
    found, temporary = entries(folder)
    removed = freed = 0
    for path in _old_temporary(temporary, now):
        removed += _unlink(path)
    kept = sorted(found.values(), key=lambda e: e.used)
    total = sum(e.size for e in kept)
    spared = 0
    while kept and (now - kept[0].used > STALE_DAYS * 86400 or total > limit):
        entry = kept.pop(0)
        if _used_since(entry):  # a command read or wrote it since the scan: in use
            spared += 1
            continue
        freed += _remove(entry)
        total -= entry.size
        removed += 1
    return Outcome(removed, freed, len(kept) + spared, total)


def _used_since(entry: Entry) -> bool:
    """Whether a file of `entry` was written or read after the scan found it last used."""
    for path in entry.files:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        read = info.st_atime if path.parent.name == TEMPLATES else 0.0
        if max(info.st_mtime, read) > entry.used:
            return True
    return False


def clean(folder: Path) -> Outcome:
    """Remove every entry of the grader's from `folder` (and the temporary files left over
    by writers that are gone); what else is there is left alone."""
    found, temporary = entries(folder)
    freed = sum(_remove(entry) for entry in found.values())
    removed = len(found) + sum(_unlink(p) for p in _old_temporary(temporary, time.time()))
    _unlink(folder / LAST_PRUNED)
    left, _ = entries(folder)
    return Outcome(removed, freed, len(left), sum(e.size for e in left.values()))


def _unlink(path: Path) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


def measure(folder: Path) -> tuple[int, int]:
    """How many entries of the grader's `folder` holds, and their size in bytes."""
    found, _ = entries(folder)
    return len(found), sum(e.size for e in found.values())


def keep_pruning(stop: threading.Event, every: float = CHECK_SECONDS) -> threading.Thread:
    """For a process that runs for days (`grader serve`: a command prunes only at its exit):
    a daemon thread that starts a prune whenever one is due (cache_home.prune_due), now and
    then every `every` seconds, until `stop` is set."""

    def watch() -> None:
        while True:
            if (folder := prune_due()) is not None:
                after_command(folder)
            if stop.wait(every):
                return

    thread = threading.Thread(target=watch, name="grader-cache-prune", daemon=True)
    thread.start()
    return thread


def after_command(folder: Path) -> None:
    """When `folder` is due a prune (cache_home.prune_due): mark it pruned now (so that the
    next commands do not start one too) and start the pruning child, detached. Nothing when
    the mark cannot be written (no such folder, or a read-only one): nothing could be removed
    there either, and every command would start a child."""
    mark(folder / LAST_PRUNED, f"{os.getpid()}\n")
    marked = last_pruned(folder)
    if marked is None or time.time() - marked >= PRUNE_EVERY:
        return
    import subprocess

    try:
        subprocess.Popen(
            # -P and cwd "/": `-m` would otherwise put the command's working folder first on
            # the child's import path, and a `grader` folder there (a student's checkout)
            # would run outside the sandbox in our place.
            [sys.executable, "-P", "-m", "grader.course.cache_prune", str(folder)],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not killed with the command's terminal or group
            close_fds=True,
        )
    except OSError:
        return  # tried again tomorrow


def _main(argv: list[str]) -> int:
    """The pruning child: the lowest priority, then prune the folder named."""
    with contextlib.suppress(OSError):
        os.nice(19)
    if len(argv) != 1:
        return 2
    prune(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
