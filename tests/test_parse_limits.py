"""Static analysis is bounded: a huge cell is run but never parsed by the trusted side, and no
student's syntax tree outlives the Submission it belongs to."""

from __future__ import annotations

import ast
import gc
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.course import parsing
from grader.course.config import Config
from grader.course.ipython import neutralise
from grader.course.notebook import load_submission
from grader.course.parsing import MAX_ANALYSED_SOURCE, MAX_CELL_SOURCE, parse_cell
from grader.engine import grade_path
from grader.judge.static import find_function, notebook_globals

import students
from conftest import NotebookFactory

FUNCTION = "def attention(x):\n    return x * 2\n"


def data_cell(size: int, name: str = "DATA") -> str:
    """A valid cell of about `size` bytes: a long literal, as a pasted table would be."""
    return f"{name} = [" + "0, " * (size // 3) + "]\n"


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every source ast.parse is given, for as long as the test runs."""
    sizes: list[int] = []
    real: Callable[..., Any] = ast.parse

    def spy(source: str, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return sizes


def test_a_5_mb_cell_is_loaded_and_analysed_without_being_parsed(
    notebook: NotebookFactory, parsed: list[int]
) -> None:
    huge = data_cell(5 << 20)
    submission = load_submission(notebook([FUNCTION, huge, "y = 1\n"]))
    assert find_function(submission, "attention") is not None
    assert notebook_globals(submission) == {"y"}  # DATA's cell was not analysed
    assert "attention" in submission.definitions()
    assert max(parsed) <= MAX_CELL_SOURCE
    assert f"cell 3 is too large to analyse ({len(huge) // 1024} KB" in "\n".join(submission.notes)
    cell = submission.cell(3)
    assert cell is not None and cell.source == huge  # it still runs, as written


@pytest.mark.slow
def test_the_cells_past_the_submissions_budget_are_not_parsed(
    notebook: NotebookFactory, parsed: list[int]
) -> None:
    each = MAX_CELL_SOURCE * 3 // 4  # every cell under the cell limit, not all under the total
    count = MAX_ANALYSED_SOURCE // each + 1
    cells = [data_cell(each, f"D{i}") for i in range(count)]
    submission = load_submission(notebook(cells))
    assert notebook_globals(submission) == {f"D{i}" for i in range(count - 1)}
    assert sum(parsed) <= 2 * MAX_ANALYSED_SOURCE  # once to check, once for the tree
    last = count + 1  # the markdown title is cell 1
    assert any(n.startswith(f"cell {last} is not analysed") for n in submission.notes)


def test_ipython_lines_in_a_cell_too_large_to_parse_are_left_alone(parsed: list[int]) -> None:
    source = "%matplotlib inline\n" + data_cell(MAX_CELL_SOURCE + 1)
    assert neutralise(source) == (source, [])
    body, notes = neutralise("%%time\n" + source)
    assert body == "\n" + source and len(notes) == 1  # a cell magic needs no parse
    assert parsed == []


def test_the_note_reaches_the_report(config: Config, notebook: NotebookFactory) -> None:
    cells = [*students.cells(), data_cell(MAX_CELL_SOURCE + 1024)]
    report = grade_path(notebook(cells), config, "self_attention")
    assert report.score == report.max_score  # the large cell ran; only its hints are skipped
    assert any(f"cell {len(cells) + 1} is too large to analyse" in n for n in report.notes)


def test_no_tree_outlives_its_submission(notebook: NotebookFactory) -> None:
    assert not [name for name, value in vars(parsing).items() if hasattr(value, "cache_info")]
    first = load_submission(notebook([FUNCTION], name="first"))
    tree = first.tree(2)
    assert tree is not None
    gone = weakref.ref(tree)
    del tree, first
    load_submission(notebook([FUNCTION], name="second")).tree(2)  # the same source again
    gc.collect()
    assert gone() is None


def test_a_submissions_trees_are_its_own(tmp_path: Path) -> None:
    """Two students with the same cell get two trees: nothing is shared between them."""
    path = tmp_path / "a.py"
    path.write_text(FUNCTION)
    assert load_submission(path).tree(1) is not load_submission(path).tree(1)


def test_trees_are_built_one_thread_at_a_time() -> None:
    # CPython 3.11 fails at random ("AST constructor recursion depth mismatch") when two
    # threads build syntax trees at once; a batch parses in job threads and judges in another.
    parsed = threading.Event()
    with parsing.AST_LOCK:
        worker = threading.Thread(target=lambda: parse_cell("x = 1") and parsed.set())
        worker.start()
        assert not parsed.wait(0.3)  # waits while another thread holds the tree builder
    assert parsed.wait(10)
    worker.join()
