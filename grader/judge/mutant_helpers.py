"""Mutants of the helpers a reference calls that are not graded themselves (`softmax_cols`
in udl_12_1, `one_head` and the `softmax_cols` it calls in multihead_attention): the target's
reference run with one mutant of the helper, or a pair of them, in the helper's place.

Each mistake's source is the helper's mutant, the functions between it and the target
renamed to call it, and the target's reference renamed likewise. Its words say which helper
changed; its place is the changed line of the student's helper of that name, else the target's
line that calls the helper. Nothing here runs code.
"""

from __future__ import annotations

import ast
import builtins
import copy
import keyword
import re
from collections.abc import Sequence
from dataclasses import replace

from grader.course.mistakes import Mistake
from grader.course.notebook import Submission
from grader.judge import mutant_pairs
from grader.judge.mutants import PREFIX, defined_functions, mutants_of
from grader.judge.static import HELPER_DEPTH, find_function, integer_globals

MAX_DEPTH = HELPER_DEPTH  # a helper, and the helpers it calls
MAX_HELPER_PAIRS = 60  # pairs of mutations within one helper, per target
# The line a helper's mistake is placed on when the student named the helper otherwise: the
# first call of a plain name that is neither a keyword nor a builtin (not `np.exp(`, `len(`,
# `return (`), which in a target that calls a helper of the notebook is that call.
_ANY_OWN_CALL = (
    r"(?<![\w.])(?!(?:"
    + "|".join(sorted({*keyword.kwlist, *dir(builtins)}))
    + r")\b)[A-Za-z_]\w*\s*\("
)


def _called(function: ast.FunctionDef, candidates: set[str]) -> list[str]:
    """The notebook's functions that `function` calls, among `candidates`, in order."""
    called = [
        n.func.id
        for n in ast.walk(function)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in candidates
    ]
    return list(dict.fromkeys(called))


class _Rename(ast.NodeTransformer):
    """Every read of one name becomes another."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        """Rename the name when it is the old one."""
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


def _renamed(function: ast.FunctionDef, old: str, new: str, name: str) -> str:
    """The source of `function` under `name`, calling `new` where it called `old`."""
    clone = _Rename(old, new).visit(copy.deepcopy(function))
    clone.name, clone.decorator_list = name, []
    return ast.unparse(ast.fix_missing_locations(clone))


def _paths(
    solution: Submission, start: ast.FunctionDef, others: set[str]
) -> list[list[ast.FunctionDef]]:
    """The chains of helpers below `start`: [h], [h, g] where h calls g, …"""
    found: list[list[ast.FunctionDef]] = []
    frontier: list[list[ast.FunctionDef]] = [[]]
    for _ in range(MAX_DEPTH):
        longer = []
        for path in frontier:
            caller = path[-1] if path else start
            taken = {f.name for f in path}
            for name in _called(caller, others - taken):
                defined = find_function(solution, name)
                if defined is not None:
                    longer.append([*path, defined.node])
        found += longer
        frontier = longer
    return found


def _variants(
    helper: ast.FunctionDef, label: str, globals_: dict[str, int]
) -> list[tuple[Mistake, Mistake | None]]:
    """The helper's single mutants, then pairs of them (bounded), as mistakes of `label`;
    a pair comes with its second mistake when that is of another kind."""
    singles = mutants_of(helper, label, globals_)
    pairs = mutant_pairs.pair_mutants(helper, singles)[:MAX_HELPER_PAIRS]
    return [
        *((m, None) for m in singles),
        *((p.mistake, p.second if p.second.id != p.mistake.id else None) for p in pairs),
    ]


Made = tuple[Mistake, Mistake | None]  # a mistake, and the second one of a pair


def helper_mutants(solution: Submission, targets: Sequence[str]) -> list[Made]:
    """For each function target, its reference with each mutant of each helper below it
    (and, for a pair of mutations in the helper, the pair's second mistake)."""
    globals_ = integer_globals(solution)
    others = set(defined_functions(solution)) - set(targets)
    made: list[Made] = []
    for target in targets:
        found = find_function(solution, target)
        if found is None:
            continue
        for path in _paths(solution, found.node, others):
            made += _through(found.node, target, path, globals_)
    return made


def _through(
    target: ast.FunctionDef,
    name: str,
    path: list[ast.FunctionDef],
    globals_: dict[str, int],
) -> list[Made]:
    """The target run with each variant of the last helper of `path` in its place."""
    helper = path[-1]
    label = f"{name}__{'__'.join(f.name for f in path)}"
    whose = "it calls" if len(path) == 1 else f"`{path[-2].name}` calls"
    made: list[Made] = []
    for k, (variant, second) in enumerate(_variants(helper, label, globals_)):
        sources, current = [variant.source], variant.function
        for depth in range(len(path) - 2, -1, -1):  # the helpers between, innermost first
            middle = f"{PREFIX}{label}_mid{depth}_{k}"
            sources.append(_renamed(path[depth], path[depth + 1].name, current, middle))
            current = middle
        outer = f"{PREFIX}{label}_via_{k}"
        sources.append(_renamed(target, path[0].name, current, outer))
        words = f"in `{helper.name}`, which {whose}: "
        # Tried in turn (mutants.locate_pattern): the call by the helper's own name first.
        locate = rf"\b{re.escape(path[0].name)}\s*\(" + "\n" + _ANY_OWN_CALL
        mistake = Mistake(
            variant.id, name, words + variant.message, "", outer, "\n\n".join(sources)
        )
        also = replace(second, target=name, message=words + second.message) if second else None
        inner = (helper.name, variant.locate)
        made.append(
            (
                replace(mistake, locate=locate, within=inner),
                also and replace(also, locate=locate, within=(helper.name, also.locate)),
            )
        )
    return made
