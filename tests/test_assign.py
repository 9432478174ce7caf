"""`grader assign`: the exercise notebook is generated from the solution, and kept in sync."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from grader.author.assign import (
    KEEP_GOING_CELL,
    check_cell,
    exercise_notebook,
    strip_solutions,
    write_exercise,
)
from grader.course.config import Config
from grader.errors import ConfigError

from conftest import REPO


def test_committed_exercises_match_the_solutions(config: Config, tmp_path: Path) -> None:
    with_exercises = [a for a in config.assignments.values() if a.exercise is not None]
    assert with_exercises
    for assignment in with_exercises:
        fresh = write_exercise(assignment, tmp_path / assignment.exercise.name)
        assert fresh.read_text() == assignment.exercise.read_text(), (
            f"{assignment.exercise} is out of date: run `grader assign`"
        )


def test_exercise_has_stubs_metadata_and_no_solution(config: Config) -> None:
    notebook = exercise_notebook(config.assignment("self_attention"))
    assert notebook.metadata["grader"] == {"assignment": "self_attention"}
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "BEGIN SOLUTION" not in code
    assert "np.sqrt(queries.shape[0])" not in code
    assert code.count("raise NotImplementedError") == 6
    assert all(c.get("outputs", []) == [] for c in notebook.cells)
    nbformat.validate(notebook)


def test_strip_keeps_indentation_and_the_task() -> None:
    source = "def f(x):\n    # BEGIN SOLUTION: add one\n    return x + 1\n    # END SOLUTION\n"
    assert strip_solutions(source, "t") == (
        'def f(x):\n    # TODO: add one\n    raise NotImplementedError("add one")\n'
    )


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("# BEGIN SOLUTION\nx = 1\n", "never closed"),
        ("x = 1\n# END SOLUTION\n", "END SOLUTION without BEGIN"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "inside another"),
    ],
)
def test_unbalanced_markers_are_config_errors(source: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        strip_solutions(source, "nb, cell 3")


def test_solution_only_cells_are_dropped(config: Config, tmp_path: Path) -> None:
    solution = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("print('answers')", metadata={"tags": ["solution-only"]}),
        ]
    )
    path = tmp_path / "sol.ipynb"
    nbformat.write(solution, str(path))
    spec = config.assignment("self_attention")
    from dataclasses import replace

    notebook = exercise_notebook(replace(spec, solution=path))
    cells = [c.source for c in notebook.cells]
    assert cells == [KEEP_GOING_CELL, "x = 1", check_cell(spec)]
    # the comment names one of this assignment's functions, not another exercise's
    assert f"check({spec.targets[0].name!r})" in cells[-1]
    assert REPO.exists()
