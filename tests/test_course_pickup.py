"""The course is named, never picked up: a config.yaml where the grader runs, or beside the
notebook it grades, is a student's as often as the instructor's.

Each test plants a hostile course: its "solution" writes a marker file when it is executed,
and its only target is met by a function that returns zeros. The grader must neither run
that solution nor give the zero-returning stub full marks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.inline import check

from conftest import REPO, write_notebook

STUB = "import numpy as np\n\ndef softmax(items_in):\n    return np.zeros(len(items_in))"
ASSIGNED = {"grader": {"assignment": "self_attention"}}


def plant(folder: Path, marker: Path) -> Path:
    """A hostile course (config.yaml and its "solution") and a stub homework.ipynb in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    ran = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('the solution ran')"
    write_notebook(folder / "solution.ipynb", [ran, STUB])
    softmax = {"points": 10, "inputs": "score_list"}
    assignment = {"solution": "solution.ipynb", "seed": 1, "sizes": [{"N": 3}]}
    course = {"version": 1, "assignments": {"self_attention": {**assignment, "targets": {}}}}
    course["assignments"]["self_attention"]["targets"]["softmax"] = softmax
    (folder / "config.yaml").write_text(yaml.safe_dump(course), encoding="utf-8")
    return write_notebook(folder / "homework.ipynb", [STUB], ASSIGNED)


def grader(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m grader ARGS` in `cwd`, with $GRADER_CONFIG only when given here."""
    clean = {k: v for k, v in os.environ.items() if k not in ("GRADER_CONFIG", "GRADER_COURSE")}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(autouse=True)
def _no_course_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRADER_CONFIG", raising=False)
    monkeypatch.delenv("GRADER_COURSE", raising=False)


def test_check_refuses_the_working_folders_config_unnamed(tmp_path: Path) -> None:
    """Not named, it is not used, and no other course is taken instead: a checkout's bundled
    course graded a class of another course with exit 0 (r55)."""
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    result = grader(clone, "check", "homework.ipynb", "--format", "json")
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and not marker.exists()
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "beside" in lines[0], lines
    assert "--course" in lines[0]


@pytest.mark.parametrize("how", ["--config", "GRADER_CONFIG"])
def test_check_refuses_a_named_config_beside_the_notebook(tmp_path: Path, how: str) -> None:
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    named = (["--config", "config.yaml"], {}) if how == "--config" else ([], {how: "config.yaml"})
    result = grader(clone, "check", "homework.ipynb", *named[0], **named[1])
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "beside" in lines[0], lines
    assert not marker.exists()


@pytest.mark.parametrize(("where", "why"), [(".", "beside"), ("exercises", "was not named")])
def test_a_grader_installed_from_the_clone_refuses_the_clones_course(
    tmp_path: Path, where: str, why: str
) -> None:
    """`pip install -e .` in a student's clone of the course: the "bundled" course is theirs."""
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    shutil.copytree(REPO / "grader", clone / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    notebook = Path(where) / "homework.ipynb"
    (clone / notebook).parent.mkdir(exist_ok=True)
    if where != ".":
        shutil.move(clone / "homework.ipynb", clone / notebook)
    result = grader(clone, "check", str(notebook))  # `-m grader` finds the clone's copy first
    assert result.returncode == 2, result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and why in lines[0], lines
    assert not marker.exists()


@pytest.mark.slow
def test_check_grades_against_a_course_named_with_course(tmp_path: Path) -> None:
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    result = grader(clone, "check", "homework.ipynb", "--course", str(REPO), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["max_score"] == 10 and not marker.exists()


@pytest.mark.slow
def test_grade_refuses_the_working_folders_course_for_a_class_inside_it(tmp_path: Path) -> None:
    """The class inside the working folder's course: that course may be the student's, and
    the bundled one is not taken instead (r55: a grader installed from a checkout graded an
    instructor's class against the attention course, exit 0); it has to be named."""
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    klass = clone / "class"
    klass.mkdir()
    shutil.move(clone / "homework.ipynb", klass / "ana.ipynb")
    result = grader(clone, "grade", "class", "--assignment", "self_attention")
    assert result.returncode == 2, result.stderr
    assert not marker.exists() and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert f"class lies inside the folder of {clone / 'config.yaml'}" in lines[0], lines
    assert "which was not named" in lines[0] and "--course" in lines[0]


def test_grade_refuses_a_config_in_the_class_folder(tmp_path: Path) -> None:
    klass, marker = tmp_path / "class", tmp_path / "marker"
    plant(klass, marker)
    result = grader(tmp_path, "grade", "class", "--config", "class/config.yaml")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "beside" in lines[0], lines
    assert not marker.exists()


def test_pytest_notebook_refuses_the_working_folders_config_unnamed(
    pytester: pytest.Pytester,
) -> None:
    marker = pytester.path.parent / "marker"
    plant(pytester.path, marker)
    result = pytester.runpytest_subprocess("--notebook", "homework.ipynb", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # 2: a collection error
    result.stdout.fnmatch_lines(["*the grader cannot read*config.yaml*beside*"])
    assert "qkv_loop" not in str(result.stdout) and not marker.exists()


@pytest.mark.slow
def test_pytest_notebook_refuses_a_named_config_beside_the_notebook(
    pytester: pytest.Pytester,
) -> None:
    marker = pytester.path.parent / "marker"
    plant(pytester.path, marker)
    result = pytester.runpytest_subprocess(
        "--notebook", "homework.ipynb", "--grader-config", "config.yaml", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED  # 2: a collection error
    result.stdout.fnmatch_lines(["*the grader cannot read*config.yaml*beside*"])
    assert not marker.exists()


def test_inline_check_refuses_the_working_folders_config_unnamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    plant(clone, marker)
    monkeypatch.chdir(clone)
    result = check(notebook="homework.ipynb")
    assert result.report is None
    assert "could not grade" in repr(result) and "beside" in repr(result)
    assert not marker.exists()


def test_inline_check_refuses_a_named_config_beside_the_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone, marker = tmp_path / "clone", tmp_path / "marker"
    notebook = plant(clone, marker)
    monkeypatch.chdir(tmp_path)
    result = check(notebook=notebook, config=clone / "config.yaml")
    assert result.report is None
    assert "could not grade" in repr(result) and "beside" in repr(result)
    assert "\n" not in repr(result)
    assert not marker.exists()
