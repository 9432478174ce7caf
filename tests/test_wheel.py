"""The grader from a wheel: built from this repository, installed (not editable) into a fresh
virtual environment, it holds no course and grades anywhere against a course it is shown.

Slow: it builds the wheel and installs it with its dependencies from the package index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow

ENV = ("GRADER_CONFIG", "GRADER_COURSE")
# What a copy of the repository leaves out: build outputs and local state, not course files.
LOCAL = (".git", ".venv", "build", "*.egg-info", "__pycache__", "results", ".*_cache")
DEMO = REPO / "demo" / "submissions"


def run(*args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV and k != "PYTHONPATH"}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def installed() -> Iterator[tuple[Path, Path]]:
    """(the wheel, the `grader` script of a fresh venv that has it installed). In a folder
    any user can read, as an installed package is: bubblewrap runs as nobody for root."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-wheel-"))
    root.chmod(0o755)
    try:
        yield _install(root)
    finally:
        shutil.rmtree(root)


def _install(root: Path) -> tuple[Path, Path]:
    source = root / "source"  # a copy: building in place would leave build/ in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LOCAL))
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", root / "dist", source, cwd=root
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("*.whl")
    venv = root / "venv"
    made = run("/usr/bin/python3.11", "-m", "venv", venv, cwd=root)
    assert made.returncode == 0, made.stderr
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    done = run(venv / "bin" / "pip", "install", "--quiet", wheel, cwd=root)
    assert done.returncode == 0, done.stderr
    return wheel, venv / "bin" / "grader"


def test_the_wheel_holds_the_package_and_no_course(installed: tuple[Path, Path]) -> None:
    names = zipfile.ZipFile(installed[0]).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"grader", "attention_grader-0.1.0.dist-info"}, tops
    assert "grader/cli.py" in names and "grader/templates/gradescope/run_autograder" in names
    course = {p.name for p in REPO.iterdir()} & {"solutions", "exercises", "config.yaml"}
    assert course == {"solutions", "exercises", "config.yaml"}  # what must stay out
    assert not [n for n in names if any(part in course for part in n.split("/"))]
    site = installed[1].parent.parent / "lib" / "python3.11" / "site-packages"
    assert not [p.name for p in site.iterdir() if p.name in course]


@pytest.mark.sandbox
def test_the_installed_grader_checks_a_notebook_anywhere(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The same JSON as the checkout's grader gives, with --course and with $GRADER_COURSE."""
    away = tmp_path / "away"
    away.mkdir()
    notebook = shutil.copy(DEMO / "bruno.ipynb", away / "bruno.ipynb")
    grader = installed[1]
    check = ("check", "bruno.ipynb", "--format", "json")
    results = [
        run(sys.executable, "-m", "grader", *check, "--course", REPO, cwd=away),
        run(grader, *check, "--course", REPO, cwd=away),
        run(grader, *check, cwd=away, GRADER_COURSE=str(REPO)),
    ]
    reports = []
    for result in results:
        assert result.returncode in (0, 1) and result.stderr == "", result.stderr
        report = json.loads(result.stdout)
        report.pop("seconds")
        reports.append(report)
    assert reports[0]["submission"] == Path(notebook).name and reports[0]["max_score"] > 0
    assert not [note for note in reports[0]["notes"] if "sandbox" in note]  # it had one
    assert reports[1] == reports[0] and reports[2] == reports[0]
    assert {r.returncode for r in results} == {results[0].returncode}


def test_the_installed_grader_without_a_course_says_how_to_name_one(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    shutil.copy(DEMO / "bruno.ipynb", tmp_path / "bruno.ipynb")
    result = run(installed[1], "check", "bruno.ipynb", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "no course found" in lines[0] and "--course DIR" in lines[0]
