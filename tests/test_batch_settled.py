"""A batch without --assignment is graded as one assignment, settled before any notebook runs:
the one most of its notebooks look like. A notebook that looks like another (its metadata,
or the names it defines) used to be graded, recorded in the gradebook and shown on its
feedback page as that other, easier assignment's, with its full marks."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.batch import pool as pool_module
from grader.batch.grade import _settle, grade_batch
from grader.batch.pool import Job, parsed, read_key
from grader.cli import main
from grader.course.config import Config, load_config
from grader.course.notebook import Submission, load_submission
from grader.course.recognise import choose_for_batch, settle_assignment
from grader.engine import grade_path
from grader.errors import ConfigError, UsageError

import students
from conftest import REPO, repo_config_raw, write_notebook

DEMO = REPO / "demo" / "submissions"
# The textbook's notebook, solved: recognised, by the names it defines, as udl_12_1.
OTHER = REPO / "solutions" / "udl_12_1.ipynb"
SELF_ATTENTION = {"grader": {"assignment": "self_attention"}}


def class_of_two(tmp_path: Path) -> Path:
    """A class folder holding two of the demo's self_attention notebooks (ada's, bruno's)."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bruno"):
        shutil.copy(DEMO / f"{name}.ipynb", folder)
    return folder


def test_the_batch_settles_the_assignment_most_notebooks_look_like(config: Config) -> None:
    mostly = ["udl_12_1", None, "self_attention", "self_attention"]
    assert settle_assignment(config, mostly, "class") == "self_attention"
    assert settle_assignment(config, [None, None, "no_such"], "class") is None
    with pytest.raises(UsageError) as refused:
        settle_assignment(config, ["udl_12_1", "self_attention", None], "class")
    assert str(refused.value) == (
        "class: the notebooks look like several assignments, none for most of them "
        "(self_attention (1), udl_12_1 (1)); pass --assignment"
    )


def test_a_notebook_naming_another_assignment_is_graded_as_the_batchs(
    config: Config, tmp_path: Path
) -> None:
    named = {"grader": {"assignment": "masked_attention"}}
    submission = load_submission(write_notebook(tmp_path / "x.ipynb", students.cells(), named))
    spec, note = choose_for_batch(config, submission, None, "self_attention")
    assert spec.id == "self_attention"
    assert note == (
        "assignment 'self_attention', the class's (most of its notebooks are), though this "
        "notebook looks like 'masked_attention' (from the notebook's metadata)"
    )
    spec, note = choose_for_batch(config, submission, "self_attention", None)
    assert (spec.id, note) == (
        "self_attention",
        "assignment 'self_attention' (as asked), though its metadata names 'masked_attention'",
    )
    # One that names the batch's own: graded as ever.
    assert choose_for_batch(config, submission, "masked_attention", None)[1] == ""
    assert choose_for_batch(config, submission, None, "masked_attention") == (
        config.assignment("masked_attention"),
        "assignment 'masked_attention' (from the notebook's metadata)",
    )


