"""An author's first course, with only the installed wheel: `grader init`, an assignment for
`layer_norm(x, gamma, beta, eps)` with declared inputs and two catalogued mistakes, `grader
selftest`, and `grader grade` on three students, each scored and named as computed here.

Slow: it builds the wheel and installs it into a fresh virtual environment (test_wheel.py).
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from test_wheel import _install, run

from grader.course.cases import target_cases
from grader.course.config import load_config

pytestmark = pytest.mark.slow

SIGNATURE = "layer_norm(x, gamma, beta, eps)"
RIGHT = (
    "mean = x.mean(axis=-1, keepdims=True)\n"
    "    var = x.var(axis=-1, keepdims=True)\n"
    "    return gamma * (x - mean) / np.sqrt(var + eps) + beta"
)
NO_EPS = RIGHT.replace("np.sqrt(var + eps)", "np.sqrt(var)")
WRONG_AXIS = RIGHT.replace("axis=-1", "axis=0")
MISTAKES = {"variance_without_eps": NO_EPS, "wrong_axis": WRONG_AXIS}
CATALOGUE = """
@CATALOGUE.mistake(
    "layer_norm", "variance_without_eps",
    "divides by the standard deviation without adding eps to the variance",
    hint="use `np.sqrt(var + eps)`",
    locate=r"sqrt\\(var\\)",
)
def layer_norm__variance_without_eps(x, gamma, beta, eps):
    {no_eps}


@CATALOGUE.mistake(
    "layer_norm", "wrong_axis",
    "normalises each column (axis 0) instead of each row's features",
    hint="take the mean and variance over the last axis: `axis=-1, keepdims=True`",
    locate=r"axis\\s*=\\s*0",
)
def layer_norm__wrong_axis(x, gamma, beta, eps):
    {wrong_axis}
"""
ARGS = [
    {"name": "x", "shape": ["N", "D"], "std": 2.0, "mean": 0.5},
    {"name": "gamma", "shape": ["D"], "distribution": "positive"},
    {"name": "beta", "shape": ["D"]},
    {"name": "eps", "distribution": "uniform", "low": 0.2, "high": 0.6},
]
SIZES = [{"N": 3, "D": 4}, {"N": 5, "D": 2}, {"N": 2, "D": 6}, {"N": 4, "D": 3}]


@pytest.fixture(scope="module")
def grader() -> Iterator[Path]:
    """The `grader` script of a fresh venv with the wheel installed (nothing else)."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-author-"))
    root.chmod(0o755)
    try:
        yield _install(root)[1]
    finally:
        shutil.rmtree(root)


def function(body: str) -> Callable[..., Any]:
    scope: dict[str, Any] = {"np": np}
    exec(f"def layer_norm(x, gamma, beta, eps):\n    {body}\n", scope)
    return scope["layer_norm"]  # type: ignore[no-any-return]


def with_body(notebook: Path, body: str, out: Path) -> Path:
    """`notebook` with the layer_norm cell's body replaced by `body`."""
    data = json.loads(notebook.read_text())
    for cell in data["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and text.startswith("def layer_norm("):
            cell["source"] = f"def {SIGNATURE}:\n    import numpy as np\n    {body}\n"
    out.write_text(json.dumps(data))
    return out


def expected_points(config: Path, body: str) -> float:
    """Points × share of the cases on which `body` gives the solution's output."""
    assignment = load_config(config).assignment("layer_norm")
    target = assignment.target("layer_norm")
    cases = target_cases(assignment.seed, target)
    right, student = function(RIGHT), function(body)
    tol = target.tolerance
    passed = sum(
        np.allclose(student(*c.fresh_args()), right(*c.fresh_args()), tol.rtol, tol.atol)
        for c in cases
    )
    return target.points * passed / len(cases)


def test_an_author_goes_from_an_empty_folder_to_a_graded_class(
    grader: Path, tmp_path: Path
) -> None:
    tmp_path.chmod(0o755)
    done = run(grader, "init", "course", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    course = tmp_path / "course"
    done = run(grader, "new-assignment", "layer_norm", "--function", SIGNATURE, cwd=course)
    assert done.returncode == 0, done.stderr
    # What the author edits: the solution's body, the declared inputs, the catalogue.
    solution = course / "solutions" / "layer_norm.ipynb"
    data = json.loads(solution.read_text())
    for cell in data["cells"]:
        if "".join(cell["source"]).startswith("def layer_norm("):
            cell["source"] = (
                f"def {SIGNATURE}:\n    # BEGIN SOLUTION: normalise each row, then scale "
                f"and shift\n    {RIGHT}\n    # END SOLUTION\n"
            )
    solution.write_text(json.dumps(data))
    raw = yaml.safe_load((course / "config.yaml").read_text())
    spec = raw["assignments"]["layer_norm"]
    spec.update(sizes=SIZES, targets={"layer_norm": {"points": 3, "args": ARGS}})
    (course / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    catalogue = course / "solutions" / "layer_norm_mistakes.py"
    words = CATALOGUE.format(no_eps=NO_EPS, wrong_axis=WRONG_AXIS)
    catalogue.write_text(catalogue.read_text() + words)

    done = run(grader, "assign", "--course", ".", cwd=course)
    assert done.returncode == 0, done.stderr
    done = run(grader, "selftest", "--course", ".", cwd=course)
    assert done.returncode == 0, done.stdout + done.stderr
    for mistake in MISTAKES:
        assert f"layer_norm / {mistake}" in done.stdout and f"diagnosed as {mistake}" in done.stdout

    exercise = course / "exercises" / "layer_norm.ipynb"
    class_ = tmp_path / "submissions"
    class_.mkdir()
    students = {"ada": RIGHT, "bruno": NO_EPS, "chen": WRONG_AXIS}
    for student, body in students.items():
        with_body(exercise, body, class_ / f"{student}.ipynb")
    out = tmp_path / "results"
    done = run(grader, "grade", "submissions", "--course", "course", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr

    with (out / "grades.csv").open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    config = course / "config.yaml"
    for student, body in students.items():
        want = expected_points(config, body)
        assert float(rows[student]["layer_norm"]) == pytest.approx(want), student
        assert float(rows[student]["total"]) == pytest.approx(want), student
    assert float(rows["ada"]["total"]) == 3 and float(rows["bruno"]["total"]) < 3
    for student, mistake in (("bruno", "variance_without_eps"), ("chen", "wrong_axis")):
        feedback = (out / "feedback" / f"{student}.html").read_text()
        assert mistake in feedback, student
    assert "wrong_axis" not in (out / "feedback" / "bruno.html").read_text()
