"""What a sandboxed worker sees of the host's files, staged in a folder whose path names
nothing of the host.

A bind mount's source shows in the sandbox's mount table (/proc/self/mountinfo): binding the
checkout's `grader/`, a virtual environment's site-packages or the course's data folder would
tell a student where the course lives. So everything the worker needs from outside /usr is
staged in a folder `grader-view-<random or digest>` under a temporary folder, as hard links
where the file system allows (copies elsewhere), and only that folder is bound:

    lib/       the grader package, what the worker imports (numpy, PyYAML), the assignments'
               preloads and the distributions they require, without their test suites.
               Nothing else of the environment: a notebook imports the standard library,
               numpy and the preloads;
    python/    the interpreter's prefix, only when it lies outside /usr and the system has no
               interpreter of the same version;
    course/    the data files the assignments list (one per process, removed at exit).

lib/ and python/ are kept across runs under a name derived from what they hold, so a second
run finds them (a few milliseconds) instead of staging again (a tenth of a second, more with
matplotlib). A stage is only used when it is a folder this user owns that no one else can
write to, and it is built under a temporary name and renamed into place, so one found is
whole. Stages unused for a week are removed. Each is private to the grader (and, for root,
to the group bubblewrap runs as).
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course.blake import blake2b
from grader.run.programs import temporary_folder

if TYPE_CHECKING:  # importlib.metadata (15-20 ms) is imported where distributions are found
    from importlib import metadata

    from grader.course.files import DataFile

PREFIX = "grader-view-"
VERSION = 1  # of the stage's layout: a change makes every cached stage a miss
# What the worker's own modules import from outside the standard library, checked against a
# worker's imports by tests/test_view.py; and PyYAML, which the worker no longer imports (a
# config's YAML is read on the grader's side only) but notebooks could always import.
WORKER_NEEDS = ("numpy", "yaml")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Staged:
    """A staged folder on the host and the import path inside the sandbox it stands for."""

    folder: Path
    paths: tuple[str, ...]  # folders under /usr to add to the import path, bound as they are


def _owner_group(as_nobody: bool) -> int:
    """The group that must read a stage: bubblewrap's (nobody's) when the grader is root."""
    if not as_nobody:
        return -1
    import pwd

    try:
        return pwd.getpwnam("nobody").pw_gid
    except KeyError:
        return 65534


def _parent(near: Iterable[str]) -> str:
    """Where stages go: a temporary folder on the file system of `near` where there is one
    (so that files are linked, not copied), else the system's temporary folder."""
    devices = {os.stat(p).st_dev for p in near if os.path.exists(p)}
    places = [temporary_folder(), "/var/tmp"]
    same = (p for p in places if os.path.isdir(p) and os.stat(p).st_dev in devices)
    return next(same, places[0])


def _mode(as_nobody: bool) -> int:
    return 0o750 if as_nobody else 0o700


def _protect(folder: Path, as_nobody: bool) -> None:
    """Only the grader (and, for root, the group bubblewrap runs as) may read a stage."""
    if as_nobody:
        os.chown(folder, -1, _owner_group(True))
    folder.chmod(_mode(as_nobody))


def _remove_at_exit(folder: Path) -> None:
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:  # not in a fork that inherited the handler
            import shutil  # here, as tempfile and shutil below: a found stage needs neither

            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)


def _private_folder(as_nobody: bool, near: Iterable[str]) -> Path:
    """A new folder for a stage, removed when this process exits."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=_parent(near)))
    _protect(folder, as_nobody)
    _remove_at_exit(folder)
    return folder


def _ours(folder: Path, as_nobody: bool) -> bool:
    """Whether `folder` is a finished stage this user made: a real folder it owns that no
    one else can write to (another user cannot make one, so none can be planted)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.geteuid()
        and stat.S_IMODE(info.st_mode) == _mode(as_nobody)
        and (not as_nobody or info.st_gid == _owner_group(True))
    )


STALE_SECONDS = 7 * 24 * 3600


def _prune(parent: str, keep: Path, as_nobody: bool) -> None:
    """Remove this user's cached stages unused for a week (a new grader version or
    environment leaves its old stage behind)."""
    now = time.time()
    for old in Path(parent).glob(PREFIX + "*"):
        try:
            unused = now - os.lstat(old).st_mtime > STALE_SECONDS
        except OSError:
            continue
        if old != keep and unused and _ours(old, as_nobody):
            import shutil

            shutil.rmtree(old, ignore_errors=True)


