"""Mutants of the helpers a reference calls that are not graded themselves (issue 17, item 4):
the target is run with the helper's mutant in its place, through a helper between them too,
and its words say which helper changed and point at the target's line that calls it."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.course.config import Config
from grader.engine import grade_path
from grader.judge.mutant_helpers import helper_mutants
from grader.judge.mutants import reference_mutants
from grader.judge.reference import load_solution


def test_a_helper_that_is_no_target_gets_mutants_in_its_callers(config: Config) -> None:
    solution = load_solution(config.assignment("udl_12_1"))
    made = helper_mutants(solution, ["softmax", "self_attention"])
    assert made and {m.target for m, _ in made} == {"self_attention"}  # softmax calls none
    first, _ = made[0]
    assert first.message.startswith("in `softmax_cols`, which it calls: ")
    module = ast.parse(first.source)
    names = [f.name for f in module.body if isinstance(f, ast.FunctionDef)]
    assert names[-1] == first.function  # the caller, calling the helper's mutant
    assert f"{names[0]}(" in ast.unparse(module.body[-1])
    assert first.locate is not None and "softmax_cols" in first.locate
    pairs = [(m, second) for m, second in made if second is not None]
    assert pairs and all(second.id != m.id for m, second in pairs)
    # graded targets are not helpers: their mistakes are carried across targets instead
    own = reference_mutants(solution, ["self_attention"])
    assert not any("softmax_cols`, which" in m.message for m in own)


def test_a_helper_of_a_helper_is_reached_through_the_one_between(config: Config) -> None:
    solution = load_solution(config.assignment("multihead_attention"))
    made = [m for m, _ in helper_mutants(solution, ["multihead_scaled_self_attention"])]
    nested = [m for m in made if "in `softmax_cols`, which `one_head` calls" in m.message]
    assert nested
    module = ast.parse(nested[0].source)
    assert len(module.body) == 3  # softmax_cols's mutant, one_head calling it, the target
    assert any(m.message.startswith("in `one_head`, which it calls: ") for m in made)


def test_the_reference_on_an_argument_read_another_way() -> None:
    from grader.judge.mutant_inputs import input_mutants

    node = ast.parse("def f(X, k):\n    return X[:k] @ X[:k].T\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    made = input_mutants(node, "f")
    assert [m.id for m in made] == ["input_transposed", "input_reversed"] * 2
    assert "X = X.T" in made[0].source and "X = X[::-1]" in made[1].source
    assert made[0].message.startswith("gives what a correct version gives for `X` transposed")


RENAMED_HELPER = """import numpy as np

def col_softmax(data_in):
    shifted = np.exp(data_in - np.max(data_in, axis=0, keepdims=True))
    return shifted / np.sum(shifted, axis=0, keepdims=True)

def attend(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):
    queries = omega_q @ X + beta_k
    keys = omega_k @ X + beta_k
    values = omega_v @ X + beta_v
    return values @ col_softmax(keys.T @ queries / np.sqrt(queries.shape[0]))

def multihead_scaled_self_attention(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1,
                                    omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2,
                                    omega_c):
    n = len(X)
    head1 = attend(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1)
    head2 = attend(X, omega_v2, omega_q2, omega_k2, beta_v2, beta_q2, beta_k2)
    return omega_c @ np.vstack([head1, head2])
"""


def test_a_helper_the_student_renamed_is_placed_at_the_call_not_the_def(
    config: Config, tmp_path: Path
) -> None:
    # the student's `one_head` is `attend`, with `beta_k` for `beta_q`: the mistake is found in
    # the course's helper and told at the target's first line that calls the student's helper
    path = tmp_path / "renamed.py"
    path.write_text(RENAMED_HELPER, encoding="utf-8")
    report = grade_path(path, config, "multihead_attention")
    (target,) = report.targets
    told = [f for f in target.findings if "in `one_head`, which it calls" in f.message]
    assert told and told[0].location is not None, [f.message for f in target.findings]
    assert told[0].location.line == 1 + RENAMED_HELPER.splitlines().index(
        "    head1 = attend(X, omega_v1, omega_q1, omega_k1, beta_v1, beta_q1, beta_k1)"
    )


def test_item_order_finds_the_order_that_moves_fewest_and_none_for_the_given_one() -> None:
    from grader.judge.item_order import item_order

    t, f = True, False
    assert item_order([[t, f, f], [f, f, t], [f, t, f]]) == (0, 2, 1)
    assert item_order([[t, f], [f, t]]) is None  # the given order fits: not the mistake
    assert item_order([[f, t], [f, t]]) is None  # no order places both
    # two equal expected items: of the orders that fit, the one moving fewest
    assert item_order([[f, t, t], [t, f, f], [f, t, t]]) == (1, 0, 2)
