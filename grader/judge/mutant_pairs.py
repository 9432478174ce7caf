"""Pairs of mutations: two of a reference's distinct single mutants applied together, for a
student who made two mistakes in one function (the seed notebook has three).

A single mutant replaces one expression of the reference, or one in each of several
statements (a mistake made alike in the queries, keys and values). Its places (paths of
fields from the function's root, one per statement) are found by comparing its source with
the reference's; two mutants none of whose places contain one of the other's combine into
one function. The number made is bounded
(`MAX_SOURCES` singles per target, `MAX_PAIRS` pairs), and they run once, after the singles,
in the same cached child run (derived.py). Nothing here runs code.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from grader.course.mistakes import Mistake

MAX_SOURCES = 60  # distinct single mutants of one target taken into pairs
MAX_PAIRS = 400  # pairs made per target at most, the earliest singles' first
PAIR_PREFIX = "_grader_pair_"

Path = tuple[tuple[str, int | None], ...]  # (field, index in a list field or None) from the root


@dataclass(frozen=True)
class Pair:
    """Two single mutants applied together: the first names the pair, `second` goes along."""

    mistake: Mistake  # the combined function, named and told as the first mutant
    second: Mistake


def _places(a: Any, b: Any, path: Path) -> list[Path]:
    """The paths where `b` differs from `a` (a list of another length differs as a whole)."""
    if type(a) is not type(b):
        return [path]
    if not isinstance(a, ast.AST):
        return [] if a == b else [path]
    found: list[Path] = []
    for name, value in ast.iter_fields(a):
        other = getattr(b, name, None)
        if isinstance(value, list):
            if not isinstance(other, list) or len(other) != len(value):
                return [path]
            for i, (x, y) in enumerate(zip(value, other, strict=True)):
                found += _places(x, y, (*path, (name, i)))
        else:
            found += _places(value, other, (*path, (name, None)))
    return found


def _at(root: ast.AST, path: Path) -> Any:
    node: Any = root
    for name, index in path:
        node = getattr(node, name)
        if index is not None:
            node = node[index]
    return node


def _put(root: ast.AST, path: Path, new: Any) -> None:
    parent = _at(root, path[:-1])
    name, index = path[-1]
    if index is None:
        setattr(parent, name, copy.deepcopy(new))
    else:
        getattr(parent, name)[index] = copy.deepcopy(new)


def _function(source: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    # one function only: a helper's mutant comes with its caller and is not paired
    first = tree.body[0] if len(tree.body) == 1 else None
    return first if isinstance(first, ast.FunctionDef) else None


def _place(reference: ast.FunctionDef, mutant: Mistake) -> list[tuple[Path, Any]] | None:
    """Where the single mutant changed the reference, and the expression it put there: one
    place per statement it changed (a mistake made alike in three statements has three)."""
    changed = _function(mutant.source)
    if changed is None:
        return None
    changed.name = reference.name
    places = _places(reference, changed, ())
    if not places:
        return None
    by_statement: dict[Path, list[Path]] = {}
    for path in places:
        by_statement.setdefault(_statement_of(reference, path), []).append(path)
    found = []
    for paths in by_statement.values():
        # The smallest node that holds every difference in the statement (`a @ b + c`
        # becoming `a @ b` differs in three fields of one BinOp).
        common = paths[0]
        for other in paths[1:]:
            length = 0
            while length < min(len(common), len(other)) and common[length] == other[length]:
                length += 1
            common = common[:length]
        if len(common) < 2:
            return None
        found.append((common, _at(changed, common)))
    return found


def _statement_of(root: ast.AST, path: Path) -> Path:
    """The longest start of `path` that leads to a statement of `root` (the function itself
    when none)."""
    node: Any = root
    held: Path = ()
    for k, (name, index) in enumerate(path):
        node = getattr(node, name, None)
        if index is not None and isinstance(node, list):
            node = node[index] if index < len(node) else None
        if node is None or isinstance(node, list):
            break
        if isinstance(node, ast.stmt):
            held = path[: k + 1]
    return held


def _nested(a: Path, b: Path) -> bool:
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]


def pair_mutants(reference: ast.FunctionDef, singles: Sequence[Mistake]) -> list[Pair]:
    """Pairs of `singles` (distinct single mutants of `reference`, in order) applied together,
    at most MAX_PAIRS, each one function named `_grader_pair_<target>_<k>`."""
    clean = copy.deepcopy(reference)
    clean.decorator_list = []
    placed = [(m, p) for m in singles[:MAX_SOURCES] if (p := _place(clean, m)) is not None]
    pairs: list[Pair] = []
    seen: set[str] = set()
    # By the later of the two singles' places, so that a cut keeps every early pair.
    order = sorted(combinations(range(len(placed)), 2), key=lambda ij: (ij[1], ij[0]))
    for i, j in order:
        (first, places_a), (second, places_b) = placed[i], placed[j]
        if len(pairs) >= MAX_PAIRS:
            break
        if any(_nested(a, b) for a, _ in places_a for b, _ in places_b):
            continue
        both = copy.deepcopy(clean)
        for path, new in (*places_a, *places_b):
            _put(both, path, new)
        key = ast.dump(both)
        if key in seen:
            continue
        seen.add(key)
        both.name = f"{PAIR_PREFIX}{first.target}_{len(pairs)}"
        ast.fix_missing_locations(both)
        # Two mistakes of one kind are told in one finding; of two kinds, each in its own.
        same = first.id == second.id
        message = f"{first.message}; and {second.message}" if same else first.message
        source = ast.unparse(both)
        combined = Mistake(
            first.id, first.target, message, "", both.name, source, None, first.locate
        )
        pairs.append(Pair(combined, second))
    return pairs