def _cached(
    signature: str, as_nobody: bool, near: Iterable[str], build: Callable[[Path], None]
) -> Path:
    """A stage kept across runs under a name derived from what it holds (`signature`):
    the first run builds it (a few tenths of a second), later ones find it. Built under a
    temporary name and renamed into place, so a stage found is always whole."""
    parent = _parent(near)
    digest = blake2b(f"{os.geteuid()}\0{as_nobody}\0{signature}".encode()).hexdigest()
    final = Path(parent) / f"{PREFIX}{digest[:20]}"
    if _ours(final, as_nobody):
        os.utime(final)
        return final
    import shutil
    import tempfile

    fresh = Path(tempfile.mkdtemp(prefix=PREFIX + "new-", dir=parent))
    try:
        build(fresh)
        _protect(fresh, as_nobody)
        os.rename(fresh, final)
    except OSError:
        if _ours(final, as_nobody):  # another run finished the same stage first
            shutil.rmtree(fresh, ignore_errors=True)
            return final
        if not fresh.exists():
            raise
        _protect(fresh, as_nobody)
        _remove_at_exit(fresh)  # a name taken by something else: use this one, once
        return fresh
    _prune(parent, final, as_nobody)
    return final


def _place(source: str, target: str, as_nobody: bool, mode: int | None = None) -> None:
    """`source` at `target`: a hard link, or a copy where a link cannot be made or would not
    be readable by bubblewrap's user. `mode` is the source's, when the caller has it."""
    if as_nobody and mode is None:
        mode = os.stat(source).st_mode
    if not (as_nobody and mode is not None and not mode & stat.S_IROTH):
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or links to others' files are not allowed
            pass
    import shutil

    shutil.copyfile(source, target)
    executable = os.stat(source).st_mode & stat.S_IXUSR
    os.chmod(target, 0o755 if executable else 0o644)


def _tree(
    source: str, target: str, as_nobody: bool, skip: Sequence[str] = (), root: str = ""
) -> None:
    """A folder tree staged file by file, without the folders named in `skip` (at any
    depth) and without links that lead out of it."""
    root = root or os.path.realpath(source)
    os.mkdir(target, 0o755)
    with os.scandir(source) as entries:
        for entry in entries:
            into = os.path.join(target, entry.name)
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if real == root or real.startswith(root + os.sep):
                    os.symlink(os.readlink(entry.path), into)
            elif entry.is_dir():
                if entry.name not in skip:
                    _tree(entry.path, into, as_nobody, skip, root)
            elif entry.is_file():
                mode = entry.stat().st_mode if as_nobody else None
                _place(entry.path, into, as_nobody, mode)


# Test suites shipped inside packages: never imported by a notebook, half of numpy's files.
PACKAGE_SKIP = ("tests",)


def _entry(site: Path, top: str, target: Path, as_nobody: bool) -> None:
    """One top-level entry of a site folder (a package folder, or a module with its cached
    byte code)."""
    source = site / top
    if source.is_dir() and not source.is_symlink():
        if not (target / top).exists():
            _tree(str(source), str(target / top), as_nobody, PACKAGE_SKIP)
    elif source.is_file() and not (target / top).exists():
        _place(str(source), str(target / top), as_nobody)
        stem = top.split(".")[0]
        for cached in (site / "__pycache__").glob(f"{stem}.*.pyc"):
            (target / "__pycache__").mkdir(mode=0o755, exist_ok=True)
            if not (target / "__pycache__" / cached.name).exists():
                _place(str(cached), str(target / "__pycache__" / cached.name), as_nobody)


def _required(dist: metadata.Distribution) -> list[str]:
    """The distributions `dist` needs, without those of its optional extras."""
    names = []
    for line in dist.requires or ():
        requirement, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        found = _NAME.match(requirement.strip())
        if found:
            names.append(found.group(0))
    return names


def _loose(module: str) -> tuple[str, str] | None:
    """For a module no distribution of its own name provides: its folder on the import path
    and its top-level entry there; None for the standard library (the sandbox has the
    interpreter's own)."""
    import sysconfig
    from importlib import util

    top = module.split(".")[0]
    try:
        spec = util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not os.path.isabs(spec.origin):
        return None
    locations = list(spec.submodule_search_locations or ())
    entry = locations[0] if locations else spec.origin
    site = os.path.dirname(os.path.realpath(entry))
    stdlib = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
    if site in {os.path.realpath(p) for p in stdlib} or site.endswith("lib-dynload"):
        return None
    return site, os.path.basename(entry)


