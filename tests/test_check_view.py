"""check() in Jupyter: aligned left, no colour of its own (light and dark themes), cells named
as the notebook shows them, the messages' Markdown rendered."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from grader.course.places import CellPlace, cell_places, ordinal, relabel
from grader.inline import check
from grader.render.html import inline_markdown

import students
from conftest import write_notebook

ASSIGNED = {"grader": {"assignment": "self_attention"}}


def with_counts(path: Path, counts: dict[int, int]) -> Path:
    """The notebook as Jupyter saves it after running: In [n] on the given code cells."""
    notebook = nbformat.read(str(path), as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    for index, count in counts.items():
        code[index].execution_count = count
    nbformat.write(notebook, str(path))
    return path


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_cells_are_named_as_the_notebook_shows_them(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "a.ipynb", ["import numpy as np", "\n  def f(x):\n  pass"])
    with_counts(path, {0: 12})
    places = cell_places(path)
    assert places == {2: CellPlace(1, 12, "import numpy as np"), 3: CellPlace(2, None, "def f(x):")}
    said = relabel("cell 3, line 2 computes it; cell 2 failed; cells 2, 3 and 9 stopped", places)
    assert said == (
        "the 2nd code cell, line 2 computes it; In [12] failed; cells 2, 3 and 9 stopped"
    )  # cell 9 is unknown: that list stays as the grader said it
    assert relabel("cells 2 and 3 stopped", places) == "In [12], the 2nd code cell stopped"
    assert cell_places(tmp_path / "missing.ipynb") == {}


def test_markdown_is_rendered_and_student_text_stays_text() -> None:
    shown = str(inline_markdown("return `values @ attention` as **it is**, not `<b>x</b>`"))
    assert "<code>values @ attention</code>" in shown and "<strong>it is</strong>" in shown
    assert "<code>&lt;b&gt;x&lt;/b&gt;</code>" in shown and "`" not in shown


def test_the_view_is_left_aligned_without_colours_and_names_cells(tmp_path: Path) -> None:
    cells = students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    path = write_notebook(tmp_path / "hw.ipynb", cells, ASSIGNED)
    notebook = nbformat.read(str(path), as_version=4)
    number = next(
        i for i, c in enumerate(notebook.cells, 1) if "def softmax_cols" in c.get("source", "")
    )
    code_index = [c.cell_type for c in notebook.cells][:number].count("code") - 1
    first = next(line for line in notebook.cells[number - 1].source.splitlines() if line.strip())
    unrun = check(notebook=path)
    html = unrun.html
    assert f"the {ordinal(code_index + 1)} code cell, line" in html
    assert f"<code>{first.strip()}</code>" in html.replace("&#39;", "'")
    assert f"cell {number}" not in html and f"cell {number}" not in unrun.text
    assert "`" not in re.sub(r"<code>.*?</code>", "", html)  # backticks became <code>
    cells_html = re.findall(r"<td[^>]*>", html)
    assert cells_html and all("text-align: left" in td for td in cells_html if "style" in td)
    assert "margin-left: 0" in html
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b|color:", html)  # the theme picks colours
    with_counts(path, {code_index: 17})
    ran = check(notebook=path)
    assert "In [17], line" in ran.html and "In [17], line" in ran.text


def test_check_finds_its_notebook_beside_files_whose_json_is_no_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check()` looks for the one notebook here marked as the grader's: a file whose JSON
    is a list (or a number) beside it was a Python traceback, not a file to pass over."""
    from grader.inline import find_notebook

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    (tmp_path / "arr.ipynb").write_text("[]")
    (tmp_path / "num.ipynb").write_text("7")
    mine = write_notebook(tmp_path / "mine.ipynb", ["x = 1"])
    notebook = nbformat.read(mine, as_version=4)
    notebook.metadata["grader"] = {"assignment": "self_attention"}
    nbformat.write(notebook, mine)
    assert find_notebook() == mine


def test_a_notebook_no_assignment_fits_is_told_how_to_name_one_in_python(tmp_path: Path) -> None:
    # check() told a student in Jupyter to "pass --assignment", an option of a command.
    path = write_notebook(tmp_path / "mine.ipynb", ["def helper(x):\n    return x"])
    result = check(notebook=path, config=Path(__file__).resolve().parents[1])
    assert "cannot tell which assignment" in result.text
    assert "--assignment" not in result.text
    assert "check(assignment='…') with one of: masked_attention," in result.text