@pytest.mark.sandbox
def test_one_notebook_of_an_easier_assignment_is_graded_as_the_class(
    config: Config, tmp_path: Path
) -> None:
    """The attack: aaron hands in another assignment's notebook in a class graded without
    --assignment. Nothing of his is recorded as that assignment's: his gradebook row and
    feedback page are the class's assignment, with a note saying what it looked like."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bruno", "chen"):
        shutil.copy(DEMO / f"{name}.ipynb", folder)
    shutil.copy(OTHER, folder / "aaron.ipynb")
    out = tmp_path / "out"
    batch = grade_batch(folder, config, out)
    aaron = next(e for e in batch.entries if e.student == "aaron")
    assert aaron.report is not None and aaron.report.assignment == "self_attention"
    assert "though this notebook looks like 'udl_12_1'" in aaron.report.notes[0]
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        held = {row[0] for row in db.execute("SELECT assignment FROM submissions")}
    assert held == {"self_attention"}
    page = (out / "feedback" / "aaron.html").read_text()
    assert "udl_12_1" in page and "self_attention" in page


@pytest.mark.sandbox
def test_a_batch_split_evenly_between_assignments_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(DEMO / "ada.ipynb", folder)
    shutil.copy(OTHER, folder / "aaron.ipynb")
    result = CliRunner().invoke(main, ["grade", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "none for most of them (self_attention (1), udl_12_1 (1)); pass --assignment" in (
        result.output
    )


@pytest.mark.sandbox
def test_the_notebooks_kept_from_the_gradebook_count_when_settling(
    config: Config, tmp_path: Path
) -> None:
    """Run again with only aaron's notebook new: the class's, unchanged and kept from the
    gradebook, still say which assignment the batch is (aaron alone would settle his own)."""
    folder = class_of_two(tmp_path)
    out = tmp_path / "out"
    grade_batch(folder, config, out)
    shutil.copy(OTHER, folder / "aaron.ipynb")
    batch = grade_batch(folder, config, out)
    assert sorted(e.student for e in batch.entries if e.skipped) == ["ada", "bruno"]
    aaron = next(e for e in batch.entries if e.student == "aaron")
    assert aaron.report is not None and aaron.report.assignment == "self_attention"


def test_the_notebooks_parsed_to_settle_are_handed_to_grading_unparsed_again(
    config: Config, tmp_path: Path
) -> None:
    """A batch without --assignment parses each notebook without metadata to recognise it:
    the pool takes that parse (once) instead of parsing the same bytes again, and parses a
    notebook rewritten since afresh. A notebook naming its assignment is not parsed."""
    folder = class_of_two(tmp_path)
    named = write_notebook(folder / "cara.ipynb", students.cells(), SELF_ATTENTION)
    todo = [Job(path.stem, path) for path in sorted(folder.glob("*.ipynb"))]
    read: dict[Path, tuple[bytes, Submission]] = {}
    assert _settle(todo, config, folder, read) == "self_attention"
    assert sorted(read) == [folder / "ada.ipynb", folder / "bruno.ipynb"]
    key, ada = read[folder / "ada.ipynb"]
    data = (folder / "ada.ipynb").read_bytes()
    assert key == read_key(data) and len(key) == 16  # a digest: no class's bytes held
    assert "_trees" not in ada.__dict__  # no class's trees held until it is graded
    assert parsed(Job("ada", folder / "ada.ipynb", data), read) is ada
    assert folder / "ada.ipynb" not in read  # taken once
    again = parsed(Job("ada", folder / "ada.ipynb", data), read)
    assert again is not ada and again.cells == ada.cells
    rewritten = DEMO.joinpath("chen.ipynb").read_bytes()
    fresh = parsed(Job("bruno", folder / "bruno.ipynb", rewritten), read)
    assert fresh.cells == load_submission(folder / "bruno.ipynb", rewritten).cells
    assert fresh.cells != load_submission(folder / "bruno.ipynb").cells
    assert parsed(Job("cara", named, named.read_bytes()), read).assignment_hint == (
        "self_attention"
    )


def test_check_says_when_the_metadata_names_another_assignment(tmp_path: Path) -> None:
    """`grader check -a self_attention` on a notebook whose metadata names masked_attention:
    a batch's feedback page said so, check said nothing."""
    named = {"grader": {"assignment": "masked_attention"}}
    path = write_notebook(tmp_path / "x.ipynb", students.cells(), named)
    command = ["check", str(path), "-a", "self_attention", "--config", str(REPO / "config.yaml")]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    said = [line for line in result.stdout.splitlines() if "metadata names" in line]
    assert said == [
        "  - graded as assignment 'self_attention' (as asked), though its metadata names "
        "'masked_attention'"
    ]
    # Its own assignment named, nothing is said.
    command[3] = "masked_attention"
    quiet = CliRunner().invoke(main, command)
    assert "metadata names" not in quiet.output


@pytest.mark.sandbox
def test_the_batch_says_on_the_terminal_which_notebooks_looked_like_another(
    tmp_path: Path,
) -> None:
    """The note on aaron's page and in the gradebook, one line on the instructor's terminal
    too (before, nothing there said it)."""
    folder = class_of_two(tmp_path)
    shutil.copy(OTHER, folder / "aaron.ipynb")
    command = ["grade", str(folder), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "looks like" in line]
    assert said == [
        "note: aaron: graded as assignment 'self_attention', the class's (most of its "
        "notebooks are), though this notebook looks like 'udl_12_1' (from the names it "
        "defines)"
    ]
    again = CliRunner().invoke(main, command)  # kept from the gradebook: said again
    assert [line for line in again.stderr.splitlines() if "looks like" in line] == said


@pytest.mark.sandbox
def test_a_notebook_kept_from_an_earlier_settle_is_graded_again_as_this_batchs(
    config: Config, tmp_path: Path
) -> None:
    """aaron's notebook, unchanged, was graded as the class's self_attention in the first
    run. His classmates then hand in udl_12_1 notebooks, and the class settles udl_12_1:
    aaron's row was kept from the gradebook as self_attention, one class graded as two
    assignments. Every notebook of a batch is graded as the one it settles."""
    folder = class_of_two(tmp_path)
    shutil.copy(OTHER, folder / "aaron.ipynb")
    out = tmp_path / "out"
    first = grade_batch(folder, config, out)
    assert {e.report.assignment for e in first.entries if e.report} == {"self_attention"}
    for name in ("ada", "bruno"):  # both hand in the other assignment's notebook now
        shutil.copy(OTHER, folder / f"{name}.ipynb")
    again = grade_batch(folder, config, out)
    graded = {e.student: e.report.assignment for e in again.entries if e.report}
    assert graded == {"aaron": "udl_12_1", "ada": "udl_12_1", "bruno": "udl_12_1"}
    assert not any(e.skipped for e in again.entries)
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        rows = db.execute("SELECT student, assignment FROM submissions ORDER BY student")
        assert dict(rows.fetchall())["aaron"] == "udl_12_1"
    third = grade_batch(folder, config, out)  # settled alike: all kept
    assert sorted(e.student for e in third.entries if e.skipped) == ["aaron", "ada", "bruno"]


