"""Files written whole or not at all: each output the grader writes (feedback pages,
grades.csv, report.html, LMS exports, Gradescope's results) goes to a temporary name in its own
folder and is then renamed onto its name, so that a grader killed mid-write (Ctrl-C, out of
memory, a CI time limit) leaves the older complete file, or none, never a cut-off one.

No fsync: the rename is atomic for every other process, and the page cache outlives a killed
process; only a machine that loses power could lose the newest pages (see bench/whole_file.py)."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from collections.abc import Callable
from pathlib import Path

# What open(path, "w") asks of the system, less Python's text and buffer layers, and never
# over a file that is there: the temporary name is ours alone.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_SERIAL = itertools.count()  # next() on it is atomic: threads never share a name
PREFIX = ".grader-"  # a dot: a class folder's listing passes it over (batch/submissions.py)


def write_bytes(path: Path, data: bytes) -> None:
    """The file at `path` made to hold `data`, whole or not at all. A new file gets the mode
    `Path.write_bytes` gives (0o666 less the umask); a file already there keeps its mode (and
    owner, where the grader may set it), and a link is followed, as writing in place would;
    one that holds `data` already is not written again, and one this user may not write is
    refused (PermissionError), as `open` refuses it. What is not a file (a device such as
    /dev/null, a named pipe, /dev/stdout) is written to in place, as `open` writes to it: a
    rename would put a file in its stead. On any error nothing is left under the temporary
    name; the folder must exist (FileNotFoundError otherwise, as for `open`)."""
    target, old, in_place = _target(path)
    if in_place:
        with open(path, "wb") as stream:
            stream.write(data)
        return
    if old is not None and stat.S_ISREG(old.st_mode) and not os.access(target, os.W_OK):
        # A file this user may not write (chmod a-w) is refused as `open` refuses it: the
        # rename needs only the folder, and would replace it.
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    # A file that holds these bytes already is left as it is: a rerun renders a kept
    # student's page again, and a rename over a file costs ext4 a flush of the new one.
    if old is not None and old.st_size == len(data) and holds(target, data):
        return
    try:
        fd, temporary = _create(target.parent)
    except OSError as error:  # named as `open` names it: the file asked for, not ours
        error.filename = str(path)
        raise
    try:
        view = memoryview(data)
        while view:  # a write may take only part of it
            view = view[os.write(fd, view) :]
        if old is not None:
            _keep_owner_and_mode(fd, old)
        fd, open_fd = -1, fd  # closed from here on, even if interrupted
        os.close(open_fd)
        os.replace(temporary, target)
    except BaseException:  # Ctrl-C too: the temporary goes, the old file stays
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):  # the error raised is the one that stopped us
            os.unlink(temporary)
        raise


def write_text(path: Path, text: str, newline: str | None = None) -> None:
    """`text` in UTF-8 at `path`, whole or not at all (see `write_bytes`), its line ends as
    `Path.write_text(text, encoding="utf-8", newline=newline)` writes them."""
    ending = os.linesep if newline is None else newline
    if ending not in ("", "\n"):
        text = text.replace("\n", ending)
    write_bytes(path, text.encode("utf-8"))


def holds(path: Path, data: bytes) -> bool:
    """Whether the file at `path` holds exactly `data` (False when it cannot be read)."""
    return _reads(path, lambda fd: os.pread(fd, len(data) + 1, 0) == data)


def ends_with(path: Path, end: bytes) -> bool:
    """Whether the file at `path` is there and its last bytes are `end` (False when it
    cannot be read)."""

    def test(fd: int) -> bool:
        at = os.fstat(fd).st_size - len(end)
        return at >= 0 and os.pread(fd, len(end), at) == end

    return _reads(path, test)


def _reads(path: Path, test: Callable[[int], bool]) -> bool:
    """`test` of the file at `path`, opened for reading (False when it cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        return test(fd)
    finally:
        os.close(fd)


def _target(path: Path) -> tuple[Path, os.stat_result | None, bool]:
    """The file a write to `path` lands in (a link's target), its status (None if absent),
    and whether it is to be written in place: what is not a file (a device, a pipe), and a
    link no path names the target of (/dev/stdout, when it is a file that was deleted)."""
    try:
        old = os.lstat(path)
    except FileNotFoundError:
        return path, None, False
    if not stat.S_ISLNK(old.st_mode):
        return path, old, not stat.S_ISREG(old.st_mode) and not stat.S_ISDIR(old.st_mode)
    try:
        followed = os.stat(path)
    except FileNotFoundError:  # a dangling link: its target is made
        return Path(os.path.realpath(path)), None, False
    if not stat.S_ISREG(followed.st_mode) and not stat.S_ISDIR(followed.st_mode):
        return path, followed, True
    target = Path(os.path.realpath(path))
    try:
        named = os.stat(target)
    except FileNotFoundError:
        return path, followed, True
    return target, named, (named.st_dev, named.st_ino) != (followed.st_dev, followed.st_ino)


def _create(folder: Path) -> tuple[int, Path]:
    """A new file under a name of this process's own in `folder`, open for writing."""
    while True:
        temporary = folder / f"{PREFIX}{os.getpid()}-{next(_SERIAL)}.part"
        try:
            return os.open(temporary, _CREATE, 0o666), temporary
        except FileExistsError:  # left by a killed process that had this pid
            continue


def sweep(folder: Path) -> list[Path]:
    """Remove the temporaries a killed writer left in `folder` (SIGKILL, out of memory: no
    handler ran): each of our names whose process is gone. A name of a process still
    running (this one, or another grader writing there now) is left alone, and so is
    anything else. Returns what was removed; a folder that cannot be listed is skipped."""
    removed: list[Path] = []
    try:
        names = [e.name for e in os.scandir(folder) if e.name.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        pid, _, rest = name[len(PREFIX) :].partition("-")
        if not (pid.isdigit() and rest.endswith(".part") and rest[: -len(".part")].isdigit()):
            continue
        if _running(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
            removed.append(folder / name)
    return removed


def _running(pid: int) -> bool:
    """Whether a process with this pid runs (one of another user's counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """The replaced file's owner (where this process may give it) and mode on the new one."""
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):  # not ours to give: it is the writer's
            os.fchown(fd, old.st_uid, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
