"""The AST operators that make mutants of a reference function (mutants.py puts them to
work): each takes one expression and yields the changes a student might make to it, with the
mistake id and the words that say what changed, naming the expression.

Nothing here runs code: nodes in, nodes and words out.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

_REDUCTIONS = {"sum", "max", "min", "mean", "amax", "amin", "argmax", "std", "var", "logsumexp"}


@dataclass(frozen=True)
class Change:
    """One way an operator changes one node: the new node, the mistake id, the words."""

    node: ast.expr
    mistake_id: str
    words: str


Operator = Callable[[ast.expr, "Context"], Iterator[Change]]


@dataclass(frozen=True)
class Context:
    """What the operators know about the function being mutated."""

    target: str
    parameters: tuple[str, ...]
    globals: dict[str, int]  # the notebook's integer globals (D = 4), by name
    loop_names: tuple[str, ...]  # names bound by loops and comprehensions in the function
    siblings: dict[str, tuple[str, ...]]  # local names computed alike (queries, keys, values)
    functions: frozenset[str] = frozenset()  # the notebook's own functions (softmax, …)


def code_of(node: ast.AST) -> str:
    """The source of a node, cut to 60 characters for a message."""
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "…"


def swap_node(root: ast.AST, old: ast.AST, new: ast.AST) -> bool:
    """Put `new` where `old` is among `root`'s descendants; False when it is not there."""
    for parent in ast.walk(root):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return True
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, name, [new if v is old else v for v in value])
                return True
    return False


def _transposed(node: ast.expr) -> ast.expr:
    return ast.Attribute(value=node, attr="T", ctx=ast.Load())


def _is_transpose(node: ast.expr) -> ast.expr | None:
    """The operand of `x.T` or `np.transpose(x)`, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return node.value
    if isinstance(node, ast.Call) and _callee(node) == "transpose" and len(node.args) == 1:
        return node.args[0]
    return None


def _callee(node: ast.Call) -> str:
    func = node.func
    return (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )


def _matmul(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """Swap the operands; transpose (or un-transpose) one; `*` for `@`."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return
    left, right, code = node.left, node.right, code_of(node)
    yield Change(
        ast.BinOp(right, ast.MatMult(), left),
        "operands_swapped",
        f"multiplies in the wrong order: `{code_of(right)} @ {code_of(left)}` "
        f"where `{code}` is meant",
    )
    for side, operand in (("left", left), ("right", right)):
        inner = _is_transpose(operand)
        new = inner if inner is not None else _transposed(operand)
        words = (
            f"leaves out the transpose of `{code_of(inner)}` in `{code}`"
            if inner is not None
            else f"transposes `{code_of(operand)}` in `{code}`"
        )
        pair = (new, right) if side == "left" else (left, new)
        yield Change(ast.BinOp(pair[0], ast.MatMult(), pair[1]), "operand_transposed", words)
    yield Change(_transposed(node), "intermediate_transposed", f"transposes the product `{code}`")
    yield Change(
        ast.BinOp(left, ast.Mult(), right),
        "elementwise_product",
        f"multiplies entry by entry (`*`) in `{code}`, where a matrix product (`@`) is meant",
    )


