"""Built case sets remembered on disk, so that a check that finds one neither imports
numpy.random nor draws (cases.py's build_cases; about 10 ms of every check).

A set is kept (pickled) under the hash of everything that decides it: the assignment's repr
(its seeds, targets, sizes, declared args and the digest of the course's cases.py), the bytes
of the files its course builders are defined in, of grader/course/{cases,inputs,declared}.py,
the installed grader's and numpy's versions and Python's. A builder that calls code of
another file is decided by that file too, which the key does not see: the course's cases.py
is the place for what makes its cases (docs/course-author.md). An entry that cannot be read
or unpickled is ignored (the set is built again and written over it). Like every memo in the
cache folder it is believed only there: the folder is the user's own (cache_home.py).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, used

if TYPE_CHECKING:
    from grader.course.config import AssignmentSpec

PREFIX = "cases-"
_HERE = Path(__file__).parent
_SOURCES = ("cases.py", "inputs.py", "declared.py")


def memo_path(assignment: AssignmentSpec) -> Path | None:
    """Where the case set of `assignment` is kept; None when there is no cache folder or a
    file of the key cannot be read."""
    folder = cache_dir()
    if folder is None:
        return None
    import numpy as np

    from grader.course import versions

    hasher = blake2b(digest_size=20)
    parts = [
        repr(assignment).encode("utf-8", errors="surrogatepass"),
        versions.version("attention-grader").encode(),
        np.__version__.encode(),
        sys.version.encode(),
    ]
    try:
        for path in (*(_HERE / name for name in _SOURCES), *_builder_files(assignment)):
            parts.append(str(path).encode(errors="surrogatepass") + b"\0" + path.read_bytes())
    except OSError:
        return None
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big") + part)
    return folder / f"{PREFIX}{hasher.hexdigest()}.pickle"


def _builder_files(assignment: AssignmentSpec) -> list[Path]:
    """The files the course builders of `assignment`'s targets are defined in (its cases.py,
    or a module that one imports them from), each once, in a fixed order."""
    files: set[Path] = set()
    for target in assignment.targets:
        if target.args or target.variable or not target.inputs or target.cases is None:
            continue
        files.add(target.cases.path)
        found = target.cases.builders().get(target.inputs)
        module = sys.modules.get(getattr(found[0], "__module__", "")) if found else None
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str):
            files.add(Path(origin))
    return sorted(files)


def recalled(path: Path) -> object:
    """What is kept at `path` (cases.py takes it only when it is a CaseSet); None when there
    is nothing, or it cannot be read whole."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        value = pickle.loads(data)
    except Exception:  # a torn or foreign file: built again and written over
        return None
    used(path)
    return value


def keep(path: Path, case_set: object) -> object:
    """Write `case_set` at `path` whole (a temporary file, then renamed), and return it as a
    later check will recall it (unpickled from the same bytes): a set pickles to other bytes
    once it has been through pickle (its strings and arrays are shared differently), and a
    worker's first message, and a run's cache key, are those bytes, so the check that built
    it must hand out the same set as the ones that recall it. Where it cannot be pickled or
    written, `case_set` itself: the next check builds it again."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        data = pickle.dumps(case_set, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        with contextlib.suppress(OSError):
            partial.unlink()
        return case_set
    return pickle.loads(data)