def udl_without_its_solution(tmp_path: Path) -> Config:
    """The bundled course with the solution of udl_12_1 (not the demo's class's) gone."""
    raw = repo_config_raw()
    raw["assignments"]["udl_12_1"]["solution"] = str(tmp_path / "gone.ipynb")
    course = tmp_path / "course"
    course.mkdir()
    (course / "config.yaml").write_text(json.dumps(raw))
    return load_config(course / "config.yaml")


def test_a_settled_batch_checks_and_warms_up_its_own_assignment_only(tmp_path: Path) -> None:
    """Notebooks without metadata (most of the demo's) made the batch check, preload and
    warm up every assignment of the course: another assignment's missing solution stopped a
    class of self_attention notebooks (exit 2), and each worker imported that assignment's
    preloads (matplotlib) for nothing. Settled, the batch needs its own assignment alone."""
    config = udl_without_its_solution(tmp_path)
    folder = class_of_two(tmp_path)
    shutil.copy(DEMO / "lena.ipynb", folder)  # her cell 10 imports matplotlib
    batch = grade_batch(folder, config, tmp_path / "out")
    reports = {e.student: e.report for e in batch.entries if e.report is not None}
    assert {s: r.assignment for s, r in reports.items()} == dict.fromkeys(
        ("ada", "bruno", "lena"), "self_attention"
    )
    # What another assignment preloads is not there for hers: as `grader check` runs it
    # alone, so student and instructor read the same (it ran in the batch, silently).
    alone = grade_path(DEMO / "lena.ipynb", config)
    assert reports["lena"].errors == alone.errors
    assert any("No module named 'matplotlib'" in e for e in alone.errors), alone.errors
    (tmp_path / "again").mkdir()  # asked for by name, its solution is needed: exit 2
    with pytest.raises(ConfigError, match=r"assignments\.udl_12_1\.solution: no such file"):
        grade_batch(class_of_two(tmp_path / "again"), config, None, "udl_12_1")


def test_a_class_of_which_no_notebook_is_recognised_needs_no_assignments_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No notebook recognised, nothing settled: each is a problem ("cannot tell"), as
    `grader check` says. The batch checked, preloaded and warmed up every assignment for
    them: one assignment's missing solution stopped it (exit 2) instead."""
    config = udl_without_its_solution(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("cy", "dee"):
        write_notebook(folder / f"{name}.ipynb", ["x = 1"])
    started: list[list[str]] = []
    real = pool_module.Pool.__init__

    def noted(self: pool_module.Pool, *args: Any, **kwargs: Any) -> None:
        started.append([a.id for a in args[3]])
        real(self, *args, **kwargs)

    monkeypatch.setattr(pool_module.Pool, "__init__", noted)
    batch = grade_batch(folder, config, tmp_path / "out")
    assert started == [[]]
    assert [(e.student, e.report) for e in batch.entries] == [("cy", None), ("dee", None)]
    assert all("cannot tell which assignment" in e.problem for e in batch.entries)


def test_a_notebook_that_alone_could_not_be_told_is_graded_as_the_class(
    config: Config, tmp_path: Path
) -> None:
    """A blank notebook (no metadata, none of any assignment's names) in a settled class was
    left ungraded with "cannot tell which assignment ... pass --assignment", a message for
    the instructor, though the class had settled; `--assignment` grades it, at 0."""
    folder = class_of_two(tmp_path)
    write_notebook(folder / "cy.ipynb", ["x = 1"])
    batch = grade_batch(folder, config, None)
    cy = next(e for e in batch.entries if e.student == "cy")
    assert cy.report is not None, cy.problem
    assert cy.report.assignment == "self_attention" and cy.report.score == 0
    assert cy.report.notes[0] == (
        "graded as assignment 'self_attention', the class's (most of its notebooks are); "
        "this notebook alone could not be told"
    )
    named = grade_batch(folder, config, None, "self_attention")
    alike = next(e for e in named.entries if e.student == "cy").report
    assert alike is not None and alike.score == 0
    assert [t.messages for t in alike.targets] == [t.messages for t in cy.report.targets]
    with pytest.raises(UsageError, match="cannot tell which assignment"):  # alone, as before
        choose_for_batch(config, load_submission(folder / "cy.ipynb"), None, None)
