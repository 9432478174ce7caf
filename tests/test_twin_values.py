"""Two heads computed alike, one used for both: the mutant that names it ("uses `head1` where
`head2` is meant") gives the same numbers whether the student stacked the first head twice or
computed the second with the first's arguments, so the line to change is found in the
student's own code (issue 19's leftovers, item 3), never the `return` line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path

from conftest import REPO

CORPUS = REPO / "tests" / "notebooks" / "corpus" / "multihead_attention"
TARGET = "multihead_scaled_self_attention"


def _line_of(path: Path, text: str) -> tuple[int, int]:
    """The (1-based) cell and line of the notebook whose code holds `text`."""
    cells = json.loads(path.read_text())["cells"]
    for number, cell in enumerate(cells, start=1):
        for line, code in enumerate("".join(cell["source"]).split("\n"), start=1):
            if text in code:
                return number, line
    raise AssertionError(text)


@pytest.mark.parametrize(
    ("name", "slip", "words"),
    [
        ("same_head_twice", "np.vstack((h1, h1))", "uses `h1` twice"),
        ("second_head_first_arguments", "h2 = one_head(X, omega_v1", "exactly the arguments"),
        ("second_head_query_weights", "h2 = one_head(X, omega_v2, omega_q1", "`omega_q1`"),
    ],
)
def test_one_head_used_for_both_points_at_the_line_to_change(
    config: Config, name: str, slip: str, words: str
) -> None:
    path = CORPUS / f"{name}.ipynb"
    result = next(
        t for t in grade_path(path, config, "multihead_attention").targets if t.name == TARGET
    )
    said = next(f for f in result.findings if f.mistake in ("wrong_variable", "wrong_argument"))
    assert said.location is not None
    assert (said.location.cell, said.location.line) == _line_of(path, slip), said.message
    assert words in said.message, said.message
