"""Installed distributions' versions, read from the names of their metadata folders on the
import path (`numpy-2.1.0.dist-info`, as the packaging standard names them): the answer
importlib.metadata gives, found the same way (the first folder on the path that has the
distribution), without importing it (about 15 ms of every command). A distribution
installed some other way (an .egg-info) is asked of importlib.metadata."""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_SEPARATORS = re.compile(r"[-_.]+")
_SUFFIX = ".dist-info"
_OTHER = (".egg-info", ".egg")  # metadata whose version is not in its name


def _canonical(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


@cache
def version(name: str) -> str:
    """The installed version of the distribution `name`; "unknown" when there is none."""
    wanted = _canonical(name)
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(_SUFFIX):
                dist, _, found = entry[: -len(_SUFFIX)].partition("-")
                if found and _canonical(dist) == wanted:
                    return found
            elif entry.endswith(_OTHER) and _canonical(_egg_name(entry)) == wanted:
                # installed another way, and first on the path: its version is in its files
                return _egg_info_version(os.path.join(folder or ".", entry)) or (
                    _asked_of_metadata(name)
                )
    return _asked_of_metadata(name)


def _egg_info_version(path: str) -> str | None:
    """The Version header of an .egg-info (a folder holding PKG-INFO, or that file itself),
    as importlib.metadata reads it; None where it cannot be told so simply (an .egg)."""
    if not path.endswith(".egg-info"):
        return None
    source = os.path.join(path, "PKG-INFO") if os.path.isdir(path) else path
    try:
        with open(source, encoding="utf-8") as headers:
            for line in headers:
                if not line.strip():
                    break  # the headers end at the first blank line
                key, colon, value = line.partition(":")
                if colon and key.strip().lower() == "version":
                    return value.strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _egg_name(entry: str) -> str:
    """The distribution's name in an .egg-info or .egg entry (`name-1.0-py3.11.egg-info`)."""
    return entry.rpartition(".")[0].partition("-")[0]


def _asked_of_metadata(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        return "unknown"
