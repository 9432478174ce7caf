"""Mistakes derived from the reference: mutants of each reference function, made by AST
operators that mirror how students go wrong, each with words that say what changed and where.

This module only parses and rewrites source text; it never runs it. The mutants' sources run
in the sandboxed child after the solution notebook, like the catalogue (fingerprints.py), and
those that match the reference, a catalogued mistake or each other are dropped (expected.py).
A mutant names the expression it changed (never a line of the reference, which the student
does not have); the words are ours, the ids the catalogue's where the meaning is the same.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence

from grader.course.mistakes import Mistake
from grader.course.notebook import Submission
from grader.judge.mutant_alike import alike
from grader.judge.mutant_operators import (
    LATE_OPERATORS,
    OPERATORS,
    Change,
    Context,
    code_of,
    is_root,
    loop_items_dropped,
    result_transposed,
    returned_locals,
    siblings,
    swap_node,
)
from grader.judge.mutant_places import CELL, cell_variable, locate_pattern
from grader.judge.static import find_function, integer_globals
from grader.judge.stubs import binds

PREFIX = "_grader_mutant_"
MAX_PER_TARGET = 200  # the operators below make far fewer for any function of a notebook


def _loop_names(node: ast.FunctionDef, parameters: Sequence[str]) -> tuple[str, ...]:
    names: list[str] = []
    for found in ast.walk(node):
        target = found.target if isinstance(found, ast.For | ast.comprehension) else None
        if target is not None:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    if len(names) >= 1:  # an index argument (`i`) is a loop variable's kin
        names += [p for p in parameters if len(p) == 1 and p.islower() and p in "ijkmn"]
    return tuple(dict.fromkeys(names))


def defined_functions(solution: Submission) -> frozenset[str]:
    """The names of the functions the notebook defines at its top level."""
    found: set[str] = set()
    for cell in solution.cells:
        tree = solution.tree(cell.index)
        found.update(n.name for n in (tree.body if tree else ()) if isinstance(n, ast.FunctionDef))
    return frozenset(found)


def _with(function: ast.FunctionDef, index: int, new: ast.AST) -> ast.FunctionDef:
    """A copy of `function` with its `index`-th node (in ast.walk order) replaced."""
    clone = copy.deepcopy(function)
    swap_node(clone, list(ast.walk(clone))[index], copy.deepcopy(new))
    return clone


def _where(function: ast.FunctionDef, node: ast.AST) -> str:
    """The statement that holds the change, in words: `in computing keys`, `in the return`."""
    variable = cell_variable(function, node)
    if variable is not None:  # the return a cell's function was given: no line of the cell
        return f" (in what `{variable}` holds at the end)"
    for statement in ast.walk(function):
        if not isinstance(statement, ast.stmt) or statement is function:
            continue
        if any(n is node for n in ast.walk(statement)):
            if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
                return f" (computing `{statement.targets[0].id}`)"
            if isinstance(statement, ast.Return):
                return " (in what is returned)"
            if (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Attribute)
                and isinstance(statement.value.func.value, ast.Name)
            ):
                return f" (filling `{statement.value.func.value.id}`)"
            if isinstance(statement, ast.If):
                continue
    return ""


def mutants_of(
    function: ast.FunctionDef,
    target: str,
    globals_: dict[str, int],
    inputs: Sequence[str] = (),
    functions: frozenset[str] = frozenset(),
) -> list[Mistake]:
    """Every single-change mutant of `function`, as catalogue-like mistakes with sources;
    `inputs`: globals it reads that may stand for each other as parameters do."""
    args = function.args
    parameters = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    parameters += tuple(n for n in inputs if n not in parameters)
    context = Context(
        target,
        parameters,
        globals_,
        _loop_names(function, parameters),
        siblings(function),
        functions,
    )
    found: list[Mistake] = []
    seen: set[str] = {ast.dump(function)}
    body_nodes = list(ast.walk(function))
    returned = {id(n.value) for n in body_nodes if isinstance(n, ast.Return)}
    for index, node in enumerate(body_nodes):
        if not isinstance(node, ast.expr) or any(node is d for d in function.args.defaults):
            continue
        for operator in OPERATORS:
            for change in operator(node, context):
                if change.mistake_id == "intermediate_transposed" and id(node) in returned:
                    continue  # the result transposed: output_transposed, made below
                _add(
                    found, seen, _with(function, index, change.node), target, change, node, function
                )
    for index, change in (*returned_locals(function, body_nodes), *loop_items_dropped(body_nodes)):
        node = body_nodes[index]
        _add(found, seen, _with(function, index, change.node), target, change, node, function)
    for statement, change in result_transposed(function):
        value = statement.value
        assert value is not None
        index = next(i for i, n in enumerate(body_nodes) if n is value)
        _add(found, seen, _with(function, index, change.node), target, change, value, function)
    for mutant, change, node in alike(function, context):
        _add(found, seen, mutant, target, change, node, function, where="")
    for mutant, change, node in _scaled_result(function):
        _add(found, seen, mutant, target, change, node, function)
    for mutant, change in _bounds_everywhere(function, parameters):
        _add(found, seen, mutant, target, change, function, function)
    for index, node in enumerate(body_nodes):
        if not isinstance(node, ast.expr):
            continue
        for operator in LATE_OPERATORS:
            for change in operator(node, context):
                _add(
                    found, seen, _with(function, index, change.node), target, change, node, function
                )
    return found[:MAX_PER_TARGET]


class _Bound(ast.NodeTransformer):
    """Every slice bound that is `name` becomes `name ± 1`."""

    def __init__(self, name: str, delta: int) -> None:
        self.name, self.delta = name, delta

    def visit_Slice(self, node: ast.Slice) -> ast.Slice:
        """Bump each bound that is the name."""
        for field in ("lower", "upper"):
            bound = getattr(node, field)
            if isinstance(bound, ast.Name) and bound.id == self.name:
                op = ast.Add() if self.delta > 0 else ast.Sub()
                setattr(node, field, ast.BinOp(bound, op, ast.Constant(1)))
        return node


def _bounds_everywhere(
    function: ast.FunctionDef, parameters: Sequence[str]
) -> Iterator[tuple[ast.FunctionDef, Change]]:
    """A count argument (`k`) off by one in every slice it bounds, as students write it."""
    for name in parameters:
        for delta in (1, -1):
            mutant = _Bound(name, delta).visit(copy.deepcopy(function))
            if ast.dump(mutant) != ast.dump(function):
                sign = "+" if delta > 0 else "-"
                words = f"is off by one: keeps `{name} {sign} 1` where `{name}` is meant"
                yield mutant, Change(ast.Name(name, ast.Load()), "off_by_one", words)


def _scaled_result(function: ast.FunctionDef) -> Iterator[tuple[ast.FunctionDef, Change, ast.AST]]:
    """The scaling moved from the scores to the result: `x / s` becomes `x`, and what is
    returned is divided by `s` (in attention: after the softmax instead of before it)."""
    nodes = list(ast.walk(function))
    returns = [
        i
        for i, n in enumerate(nodes)
        if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, ast.Tuple)
    ]
    for index, node in enumerate(nodes):
        if not (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and is_root(node.right)
        ):
            continue
        for at in returns:
            mutant = _with(function, index, node.left)
            statement = list(ast.walk(mutant))[at]
            if not (isinstance(statement, ast.Return) and statement.value is not None):
                continue  # the walk's order moved (a return below the scaling): skip it
            statement.value = ast.BinOp(statement.value, ast.Div(), copy.deepcopy(node.right))
            words = (  # no course's words: a layer norm's divisor moves as a score scale does
                f"divides what it returns by `{code_of(node.right)}` at the end instead of "
                f"dividing `{code_of(node.left)}` by it in `{code_of(node)}`"
            )
            yield mutant, Change(statement.value, "scale_misplaced", words), node


def _add(
    found: list[Mistake],
    seen: set[str],
    mutant: ast.FunctionDef,
    target: str,
    change: Change,
    node: ast.AST,
    original: ast.FunctionDef,
    where: str | None = None,
) -> None:
    key = ast.dump(mutant)
    if key in seen:
        return
    seen.add(key)
    name = f"{PREFIX}{target}_{len(found)}"
    mutant.name = name
    mutant.decorator_list = []
    ast.fix_missing_locations(mutant)
    # `where`: the words say it already (a change made alike in several statements)
    message = f"{change.words}{_where(original, node) if where is None else where}"
    variable = cell_variable(original, node)
    if variable is not None and isinstance(change.node, ast.Name) and isinstance(node, ast.Name):
        # the variable holds another's values: said of the variable, not of a `return` the
        # student never wrote (`uses all_queries where all_keys is meant (in what is returned)`)
        message = (
            f"`{variable}` holds the values of `{change.node.id}`: look at what is put into it"
        )
    locate = locate_pattern(original, node, change.node)
    found.append(
        Mistake(change.mistake_id, target, message, "", name, ast.unparse(mutant), None, locate)
    )


def reference_mutants(solution: Submission, targets: Sequence[str]) -> list[Mistake]:
    """The mutants of every function target's reference, in target order."""
    globals_ = integer_globals(solution)
    functions = defined_functions(solution)
    found: list[Mistake] = []
    for target in targets:
        function = find_function(solution, target)
        if function is not None:
            found += mutants_of(function.node, target, globals_, (), functions)
    return found


