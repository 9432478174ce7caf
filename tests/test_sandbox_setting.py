"""`sandbox:` in the course config, and `--sandbox` over it: every way of grading a notebook
resolves the same mode, and `required` without a sandbox is exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.course.config import load_config
from grader.engine import grade_path
from grader.errors import UsageError
from grader.inline import check
from grader.run import bwrap

import students
from conftest import repo_config_raw, write_notebook

pytestmark = pytest.mark.sandbox

TURNED_OFF = "the sandbox was turned off"
SIMULATED = "no sandbox: the notebook ran with process limits only (simulated)"


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where no config.yaml lies (the repository's would get a note on stderr)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where no sandbox can be made."""
    monkeypatch.setattr(bwrap, "support", lambda: bwrap.Support(False, "simulated"))


def course(tmp_path: Path, mode: str | None) -> Path:
    raw = repo_config_raw()
    if mode is not None:
        raw["sandbox"] = mode
    path = tmp_path / "course" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(raw))
    return path


def notebook(tmp_path: Path) -> Path:
    (tmp_path / "class").mkdir(exist_ok=True)
    return write_notebook(tmp_path / "class" / "ann.ipynb", students.cells())


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_required_in_the_config_without_a_sandbox_exits_2_in_one_line(
    tmp_path: Path, no_bwrap: None
) -> None:
    config, path = course(tmp_path, "required"), notebook(tmp_path)
    for command in (["check", str(path)], ["grade", str(path.parent)]):
        code, out, err = invoke(*command, "--config", str(config))
        assert code == 2, (command, out, err)
        assert err.startswith("Error: the sandbox is required"), err
        assert "simulated" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(UsageError):
        grade_path(path, load_config(config))


def test_the_option_overrides_the_config(tmp_path: Path, no_bwrap: None) -> None:
    path = notebook(tmp_path)
    required, off = str(course(tmp_path / "r", "required")), str(course(tmp_path / "o", "none"))
    code, out, _ = invoke("check", str(path), "--config", required, "--sandbox", "auto")
    assert code == 0 and SIMULATED in out
    code, out, _ = invoke("grade", str(path.parent), "--config", required, "--sandbox", "none")
    assert code == 0, out
    code, _, err = invoke("check", str(path), "--config", off, "--sandbox", "required")
    assert code == 2 and "the sandbox is required" in err
    code, out, _ = invoke("check", str(path), "--config", off)
    assert code == 0 and TURNED_OFF in out


def test_the_config_decides_for_check_and_grade_path(tmp_path: Path) -> None:
    """`sandbox: none` reaches the report whether it is graded by `grader check`, `check()`
    or a `grade_path` call; `--sandbox` and `sandbox=` override it."""
    config, path = course(tmp_path, "none"), notebook(tmp_path)
    loaded = load_config(config)
    assert any(TURNED_OFF in note for note in grade_path(path, loaded).notes)
    found = check(notebook=str(path), config=str(config)).report
    assert found is not None and any(TURNED_OFF in note for note in found.notes)
    overridden = grade_path(path, loaded, sandbox="auto")
    assert not any(TURNED_OFF in note for note in overridden.notes)
    default = load_config(course(tmp_path / "d", None))
    assert not any(TURNED_OFF in note for note in grade_path(path, default).notes)


def test_grade_without_the_sandbox_says_so_once_on_the_terminal(
    tmp_path: Path, no_bwrap: None
) -> None:
    # The note was on each feedback page and in grades.csv, never on the instructor's
    # terminal: a class graded on a machine without bubblewrap looked like a sandboxed one.
    path = notebook(tmp_path)
    write_notebook(tmp_path / "class" / "bo.ipynb", students.cells())
    code, _, err = invoke("grade", str(path.parent), "--config", str(course(tmp_path, None)))
    assert code == 0, err
    assert err.splitlines().count(f"warning: {SIMULATED}") == 1, err
    code, _, err = invoke("grade", str(path.parent), "--config", str(course(tmp_path, "none")))
    assert code == 0 and err.count(TURNED_OFF) == 1, err
