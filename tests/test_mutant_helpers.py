"""Mutants of the helpers a reference calls that are not graded themselves (issue 17, item 4):
the target is run with the helper's mutant in its place, through a helper between them too,
and its words say which helper changed and point at the target's line that calls it."""

from __future__ import annotations

import ast

from grader.course.config import Config
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
