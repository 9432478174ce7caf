"""The class-assignment policy of `grader grade`, on entries made by hand (no grading)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.entries import Batch, Entry
from grader.batch.outcome import class_assignment, class_outcome, exit_status
from grader.cli import main
from grader.course.config import Config
from grader.errors import NothingGraded, UsageError
from grader.report import Report

from conftest import REPO


def graded(student: str, assignment: str) -> Entry:
    """An entry graded as `assignment`, with no targets (the policy reads only the id)."""
    return Entry(student, Path(f"{student}.ipynb"), Report(assignment, f"{student}.ipynb", ()))


def test_the_class_is_reported_on_the_assignment_most_notebooks_were_graded_as() -> None:
    entries = [graded("ada", "b_hw"), graded("bo", "a_hw"), graded("cy", "b_hw")]
    assert class_assignment(entries) == "b_hw"
    tie = [graded("ada", "b_hw"), graded("bo", "a_hw")]
    assert class_assignment(tie) == "a_hw"  # a tie goes by name, not by who came first
    unread = Entry("dee", Path("dee.ipynb"), None, "unreadable")
    assert class_assignment([unread]) is None


def test_a_notebook_graded_as_another_assignment_earns_nothing_for_this_one(
    config: Config,
) -> None:
    batch = Batch(
        entries=[
            graded("ada", "self_attention"),
            graded("aaron", "udl_12_1"),
            graded("bo", "self_attention"),
        ]
    )
    outcome = class_outcome(batch, config, None, Path("class"))
    assert outcome.spec.id == "self_attention" and outcome.others == ["aaron"]
    aaron = next(e for e in outcome.entries if e.student == "aaron")
    assert aaron.report is None and "graded as udl_12_1, not self_attention" in aaron.problem
    assert outcome.graded == 2
    named = class_outcome(batch, config, "udl_12_1", Path("class"))  # --assignment decides
    assert named.others == ["ada", "bo"] and named.graded == 1


def test_nothing_graded_is_refused_with_the_source_named(config: Config) -> None:
    batch = Batch(entries=[Entry("ada", Path("ada.ipynb"), None, "unreadable")])
    with pytest.raises(NothingGraded, match="class: nothing could be graded") as refused:
        class_outcome(batch, config, None, Path("class"))
    assert refused.value.exit_code == 1  # as for some ungraded: not a fault of the grader's
    with pytest.raises(UsageError, match="class: nothing to grade"):
        class_outcome(Batch(entries=[]), config, None, Path("class"))


def test_exit_status_lost_or_faults_over_ungraded_over_success() -> None:
    ok = Batch(entries=[graded("ada", "hw")])
    assert exit_status(ok, allow_ungraded=False) == 0
    unread = Batch(entries=[graded("ada", "hw"), Entry("bo", Path("bo.ipynb"), None, "bad")])
    assert exit_status(unread, allow_ungraded=False) == 1
    assert exit_status(unread, allow_ungraded=True) == 0
    stranger = Batch(entries=[graded("ada", "hw")], unmatched=["zed.ipynb: on no roster"])
    assert exit_status(stranger, allow_ungraded=False) == 1
    absent = Batch(entries=[graded("ada", "hw"), Entry("bo", None, None, "none", absent=True)])
    assert exit_status(absent, allow_ungraded=False) == 0  # no submission is not ungraded
    fault = Entry("cy", Path("cy.ipynb"), None, "bug", fault="Traceback ...")
    assert exit_status(Batch(entries=[fault]), allow_ungraded=True) == 3
    assert exit_status(Batch(entries=[graded("ada", "hw")], lost=["bo"]), True) == 3


@pytest.mark.parametrize("files", [{}, {"notes.txt": "hi"}], ids=["empty", "no-notebook"])
@pytest.mark.parametrize("named", [[], ["--assignment", "self_attention"]], ids=["any", "named"])
def test_a_folder_with_nothing_to_grade_is_exit_2_with_or_without_an_assignment(
    tmp_path: Path, files: dict[str, str], named: list[str]
) -> None:
    """It was exit 1 ("nothing could be graded") without --assignment, and exit 0 with it
    (an empty table, outputs written); the exit codes' table says 2."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(REPO), "--out", str(out), *named]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    said = result.stderr.strip().splitlines()[-1]
    assert said.startswith(f"Error: {folder}: nothing to grade: ")
    assert not (out / "grades.csv").exists()


def test_nothing_graded_lists_each_notebook_and_why(tmp_path: Path) -> None:
    # "each problem is listed above" followed a progress bar and nothing else.
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "zoe.ipynb").write_text("{", encoding="utf-8")
    (folder / "yan.ipynb").write_text("", encoding="utf-8")
    result = CliRunner().invoke(main, ["grade", str(folder), "--course", str(REPO)])
    assert result.exit_code == 1, result.output
    said = result.stderr.strip().splitlines()
    assert said[-1] == f"Error: {folder}: nothing could be graded (each problem is listed above)"
    listed = [line.strip() for line in said[:-1] if line.startswith("  ")]
    assert [line.split(":")[0] for line in listed] == ["yan", "zoe"]
    assert "invalid JSON" in listed[1]
