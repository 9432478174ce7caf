"""The methods `dataclasses` writes for each class (`__init__`, `__repr__`, `__eq__`, a frozen
class's `__setattr__` …), compiled once and remembered on disk.

Python 3.11 writes those methods as text and compiles the text each time a class is defined:
about 0.4 ms a class, and `grader check` defines some fifty before it can judge anything (about
20 ms of its 190). `install` gives the `dataclasses` module an `exec` of its own (a module's
name comes before the builtin one) that looks each text up in a memo and compiles only a text
it has not seen, exactly as `exec` would have compiled it: the same text, the file name
"<string>", no inherited `__future__` flags (dataclasses.py has none) and the interpreter's own
optimisation level. Anything but a text goes to the builtin `exec` unchanged. The memo is kept
per interpreter build and optimisation level, and, like every memo of the grader's, believed
only in the user's own cache folder (course/cache_home.py); a memo that cannot be read is
compiled afresh and written again at exit.
"""

from __future__ import annotations

import atexit
import builtins
import marshal
import os
import sys
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from grader.course.blake import blake2b

MAX_KEPT = 4096  # texts remembered at most (a program defining classes on the fly stops there)
_MEMO: dict[str, CodeType] = {}
_STATE = {"loaded": False, "compiled": 0}
_LOCK = threading.Lock()


def memo_path() -> Path | None:
    """The memo for this interpreter build and optimisation level, and for the kind of
    command `install` was told of, in the cache folder."""
    from grader.course.cache_home import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    build = f"{sys.version}|{sys.implementation.cache_tag}|{sys.flags.optimize}|{_KIND[0]}"
    return (
        folder / f"dataclass-methods-{blake2b(build.encode(), digest_size=12).hexdigest()}.marshal"
    )


_KIND = [""]


def install(kind: str = "") -> None:
    """Give `dataclasses` the remembering `exec`, read the memo, and write it at exit when
    this process compiled texts the memo did not hold. Nothing where `dataclasses` does not
    call `exec` by that name (another Python), and nothing twice. `kind`: the command (one
    memo per command, each holding only the classes that command defines: a check reads
    none of the service's)."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec or "_create_fn" not in vars(dataclasses):
        return
    _KIND[0] = kind
    _load()
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    atexit.register(_save)


def uninstall() -> None:
    """Give `dataclasses` back the builtin `exec` (tests)."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    atexit.unregister(_save)


def compiled() -> int:
    """How many texts this process compiled (not found in the memo)."""
    return _STATE["compiled"]


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    if isinstance(source, str):
        code = _MEMO.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            with _LOCK:
                if len(_MEMO) < MAX_KEPT:
                    _MEMO[source] = code
                _STATE["compiled"] += 1
        source = code
    builtins.exec(source, globals, locals)


def _load() -> None:
    if _STATE["loaded"]:
        return
    _STATE["loaded"] = True
    path = memo_path()
    if path is None:
        return
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return  # none yet, or unreadable: compiled afresh and written at exit
    from grader.course.cache_home import used

    used(path)
    if isinstance(kept, dict) and all(
        isinstance(text, str) and isinstance(code, CodeType) for text, code in kept.items()
    ):
        _MEMO.update(kept)


def _save() -> None:
    """Write the memo whole (a temporary file, renamed) when this process added to it."""
    if not _STATE["compiled"]:
        return
    path = memo_path()
    if path is None:
        return
    with _LOCK:
        data = marshal.dumps(dict(_MEMO))
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        partial.write_bytes(data)
        partial.replace(path)
    except OSError:  # nothing kept: the next start compiles them again
        return