def _distribution(name: str) -> metadata.Distribution | None:
    from importlib import metadata

    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def distributions(modules: Sequence[str]) -> list[metadata.Distribution]:
    """The distributions named like `modules` (numpy, matplotlib …), with every
    distribution they require."""
    found: dict[str, metadata.Distribution] = {}
    todo = [d for d in (_distribution(m.split(".")[0]) for m in modules) if d is not None]
    while todo:
        dist = todo.pop()
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in found:
            continue
        found[key] = dist
        # a requirement for another platform or Python is not installed: left out
        todo += [d for d in map(_distribution, _required(dist)) if d is not None]
    return list(found.values())


def _site(dist: metadata.Distribution) -> str:
    return os.path.realpath(str(dist.locate_file("")))


def _stage_distribution(dist: metadata.Distribution, lib: Path, as_nobody: bool) -> None:
    """`dist`'s top-level entries staged into `lib`."""
    site = Path(_site(dist))
    tops = {f.parts[0] for f in dist.files or () if f.parts and f.parts[0] not in ("..", "/")}
    for top in sorted(tops - {"__pycache__"}):
        _entry(site, top, lib, as_nobody)


def grader_folder() -> Path:
    """The grader package's own folder."""
    return Path(__file__).resolve().parent.parent


def _tree_signature(folder: str) -> list[str]:
    """What changes when a file of `folder` is added, removed, replaced or edited."""
    found = []
    for root, _, files in os.walk(folder):
        for name in files:
            info = os.lstat(os.path.join(root, name))
            found.append(f"{root}/{name}:{info.st_ino}:{info.st_mtime_ns}:{info.st_size}")
    return sorted(found)


def _dist_signature(dist: metadata.Distribution) -> str:
    record = dist.read_text("RECORD") or ""
    digest = blake2b(record.encode()).hexdigest()
    return f"{_site(dist)}:{dist.metadata['Name']}:{dist.version}:{digest}"


@functools.cache
def stage_lib(preload: tuple[str, ...], as_nobody: bool) -> Staged:
    """The grader package, what its worker needs (WORKER_NEEDS), the preloads and what they
    require, staged (kept across runs while none of it changes); the folder is bound at
    /sandbox/lib. Which stage that is is remembered (see _recalled) while every file and
    folder it was found from is unchanged: finding it again reads every distribution's
    metadata."""
    tree = _tree_signature(str(grader_folder()))
    memo = _memo_path(preload, as_nobody, tree)
    if (recalled := _recalled(memo, as_nobody)) is not None:
        return recalled
    staged, watched = _find_stage(preload, as_nobody, tree)
    _remember(memo, staged, watched)
    return staged


_METADATA = (".dist-info", ".egg-info", ".egg-link", ".pth")  # what installs a distribution