def _product(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """`@` where `*` is meant (weights times values, a scalar times an array)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return
    if isinstance(node.left, ast.Constant) or isinstance(node.right, ast.Constant):
        return
    yield Change(
        ast.BinOp(node.left, ast.MatMult(), node.right),
        "matrix_product_for_elementwise",
        f"uses a matrix product (`@`) in `{code_of(node)}`, where `*` is meant",
    )


def literal(node: ast.expr) -> object:
    """The value of a literal (`0`, `-1`), else None."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


_LOGS = ("log", "log2", "log10")


def _log_base(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A logarithm to another base (`np.log` where `np.log2` is meant)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return
    if node.func.attr not in _LOGS:
        return
    for other in _LOGS:
        if other != node.func.attr:
            func = ast.Attribute(node.func.value, other, ast.Load())
            yield Change(
                ast.Call(func, node.args, node.keywords),
                "wrong_log_base",
                f"takes `{other}` where `{node.func.attr}` is meant in `{code_of(node)}`",
            )


def _axis(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """Another axis, or none, for a reduction or a softmax."""
    if not isinstance(node, ast.Call):
        return
    name = _callee(node)
    softmax = "softmax" in name or "softmax" in ctx.target
    if name not in _REDUCTIONS and "softmax" not in name:
        return
    mistake = "softmax_wrong_axis" if softmax else "reduction_axis"
    keywords = {k.arg: k for k in node.keywords}
    axis = keywords.get("axis")
    current = literal(axis.value) if axis else None
    rest = [k for k in node.keywords if k.arg != "axis"]
    code = code_of(node)
    for value in (0, 1, -1):
        if value == current or (axis is not None and current is None):
            continue
        changed = ast.Call(node.func, node.args, [*rest, ast.keyword("axis", ast.Constant(value))])
        yield Change(changed, mistake, f"works along axis {value} in `{code}`, the wrong axis")
    if axis is not None:
        yield Change(
            ast.Call(node.func, node.args, rest),
            mistake,
            f"leaves out `axis=` in `{code}`, so it works over the whole array",
        )


def _terms(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """Leave out one term of a sum or a difference."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)):
        return
    sign = "+" if isinstance(node.op, ast.Add) else "-"
    for kept, dropped in ((node.left, node.right), (node.right, node.left)):
        if sign == "-" and dropped is node.left:
            continue
        names = {n.id for n in ast.walk(dropped) if isinstance(n, ast.Name)}
        bias = any(n.startswith(("beta", "bias", "b_")) for n in names)
        yield Change(
            kept,
            "missing_bias" if bias else "term_dropped",
            f"leaves out `{sign} {code_of(dropped)}`"
            if dropped is node.right
            else f"leaves out `{code_of(dropped)}` from `{code_of(node)}`",
        )


def _family(name: str) -> str:
    """Parameters of one family can stand for each other: `beta_k`/`beta_v`, `omega_q1`/
    `omega_k2`, and the one-letter names (`q`, `k`, `v`)."""
    return "one letter" if len(name) == 1 else name.split("_")[0].rstrip("0123456789").lower()


def _parameter(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """One use of a parameter replaced by another (`beta_v` where the key needs `beta_k`)."""
    if not (isinstance(node, ast.Name) and node.id in ctx.parameters):
        return
    for other in ctx.parameters:
        if other != node.id and _family(other) == _family(node.id):
            yield Change(
                ast.Name(other, ast.Load()),
                "wrong_argument",
                f"uses `{other}` where `{node.id}` is meant",
            )


def _sibling(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """One use of a local result replaced by another computed the same way (`queries`
    where `values` is meant)."""
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return
    for other in ctx.siblings.get(node.id, ()):
        yield Change(
            ast.Name(other, ast.Load()),
            "wrong_variable",
            f"uses `{other}` where `{node.id}` is meant",
        )


class _Blank(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.Name:
        """Every name the same placeholder."""
        return ast.Name("_", ast.Load())


def blank_shape(node: ast.expr) -> str:
    """The expression's structure with every name the same placeholder (literals kept)."""
    return ast.dump(_Blank().visit(copy.deepcopy(node)))


def siblings(function: ast.FunctionDef) -> dict[str, tuple[str, ...]]:
    """Local names whose values are computed by the same expression up to the names in it."""
    groups: dict[str, list[str]] = {}
    for statement in ast.walk(function):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            shape = blank_shape(statement.value)
            groups.setdefault(shape, []).append(statement.targets[0].id)
    result: dict[str, tuple[str, ...]] = {}
    for names in groups.values():
        for name in names:
            result[name] = tuple(n for n in dict.fromkeys(names) if n != name)
    return result


def _size(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A size read from the arguments replaced by the notebook's global, or a literal; and
    the other dimension of the same array."""
    shape = (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and type(literal(node.slice)) is int
    )
    length = isinstance(node, ast.Call) and _callee(node) == "len"
    if not (shape or length):
        return
    code = code_of(node)
    for name, value in sorted(ctx.globals.items()):
        yield Change(
            ast.Name(name, ast.Load()),
            "uses_global",
            f"reads the notebook's global `{name}` where `{code}` is meant",
        )
        yield Change(
            ast.Constant(value),
            "size_hardcoded",
            f"writes the literal `{value}` where the size `{code}` is meant",
        )
    if shape and isinstance(node, ast.Subscript):
        for index in (0, 1, -1):
            if index != literal(node.slice):
                other = ast.Subscript(node.value, ast.Constant(index), ast.Load())
                yield Change(
                    other,
                    "wrong_dimension",
                    f"takes `{code_of(other)}` where `{code}` is meant (the wrong dimension)",
                )


def is_root(node: ast.expr) -> bool:
    """Whether the node is a call of `sqrt` (numpy or math)."""
    return isinstance(node, ast.Call) and _callee(node) == "sqrt"


def _scale(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """Drop, duplicate, invert or mis-size a division by a square root."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return
    if not is_root(node.right):
        return
    code, root = code_of(node), node.right
    assert isinstance(root, ast.Call)
    yield Change(node.left, "scale_missing", f"leaves out the scaling `/ {code_of(root)}`")
    yield Change(
        ast.BinOp(node, ast.Div(), root), "scale_duplicated", f"scales twice: `{code}` again"
    )
    yield Change(
        ast.BinOp(node.left, ast.Mult(), root),
        "scale_inverted",
        f"multiplies by `{code_of(root)}` where `{code}` divides",
    )
    if root.args:
        yield Change(
            ast.BinOp(node.left, ast.Div(), root.args[0]),
            "scale_by_d",
            f"divides by `{code_of(root.args[0])}` instead of its square root in `{code}`",
        )


def _precedence(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """`x / (a * b)` written without its parentheses: `x / a * b` divides by `a` and then
    multiplies by `b`; `x / np.sqrt(d)` written `x / d ** 1/2`: divides by `d`, then by 2."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return
    right = node.right
    if _is_sqrt(right):
        assert isinstance(right, ast.Call)
        root = right.args[0]
        power = ast.BinOp(root, ast.Pow(), ast.Constant(1))
        yield Change(
            ast.BinOp(ast.BinOp(node.left, ast.Div(), power), ast.Div(), ast.Constant(2)),
            "operator_precedence",
            f"writes the square root of `{code_of(root)}` as `{code_of(root)} ** 1/2`, which "
            f"Python reads as `({code_of(root)} ** 1) / 2` (`**` comes before `/`): so it "
            f"divides by `{code_of(root)}` and then by 2; write `{code_of(root)} ** 0.5`",
        )
    if not (isinstance(right, ast.BinOp) and isinstance(right.op, ast.Mult)):
        return
    written = ast.BinOp(ast.BinOp(node.left, ast.Div(), right.left), ast.Mult(), right.right)
    yield Change(
        written,
        "operator_precedence",
        f"divides by `{code_of(right.left)}` and then multiplies by "
        f"`{code_of(right.right)}` (a division by a product written without parentheses); "
        f"divide by the product: `{code_of(node)}`",
    )


def _is_sqrt(node: ast.expr) -> bool:
    """A call of `np.sqrt`, `numpy.sqrt` or `math.sqrt` (or a bare `sqrt`) on one argument."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "sqrt" and isinstance(func.value, ast.Name)
    return isinstance(func, ast.Name) and func.id == "sqrt"


def _joined_order(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """The arrays a call joins (`np.vstack([head1, head2])`), the first two in the other order."""
    if not (isinstance(node, ast.Call) and node.args):
        return
    listed = node.args[0]
    if not (isinstance(listed, ast.List | ast.Tuple) and len(listed.elts) >= 2):
        return
    first, second, *rest = listed.elts
    if ast.dump(first) == ast.dump(second):
        return
    swapped = copy.copy(listed)
    swapped.elts = [second, first, *rest]
    call = ast.Call(node.func, [swapped, *node.args[1:]], node.keywords)
    yield Change(
        call,
        "order_swapped",
        f"puts `{code_of(second)}` before `{code_of(first)}` in `{code_of(call)}`",
    )


def _misplaced(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """`f(x / s)` as `f(x) / s`: the scaling after the function instead of before."""
    if not (isinstance(node, ast.Call) and len(node.args) >= 1):
        return
    first = node.args[0]
    if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Div) and is_root(first.right):
        inner = ast.Call(node.func, [first.left, *node.args[1:]], node.keywords)
        yield Change(
            ast.BinOp(inner, ast.Div(), first.right),
            "scale_misplaced",
            f"scales after `{_callee(node)}` instead of before it: "
            f"`{code_of(inner)} / {code_of(first.right)}`",
        )


def _off_by_one(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """An integer bound one too high or too low (slices, `range`, `k=` of a triangle)."""
    if isinstance(node, ast.Slice):
        return
    if isinstance(node, ast.Call) and _callee(node) in ("range", "triu", "tril", "triu_indices"):
        for i, arg in enumerate(node.args):
            for delta in (1, -1):
                args = list(node.args)
                args[i] = ast.BinOp(arg, ast.Add() if delta > 0 else ast.Sub(), ast.Constant(1))
                yield Change(
                    ast.Call(node.func, args, node.keywords),
                    "off_by_one",
                    f"is off by one in `{code_of(node)}` (`{code_of(args[i])}`)",
                )
        for k in node.keywords:
            if (
                k.arg == "k"
                and isinstance(k.value, ast.Constant)
                and isinstance(k.value.value, int)
            ):
                for value in (k.value.value - 1, k.value.value + 1):
                    keywords = [
                        ast.keyword("k", ast.Constant(value)) if x is k else x
                        for x in node.keywords
                    ]
                    yield Change(
                        ast.Call(node.func, node.args, keywords),
                        "off_by_one",
                        f"is off by one in `{code_of(node)}` (k={value})",
                    )


def _loop_variable(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A loop variable where another loop's (or an index argument) is meant."""
    if not (isinstance(node, ast.Name) and node.id in ctx.loop_names):
        return
    for other in ctx.loop_names:
        if other != node.id:
            yield Change(
                ast.Name(other, ast.Load()),
                "wrong_loop_variable",
                f"uses the loop variable `{other}` where `{node.id}` is meant",
            )


def returned_locals(
    function: ast.FunctionDef, nodes: Sequence[ast.AST]
) -> Iterator[tuple[int, Change]]:
    """A local result returned where another is meant (the scores instead of the weights)."""
    local = [
        t.id
        for statement in ast.walk(function)
        if isinstance(statement, ast.Assign)
        for t in statement.targets
        if isinstance(t, ast.Name)
    ]
    local = list(dict.fromkeys(local))
    inside = {
        id(n)
        for r in ast.walk(function)
        if isinstance(r, ast.Return) and r.value is not None
        for n in ast.walk(r.value)
    }
    for index, node in enumerate(nodes):
        if isinstance(node, ast.Name) and id(node) in inside and node.id in local:
            for other in local:
                if other != node.id:
                    words = f"returns `{other}` where `{node.id}` is meant"
                    yield index, Change(ast.Name(other, ast.Load()), "wrong_variable", words)


def loop_items_dropped(nodes: Sequence[ast.AST]) -> Iterator[tuple[int, Change]]:
    """A loop (or comprehension) that leaves out its last or its first item: `for key in
    keys` over `keys[:-1]` or `keys[1:]`, `range(n)` from 1 (a stop one short is
    `_off_by_one`'s). The index is the loop's iterable among `nodes`."""
    loops = [n.iter for n in nodes if isinstance(n, ast.For | ast.comprehension)]
    for index, node in enumerate(nodes):
        if not any(node is each for each in loops):
            continue
        if isinstance(node, ast.Name | ast.Attribute):
            for part, which in ((ast.Slice(None, ast.Constant(-1)), "last"),
                                (ast.Slice(ast.Constant(1), None), "first")):  # fmt: skip
                dropped = ast.Subscript(copy.deepcopy(node), part, ast.Load())
                words = (
                    f"is off by one: the loop over `{code_of(node)}` leaves out its {which} "
                    f"item (`{code_of(dropped)}`)"
                )
                yield index, Change(dropped, "off_by_one", words)
        elif isinstance(node, ast.Call) and _callee(node) in ("zip", "enumerate"):
            # pairs of items: a loop by index that stops one early drops the last pair
            for part, which in ((ast.Slice(None, ast.Constant(-1)), "last"),
                                (ast.Slice(ast.Constant(1), None), "first")):  # fmt: skip
                listed = ast.Call(ast.Name("list", ast.Load()), [copy.deepcopy(node)], [])
                dropped = ast.Subscript(listed, part, ast.Load())
                words = (
                    f"is off by one: the loop over `{code_of(node)}` leaves out its {which} "
                    f"item (`{code_of(dropped)}`)"
                )
                yield index, Change(dropped, "off_by_one", words)
        elif isinstance(node, ast.Call) and _callee(node) == "range" and len(node.args) == 1:
            started = ast.Call(node.func, [ast.Constant(1), node.args[0]], [])
            words = (
                f"is off by one: the loop over `{code_of(node)}` leaves out its first item "
                f"(`{code_of(started)}`)"
            )
            yield index, Change(started, "off_by_one", words)


def result_transposed(node: ast.FunctionDef) -> Iterator[tuple[ast.Return, Change]]:
    """What is returned, transposed (tuples are left alone)."""
    for statement in ast.walk(node):
        if isinstance(statement, ast.Return) and statement.value is not None:
            value = statement.value
            if isinstance(value, ast.Tuple):
                continue
            yield (
                statement,
                Change(
                    _transposed(value), "output_transposed", "returns the transpose of the result"
                ),
            )


def _own_call(node: ast.Call, ctx: Context) -> str | None:
    """The name of the notebook's own function `node` calls on one argument (`softmax(s)`),
    else None."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in ctx.functions and len(node.args) == 1:
        return None if node.keywords else func.id
    return None


def _call_dropped(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A call of the notebook's own function left out: `softmax(scores)` becomes `scores`
    (the raw scores used as the weights). Library calls are left to the other operators."""
    name = _own_call(node, ctx) if isinstance(node, ast.Call) else None
    if name is None or not isinstance(node, ast.Call):
        return
    yield Change(
        node.args[0],
        "call_dropped",
        f"skips `{name}`: uses `{code_of(node.args[0])}` itself where `{code_of(node)}` is meant",
    )


def _call_swapped(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A call of one of the notebook's own functions made to another of them on the same
    argument: `softmax(scores)` where `softmax_cols(scores)` is meant (two exercises of one
    notebook that do alike). One argument only: a call of another shape raises, which names
    nothing."""
    name = _own_call(node, ctx) if isinstance(node, ast.Call) else None
    if name is None or not isinstance(node, ast.Call):
        return
    for other in sorted(ctx.functions - {name, ctx.target}):
        call = ast.Call(ast.Name(other, ast.Load()), node.args, [])
        yield Change(call, "wrong_function", f"calls `{other}` where `{name}` is meant")


def _count_for_sum(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """A division by a sum (`w / np.sum(w)`) that divides by the count of items instead
    (`w / len(w)`): a mean where a normalisation is meant."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return
    total = node.right
    if not (
        isinstance(total, ast.Call)
        and _callee(total) == "sum"
        and len(total.args) == 1
        and not total.keywords
    ):
        return
    count = ast.Call(ast.Name("len", ast.Load()), [total.args[0]], [])
    yield Change(
        ast.BinOp(node.left, ast.Div(), count),
        "size_for_sum",
        f"divides by the number of items, `{code_of(count)}`, where their sum "
        f"`{code_of(total)}` is meant in `{code_of(node)}`",
    )


OPERATORS: tuple[Operator, ...] = (
    _matmul,
    _product,
    _axis,
    _terms,
    _parameter,
    _sibling,
    _size,
    _scale,
    _misplaced,
    _precedence,
    _joined_order,
    _off_by_one,
    _loop_variable,
    _log_base,
    _call_dropped,
    _count_for_sum,
)
# Tried after every other mutant of the function (mutants.py), so that the singles taken into
# pairs, and so every earlier diagnosis, stay as they were.
LATE_OPERATORS: tuple[Operator, ...] = (_call_swapped,)
