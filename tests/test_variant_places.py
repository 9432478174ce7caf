"""A catalogued mistake whose course pattern finds no line of the student's is placed where
its variant changes the reference (grader/judge/variant_places.py), not on the `def` line;
a variant written otherwise than the reference gives no place, and the course's own pattern
still comes first."""

from __future__ import annotations

import ast
import re

import pytest
from test_misleading_feedback import one

from grader.course.config import Config
from grader.judge.variant_places import first_change, variant_pattern

from conftest import NotebookFactory

COMPREHENSIONS = """\
def qkv_loop(all_x, omega_q, omega_k, omega_v, beta_q, beta_k, beta_v):
    \"\"\"Project each x.\"\"\"
    all_queries = [omega_q @ x for x in all_x]
    all_keys = [omega_k @ x + beta_k for x in all_x]
    all_values = [omega_v @ x for x in all_x]
    return all_queries, all_keys, all_values
"""


@pytest.mark.parametrize(
    ("source", "line"),
    [
        # the bias left out of the queries and the values, each in a comprehension: the
        # course's pattern looks for a product at a line's end
        (COMPREHENSIONS, 3),
        # the values alone
        (COMPREHENSIONS.replace("[omega_q @ x for", "[omega_q @ x + beta_q for"), 5),
    ],
)
def test_a_catalogued_mistake_in_another_form_is_placed_on_its_line(
    config: Config, notebook: NotebookFactory, source: str, line: int
) -> None:
    result = one(config, notebook, "qkv_loop", source)
    assert result.mistakes == ("missing_bias",), result.messages
    assert result.location is not None and result.location.line == line, result.messages


def function(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


REFERENCE = function(
    'def f(x, w, b, u, c):\n    """doc"""\n    q = w @ x + b\n    k = u @ x + c\n    return q @ k\n'
)


def test_the_first_change_is_the_smallest_node_changed() -> None:
    variant = function(
        "def f_v(x, w, b, u, c):\n    q = w * x + b\n    k = u @ x + c\n    return q @ k\n"
    )
    changed = first_change(REFERENCE.body[1], variant.body[0])
    assert changed is not None
    # an operator is shared by the parser: the expression that holds it is the change
    assert [ast.unparse(n) for n in changed] == ["w @ x", "w * x"]


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        # one change made alike in two statements: placed by the first
        ("def v(x, w, b, u, c):\n    q = w @ x\n    k = u @ x\n    return q @ k\n", "q"),
        # a change in the last statement only
        (
            "def v(x, w, b, u, c):\n    q = w @ x + b\n    k = u @ x + c\n    return k @ q\n",
            "return",
        ),
        # two different edits: the variant is written otherwise, no place
        ("def v(x, w, b, u, c):\n    q = w * x + b\n    k = u @ x\n    return q @ k\n", None),
        # another body altogether
        ("def v(x, w, b, u, c):\n    return (w @ x + b) @ (u @ x + c)\n", None),
        ("def v(x, w, b):\n    return (\n", None),
    ],
)
def test_a_variant_gives_a_place_only_for_one_kind_of_change(
    variant: str, expected: str | None
) -> None:
    pattern = variant_pattern(REFERENCE, variant)
    if expected is None:
        assert pattern is None
        return
    assert pattern is not None
    # as placement.locate tries them: each pattern in turn over the body's lines
    body = {"q": "    q = w @ x + b", "k": "    k = u @ x + c", "return": "    return q @ k"}
    found = next(
        name for each in pattern.split("\n") for name, text in body.items() if re.search(each, text)
    )
    assert found == expected, pattern
