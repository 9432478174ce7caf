"""An assignment's `files:`, the course data its students' notebooks may read, checked.

Each listed file appears read-only in the notebook's working folder under the path it is
listed by (see sandbox.place_files); nothing else of the course does. So each entry must name
a regular file inside the course folder (after links are followed) that is none of what the
grader keeps from students: the config, a solution or its folder, a mistake catalogue.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import ConfigError

# Where a sandboxed worker sees the course's data files (bwrap.py binds them there).
SANDBOX_COURSE = "/sandbox/course"


@dataclass(frozen=True)
class DataFile:
    """One course data file: its name in the notebook's working folder (a relative POSIX
    path, as listed) and the file it is on this machine (links followed)."""

    name: str
    source: Path

    def inside(self, sandboxed: bool) -> str:
        """Where a worker finds it: under SANDBOX_COURSE in the sandbox, else where it is."""
        return f"{SANDBOX_COURSE}/{self.name}" if sandboxed else str(self.source)


# What the instructor keeps beside the config about the class (grader/batch's ROSTER_FILE and
# EXTENSIONS_FILE): names, e-mails, extensions. The course secret (`secret_file:`) is named
# by the caller.
CLASS_FILES = ("roster.csv", "extensions.csv")


def _private(base: Path, secret: Path | None) -> set[Path]:
    """The class's own files and the course secret: handed out, every student could read
    the class list, or derive each classmate's per-student inputs from the secret."""
    named = [base / name for name in CLASS_FILES] + ([secret] if secret is not None else [])
    return {path.resolve() for path in named}


def _hidden(raw: Mapping[str, Any], base: Path, config: Path) -> tuple[set[Path], set[Path]]:
    """What no data file may be (the config, every solution, every catalogue) and the
    folders none may lie in (each solution's own folder, unless that is the course's)."""
    # The course's case builders (cases.py beside the config) say how hidden cases are made.
    files, folders = {config.resolve(), (base / "cases.py").resolve()}, set()
    for spec in raw.values():
        for key in ("solution", "mistakes"):
            if key in spec:
                files.add((base / spec[key]).resolve())
        if "solution" in spec and (home := (base / spec["solution"]).resolve().parent) != base:
            folders.add(home)
    return files, folders


def _one(
    entry: str, base: Path, hidden: tuple[set[Path], set[Path]], where: str, private: set[Path]
) -> DataFile:
    name = os.path.normpath(entry)
    if os.path.isabs(entry) or name == "." or name.split(os.sep)[0] == "..":
        raise ConfigError(f"{where}: {entry!r} must be a path inside the course folder")
    source = (base / name).resolve()
    if not source.exists():
        raise ConfigError(f"{where}: {entry!r} does not exist in the course folder {base}")
    if not source.is_relative_to(base):
        raise ConfigError(f"{where}: {entry!r} leads out of the course folder (to {source})")
    if not source.is_file():
        raise ConfigError(f"{where}: {entry!r} is not a file; list the files themselves")
    if source in private:
        raise ConfigError(
            f"{where}: {entry!r} is the class list, its extensions or the course secret: "
            "students' notebooks must never see it"
        )
    files, folders = hidden
    if source in files or any(source.is_relative_to(f) for f in folders):
        raise ConfigError(
            f"{where}: {entry!r} is the config, the case builders, a solution, a mistake "
            "catalogue or in the solutions' folder: students' notebooks must never see it"
        )
    return DataFile(Path(name).as_posix(), source)


def course_files(
    raw: Mapping[str, Any], path: Path, secret: Path | None = None
) -> dict[str, tuple[DataFile, ...]]:
    """Each assignment's data files, checked (ConfigError naming the key, on one line);
    `secret`: the course secret's file (`secret_file:`), which none may be."""
    base = path.resolve().parent
    hidden, private = _hidden(raw, base, path), _private(base, secret)
    found: dict[str, tuple[DataFile, ...]] = {}
    for aid, spec in raw.items():
        where = f"{path}: assignments.{aid}.files"
        listed: Iterable[str] = spec.get("files", ())
        found[aid] = tuple(dict.fromkeys(_one(e, base, hidden, where, private) for e in listed))
    return found
