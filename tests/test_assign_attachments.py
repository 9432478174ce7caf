"""`grader assign` keeps a markdown cell's attachments (images pasted into it, nbformat 4's
`attachments`) in the student notebook, and a changed image makes the exercise stale."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import nbformat
from click.testing import CliRunner

from grader.author.assign import exercise_notebook, stale_exercise, write_exercise
from grader.cli import main
from grader.course.config import Config

from conftest import repo_config_raw

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n a pasted plot").decode()


def solution_with_image(path: Path, image: str = PNG) -> Path:
    """A solution whose markdown cell (and raw cell) shows a pasted image."""
    picture = nbformat.v4.new_markdown_cell("The heat map:\n\n![map](attachment:map.png)")
    picture["attachments"] = {"map.png": {"image/png": image}}
    raw = nbformat.v4.new_raw_cell("see attachment:notes.txt")
    raw["attachments"] = {"notes.txt": {"text/plain": "read me"}}
    code = nbformat.v4.new_code_cell("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n")
    nbformat.write(nbformat.v4.new_notebook(cells=[picture, raw, code]), str(path))
    return path


def test_the_exercise_keeps_the_cells_attachments(config: Config, tmp_path: Path) -> None:
    spec = replace(
        config.assignment("self_attention"), solution=solution_with_image(tmp_path / "s.ipynb")
    )
    notebook = exercise_notebook(spec)
    solution = nbformat.read(str(spec.solution), as_version=4)
    shown = [c for c in notebook.cells if c.cell_type != "code"]
    assert [c.attachments for c in shown] == [c.attachments for c in solution.cells[:2]]
    assert all("attachments" not in c for c in notebook.cells if c.cell_type == "code")
    nbformat.validate(notebook)
    # what `grader assign` writes: the image is in the student's file
    written = write_exercise(spec, tmp_path / "ex.ipynb")
    cells = json.loads(written.read_text(encoding="utf-8"))["cells"]
    assert cells[0]["attachments"] == {"map.png": {"image/png": PNG}}


def test_a_changed_image_makes_the_exercise_stale(config: Config, tmp_path: Path) -> None:
    solution = solution_with_image(tmp_path / "s.ipynb")
    spec = replace(config.assignment("self_attention"), solution=solution)
    spec = replace(spec, exercise=write_exercise(spec, tmp_path / "ex.ipynb"))
    assert not stale_exercise(spec)
    solution_with_image(solution, base64.b64encode(b"another plot").decode())
    assert stale_exercise(spec)


def test_grader_assign_writes_the_attachments(tmp_path: Path) -> None:
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    spec["solution"] = str(solution_with_image(tmp_path / "s.ipynb"))
    course = tmp_path / "course"
    course.mkdir()
    (course / "config.yaml").write_text(json.dumps(raw))
    where = ["assign", "-a", "self_attention", "--course", str(course)]
    result = CliRunner().invoke(main, [*where, "--out", str(tmp_path / "exercise.ipynb")])
    assert result.exit_code == 0, result.output
    cells = json.loads((tmp_path / "exercise.ipynb").read_text(encoding="utf-8"))["cells"]
    assert cells[0]["attachments"] == {"map.png": {"image/png": PNG}}
