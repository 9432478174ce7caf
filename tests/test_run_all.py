""" "Run All" on a handed-out exercise: every cell runs, in a real kernel (nbclient stops at
the first error, as Jupyter does), and the check() cell reports what is unfinished."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from grader.run import session
from grader.run.session import keep_going

from conftest import REPO, write_notebook

EXERCISES = sorted((REPO / "exercises").glob("*.ipynb"))


def run_all(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.read(str(path), as_version=4)
    client = NotebookClient(
        notebook, timeout=120, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError where Jupyter's Run All would stop
    return notebook


def text_of(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda p: p.stem)
def test_run_all_on_the_exercise_reaches_check(tmp_path: Path, exercise: Path) -> None:
    path = Path(shutil.copy(exercise, tmp_path / exercise.name))
    notebook = run_all(path)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)  # every cell ran, the check() cell too
    outputs = "\n".join(text_of(c) for c in code[:-1])
    assert "is not finished yet" in outputs
    verdict = code[-1].outputs[0]["data"]
    assert "not implemented yet" in verdict["text/plain"]
    assert "text/html" in verdict


@pytest.mark.slow
def test_the_guard_keeps_values_and_real_errors(tmp_path: Path) -> None:
    cells = [
        "from grader import keep_going\nkeep_going()",
        "x = 2\nx * 21",  # the last expression is still the cell's value
        "1 / 0",  # nothing unfinished met yet: an error stops Run All as usual
    ]
    path = write_notebook(tmp_path / "plain.ipynb", cells)
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        run_all(path)
    notebook = nbformat.read(str(path), as_version=4)
    client = NotebookClient(notebook, timeout=60, allow_errors=True)
    client.execute()
    assert text_of(notebook.cells[2]) == "42"


def test_keep_going_outside_ipython_does_nothing() -> None:
    assert keep_going() is None


def test_once_a_stub_was_met_only_missing_results_are_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(session, "UNFINISHED", [])

    def raised(action: str) -> BaseException:
        def attention(x: object) -> object:
            if action == "stub":
                raise NotImplementedError
            return {}["typo"] if action == "bug" else undefined  # type: ignore[name-defined]  # noqa: F821

        try:
            attention(1)
        except Exception as error:
            return error
        raise AssertionError("nothing raised")

    assert session.skipped(raised("stub")) and session.UNFINISHED == ["attention"]
    assert session.skipped(raised("name"))  # the stub's result, never set
    assert not session.skipped(raised("bug"))  # a finished function's own error is shown
    said = capsys.readouterr().out
    assert "attention is not finished yet" in said and "needs the result" in said
    assert "KeyError" not in said
