"""The course's own code's outputs, cached on disk by content hash, so that a fresh process
(`grader check`, each `grader grade`) reads the references and the catalogue's fingerprints
instead of starting a child for them.

The key hashes exactly what the child is handed (the cells and every case's inputs, as the
job's bytes), the limits, the course's data files, the preloads' versions, NumPy's and the
grader's versions and the source of the child's side: any change means a new run. The file
holds the child's frames in the wire format (numbers, and words as JSON), never a pickle; a
file that does not decode is ignored and replaced. Only finished runs are cached, and none in
which a cell or a call ran out of time.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grader.course import versions
from grader.course.blake import blake2b
from grader.course.cache_home import CACHE_ENV as CACHE_ENV  # tests and derived.py find it here
from grader.course.cache_home import cache_dir as cache_dir
from grader.course.cache_home import used
from grader.course.cases import Case
from grader.course.config import AssignmentSpec, TimeLimit
from grader.course.notebook import CodeCell
from grader.run.wire import (
    Frame,
    Other,
    Seq,
    Value,
    WireError,
    decode_frame,
    encode_frame,
    split_frames,
)

Plan = Sequence[tuple[str, Sequence[Case]]]


# grader/run, whose every module runs beside the course's code (the child, the wire, the names
# put back): found beside this package, not by importing the child (which would load what only
# a student's process needs into every grader: random, its recursion cap, ~9 ms).
_RUN_FOLDER = Path(__file__).resolve().parent.parent / "run"


def run_key(
    cells: Sequence[CodeCell],
    plan: Plan,
    limits: TimeLimit,
    spec: AssignmentSpec,
    sandboxed: bool,
) -> str:
    """The content hash one run of course code is cached under (sandboxed or not: what the
    code may read differs); '' when its inputs cannot be hashed (then it is not cached)."""
    try:
        job = pickle.dumps(([(c.index, c.source) for c in cells], [(n, tuple(c)) for n, c in plan]))
    except (pickle.PicklingError, TypeError, AttributeError):
        return ""
    parts: list[bytes] = [
        job,
        repr((limits, sandboxed, spec.preload, [f.name for f in spec.files])).encode(),
        versions.version("attention-grader").encode(),
        np.__version__.encode(),
        # A preload names a module (`matplotlib.pyplot`), which no distribution is named
        # after: the version of its top-level package's (matplotlib's) is the one that counts,
        # found in the path's folder names (asking importlib.metadata for the module's name
        # found nothing, after a scan of every installed distribution: 25-50 ms).
        *(f"{name}={versions.version(name.partition('.')[0])}".encode() for name in spec.preload),
    ]
    # What runs beside the course's code (the child, the wire, the names put back) is all of
    # grader/run: any edit of it is a new key.
    files = (
        *(f.source for f in spec.files),
        *sorted(_RUN_FOLDER.glob("*.py")),
        Path(__file__),
    )
    return content_digest(parts, files)


def content_digest(parts: Iterable[bytes], files: Iterable[Path | None]) -> str:
    """The hash every cache of course work is keyed by: `parts`, then each file's bytes (a
    missing or unreadable file, or None, counts as empty), each with its length."""
    hasher = blake2b(digest_size=20)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    for path in files:
        hasher.update(_file_digest(path))
    return hasher.hexdigest()


_FILE_DIGESTS: dict[tuple[str, int, int, int, int], bytes] = {}


def _file_digest(path: Path | None) -> bytes:
    """A file's bytes, with their length, as content_digest hashes them (its own digest of
    them): kept for the process while the file's device, inode, size and modification time
    stay the same (the grader's sources and a course's data files are read once, not at every
    key of a check that computes several)."""
    if path is None:
        return _empty()
    try:
        info = os.stat(path)
    except OSError:
        return _empty()
    stamp = (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if (known := _FILE_DIGESTS.get(stamp)) is not None:
        return known
    try:
        data = path.read_bytes()
    except OSError:
        return _empty()
    digest = blake2b(len(data).to_bytes(8, "big") + data, digest_size=32).digest()
    if len(_FILE_DIGESTS) < 4096:
        _FILE_DIGESTS[stamp] = digest
    return digest


def _empty() -> bytes:
    return blake2b(bytes(8), digest_size=32).digest()


def cache_path(key: str) -> Path | None:
    """Where the run with `key` is cached (None: no cache)."""
    folder = cache_dir()
    return folder / f"course-run-{key}.bin" if folder and key else None


def _plain(value: Value) -> Any:
    """A decoded value as the encoder takes it; ValueError for what it cannot carry back."""
    if isinstance(value, Seq):
        items = [_plain(v) for v in value.items]
        return tuple(items) if value.kind == "tuple" else items
    if isinstance(value, Other):
        raise ValueError("not numbers")
    return value


def _timed_out(header: dict[str, Any]) -> bool:
    error = header.get("error")
    # a cell not run because the cells' time together was spent (child.NOT_RUN) is timing too
    return header.get("status") == "timeout" or (
        isinstance(error, dict) and error.get("type") in ("TimeLimit", "NotRun")
    )


def save(path: Path, frames: Sequence[Frame]) -> None:
    """Write a finished run's frames atomically, as the child sent them; what cannot be
    written (or carried back exactly: a value that is not numbers) is not cached, nor a run
    in which anything ran out of time (a busy machine's answer, not the code's)."""
    if any(_timed_out(header) for header, _ in frames):
        return
    try:
        data = b"".join(
            encode_frame(header, {k: _plain(v) for k, v in values.items()})
            for header, values in frames
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(path)
    except (OSError, ValueError):
        return


def load(path: Path) -> list[Frame] | None:
    """The cached frames, or None when there is no readable, well-formed file."""
    spans = load_spans(path)
    try:
        return None if spans is None else [decode_frame(head, body) for head, body in spans]
    except WireError:
        return None


def load_spans(path: Path) -> list[tuple[bytes, bytes]] | None:
    """The cached frames, each its header's and payload's bytes, not yet decoded (a caller
    that needs only some decodes only those); None when there is no readable file of whole
    frames."""
    try:
        spans = split_frames(path.read_bytes())
    except (OSError, WireError):
        return None
    used(path)  # kept by the cache's pruning while it is read (course/cache_prune.py)
    return spans
