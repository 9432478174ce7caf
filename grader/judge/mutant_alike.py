"""One mistake made alike in every statement computed the same way: the queries, keys and
values each projected with the weights transposed, say. A student who copies a line three
times copies its mistake too; one single mutant changes one of the three, a pair two.

A group is the assignments whose expressions have one structure up to the names in them
(mutant_operators.blank_shape, as `siblings` groups them); the change is made by the same
operator at the same place of each, only for operators whose change reads no name (a
transpose, an operand order, a product, a term, an axis). Parses and rewrites; runs nothing.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from grader.judge.mutant_operators import (
    OPERATORS,
    Change,
    Context,
    Operator,
    blank_shape,
    swap_node,
)

# The changes made alike: their meaning is the same in each statement of a group.
ALIKE = frozenset(
    {
        "operand_transposed",
        "operands_swapped",
        "elementwise_product",
        "matrix_product_for_elementwise",
        "term_dropped",
        "missing_bias",
        "softmax_wrong_axis",
        "reduction_axis",
    }
)


def _groups(function: ast.FunctionDef) -> list[list[int]]:
    """Positions (in ast.walk order) of the one-name assignments computed alike, by group."""
    groups: dict[str, list[int]] = {}
    for index, node in enumerate(ast.walk(function)):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            groups.setdefault(blank_shape(node.value), []).append(index)
    return [group for group in groups.values() if len(group) > 1]


def alike(
    function: ast.FunctionDef, context: Context
) -> Iterator[tuple[ast.FunctionDef, Change, ast.AST]]:
    """Each change of ALIKE made at the same place of every statement of a group: the
    mutant, the change (its words name the first statement's expression and the others'
    names) and the node changed in the first statement (where the mistake is looked for)."""
    nodes = list(ast.walk(function))
    for group in _groups(function):
        first = nodes[group[0]]
        assert isinstance(first, ast.Assign)
        names = [_bound(nodes[i]) for i in group]
        for place, node in enumerate(ast.walk(first.value)):
            if not isinstance(node, ast.expr):
                continue
            for operator in OPERATORS:
                for which, change in enumerate(operator(node, context)):
                    if change.mistake_id not in ALIKE:
                        continue
                    mutant = _made_alike(function, group, place, operator, which, change, context)
                    if mutant is None:
                        continue
                    others = " and ".join(f"`{n}`" for n in names[1:])
                    words = (
                        f"{change.words} (computing `{names[0]}`), and the same in computing "
                        f"{others}"
                    )
                    yield mutant, Change(change.node, change.mistake_id, words), node


def _bound(node: ast.AST) -> str:
    """The name an assignment of a group binds."""
    assert isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    return node.targets[0].id


def _made_alike(
    function: ast.FunctionDef,
    group: list[int],
    place: int,
    operator: Operator,
    which: int,
    change: Change,
    context: Context,
) -> ast.FunctionDef | None:
    """A copy of `function` with the `which`-th change of `operator` made at position
    `place` of every statement of the group; None where one of them gives another change."""
    clone = copy.deepcopy(function)
    nodes = list(ast.walk(clone))
    swaps: list[tuple[ast.AST, ast.expr]] = []
    for index in group:
        statement = nodes[index]
        assert isinstance(statement, ast.Assign)
        inside = list(ast.walk(statement.value))
        target = inside[place] if place < len(inside) else None
        if not isinstance(target, ast.expr):
            return None
        made = list(operator(target, context))
        if which >= len(made) or made[which].mistake_id != change.mistake_id:
            return None
        swaps.append((target, copy.deepcopy(made[which].node)))
    for old, new in swaps:
        if not swap_node(clone, old, new):
            return None
    return clone
