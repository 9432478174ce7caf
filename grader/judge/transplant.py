"""Mistakes across targets: a catalogued mistake of one function, carried into another whose
reference contains the same logic (the Qᵀ K mistakes of `self_attention`, made inside
`scaled_dot_product_self_attention`).

Everything here is AST work on source text — parsed and unparsed, never run. Each reference
and variant is inlined into one expression of its parameters (straight-line bodies only), the
variant's change is found against its own reference, and the same change is made to the other
reference: where that reference wraps or keeps the changed part, the change goes in; where the
two conflict, nothing is derived. The derived variant runs in the sandboxed child with the
catalogue, and is named with the catalogue's words.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Sequence
from dataclasses import replace

from grader.course.mistakes import Catalogue, Mistake
from grader.course.notebook import Submission
from grader.judge.static import find_function

PREFIX = "_grader_inherited_"


class _Conflict(Exception):
    """The two changes touch the same part in different ways."""


def _body(node: ast.FunctionDef) -> list[ast.stmt]:
    body = list(node.body)
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:]
    return body


class _Substitute(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        """A name bound earlier is replaced by a copy of its value."""
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return copy.deepcopy(self.names[node.id])
        return node


def inline(node: ast.FunctionDef) -> ast.expr | None:
    """The function as one expression of its parameters: each `name = expr` put where it is
    read; None unless the body is assignments to plain names and one final `return`."""
    bound = {
        n.id
        for c in ast.walk(node)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    names: dict[str, ast.expr] = {}
    for statement in _body(node):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id not in bound
        ):
            value = _Substitute(names).visit(copy.deepcopy(statement.value))
            names[statement.targets[0].id] = value
        elif isinstance(statement, ast.Return) and statement.value is not None:
            result: ast.expr = _Substitute(names).visit(copy.deepcopy(statement.value))
            return result
        else:
            return None
    return None


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def _outline(node: ast.AST) -> tuple[object, ...]:
    """A node's kind and its own fields (operator, name, attribute, constant, list lengths),
    not its children: two nodes with the same outline differ only below."""
    parts: list[object] = [type(node)]
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            continue
        if isinstance(value, ast.AST):
            parts.append((name, type(value)))
        elif isinstance(value, list):
            parts.append((name, len(value)))
        else:
            parts.append((name, value))
    return tuple(parts)


def _children(node: ast.AST) -> Iterator[tuple[str, int | None, ast.expr]]:
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            yield name, None, value
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.expr):
                    yield name, i, item


def _with_child(node: ast.AST, name: str, index: int | None, child: ast.AST) -> ast.AST:
    new = copy.copy(node)
    if index is None:
        setattr(new, name, child)
    else:
        items = list(getattr(node, name))
        items[index] = child
        setattr(new, name, items)
    return new


def _merge(base: ast.AST, target: ast.AST, variant: ast.AST) -> ast.AST:
    """`target` with the change that turns `base` into `variant` (or `variant` with the
    change that turns `base` into `target`); _Conflict where they cannot both be made."""
    if _same(base, target):
        return variant
    if _same(base, variant):
        return target
    target_aligns = _outline(base) == _outline(target)
    variant_aligns = _outline(base) == _outline(variant)
    if target_aligns and variant_aligns:
        merged = copy.copy(target)
        for (name, index, b), (_, _, t), (_, _, v) in zip(
            _children(base), _children(target), _children(variant), strict=True
        ):
            merged = _with_child(merged, name, index, _merge(b, t, v))
        return merged
    if not target_aligns:  # the target wraps this part: the variant's change goes inside
        for name, index, child in _children(target):
            if _outline(child) == _outline(base):
                return _with_child(target, name, index, _merge(base, child, variant))
    if not variant_aligns:  # the variant wraps it: the target's change goes inside
        for name, index, child in _children(variant):
            if _outline(child) == _outline(base):
                return _with_child(variant, name, index, _merge(base, target, child))
    raise _Conflict


class _Sorted(ast.NodeTransformer):
    """Operands of + and * in one order, so `b + W @ x` and `W @ x + b` compare equal."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        """Order the operands of a commutative operator by their dump."""
        self.generic_visit(node)
        if isinstance(node.op, ast.Add | ast.Mult) and ast.dump(node.left) > ast.dump(node.right):
            node.left, node.right = node.right, node.left
        return node


def _canonical(node: ast.expr) -> ast.AST:
    result: ast.AST = _Sorted().visit(copy.deepcopy(node))
    return result


def carry(base: ast.FunctionDef, target: ast.FunctionDef, variant: ast.FunctionDef) -> str | None:
    """The body expression of `target` with the mistake that `variant` makes in `base`, as
    source; None when it cannot be carried over or changes nothing."""
    parts = [inline(f) for f in (base, target, variant)]
    if any(p is None for p in parts):
        return None
    b, t, v = (p for p in parts if p is not None)
    if _same(_canonical(v), _canonical(t)):
        return None  # the variant's change is what makes the target differ (scaling, say)
    try:
        merged = _merge(b, t, v)
    except (_Conflict, ValueError):
        return None
    return None if _same(merged, t) or _same(merged, b) else ast.unparse(merged)


def _parameters(node: ast.FunctionDef) -> str:
    return ast.unparse(node.args)


def inherited_mistakes(
    solution: Submission, catalogue: Catalogue, targets: Sequence[str]
) -> list[Mistake]:
    """For each pair of function targets with the same parameters, the catalogued mistakes of
    one carried into the other (never one the other's own catalogue already lists)."""
    functions = {n: f for n in targets if (f := find_function(solution, n)) is not None}
    variants = _variant_nodes(catalogue)
    found: list[Mistake] = []
    for name, function in functions.items():
        own = {m.id for m in catalogue.for_target(name)}
        for other, source in functions.items():
            if other == name or _parameters(other_node := source.node) != _parameters(
                function.node
            ):
                continue
            for mistake in catalogue.for_target(other):
                variant = variants.get(mistake.function)
                if mistake.id in own or variant is None:
                    continue
                body = carry(other_node, function.node, variant)
                if body is None:
                    continue
                found.append(_mistake(mistake, name, other, function.node, body, len(found)))
    return found


def _variant_nodes(catalogue: Catalogue) -> dict[str, ast.FunctionDef]:
    try:
        tree = ast.parse(catalogue.source)
    except SyntaxError:
        return {}
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _mistake(
    mistake: Mistake, target: str, origin: str, node: ast.FunctionDef, body: str, number: int
) -> Mistake:
    """The carried mistake: the catalogue's words, said of `target`, with its own variant."""
    function = f"{PREFIX}{number}"
    source = f"def {function}({_parameters(node)}):\n    return {body}\n"
    message = (
        f"{mistake.message} (a mistake the course lists for `{origin}`, made here in this "
        "function's own code)"
    )
    return replace(mistake, target=target, message=message, function=function, source=source)
