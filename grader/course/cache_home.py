"""Where the grader keeps what it may compute again: $GRADER_CACHE_DIR, else
$XDG_CACHE_HOME/grader, else ~/.cache/grader. The user's own folder: nothing a student's
code writes ever reaches it (their code runs only in the sandbox, which does not see it),
and a folder that someone else could write to is not used at all (what is kept there is
believed: compiled page templates, validated configs, the course's outputs)."""

from __future__ import annotations

import os
import time
from pathlib import Path

CACHE_ENV = "GRADER_CACHE_DIR"
LAST_PRUNED = "last-pruned"  # the marker whose modification time is the last prune's
PRUNE_EVERY = 24 * 3600  # seconds between two prunes of one folder (course/cache_prune.py)


def cache_dir() -> Path | None:
    """$GRADER_CACHE_DIR, else $XDG_CACHE_HOME/grader, else ~/.cache/grader; None when that
    folder exists but is not private to this user (see private), $GRADER_CACHE_DIR is
    relative (a folder of wherever the grader runs: a student's checkout, in CI), or there
    is no home folder to name one in (named_folder). A relative
    $XDG_CACHE_HOME is ignored, as its specification says."""
    folder = named_folder()
    if folder is None:
        return None
    if not os.path.lexists(folder):
        try:  # the user's alone, whatever the umask (its users write what they fill it with)
            os.makedirs(folder, 0o700, exist_ok=True)
        except OSError:
            return folder  # nothing can be kept: each user of it finds that out and goes on
    return folder if private(folder) else None


def named_folder() -> Path | None:
    """The folder the environment names (as cache_dir says), whether it exists and is
    private or not; None when $GRADER_CACHE_DIR is relative, or when neither it nor an
    absolute $XDG_CACHE_HOME is set and the user has no home folder (no $HOME, and a user id
    without an entry in the password database: `docker run -u 12345`)."""
    if given := os.environ.get(CACHE_ENV):
        folder = Path(given)
        return folder if folder.is_absolute() else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "grader"
    try:
        home = Path.home()
    except RuntimeError:  # "Could not determine home directory."
        return None
    return home / ".cache" / "grader"


def private(folder: Path) -> bool:
    """Whether `folder` is a folder of this user that no one else can write to (a link to
    one counts: ~/.cache may point elsewhere; so does a group of the user's alone, as a
    umask of 002 gives on systems with a group per user)."""
    try:
        info = os.stat(folder)
    except OSError:
        return False
    if info.st_uid != os.geteuid() or not os.path.isdir(folder) or info.st_mode & 0o002:
        return False
    return not info.st_mode & 0o020 or _own_group(info.st_gid)


def _own_group(gid: int) -> bool:
    """Whether group `gid` is this user's own: named as the user, with no other member."""
    import grp
    import pwd

    try:
        user, group = pwd.getpwuid(os.geteuid()), grp.getgrgid(gid)
    except KeyError:
        return False
    return group.gr_name == user.pw_name and not set(group.gr_mem) - {user.pw_name}


def mark(path: Path, text: str = "") -> None:
    """Write a small marker file in the cache folder whole (a temporary file, then renamed),
    or nothing where it cannot be written: a missing marker only means working it out again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError:
        return


def used(path: Path, keep_mtime: bool = False) -> None:
    """Note that an entry of the cache folder was just read, so that course/cache_prune.py
    keeps it: its modification time set to now (one system call), or with `keep_mtime` its
    access time alone (two: for files whose modification time says when they were written,
    as jinja's compiled templates). Nothing where it fails."""
    try:
        if keep_mtime:
            os.utime(path, ns=(time.time_ns(), os.stat(path).st_mtime_ns))
        else:
            os.utime(path)
    except OSError:
        return


def last_pruned(folder: Path) -> float | None:
    """When `folder` was last pruned (course/cache_prune.py), or None: never."""
    try:
        return os.stat(folder / LAST_PRUNED).st_mtime
    except OSError:
        return None


def prune_due(now: float | None = None) -> Path | None:
    """The cache folder, when it was last pruned PRUNE_EVERY ago or more (or never); else
    None. Here, not in cache_prune.py, so that a command's exit that prunes nothing imports
    nothing: one `stat` of the marker."""
    folder = cache_dir()
    if folder is None:
        return None
    last = last_pruned(folder)
    now = time.time() if now is None else now
    return folder if last is None or now - last >= PRUNE_EVERY else None
