"""What an exercise notebook's saved outputs say: `grader release` hands the notebook out as
it is, outputs included, so an exercise run while it still held the solution (a traceback
quotes the lines it ran, a print shows them) would hand out the solution's code."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from grader.course.notebook import load_submission

# Shorter lines (`return x`, `import numpy as np`) say nothing of a solution.
MIN_QUOTED = 12
# A terminal's colour codes, which IPython writes into a traceback's lines of code.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _strings(value: Any) -> Iterator[str]:
    """Every text of a JSON value (a notebook source or output is a string or a list of them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def quoted_solution(exercise: Path, solution: Path) -> tuple[int, str] | None:
    """The first (cell number, line) where an output saved in `exercise` shows a line of
    `solution`'s code that the exercise's own code does not hold; None when there is none
    (or the exercise is no notebook whose outputs can be read)."""
    try:
        cells = json.loads(exercise.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(cells, list):
        return None
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    own = _lines("\n".join(text for cell in code for text in _strings(cell.get("source"))))
    solved = _lines("\n".join(cell.source for cell in load_submission(solution).cells))
    secret = sorted(line for line in solved - own if len(line) >= MIN_QUOTED)
    for number, cell in enumerate(cells, start=1):
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        shown = _ANSI.sub("", "\n".join(_strings(outputs)))
        if found := next((line for line in secret if line in shown), None):
            return number, found
    return None
