"""Where a student's code uses one of two parallel values where the other is meant, read from
their own code: two heads computed alike (`h1 = head(…1)`, `h2 = head(…2)`). A mutant that
"uses `head1` where `head2` is meant" gives the same numbers whether the student stacked the
first head twice or computed the second with the first's arguments; which one they wrote, and
so the line to change, only their code says.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from grader.judge.static import FunctionSource
from grader.report import Location

# The ids of the mistakes whose place this module finds (mutant_operators.py's words for them:
# "uses `x` where `y` is meant").
TWIN_MISTAKES = ("wrong_variable", "wrong_argument")


def _assignments(function: ast.FunctionDef) -> list[tuple[str, ast.Call, ast.Assign]]:
    """`name = callee(…)` statements of the function, in order."""
    return [
        (s.targets[0].id, s.value, s)
        for s in ast.walk(function)
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Call)
    ]


def _twins(function: ast.FunctionDef) -> Iterator[tuple[str, ast.Call, str, ast.Call, ast.Assign]]:
    """Pairs of names computed by calls of one callee with as many arguments, the later one's
    statement last."""
    made = _assignments(function)
    for i, (first, call_a, _) in enumerate(made):
        for second, call_b, statement in made[i + 1 :]:
            if (
                first != second
                and ast.dump(call_a.func) == ast.dump(call_b.func)
                and len(call_a.args) == len(call_b.args) > 1
                and not call_a.keywords
                and not call_b.keywords
            ):
                yield first, call_a, second, call_b, statement


def _same_arguments(function: FunctionSource) -> tuple[Location, str] | None:
    """The second of two twins computed from exactly the first one's arguments, or with one
    argument of the first's among arguments of its own."""
    for first, call_a, second, call_b, statement in _twins(function.node):
        args_a = [ast.dump(a) for a in call_a.args]
        args_b = [ast.dump(b) for b in call_b.args]
        same = [k for k, (a, b) in enumerate(zip(args_a, args_b, strict=True)) if a == b]
        where = function.location(statement.lineno)
        if len(same) == len(args_a):
            return where, (
                f"computes `{second}` from exactly the arguments of `{first}`, so both are the "
                f"same value; pass `{second}` its own arguments"
            )
        names = [a for a in call_a.args[1:] if isinstance(a, ast.Name)]
        shared = [k for k in same if k > 0 and isinstance(call_a.args[k], ast.Name)]
        if len(shared) == 1 and len(names) >= 3:  # the first argument (the data) is shared
            name = ast.unparse(call_b.args[shared[0]])
            return where, (
                f"passes `{name}` to compute `{second}`, as for `{first}`, where the other "
                f"arguments are `{second}`'s own"
            )
    return None


def _used_twice(function: FunctionSource) -> tuple[Location, str] | None:
    """A call or a tuple that takes one twin twice (`np.vstack((h1, h1))`) while the other is
    never read."""
    twins = {(a, b) for a, _, b, _, _ in _twins(function.node)}
    read = [
        n.id
        for n in ast.walk(function.node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    ]
    for node in ast.walk(function.node):
        items = node.elts if isinstance(node, ast.Tuple | ast.List) else []
        names = [n.id for n in items if isinstance(n, ast.Name)]
        for first, second in twins:
            for twice, unused in ((first, second), (second, first)):
                if names.count(twice) >= 2 and unused not in read:
                    return function.location(getattr(node, "lineno", function.node.lineno)), (
                        f"uses `{twice}` twice in `{ast.unparse(node)}`, and `{unused}` is "
                        "computed but never used"
                    )
    return None


def twin_slip(function: FunctionSource | None) -> tuple[Location, str] | None:
    """Where the student's code uses one twin value for both, and what it does there, in
    their own names; None when their code shows no such place."""
    if function is None:
        return None
    return _used_twice(function) or _same_arguments(function)
