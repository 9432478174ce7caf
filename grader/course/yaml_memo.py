"""A config's text as parsed before, remembered on disk, so that a start that finds it skips
importing and running the YAML parser (about 15 ms of every command).

Kept under the hash of the text, of config.py (which defines how YAML is read) and of the
installed PyYAML's file (found, not imported). The parsed value is kept as JSON, and only when
JSON gives back exactly that value (its repr: 1 is not 1.0 nor True, a key stays a string, the
order is kept); anything else is parsed each time. Like every memo in the cache folder, it is
believed only there: the folder is the user's own (cache_home.py).
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, mark, used


@cache
def _reader_digest() -> bytes:
    """What decides how a text is parsed: config.py's source and PyYAML's installed file."""
    hasher = blake2b(digest_size=20)
    hasher.update(Path(__file__).with_name("config.py").read_bytes())
    spec = find_spec("yaml")
    origin = spec.origin if spec is not None else None
    if origin:
        info = os.stat(origin)
        hasher.update(f"{origin}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}".encode())
    return hasher.digest()


def _path(text: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        hasher = blake2b(_reader_digest(), digest_size=20)
    except OSError:
        return None
    hasher.update(text.encode("utf-8", errors="surrogatepass"))
    return folder / f"config-parsed-{hasher.hexdigest()}.json"


def parsed(text: str) -> tuple[bool, Any]:
    """(True, the value) when this text was parsed before, else (False, None)."""
    path = _path(text)
    if path is None:
        return False, None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None
    used(path)
    return True, value


def note_parsed(text: str, value: Any) -> None:
    """Remember what `text` parsed to, when JSON carries it exactly (else nothing)."""
    try:
        kept = json.dumps(value)
        same = repr(json.loads(kept)) == repr(value)
    except (TypeError, ValueError, RecursionError):
        return
    path = _path(text)
    if same and path is not None:
        mark(path, kept)
