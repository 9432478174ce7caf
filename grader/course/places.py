"""Where a student finds a cell: `In [12]` when the saved notebook shows one, else "the 7th
code cell"; and the cell's first line. The grader counts every cell of the file (`cell 20`),
which Jupyter shows nowhere; check() says it the way the notebook does."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

# "cell 7, line 3", "cell 7" and "cells 8, 11 and 19" in the grader's words
_ONE = re.compile(r"\bcell (\d+)(?:, line (\d+))?")
_MANY = re.compile(r"\bcells (\d+(?:, \d+)*(?:,? and \d+)?)")


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, … 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class CellPlace:
    """One code cell as the student sees it."""

    ordinal: int  # among the code cells, from 1
    execution_count: int | None  # the `In [n]` of the saved notebook, where it ran
    first_line: str  # its first non-blank line, stripped

    def label(self) -> str:
        """`In [12]`, else `the 7th code cell`."""
        if self.execution_count:
            return f"In [{self.execution_count}]"
        return f"the {ordinal(self.ordinal)} code cell"


def cell_places(path: Path) -> dict[int, CellPlace]:
    """The code cells of a notebook file by the grader's cell number (every cell counted,
    from 1); empty for a file that is not a readable notebook."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return {}
    places: dict[int, CellPlace] = {}
    for number, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        count = cell.get("execution_count")
        places[number] = CellPlace(
            len(places) + 1, count if isinstance(count, int) else None, first
        )
    return places


def relabel(text: str, places: dict[int, CellPlace]) -> str:
    """The grader's words with each cell number it knows said the student's way."""
    if not places:
        return text

    def one(match: re.Match[str]) -> str:
        place = places.get(int(match[1]))
        if place is None:
            return match[0]
        return place.label() + (f", line {match[2]}" if match[2] else "")

    def many(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.findall(r"\d+", match[1])]
        if not all(n in places for n in numbers):
            return match[0]
        return ", ".join(places[n].label() for n in numbers)

    return _ONE.sub(one, _MANY.sub(many, text))
