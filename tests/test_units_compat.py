"""run/compat.py: NumPy 2.0's removed names (no child process)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.course.notebook import CodeCell, Submission
from grader.run.compat import REMOVED, removed_name_notes, restore_removed_names


def submission(*sources: str) -> Submission:
    cells = tuple(CodeCell(i + 1, src, src) for i, src in enumerate(sources))
    return Submission(Path("s.ipynb"), "s", cells, None, ())


def test_notes_name_cell_line_and_the_new_spelling() -> None:
    sub = submission("x = 1\ny = np.infty", "z = numpy.float_(2) + np.NaN\nnp.inf")
    assert removed_name_notes(sub) == [
        "cell 1, line 2: `np.infty` was removed in NumPy 2.0; write `np.inf` "
        "(the grader accepted the old name)",
        "cell 2, line 1: `numpy.float_` was removed in NumPy 2.0; write `np.float64` "
        "(the grader accepted the old name)",
        "cell 2, line 1: `np.NaN` was removed in NumPy 2.0; write `np.nan` "
        "(the grader accepted the old name)",
    ]


def test_current_names_and_longer_words_are_not_noted() -> None:
    # `np.infinity_x` and `np.product_of` are not the removed names; `prod` is current.
    assert removed_name_notes(submission("np.prod(x); np.infinity_x; np.product_of(1)")) == []


def test_restore_puts_back_only_the_missing_names(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in REMOVED:
        monkeypatch.delattr(np, name, raising=False)
    monkeypatch.setattr(np, "float_", "kept", raising=False)  # present: left alone
    restore_removed_names()
    try:
        assert np.float_ == "kept"  # type: ignore[attr-defined]
        assert np.infty == np.inf  # type: ignore[attr-defined]
        assert -np.inf == np.NINF  # type: ignore[attr-defined]
        assert np.product is np.prod  # type: ignore[attr-defined]
    finally:
        # monkeypatch undoes its own changes; what restore added is removed here.
        for name in REMOVED:
            if name != "float_":
                delattr(np, name)
