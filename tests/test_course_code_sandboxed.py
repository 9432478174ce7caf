"""The course's own code — the solution notebook and the mistake catalogue — runs in a
sandboxed child like a student's notebook; the grader receives only its numbers. A course
file with a side effect cannot reach the grader's machine, and a broken one is a one-line
course error (exit 2), never a grader fault."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest
import yaml

from grader.course.config import load_config
from grader.engine import grade_path
from grader.errors import ConfigError

from conftest import REPO, repo_config_raw

pytestmark = pytest.mark.sandbox

NOTEBOOKS = REPO / "tests" / "notebooks" / "self_attention"


def _course(tmp_path: Path, solution_cell: str = "", catalogue_line: str = "") -> Path:
    """A copy of the self_attention course whose solution starts with `solution_cell` and
    whose catalogue ends with `catalogue_line`."""
    course = tmp_path / "course"
    course.mkdir()
    raw = repo_config_raw()
    raw["assignments"] = {"self_attention": raw["assignments"]["self_attention"]}
    spec = raw["assignments"]["self_attention"]
    solution = nbformat.read(spec["solution"], as_version=4)
    if solution_cell:
        solution.cells.insert(0, nbformat.v4.new_code_cell(solution_cell))
    nbformat.write(solution, course / "solution.ipynb")
    catalogue = Path(spec["mistakes"]).read_text(encoding="utf-8") + "\n" + catalogue_line + "\n"
    (course / "mistakes.py").write_text(catalogue, encoding="utf-8")
    spec.update(solution=str(course / "solution.ipynb"), mistakes=str(course / "mistakes.py"))
    (course / "config.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    return course


def _side_effect(marker: Path) -> str:
    """Course code that leaves a file behind wherever it runs (and never fails)."""
    return f"try:\n    open({str(marker)!r}, 'w').write('ran')\nexcept OSError:\n    pass\n"


def test_the_solution_and_the_catalogue_never_run_in_the_grader(tmp_path: Path) -> None:
    solution_marker, catalogue_marker = tmp_path / "solution-ran", tmp_path / "catalogue-ran"
    course = _course(tmp_path, _side_effect(solution_marker), _side_effect(catalogue_marker))
    config = load_config(course / "config.yaml")
    right = grade_path(
        NOTEBOOKS / "scale_missing.ipynb",
        config,
        "self_attention",
        sandbox="required",
    )
    assert not solution_marker.exists()
    assert not catalogue_marker.exists()
    scaled = next(t for t in right.targets if t.name == "scaled_dot_product_self_attention")
    # the references came back: everything else passes; the catalogue's numbers came back:
    # the mistake is named from its fingerprint
    assert scaled.status != "passed" and "scale_missing" in scaled.mistakes
    others = [t for t in right.targets if t.name != scaled.name]
    assert others and all(t.status == "passed" for t in others)


def test_the_grader_process_holds_no_solution_function(tmp_path: Path) -> None:
    config = load_config(_course(tmp_path) / "config.yaml")
    grade_path(NOTEBOOKS / "scale_missing.ipynb", config, "self_attention", sandbox="required")
    solution_code = [
        o
        for o in gc.get_objects()
        if isinstance(o, types.FunctionType) and o.__code__.co_filename.startswith("<solution")
    ]
    variants = [
        o
        for o in gc.get_objects()
        if isinstance(o, types.FunctionType) and "__scale_missing" in o.__name__
    ]
    assert solution_code == [] and variants == []


@pytest.mark.parametrize(
    ("solution_cell", "catalogue_line", "expected"),
    [
        ("raise RuntimeError('broken on purpose')", "", "broken on purpose"),
        ("", "raise RuntimeError('catalogue broken')", "catalogue broken"),
        (
            "",
            "@CATALOGUE.mistake('softmax', 'x', 'words' + str(1), hint='h')\ndef softmax__x(x):\n"
            "    return x",
            "must be literal",
        ),
        (
            "",
            "@CATALOGUE.mistake('softmax', 'x', 'w', hint='h')\ndef softmax(x):\n    return x",
            "may not be named like a target",
        ),
    ],
)
def test_broken_course_code_is_one_line_and_exit_2(
    tmp_path: Path, solution_cell: str, catalogue_line: str, expected: str
) -> None:
    course = _course(tmp_path, solution_cell, catalogue_line)
    with pytest.raises(ConfigError, match=expected):
        grade_path(NOTEBOOKS / "scale_missing.ipynb", load_config(course / "config.yaml"))
    student = tmp_path / "work" / "hw.ipynb"
    student.parent.mkdir()
    shutil.copy(NOTEBOOKS / "scale_missing.ipynb", student)
    command = [sys.executable, "-m", "grader", "check", str(student), "--course", str(course)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_class_with_a_broken_solution_stops_before_grading(tmp_path: Path) -> None:
    course = _course(tmp_path, "raise RuntimeError('broken on purpose')")
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("alice", "bob"):
        shutil.copy(NOTEBOOKS / "scale_missing.ipynb", folder / f"{name}.ipynb")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--course", str(course)]
    done = subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "broken on purpose" in done.stderr and "Traceback" not in done.stderr
    assert not (out / "grader-faults.log").exists()
    assert json.dumps(done.stdout).count("grader fault") == 0
