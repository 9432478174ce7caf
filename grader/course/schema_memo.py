"""Configs the schema accepted before, remembered on disk so that the next start skips
compiling the schema (fastjsonschema's compile is about 60 ms of every command).

A config is remembered under the hash of the schema's text and of the parsed config's text
(repr: it tells 1 from '1' and True from 1); only an accepted one is remembered, so a config
that is refused always meets the validators and says why as before.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, mark, used
from grader.course.schema import SCHEMA


@cache
def _schema_digest() -> bytes:
    return blake2b(repr(SCHEMA).encode(), digest_size=20).digest()


def _path(raw: Any) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        text = repr(raw).encode("utf-8", errors="surrogatepass")
    except (RecursionError, ValueError):
        return None
    hasher = blake2b(_schema_digest(), digest_size=20)
    hasher.update(text)
    return folder / f"config-valid-{hasher.hexdigest()}"


def known_valid(raw: Any) -> bool:
    """Whether the schema accepted this parsed config before."""
    path = _path(raw)
    if path is None or not path.is_file():
        return False
    used(path)
    return True


def note_valid(raw: Any) -> None:
    """Remember that the schema accepts this parsed config (nothing where it cannot be
    written: the next start validates again)."""
    path = _path(raw)
    if path is None:
        return
    mark(path)
