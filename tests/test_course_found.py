"""The course is found as git finds `.git`: the working folder or the nearest one above it
holding a config.yaml, unless it is named (--course, $GRADER_COURSE, $GRADER_CONFIG). A course
found that way never grades notebooks inside its own folder (tests/test_course_pickup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course.locate import (
    Course,
    bundled_config_path,
    choose_course,
    find_upward,
    ignored_configs,
)
from grader.errors import ConfigError

from conftest import REPO, write_fast_course, write_notebook

ENV = ("GRADER_CONFIG", "GRADER_COURSE")
SOFTMAX = (
    "import numpy as np\n\ndef softmax(x):\n    e = np.exp(x - np.max(x))\n    return e / e.sum()"
)


@pytest.fixture(autouse=True)
def _no_course_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_find_upward_takes_the_nearest_folder_with_a_config(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "a" / "b"
    inner.mkdir(parents=True)
    (outer / "config.yaml").write_text("version: 1\n")
    assert find_upward(inner) == outer / "config.yaml"
    (outer / "a" / "config.yaml").write_text("version: 1\n")
    assert find_upward(inner) == outer / "a" / "config.yaml"


def test_the_working_folder_or_one_above_is_the_course(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = tmp_path / "course"
    (course / "notes").mkdir(parents=True)
    (course / "config.yaml").write_text("version: 1\n")
    monkeypatch.chdir(course / "notes")
    elsewhere = write_notebook(tmp_path / "ana.ipynb", [SOFTMAX])
    assert choose_course(None, elsewhere) == Course(course / "config.yaml", "found")
    assert choose_course() == Course(course / "config.yaml", "found")
    assert ignored_configs(choose_course(None, elsewhere), elsewhere, "--course") == []


def test_a_found_course_never_grades_its_own_notebooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "clone"
    (clone / "exercises").mkdir(parents=True)
    (clone / "config.yaml").write_text("version: 1\n")
    inside = write_notebook(clone / "exercises" / "hw.ipynb", [SOFTMAX])
    monkeypatch.chdir(clone)
    inside_it = r"hw\.ipynb lies inside the folder of .*clone/config\.yaml.*--course DIR"
    with pytest.raises(ConfigError, match=inside_it):
        choose_course(None, inside, "--course DIR")
    # named, it is the course; the bundled one is never taken instead (r55: a checkout graded
    # an instructor's class kept in their course folder against the attention course)
    assert choose_course(clone, inside) == Course(clone / "config.yaml", "named")


def test_the_environment_names_a_course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRADER_COURSE", str(tmp_path / "c"))
    assert choose_course() == Course(tmp_path / "c" / "config.yaml", "named")
    assert choose_course(tmp_path / "x.yaml") == Course(tmp_path / "x.yaml", "named")
    monkeypatch.setenv("GRADER_CONFIG", str(tmp_path / "d.yaml"))
    with pytest.raises(ConfigError, match="both set"):
        choose_course()
    monkeypatch.delenv("GRADER_COURSE")
    assert choose_course() == Course(tmp_path / "d.yaml", "named")


def run_grader(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
def test_check_in_a_course_subfolder_grades_against_that_course(tmp_path: Path) -> None:
    """From a subfolder of a course, a notebook lying elsewhere is graded against that course,
    exactly as when the course is named, and no note is printed."""
    config = write_fast_course(tmp_path / "course")
    raw = json.loads(config.read_text())
    raw["assignments"]["self_attention"]["targets"]["softmax"]["points"] = 7  # not the bundled
    config.write_text(json.dumps(raw))
    course = config.parent
    (course / "work").mkdir()
    ana = write_notebook(
        tmp_path / "ana.ipynb", [SOFTMAX], {"grader": {"assignment": "self_attention"}}
    )
    found = run_grader(course / "work", "check", str(ana), "--format", "json")
    named = run_grader(tmp_path, "check", str(ana), "--course", str(course), "--format", "json")
    assert found.returncode == named.returncode == 1, found.stderr
    assert "note:" not in found.stderr
    results = [json.loads(r.stdout) for r in (found, named)]
    for result in results:
        result.pop("seconds")
    assert results[0] == results[1]
    softmax = [t for t in results[0]["targets"] if t["name"] == "softmax"]
    assert softmax[0]["max_score"] == 7 and softmax[0]["status"] == "passed"


def test_no_course_anywhere_is_a_config_error_naming_the_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no course lies above the working folder and none is beside the package (an
    installed wheel), a command says how to name one."""
    import grader.course.locate as locate

    monkeypatch.setattr(locate, "bundled_config_path", lambda: tmp_path / "none" / "config.yaml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"no course found.*--course DIR"):
        choose_course(None, tmp_path / "x.ipynb", "--course DIR")
    (tmp_path / "config.yaml").write_text("version: 1\n")
    with pytest.raises(ConfigError, match=r"config\.yaml lies beside .*x\.ipynb.*--course DIR"):
        choose_course(None, tmp_path / "x.ipynb", "--course DIR")


def test_the_repository_is_the_bundled_course() -> None:
    assert bundled_config_path() == REPO / "config.yaml"


def test_a_course_found_inside_the_folder_graded_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from one student's folder of the class, `grader grade ..` found that student's
    config.yaml and graded everyone against it (r56)."""
    klass = tmp_path / "class"
    (klass / "ada").mkdir(parents=True)
    (klass / "ada" / "config.yaml").write_text("version: 1\n")
    monkeypatch.chdir(klass / "ada")
    with pytest.raises(ConfigError, match=r"ada/config\.yaml lies inside \.\., the folder graded"):
        choose_course(None, Path(".."), "--course DIR")
    # named, it may be used; a class elsewhere is graded against the course found as before
    assert choose_course(klass / "ada", Path("..")).named
    (tmp_path / "other").mkdir()
    assert choose_course(None, tmp_path / "other").how == "found"
