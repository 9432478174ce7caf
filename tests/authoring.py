"""What the course author's tests share: a new course made by `grader init`, and a command
that must be refused in one line without changing a file (tests/test_author_*.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.author.scaffold import init_course
from grader.cli import main


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in tmp_path, outside the repository (whose config.yaml would be noted as
    ignored); a module that imports this fixture has it for each of its tests."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADER_COURSE", raising=False)
    monkeypatch.delenv("GRADER_CONFIG", raising=False)


def new_course(tmp_path: Path) -> Path:
    """A new course made by `grader init` (its exercise not yet written)."""
    course = tmp_path / "course"
    init_course(course)
    return course


def digests(folder: Path) -> dict[Path, str]:
    """Each file under `folder`, by its content's hash."""
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def refused(args: list[str], folder: Path) -> str:
    """Run the command: exit 2, one line on stderr, no file under `folder` changed or added;
    the line."""
    before = digests(folder)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    said = result.stderr.strip().splitlines()
    assert len(said) == 1, said
    assert digests(folder) == before
    return said[0]
