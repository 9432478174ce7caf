"""A tuple returned with the right items in another order: `return Q, V, K` where `Q, K, V`
is expected. Every item agrees, in every case, with an item the reference returns at another
position. A mutant that swaps two arguments (`X @ W_v` for `X @ W_k`, and back) gives the same
numbers. The student's code did not swap arguments, though: it swapped what it returns, and
the line to change is that `return`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from itertools import permutations

from grader.judge.static import FunctionSource
from grader.report import Location

MOST_ITEMS = 6  # 720 orders at most


def item_order(fits: Sequence[Sequence[bool]]) -> tuple[int, ...] | None:
    """The order that places each returned item k at the expected position order[k], where
    `fits[k][j]` says that item k agrees with the expected item j in every case. None when the
    given order fits (the items are not what is wrong) or no order does. Of several orders,
    the one that moves the fewest items."""
    n = len(fits)
    if not 2 <= n <= MOST_ITEMS or all(fits[k][k] for k in range(n)):
        return None
    fitting = (p for p in permutations(range(n)) if all(fits[k][p[k]] for k in range(n)))
    return min(fitting, key=lambda p: sum(p[k] != k for k in range(n)), default=None)


def _return(function: FunctionSource, n: int) -> ast.Return | None:
    """The function's only `return` of a tuple of `n` items (None: none, or several)."""
    found = [
        node
        for node in ast.walk(function.node)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Tuple)
        and len(node.value.elts) == n
    ]
    return found[0] if len(found) == 1 else None


def order_words(
    order: Sequence[int], function: FunctionSource | None
) -> tuple[str, Location | None]:
    """What to say of items returned in `order` (item k is the expected item order[k]), and
    where: the student's `return`, when their code has one. Either the `return` lists its
    names in the wrong order or a name holds what another should (`K = X @ W_v`): the same
    numbers, so both are named, and the line is the `return`."""
    moved = [k for k in range(len(order)) if order[k] != k]
    if len(moved) == 2:
        places = f"elements [{moved[0]}] and [{moved[1]}] are swapped"
    else:
        places = ", ".join(f"element [{k}] holds what [{order[k]}] should" for k in moved)
    what = f"returns the right values in the wrong places: {places}"
    statement = _return(function, len(order)) if function is not None else None
    if statement is None or function is None or not isinstance(statement.value, ast.Tuple):
        return what, None
    given = "return " + ", ".join(ast.unparse(item) for item in statement.value.elts)
    check = f"check the order in `{given}` and what each of them is computed from"
    return f"{what} ({check})", function.location(statement.lineno)
