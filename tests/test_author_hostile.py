"""A careless or hostile course: each slip of the author's is one line on stderr and exit 2,
before anything is written over the course's own files or outside its folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.author.scaffold import init_course
from grader.cli import main


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run outside the repository (whose config.yaml would be noted as ignored)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADER_COURSE", raising=False)
    monkeypatch.delenv("GRADER_CONFIG", raising=False)


def _course(tmp_path: Path) -> Path:
    """A new course made by `grader init`."""
    course = tmp_path / "course"
    init_course(course)
    return course


def _digests(course: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in course.rglob("*") if p.is_file()}


def _refused(args: list[str], course: Path) -> str:
    """Run the command: exit 2, one line on stderr, and no file of the course changed."""
    before = _digests(course)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    said = result.stderr.strip().splitlines()
    assert len(said) == 1, said
    assert _digests(course) == before
    return said[0]


@pytest.mark.parametrize(
    ("exercise", "words"),
    [
        ("solutions/standardize.ipynb", "is assignments.example.solution"),
        ("solutions/../solutions/standardize.ipynb", "is assignments.example.solution"),
        ("solutions/standardize_mistakes.py", "is assignments.example.mistakes"),
        ("config.yaml", "is the config"),
        ("cases.py", "is cases.py"),
    ],
)
def test_assign_never_writes_over_a_file_the_course_is_made_of(
    tmp_path: Path, exercise: str, words: str
) -> None:
    # It did: `exercise:` naming the solution replaced the reference by its stubbed copy.
    course = _course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(
        text.replace("exercise: exercises/standardize.ipynb", f"exercise: {exercise}")
    )
    said = _refused(["assign", "--course", str(course)], course)
    assert said.startswith("Error: assignments.example.exercise: ") and words in said


def test_assign_out_naming_the_solutions_folder_is_refused(tmp_path: Path) -> None:
    # --out solutions/ wrote solutions/standardize.ipynb: the solution, stubbed.
    course = _course(tmp_path)
    said = _refused(["assign", "--course", str(course), "--out", str(course / "solutions")], course)
    assert said.startswith("Error: --out: ") and "is assignments.example.solution" in said


def test_an_exercise_outside_the_course_or_shared_is_refused(tmp_path: Path) -> None:
    course = _course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("exercise: exercises/", "exercise: ../"))
    said = _refused(["assign", "--course", str(course)], course)
    assert "assignments.example.exercise: " in said and "outside the course folder" in said
    assert not (tmp_path / "standardize.ipynb").exists()
    config.write_text(
        text + "  again:\n" + text.split("  example:\n")[1].replace("Standardize", "Again")
    )
    said = _refused(["assign", "--course", str(course)], course)
    assert "assignments.example.exercise: " in said
    assert "is assignments.again.exercise as well" in said
