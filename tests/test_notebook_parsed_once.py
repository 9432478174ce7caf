"""Loading a notebook parses each analysed cell once: the tree made to tell Python from
IPython syntax is the one judging reads (`Submission.tree`), not parsed a second time, and
it is the tree a fresh parse of the cell's runnable source gives."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import grader.course.ipython as ipython
import grader.course.notebook as notebook
from grader.course.notebook import load_submission
from grader.course.parsing import MAX_CELL_SOURCE
from grader.report import Location

from conftest import write_notebook

CELLS = [
    "import numpy as np\nx = np.ones(3)",
    "def f(a):\n    return a + 1",
    "%matplotlib inline\ny = f(2)",  # IPython syntax: rewritten, then parsed
    "def broken(:\n    pass",  # no tree at all
    "z = 1\n" + "#" * MAX_CELL_SOURCE,  # too large: never parsed
]


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parse of a cell's source from now on, by the loader or by the tree cache."""
    parsed: list[str] = []
    for module in (notebook, ipython):
        real = module.parse_cell

        def counted(source: str, real: Any = real) -> ast.Module | None:
            parsed.append(source)
            return real(source)

        monkeypatch.setattr(module, "parse_cell", counted)
    return parsed


def test_each_cell_is_parsed_once_from_loading_to_judging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_notebook(tmp_path / "a.ipynb", CELLS)
    parsed = counting(monkeypatch)
    submission = load_submission(path)
    valid = [c for c in submission.cells if c.analysed and c.source == c.original]
    assert [c.index for c in valid] == [2, 3, 5]
    at_load = len(parsed)
    definitions = submission.definitions()
    for cell in submission.cells:
        submission.tree(cell.index)
    assert len(parsed) == at_load  # judging's trees are the loader's
    # Valid Python once; the IPython cell and the broken one: tried, then their runnable
    # source parsed by `neutralise` (as before) and once for their tree.
    assert parsed.count(CELLS[0]) == 1 and parsed.count(CELLS[1]) == 1
    assert CELLS[4] not in parsed
    assert definitions == {
        "x": Location(2, 2),
        "f": Location(3, 1),
        "y": Location(4, 2),
        "broken": Location(5, 1),
    }


def test_the_kept_trees_are_a_fresh_parse_of_each_runnable_cell(tmp_path: Path) -> None:
    submission = load_submission(write_notebook(tmp_path / "a.ipynb", CELLS))
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        fresh = notebook.parse_cell(cell.source) if cell.analysed else None
        assert (tree is None) is (fresh is None)
        if tree is not None and fresh is not None:
            assert ast.dump(tree, include_attributes=True) == ast.dump(
                fresh, include_attributes=True
            )
    assert submission.tree(6) is None and not submission.cells[-1].analysed
    submission.forget_trees()  # gone with the submission's judging, parsed again if asked
    assert "_trees" not in submission.__dict__
    assert submission.tree(3) is not None


def test_a_file_reread_with_the_same_bytes_is_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grader check` reads its notebook three times (head start, early run, engine)."""
    path = write_notebook(tmp_path / "a.ipynb", CELLS[:2])
    parsed = counting(monkeypatch)
    first = notebook.reread(path)
    at_load = len(parsed)
    assert notebook.reread(path) is first and len(parsed) == at_load
    write_notebook(path, [CELLS[0], "def f(a):\n    return a + 2"])  # changed since
    changed = notebook.reread(path)
    assert changed is not first and len(parsed) > at_load
    assert changed.cells[1].source.endswith("a + 2")
    other = write_notebook(tmp_path / "b.ipynb", CELLS[:2])  # the same bytes, another file
    assert notebook.reread(other).path == other
    assert load_submission(other) is not load_submission(other)  # loads are their own
