"""Where a catalogued mistake shows when the course's own pattern finds no line of the
student's: the place its variant changes the reference, looked for as a mutant's change is.

A catalogue entry's `locate` pattern is written for one form of the code (`omega_q @ x` at a
line's end); a student who wrote the same mistake in another form (inside a comprehension)
was pointed at the `def` line. The variant and the reference function are compared statement
by statement: the change (the product without its bias, made alike in the queries, keys and
values) gives the patterns mutant_places.py makes for a derived mistake, each statement's in
turn from precise to loose, tried after the course's own.

Runs in the trusted process on the course's own code (the solution and the catalogue's
variants), when a failing target's fingerprints are first read (expected.py): a notebook whose
targets all pass never pays for it; a student bundle holds the patterns made here.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence
from dataclasses import replace
from itertools import zip_longest

from grader.course.mistakes import Mistake
from grader.judge.mutant_places import locate_pattern

Pair = tuple[ast.AST, ast.AST]

# Fields whose lists are statements: of several changed, the first is the place.
_STATEMENTS = ("body", "orelse", "finalbody")
# Nodes the parser shares between expressions (one `ast.MatMult()` for every `@`): a change
# of one is placed by the expression that holds it.
_LEAVES = (ast.operator, ast.boolop, ast.cmpop, ast.unaryop, ast.expr_context)
_BLOCKS = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    """The function's statements without a leading docstring (a variant rarely has one)."""
    body = function.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        return body[1:]
    return list(body)


def _first_of(pairs: Sequence[Pair], statements: bool, whole: Pair) -> Pair:
    """Where to go on from the changed children of one node: the one changed child, or the
    first changed statement of a block; else the node itself (its parts changed together)."""
    if len(pairs) == 1 or (pairs and statements):
        if isinstance(pairs[0][0], _LEAVES):
            return whole  # `@` made `*`: the expression that holds the operator
        return first_change(*pairs[0]) or pairs[0]
    return whole


def first_change(reference: ast.AST, variant: ast.AST) -> Pair | None:
    """The smallest node of `reference` that `variant` changes, with what it has there; None
    when the two are the same. Several changes in one block: the first of them."""
    if _same(reference, variant):
        return None
    if type(reference) is not type(variant):
        return reference, variant
    pairs: list[Pair] = []
    statements = False
    for name in reference._fields:
        mine, theirs = getattr(reference, name, None), getattr(variant, name, None)
        if isinstance(mine, list) and isinstance(theirs, list):
            if len(mine) != len(theirs):
                return reference, variant
            for a, b in zip(mine, theirs, strict=True):
                if isinstance(a, ast.AST) and isinstance(b, ast.AST):
                    if not _same(a, b):
                        pairs.append((a, b))
                        statements = statements or name in _STATEMENTS
                elif a != b:
                    return reference, variant
        elif isinstance(mine, ast.AST) and isinstance(theirs, ast.AST):
            if not _same(mine, theirs):
                pairs.append((mine, theirs))
        elif mine != theirs and name not in ("ctx", "type_comment"):
            return reference, variant
    return _first_of(pairs, statements, (reference, variant))


def _shape(node: ast.AST) -> str:
    """A node's structure with every name and attribute the same (`omega_q @ x + beta_q`
    and `omega_k @ x + beta_k` are alike)."""
    copied = copy.deepcopy(node)
    for each in ast.walk(copied):
        if isinstance(each, ast.Name):
            each.id = "_"
        elif isinstance(each, ast.Attribute):
            each.attr = "_"
    return ast.dump(copied)


def _alike(one: Pair, other: Pair) -> bool:
    """Whether two changes are the same change made in two places (the bias left out of
    the queries and of the values), not two different edits."""
    return all(_shape(a) == _shape(b) for a, b in zip(one, other, strict=True))


def variant_pattern(reference: ast.FunctionDef, variant_source: str) -> str | None:
    """The patterns for the line of a student's function where the variant's first change
    shows, made from the reference function it changes; None when the variant is no single
    change of it (another body altogether, or a source that does not parse)."""
    try:
        tree = ast.parse(variant_source)
    except SyntaxError:
        return None
    variant = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if variant is None:
        return None
    mine, theirs = _body(reference), _body(variant)
    if len(mine) != len(theirs):
        return None
    pairs = [(a, b) for a, b in zip(mine, theirs, strict=True) if not _same(a, b)]
    changes = [c for c in (first_change(*pair) for pair in pairs) if c is not None]
    if not changes or any(isinstance(c[0], _BLOCKS) for c in changes):
        return None  # a loop or a branch changed whole: no line of it to point at
    if any(not _alike(changes[0], c) for c in changes[1:]):
        return None  # several changes of different kinds: the variant is written otherwise
    # Each statement's patterns, from precise to loose, taken in turn: the student who left
    # the bias out of the values alone has that line as the variant writes it, and a looser
    # pattern of the queries' change (`omega_q @ x`) would match their right queries line.
    each = [(locate_pattern(reference, *c) or "").split("\n") for c in changes]
    ranked = [p for rank in zip_longest(*each) for p in rank if p]
    return "\n".join(dict.fromkeys(ranked)) or None


def with_place(mistake: Mistake, reference: ast.FunctionDef | None) -> Mistake:
    """The catalogued mistake with its variant's place added after the course's own pattern
    (the course's first: it is the author's word on where the mistake shows)."""
    if reference is None or not mistake.source:
        return mistake
    pattern = variant_pattern(reference, mistake.source)
    if not pattern:
        return mistake
    lines = [line for line in (mistake.locate or "").split("\n") if line]
    extra = [line for line in pattern.split("\n") if line not in lines]
    return replace(mistake, locate="\n".join([*lines, *extra]))


def without_place(mistake: Mistake, reference: ast.FunctionDef | None) -> Mistake:
    """The mistake with the patterns `with_place` added taken off again: the course's own
    alone, for a student bundle (each made pattern is the variant's changed line, one edit
    from the solution's)."""
    if reference is None or not mistake.source or not mistake.locate:
        return mistake
    made = set(filter(None, (variant_pattern(reference, mistake.source) or "").split("\n")))
    lines = mistake.locate.split("\n")
    while lines and lines[-1] in made:
        lines.pop()
    return replace(mistake, locate="\n".join(lines) or None)
