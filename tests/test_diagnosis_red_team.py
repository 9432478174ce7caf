"""Red-team r49: plausible mistakes outside the catalogue whose feedback named a false cause
or a fix for code the student never wrote; each pinned by a test that failed before its fix."""

from __future__ import annotations

from pathlib import Path

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

import students
from conftest import write_notebook

BOTH_SCALED = """\
def scaled_dot_product_self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    d_q = X.shape[0]
    queries = (omega_q @ X + beta_q) / np.sqrt(d_q)
    keys = (omega_k @ X + beta_k) / np.sqrt(d_q)
    values = omega_v @ X + beta_v
    return values @ softmax_cols(keys.T @ queries)"""


def result(tmp_path: Path, config: Config, name: str, **functions: str) -> TargetResult:
    """`name`'s result in the self_attention notebook with `functions` replaced."""
    path = write_notebook(tmp_path / "s.ipynb", students.cells(**functions))
    report = grade_path(path, config, "self_attention", sandbox="none")
    lost = [t.name for t in report.targets if t.score < t.max_score]
    assert lost == [name], lost
    return next(t for t in report.targets if t.name == name)


def test_queries_and_keys_each_scaled_by_a_root_are_told_scaled_twice(
    tmp_path: Path, config: Config
) -> None:
    # The catalogue's scale_by_d (same numbers) said "Fix: use `np.sqrt(queries.shape[0])`,
    # not `queries.shape[0]`" of code that has two square roots and no `queries.shape[0]`.
    found = result(
        tmp_path, config, "scaled_dot_product_self_attention",
        scaled_dot_product_self_attention=BOTH_SCALED,
    )  # fmt: skip
    said = " ".join(found.messages)
    assert found.mistakes == ("scale_duplicated",), said
    assert "queries.shape[0]" not in said and "scales twice" in said, said
    assert found.location is not None and found.location.line == 3, found.location


def test_a_call_of_the_1d_softmax_where_softmax_cols_is_meant_is_named_on_its_line(
    tmp_path: Path, config: Config
) -> None:
    # It was "no known mistake matches" here, and in udl_12_1 a pair of a dropped maximum
    # and a wrong axis placed on `return` (true numbers, no cause a student could act on).
    calls_softmax = students.SELF_ATTENTION.replace("softmax_cols(", "softmax(")
    assert calls_softmax != students.SELF_ATTENTION
    found = result(tmp_path, config, "self_attention", self_attention=calls_softmax)
    said = " ".join(found.messages)
    assert found.mistakes == ("wrong_function",), said
    assert "calls `softmax` where `softmax_cols` is meant" in said, said
    assert found.location is not None, said
    line = calls_softmax.splitlines()[found.location.line - 1]
    assert "softmax(" in line, (line, said)
