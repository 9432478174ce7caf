"""A broken course fails before any student's notebook runs: one line naming the file and the
config key, exit 2 (grader/judge/preflight.py). The timing is in bench/preflight.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import grader.batch.grade as batch_grade
from grader.cli import main

from conftest import REPO, repo_config_raw

MISTAKES = REPO / "solutions" / "self_attention_mistakes.py"


def _course(folder: Path, **changes: str) -> Path:
    """The bundled course's self_attention alone, in `folder`, with `changes` to its keys."""
    raw = repo_config_raw()
    raw["assignments"] = {"self_attention": {**raw["assignments"]["self_attention"], **changes}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def _class(tmp_path: Path) -> Path:
    submissions = tmp_path / "class"
    submissions.mkdir()
    shutil.copy(REPO / "demo" / "submissions" / "ada.ipynb", submissions / "ada.ipynb")
    return submissions


@pytest.fixture
def no_student_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    """Records every call that would run the students' notebooks of a batch."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no other config.yaml about
    calls: list[Any] = []
    monkeypatch.setattr(batch_grade, "_run", lambda *a, **k: calls.append(a))
    return calls


def _grade(course: Path, tmp_path: Path) -> Any:
    out = tmp_path / "out"
    return CliRunner().invoke(
        main, ["grade", str(_class(tmp_path)), "--course", str(course), "--out", str(out)]
    )


def _one_line(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return str(lines[0])


def test_wrong_solution_path(tmp_path: Path, no_student_runs: list[Any]) -> None:
    course = _course(tmp_path / "course", solution="solutions/nope.ipynb")
    line = _one_line(_grade(course, tmp_path))
    assert "assignments.self_attention.solution" in line
    assert "nope.ipynb" in line and str(course / "config.yaml") in line
    assert no_student_runs == []
    assert not (tmp_path / "out" / "grades.csv").exists()


def _solution(folder: Path, old: str = "", new: str = "", extra: str = "") -> Path:
    """A copy of the solution notebook with `old` replaced by `new` in its softmax, and a
    last cell `extra`."""
    notebook = json.loads((REPO / "solutions" / "self_attention.ipynb").read_text())
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if "def softmax(items_in)" in text:
            cell["source"] = text.replace(old, new)
    if extra:
        notebook["cells"].append(
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": extra}
        )  # fmt: skip
    folder.mkdir(parents=True)
    path = folder / "self_attention.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def test_solution_failing_its_own_cases(tmp_path: Path, no_student_runs: list[Any]) -> None:
    # It changes its argument, which the course's `mutation: fail` refuses in a student's.
    old = "    scores = np.asarray(items_in, dtype=float)\n"
    solution = _solution(tmp_path / "solutions", old, old + "    items_in[0] = 0.0\n")
    course = _course(tmp_path / "course", solution=str(solution))
    line = _one_line(_grade(course, tmp_path))
    assert "assignments.self_attention.targets.softmax" in line
    assert str(solution) in line and "its own case" in line
    assert no_student_runs == []


def test_solution_that_crashes(tmp_path: Path, no_student_runs: list[Any]) -> None:
    solution = _solution(tmp_path / "solutions", extra="raise RuntimeError('broken course')")
    course = _course(tmp_path / "course", solution=str(solution))
    line = _one_line(_grade(course, tmp_path))
    assert "assignments.self_attention.solution" in line and "broken course" in line
    assert no_student_runs == []


def test_mistake_not_caught(tmp_path: Path, no_student_runs: list[Any]) -> None:
    catalogue = tmp_path / "mistakes.py"
    catalogue.write_text(
        MISTAKES.read_text()
        + "\n\n@CATALOGUE.mistake('softmax', 'same_as_solution', 'right after all', hint='-')\n"
        "def softmax__same_as_solution(items_in):\n"
        "    scores = np.asarray(items_in, dtype=float)\n"
        "    weights = np.exp(scores - np.max(scores))\n"
        "    return weights / np.sum(weights)\n"
    )
    course = _course(tmp_path / "course", mistakes=str(catalogue))
    line = _one_line(_grade(course, tmp_path))
    assert str(catalogue) in line and "same_as_solution" in line
    assert "assignments.self_attention.targets.softmax" in line
    assert no_student_runs == []


def test_check_refuses_a_broken_course_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    course = _course(tmp_path / "course", solution="solutions/nope.ipynb")
    notebook = _class(tmp_path) / "ada.ipynb"
    result = CliRunner().invoke(main, ["check", str(notebook), "--course", str(course)])
    assert "assignments.self_attention.solution" in _one_line(result)


def test_a_passed_course_is_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.course.config import load_config
    from grader.judge import preflight

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    config = load_config(_course(tmp_path / "course") / "config.yaml")
    spec = config.assignment("self_attention")
    calls: list[str] = []
    preflight.preflight_all(config, [spec], lambda a: calls.append(a.id) or _workers(a))
    preflight.preflight_all(config, [spec], lambda a: calls.append(a.id) or _workers(a))
    assert calls == ["self_attention"]  # the second run was a hash, no worker asked for
    edited = tmp_path / "mistakes.py"
    edited.write_text(MISTAKES.read_text() + "\n# an edit\n")
    config = load_config(_course(tmp_path / "course", mistakes=str(edited)) / "config.yaml")
    spec = config.assignment("self_attention")
    preflight.preflight_all(config, [spec], lambda a: calls.append(a.id) or _workers(a))
    assert calls == ["self_attention", "self_attention"]  # a changed catalogue: checked again


def _workers(spec: Any) -> Any:
    from grader.engine import require
    from grader.run.workers import shared_workers

    return shared_workers(require("auto"), spec.files, spec.preload)


def test_serve_refuses_a_broken_course_at_start_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.serve.server as server

    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    started: list[Any] = []
    monkeypatch.setattr(server, "serve", lambda *a, **k: started.append(a))
    course = _course(tmp_path / "course", solution="solutions/nope.ipynb")
    args = ["serve", "--course", str(course), "--out", str(tmp_path / "serve")]
    assert "assignments.self_attention.solution" in _one_line(CliRunner().invoke(main, args))
    assert started == []
