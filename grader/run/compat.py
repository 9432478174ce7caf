"""Names NumPy 2.0 removed that older course notebooks still use (`np.infty`, `np.float_` …).

Decision: the child puts them back before running student cells, so an old spelling costs no
points, and the student gets a note naming the new spelling (found statically, with the line).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from grader.course.notebook import Submission

REMOVED: dict[str, tuple[str, Any]] = {
    "infty": ("np.inf", np.inf),
    "Inf": ("np.inf", np.inf),
    "Infinity": ("np.inf", np.inf),
    "PINF": ("np.inf", np.inf),
    "NINF": ("-np.inf", -np.inf),
    "NaN": ("np.nan", np.nan),
    "NAN": ("np.nan", np.nan),
    "float_": ("np.float64", np.float64),
    "complex_": ("np.complex128", np.complex128),
    "product": ("np.prod", np.prod),
    "cumproduct": ("np.cumprod", np.cumprod),
    "alltrue": ("np.all", np.all),
    "sometrue": ("np.any", np.any),
    "round_": ("np.round", np.round),
}
_USE = re.compile(r"\b(?:np|numpy)\.(" + "|".join(REMOVED) + r")\b")


def restore_removed_names() -> None:
    """Runs in the child only: it changes the numpy module that student code sees."""
    for name, (_, value) in REMOVED.items():
        if not hasattr(np, name):
            setattr(np, name, value)


def removed_name_notes(submission: Submission) -> list[str]:
    """A note for each use of a NumPy name removed in 2.0, with its cell, line and replacement."""
    notes = []
    for cell in submission.cells:
        for number, line in enumerate(cell.source.split("\n"), start=1):
            for match in _USE.finditer(line):
                old, new = match.group(0), REMOVED[match.group(1)][0]
                notes.append(
                    f"cell {cell.index}, line {number}: `{old}` was removed in NumPy 2.0; "
                    f"write `{new}` (the grader accepted the old name)"
                )
    return notes