def _watch_stamp(watched: str) -> str:
    """What changes when what `watched` names changes: `file:PATH` when the file is written,
    replaced or removed; `dists:FOLDER` when a distribution is installed into the folder or
    removed from it (its metadata entries: not the other files a working folder on the
    import path gains and loses all the time)."""
    kind, _, path = watched.partition(":")
    if kind == "dists":
        try:
            names = sorted(name for name in os.listdir(path) if name.endswith(_METADATA))
        except OSError:
            return "-"
        text = "\0".join(names).encode(errors="surrogatepass")
        return blake2b(text, digest_size=16).hexdigest()
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_dev}:{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"


def _memo_path(preload: tuple[str, ...], as_nobody: bool, tree: list[str]) -> Path | None:
    from grader.course.cache_home import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    key = repr((VERSION, preload, as_nobody, os.geteuid(), sys.path, tree))
    digest = blake2b(key.encode(errors="surrogatepass"), digest_size=20).hexdigest()
    return folder / f"view-stage-{digest}.json"


def _recalled(memo: Path | None, as_nobody: bool) -> Staged | None:
    """The stage remembered in `memo`, when what it was found from (every distribution's
    RECORD, the distributions installed in each folder of the import path, each loose
    module) is as it was, and the stage is still a whole one of this user's; else None."""
    import json

    from grader.course.cache_home import used

    if memo is None:
        return None
    try:
        kept = json.loads(memo.read_text(encoding="utf-8"))
        folder, paths, watched = Path(kept["folder"]), kept["paths"], kept["watched"]
        same = all(_watch_stamp(path) == known for path, known in watched.items())
        if not (same and watched and _ours(folder, as_nobody) and (folder / "lib").is_dir()):
            return None
        os.utime(folder)  # in use: not pruned
        used(memo)  # nor the memo (course/cache_prune.py)
        return Staged(folder, tuple(str(p) for p in paths))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _remember(memo: Path | None, staged: Staged, watched: dict[str, str]) -> None:
    import json

    from grader.course.cache_home import mark

    if memo is None or staged.folder.name.startswith(PREFIX + "new-"):
        return  # a stage of this run only (its name was taken): nothing to recall
    kept = {"folder": str(staged.folder), "paths": list(staged.paths), "watched": watched}
    mark(memo, json.dumps(kept))


def _find_stage(
    preload: tuple[str, ...], as_nobody: bool, tree: list[str]
) -> tuple[Staged, dict[str, str]]:
    """The stage, found from the distributions' metadata (and built when it is not there
    yet), and what it was found from, each with its stamp (_watch_stamp)."""
    modules = [*WORKER_NEEDS, *preload]
    dists = distributions(modules)
    usr = [d for d in dists if _site(d).startswith("/usr/")]
    staged = [d for d in dists if d not in usr]
    provided = {m for m in modules if _distribution(m.split(".")[0]) is not None}
    loose = {e for e in map(_loose, set(modules) - provided) if e is not None}
    loose_usr = {site for site, _ in loose if site.startswith("/usr/")}
    loose = {(site, top) for site, top in loose if site not in loose_usr}
    signature = [
        f"view {VERSION}",
        *tree,
        *map(_dist_signature, staged),
        *(f"{site}/{top}:{os.lstat(os.path.join(site, top)).st_mtime_ns}" for site, top in loose),
    ]

    def build(folder: Path) -> None:
        lib = folder / "lib"
        lib.mkdir(mode=0o755)
        _tree(str(grader_folder()), str(lib / "grader"), as_nobody)
        for dist in staged:
            _stage_distribution(dist, lib, as_nobody)
        for site, top in sorted(loose):
            _entry(Path(site), top, lib, as_nobody)

    near = [str(grader_folder()), *map(_site, staged), *(site for site, _ in loose)]
    folder = _cached("\n".join(sorted(signature)), as_nobody, near, build)
    paths = dict.fromkeys([*map(_site, usr), *sorted(loose_usr)])
    records = [
        str(dist.locate_file(f)) for dist in dists for f in dist.files or () if f.name == "RECORD"
    ]
    found_from = [
        *(f"file:{record}" for record in records),
        *(f"dists:{folder or '.'}" for folder in sys.path),
        *(f"file:{os.path.join(*entry)}" for entry in loose),
    ]
    return Staged(folder, tuple(paths)), {path: _watch_stamp(path) for path in found_from}


STDLIB_SKIP = ("site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip")


@functools.cache
def stage_python(prefix: str, binary: str, as_nobody: bool) -> Path:
    """An interpreter that lies outside /usr, staged: its binary, shared library and standard
    library (without site-packages and tests); the folder is bound at /sandbox/python."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(prefix)

    def build(folder: Path) -> None:
        (folder / "bin").mkdir(mode=0o755)
        _place(binary, str(folder / "bin" / os.path.basename(binary)), as_nobody)
        (folder / "lib").mkdir(mode=0o755)
        _tree(str(base / "lib" / version), str(folder / "lib" / version), as_nobody, STDLIB_SKIP)
        for shared in (base / "lib").glob(f"lib{version}*.so*"):
            _place(str(shared.resolve()), str(folder / "lib" / shared.name), as_nobody)

    info = os.stat(binary)
    signature = f"python {VERSION}:{binary}:{info.st_ino}:{info.st_mtime_ns}:{prefix}"
    return _cached(signature, as_nobody, [prefix], build)


@functools.cache
def stage_course(files: tuple[DataFile, ...], as_nobody: bool) -> Path:
    """The course data files, each under its name relative to the course folder; the folder
    is bound at /sandbox/course."""
    folder = _private_folder(as_nobody, [str(f.source) for f in files])
    for file in files:
        target = folder / file.name
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        if not target.exists():
            _place(str(file.source), str(target), as_nobody)
    return folder
