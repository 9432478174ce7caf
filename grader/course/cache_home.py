"""Where the grader keeps what it may compute again: $GRADER_CACHE_DIR, else
$XDG_CACHE_HOME/grader, else ~/.cache/grader. The user's own folder: nothing a student's
code writes ever reaches it (their code runs only in the sandbox, which does not see it)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "GRADER_CACHE_DIR"


def cache_dir() -> Path | None:
    """$GRADER_CACHE_DIR, else $XDG_CACHE_HOME/grader, else ~/.cache/grader."""
    if given := os.environ.get(CACHE_ENV):
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "grader"
