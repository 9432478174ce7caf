"""`check()` inside a notebook: run by a real kernel through nbclient, and as a function."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.inline import check

import students
from conftest import REPO, repo_config_raw, write_notebook

CHECK = "from grader import check\ncheck()"


@pytest.mark.slow
def test_check_in_a_kernel_shows_the_diagnosis(tmp_path: Path) -> None:
    cells = [*students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS), CHECK]
    path = write_notebook(
        tmp_path / "homework.ipynb", cells, {"grader": {"assignment": "self_attention"}}
    )
    notebook = nbformat.read(str(path), as_version=4)
    NotebookClient(notebook, timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = notebook.cells[-1].outputs
    data = next(o["data"] for o in outputs if o.get("output_type") == "execute_result")
    assert "softmax_wrong_axis" in data["text/html"]
    assert "softmax_wrong_axis" in data["text/plain"]
    assert "homework.ipynb, saved at" in data["text/html"]
    assert data["text/plain"].startswith("homework.ipynb, saved at")  # a console's view too
    assert "<td" in data["text/html"]


def test_check_finds_the_only_assigned_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(REPO / "exercises" / "self_attention.ipynb", tmp_path / "mine.ipynb")
    (tmp_path / "scratch.ipynb").write_text("{}")  # not an assignment: ignored
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    result = check()
    assert result.report is not None and result.report.score == 0
    assert "not implemented yet" in repr(result)


def test_check_one_target_and_unknown_target(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "a.ipynb", students.cells())
    one = check("softmax", notebook=path)
    assert one.report is not None and [t.name for t in one.report.targets] == ["softmax"]
    unknown = check("nope", notebook=path)
    assert unknown.report is None and "no graded function is called 'nope'" in repr(unknown)


def test_check_uses_only_public_cases_when_configured(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["softmax"]["public_cases"] = 2
    config = tmp_path / "course" / "config.yaml"  # not beside the notebook: that is refused
    config.parent.mkdir()
    config.write_text(json.dumps(raw))
    path = write_notebook(tmp_path / "a.ipynb", students.cells())
    report = check("softmax", notebook=path, config=config).report
    assert report is not None and report.targets[0].cases_total == 2
    everything = check("self_attention", notebook=path, config=config).report
    assert everything is not None and everything.targets[0].cases_total == 4


def test_check_says_what_it_cannot_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert "could not tell which notebook" in repr(check())
    assert "could not grade" in repr(check(notebook=tmp_path / "missing.ipynb"))
    monkeypatch.setenv("GRADER_CHILD", "1")
    assert "does nothing while the grader" in repr(check())


def test_exercise_ends_with_the_check_cell_and_grading_it_does_not_recurse() -> None:
    notebook = nbformat.read(str(REPO / "exercises" / "self_attention.ipynb"), as_version=4)
    assert notebook.cells[-1].source.endswith("from grader import check\ncheck()")


@pytest.mark.slow
def test_the_check_cell_runs_quietly_inside_the_grader(tmp_path: Path) -> None:
    """In the graded process the grader's source is out of sight: `from grader import check`
    must still work there (and do nothing), not fail the cell. A fresh process, so that no
    earlier test has imported `grader.inline` already."""
    path = write_notebook(tmp_path / "done.ipynb", [*students.cells(), CHECK])
    command = [sys.executable, "-m", "grader", "check", str(path), "--format", "json"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    data = json.loads(result.stdout)
    assert data["errors"] == [], data["errors"]
    assert data["score"] == data["max_score"]