def cell_function(solution: Submission, name: str) -> tuple[ast.FunctionDef, list[str]] | None:
    """The last solution cell that sets the variable `name`, as a function of no arguments
    that runs the cell and returns `name`; and the globals the cell reads (its inputs)."""
    found = None
    for cell in solution.cells:
        tree = solution.tree(cell.index)
        if tree is not None and binds(tree, name):
            found = tree
    if found is None:
        return None
    stored = {
        n.id for n in ast.walk(found) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    read = [
        n.id
        for n in ast.walk(found)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in stored
    ]
    body = [*copy.deepcopy(found.body), ast.Return(ast.Name(name, ast.Load()))]
    function = ast.FunctionDef(
        name=f"{CELL}{name}",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=body,
        decorator_list=[],
        returns=None,
    )
    return ast.fix_missing_locations(function), list(dict.fromkeys(read))


def variable_mutants(solution: Submission, variables: Sequence[str]) -> list[Mistake]:
    """Mutants of the notebook code that computes each graded variable (each called with
    no arguments in the child, after the solution's cells, returning the variable)."""
    globals_ = integer_globals(solution)
    functions = defined_functions(solution)
    found: list[Mistake] = []
    for name in variables:
        made = cell_function(solution, name)
        if made is not None:
            function, inputs = made
            found += mutants_of(function, name, globals_, inputs, functions)
    return found
