"""What an upload must pass before it is accepted: its kind, its size, the student's attempt
and rate limits, and a parse (a notebook bomb, huge or deeply nested, is refused here, with
one line, and costs the service no more than its bounded size)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from grader.course.notebook import load_submission
from grader.course.service import ServeSettings
from grader.errors import GraderError
from grader.render.escape import one_line
from grader.serve.store import Store

SUFFIXES = (".ipynb", ".py")
NAME_CHARS = 120


@dataclass(frozen=True)
class Limits:
    """Per upload and per student: the largest file, the number of attempts, and the least
    time between two uploads."""

    max_kb: int = 2048
    max_attempts: int = 100
    min_interval: float = 10.0
    form_overhead: int = 16 * 1024  # the multipart form's own bytes around the file

    @classmethod
    def from_settings(
        cls,
        settings: ServeSettings,
        max_kb: int | None = None,
        max_attempts: int | None = None,
        min_interval: float | None = None,
    ) -> Limits:
        """The course config's limits (`serve:`), each overridden by an option given."""
        return cls(
            settings.max_kb if max_kb is None else max_kb,
            settings.max_attempts if max_attempts is None else max_attempts,
            settings.min_interval if min_interval is None else min_interval,
        )

    @property
    def max_bytes(self) -> int:
        """The largest file, in bytes."""
        return self.max_kb * 1024


def uploaded_name(sent: str) -> str:
    """The file name to show for an upload: the last part of what the browser sent, on one
    line and short. It is only ever shown (escaped), never used as a path."""
    last = sent.replace("\\", "/").rsplit("/", 1)[-1]
    return one_line(last)[-NAME_CHARS:] or "notebook.ipynb"


def graded_as(name: str) -> Path:
    """The path a stored upload is parsed under: its name, with the suffix that decides how
    it is read (a script or a notebook) written as the parser knows it. Never opened."""
    suffix = ".py" if name.lower().endswith(".py") else ".ipynb"
    return Path(name) if name.endswith(suffix) else Path(f"{name}{suffix}")


def refusal(
    store: Store, student: str, name: str, data: bytes, limits: Limits
) -> tuple[int, str] | None:
    """Why this upload is refused (an HTTP status and a sentence), or None to accept it."""
    if not name.lower().endswith(SUFFIXES):
        return 400, "Upload a notebook (.ipynb) or a script (.py)."
    if len(data) > limits.max_bytes:
        return 413, f"The file is too large: at most {limits.max_kb} KB."
    if not data:
        return 400, "The file is empty."
    count, last = store.attempts(student)
    if count >= limits.max_attempts:
        return 429, f"You have used all {limits.max_attempts} attempts."
    if last is not None and time.time() - last < limits.min_interval:
        wait = limits.min_interval - (time.time() - last)
        return 429, f"One upload every {limits.min_interval:g} s: try again in {wait:.0f} s."
    try:  # parsed here only to refuse what cannot be graded; the workers' side parses again
        load_submission(graded_as(name), data)
    except GraderError as exc:
        return 400, f"This file cannot be graded: {one_line(str(exc))}"
    except (RecursionError, MemoryError, ValueError):
        return 400, "This file cannot be graded: it is not a notebook the grader can read."
    return None
