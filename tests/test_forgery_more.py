"""More places student text reaches: OUT/grader-faults.log and what `grader grade` prints
about it, pytest's own output under `pytest --notebook`, `check()` in a notebook, and the
Gradescope bundle's script, which picks the file to grade from the student's names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import grader.batch.recorder as recorder_module
from grader.batch.entries import FAULT_LOG, Entry, log_fault
from grader.cli import main
from grader.inline import check

import students
from conftest import REPO, write_notebook
from test_forgery import FORGED, INVISIBLE, _commands

BRUNO = REPO / "demo" / "submissions" / "bruno.ipynb"  # 5 of 10 points
CONFIG = REPO / "config.yaml"
# A name a student may give a notebook or a folder: a forged workflow command on a line of
# its own, an escape sequence that sets the terminal's title, a bidi override.
HOSTILE_NAME = "a\n::add-mask::secret\x1b]0;t\x07\u202eb"
# Only controls: pytest takes the path, and shows it in every test id.
CONTROLS_NAME = "c\x1b]0;title\x07\u202e\x85d"
IN_A_NAME = INVISIBLE.replace("\x00", "")  # what a file name can hold of them


def assert_neutral(text: str) -> None:
    """No line a CI runner takes for a workflow command, no control, bidi or non-character."""
    assert _commands(text) == [], text
    assert [f"U+{ord(c):04X}" for c in INVISIBLE if c in text] == [], text


def test_the_fault_log_keeps_student_text_inert(tmp_path: Path) -> None:
    """grader-faults.log names the student, the file and the exception: a name with a line
    break made a header of its own (or a forged `::add-mask::` when the log is shown in CI)."""
    student = f"{HOSTILE_NAME}{INVISIBLE}"
    fault = (
        "Traceback (most recent call last):\n"
        '  File "grader/feedback.py", line 1, in write_feedback\n'
        f"RuntimeError: {FORGED}{INVISIBLE}\n"
    )
    entry = Entry(student, tmp_path / f"{student}.ipynb", None, "problem", fault=fault)
    log = log_fault(tmp_path / "out", entry).read_text(encoding="utf-8")
    assert_neutral(log)
    lines = log.split("\n")
    assert lines[0].startswith("--- ") and "secret" in lines[0]  # the header: one line
    assert lines[1] == "Traceback (most recent call last):"
    assert "RuntimeError: " in log and "forged" in log  # still readable


def test_a_fault_of_a_hostile_student_is_logged_and_told_inertly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: the name comes from the file name, the message from an exception; neither
    the log nor what `grader grade` prints about the fault carries them raw."""

    def fragile(*args: Any) -> Any:
        raise RuntimeError(f"page\n{FORGED}{INVISIBLE}")

    monkeypatch.setattr(recorder_module, "write_feedback", fragile)
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / f"{HOSTILE_NAME}.ipynb", students.cells())
    out = tmp_path / "out"
    command = ["grade", str(folder), "--out", str(out), "--assignment", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 3, result.output
    assert "1 submission hit a fault of the grader itself" in result.output
    assert_neutral(result.output)
    log = (out / FAULT_LOG).read_text(encoding="utf-8")
    assert_neutral(log)
    assert [line for line in log.split("\n") if line.startswith("--- ")] == [log.split("\n")[0]]
    assert "RuntimeError: page" in log


def run_pytest(
    cwd: Path, *args: str | Path, rootdir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process, its raw output (pytester splits lines on NEL and the
    like, and would hide what is being looked for)."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    command += ["--rootdir", str(rootdir or cwd)]
    return subprocess.run(
        [*command, "--grader-config", str(CONFIG), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env={**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"},
        check=False,
    )


@pytest.mark.slow
def test_pytest_failure_text_keeps_exception_messages_on_their_line(tmp_path: Path) -> None:
    """The failure text quotes the student's exception: a line break in it must not start
    a line of pytest's output (under GitHub Actions, a forged `::error`)."""
    raising = f"def softmax(items_in):\n    raise ValueError({FORGED + INVISIBLE!r})"
    notebook = write_notebook(tmp_path / "homework.ipynb", students.cells(softmax=raising))
    result = run_pytest(tmp_path, "--notebook", notebook, "-v", "-rA")
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout + result.stderr
    assert "raised ValueError" in result.stdout and "forged" in result.stdout
    assert_neutral(result.stdout + result.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("name", [HOSTILE_NAME, CONTROLS_NAME], ids=["command", "controls"])
def test_pytest_refuses_a_notebook_path_it_would_show_raw(tmp_path: Path, name: str) -> None:
    """pytest prints a path as it is (test ids, its own `file not found`), so a path that is
    not one printable line, or holds its `::`/`[` syntax, is refused in the grader's words."""
    notebook = shutil.copy(BRUNO, tmp_path / f"{name}.ipynb")
    result = run_pytest(tmp_path, "--notebook", notebook, "-v")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "pytest cannot show this path safely" in result.stderr
    assert_neutral(result.stdout + result.stderr)


@pytest.mark.slow
def test_pytest_collection_error_keeps_the_message_inert(tmp_path: Path) -> None:
    """The grader's reason for not reading a notebook may quote it."""
    (tmp_path / "conftest.py").write_text(
        "import grader.pytest_plugin as plugin\n"
        "from grader.errors import SubmissionError\n"
        "def refuse(*args, **kwargs):\n"
        f"    raise SubmissionError({FORGED + INVISIBLE!r})\n"
        "plugin.grade_path = refuse\n",
        encoding="utf-8",
    )
    notebook = shutil.copy(BRUNO, tmp_path / "homework.ipynb")
    result = run_pytest(tmp_path, "--notebook", notebook)
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout + result.stderr
    assert "the grader cannot read" in result.stdout and "forged" in result.stdout
    assert_neutral(result.stdout + result.stderr)


@pytest.mark.slow
def test_pytest_header_note_names_a_folder_inertly(tmp_path: Path) -> None:
    """The note on an ignored config.yaml names the folder pytest runs in."""
    here = tmp_path / HOSTILE_NAME
    here.mkdir()
    shutil.copy(CONFIG, here / "config.yaml")
    clean = tmp_path / "clean"
    clean.mkdir()
    notebook = shutil.copy(BRUNO, clean / "homework.ipynb")
    result = run_pytest(here, "--notebook", notebook, rootdir=clean)
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout + result.stderr
    assert "grader: note: ignored" in result.stdout
    assert_neutral(result.stdout + result.stderr)


def test_check_in_a_notebook_names_a_file_inertly(tmp_path: Path) -> None:
    """check() says which file it could not grade, in the text and the HTML it shows."""
    shown = check(notebook=tmp_path / f"{HOSTILE_NAME}{IN_A_NAME}.ipynb", config=CONFIG)
    assert "could not grade" in repr(shown) and "secret" in repr(shown)
    for text in (repr(shown), shown._repr_html_()):
        assert_neutral(text)
    # as the CLI's `Error:` lines: a message's own lines stay, none can be a command
    assert "\\::add-mask::secret" in repr(shown)


# The Gradescope script's forgeries (a folder named with a line break, a link to the
# solution, a hostile assignment id) are tested on the autograder machine itself, in
# tests/test_gradescope.py.


@pytest.mark.slow
def test_grade_prints_hostile_student_names_inertly(tmp_path: Path) -> None:
    """The table, the progress lines and the summary of `grader grade` name students by
    their file names (a regression test: these were already made safe)."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in (HOSTILE_NAME, CONTROLS_NAME, f"  ::notice::x{IN_A_NAME}", "e\r##[error]f"):
        shutil.copy(BRUNO, folder / f"{name}.ipynb")
    command = ["grade", str(folder), "--out", str(tmp_path / "out"), "-a", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert_neutral(result.output)
    assert sum(line.endswith("5/10") for line in result.output.split("\n")) == 4
