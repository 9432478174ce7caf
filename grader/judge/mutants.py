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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from grader.course.mistakes import Mistake
from grader.course.notebook import Submission
from grader.judge.static import find_function

PREFIX = "_grader_mutant_"
MAX_PER_TARGET = 200  # the operators below make far fewer for any function of a notebook
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


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "…"


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
    left, right, code = node.left, node.right, _code(node)
    yield Change(
        ast.BinOp(right, ast.MatMult(), left),
        "operands_swapped",
        f"multiplies in the wrong order: `{_code(right)} @ {_code(left)}` where `{code}` is meant",
    )
    for side, operand in (("left", left), ("right", right)):
        inner = _is_transpose(operand)
        new = inner if inner is not None else _transposed(operand)
        words = (
            f"leaves out the transpose of `{_code(inner)}` in `{code}`"
            if inner is not None
            else f"transposes `{_code(operand)}` in `{code}`"
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
        f"uses a matrix product (`@`) in `{_code(node)}`, where `*` is meant",
    )


def _literal(node: ast.expr) -> object:
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
                f"takes `{other}` where `{node.func.attr}` is meant in `{_code(node)}`",
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
    current = _literal(axis.value) if axis else None
    rest = [k for k in node.keywords if k.arg != "axis"]
    code = _code(node)
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
            f"leaves out `{sign} {_code(dropped)}`"
            if dropped is node.right
            else f"leaves out `{_code(dropped)}` from `{_code(node)}`",
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
        return ast.Name("_", ast.Load())


def _siblings(function: ast.FunctionDef) -> dict[str, tuple[str, ...]]:
    """Local names whose values are computed by the same expression up to the names in it."""
    groups: dict[str, list[str]] = {}
    for statement in ast.walk(function):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            shape = ast.dump(_Blank().visit(copy.deepcopy(statement.value)))
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
        and type(_literal(node.slice)) is int
    )
    length = isinstance(node, ast.Call) and _callee(node) == "len"
    if not (shape or length):
        return
    code = _code(node)
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
            if index != _literal(node.slice):
                other = ast.Subscript(node.value, ast.Constant(index), ast.Load())
                yield Change(
                    other,
                    "wrong_dimension",
                    f"takes `{_code(other)}` where `{code}` is meant (the wrong dimension)",
                )


def _is_root(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _callee(node) == "sqrt"


def _scale(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """Drop, duplicate, invert or mis-size a division by a square root."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return
    if not _is_root(node.right):
        return
    code, root = _code(node), node.right
    assert isinstance(root, ast.Call)
    yield Change(node.left, "scale_missing", f"leaves out the scaling `/ {_code(root)}`")
    yield Change(
        ast.BinOp(node, ast.Div(), root), "scale_duplicated", f"scales twice: `{code}` again"
    )
    yield Change(
        ast.BinOp(node.left, ast.Mult(), root),
        "scale_inverted",
        f"multiplies by `{_code(root)}` where `{code}` divides",
    )
    if root.args:
        yield Change(
            ast.BinOp(node.left, ast.Div(), root.args[0]),
            "scale_by_d",
            f"divides by `{_code(root.args[0])}` instead of its square root in `{code}`",
        )


def _misplaced(node: ast.expr, ctx: Context) -> Iterator[Change]:
    """`f(x / s)` as `f(x) / s`: the scaling after the function instead of before."""
    if not (isinstance(node, ast.Call) and len(node.args) >= 1):
        return
    first = node.args[0]
    if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Div) and _is_root(first.right):
        inner = ast.Call(node.func, [first.left, *node.args[1:]], node.keywords)
        yield Change(
            ast.BinOp(inner, ast.Div(), first.right),
            "scale_misplaced",
            f"scales after `{_callee(node)}` instead of before it: "
            f"`{_code(inner)} / {_code(first.right)}`",
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
                    f"is off by one in `{_code(node)}` (`{_code(args[i])}`)",
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
                        f"is off by one in `{_code(node)}` (k={value})",
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


def _returned_locals(
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


def _result_transposed(node: ast.FunctionDef) -> Iterator[tuple[ast.Return, Change]]:
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
    _off_by_one,
    _loop_variable,
    _log_base,
)


def _loop_names(node: ast.FunctionDef, parameters: Sequence[str]) -> tuple[str, ...]:
    names: list[str] = []
    for found in ast.walk(node):
        target = found.target if isinstance(found, ast.For | ast.comprehension) else None
        if target is not None:
            names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    if len(names) >= 1:  # an index argument (`i`) is a loop variable's kin
        names += [p for p in parameters if len(p) == 1 and p.islower() and p in "ijkmn"]
    return tuple(dict.fromkeys(names))


def integer_globals(solution: Submission) -> dict[str, int]:
    """The notebook's top-level integer constants (`D = 4`, `L, d_k = 4, 8`), read, not run."""
    found: dict[str, int] = {}
    for cell in solution.cells:
        tree = solution.tree(cell.index)
        for node in tree.body if tree else ():
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            pairs = (
                list(zip(target.elts, value.elts, strict=False))
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                else [(target, value)]
            )
            for name, constant in pairs:
                if (
                    isinstance(name, ast.Name)
                    and isinstance(constant, ast.Constant)
                    and type(constant.value) is int
                ):
                    found[name.id] = constant.value
    return found


def _with(function: ast.FunctionDef, index: int, new: ast.AST) -> ast.FunctionDef:
    """A copy of `function` with its `index`-th node (in ast.walk order) replaced."""
    clone = copy.deepcopy(function)
    nodes = list(ast.walk(clone))
    old = nodes[index]
    for parent in nodes:
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, copy.deepcopy(new))
                return clone
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, name, [copy.deepcopy(new) if v is old else v for v in value])
                return clone
    return clone


def _where(function: ast.FunctionDef, node: ast.AST) -> str:
    """The statement that holds the change, in words: `in computing keys`, `in the return`."""
    for statement in ast.walk(function):
        if not isinstance(statement, ast.stmt) or statement is function:
            continue
        if any(n is node for n in ast.walk(statement)):
            if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
                return f" (computing `{statement.targets[0].id}`)"
            if isinstance(statement, ast.Return):
                return " (in what is returned)"
            if isinstance(statement, ast.If):
                continue
    return ""


def mutants_of(function: ast.FunctionDef, target: str, globals_: dict[str, int]) -> list[Mistake]:
    """Every single-change mutant of `function`, as catalogue-like mistakes with sources."""
    args = function.args
    parameters = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    context = Context(
        target, parameters, globals_, _loop_names(function, parameters), _siblings(function)
    )
    found: list[Mistake] = []
    seen: set[str] = {ast.dump(function)}
    body_nodes = list(ast.walk(function))
    for index, node in enumerate(body_nodes):
        if not isinstance(node, ast.expr) or any(node is d for d in function.args.defaults):
            continue
        for operator in OPERATORS:
            for change in operator(node, context):
                _add(
                    found, seen, _with(function, index, change.node), target, change, node, function
                )
    for index, change in _returned_locals(function, body_nodes):
        node = body_nodes[index]
        _add(found, seen, _with(function, index, change.node), target, change, node, function)
    for statement, change in _result_transposed(function):
        value = statement.value
        assert value is not None
        index = next(i for i, n in enumerate(body_nodes) if n is value)
        _add(found, seen, _with(function, index, change.node), target, change, value, function)
    for mutant, change, node in _scaled_result(function):
        _add(found, seen, mutant, target, change, node, function)
    for mutant, change in _bounds_everywhere(function, parameters):
        _add(found, seen, mutant, target, change, function, function)
    return found[:MAX_PER_TARGET]


class _Bound(ast.NodeTransformer):
    """Every slice bound that is `name` becomes `name ± 1`."""

    def __init__(self, name: str, delta: int) -> None:
        self.name, self.delta = name, delta

    def visit_Slice(self, node: ast.Slice) -> ast.Slice:
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
    returned is divided by `s` (after the softmax, say, instead of before it)."""
    nodes = list(ast.walk(function))
    returns = [
        i
        for i, n in enumerate(nodes)
        if isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, ast.Tuple)
    ]
    for index, node in enumerate(nodes):
        if not (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_root(node.right)
        ):
            continue
        for at in returns:
            mutant = _with(function, index, node.left)
            statement = list(ast.walk(mutant))[at]
            if not (isinstance(statement, ast.Return) and statement.value is not None):
                continue  # the walk's order moved (a return below the scaling): skip it
            statement.value = ast.BinOp(statement.value, ast.Div(), copy.deepcopy(node.right))
            words = (
                f"divides by `{_code(node.right)}` at the end, after the softmax, instead of "
                f"scaling the scores in `{_code(node)}`"
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
) -> None:
    key = ast.dump(mutant)
    if key in seen:
        return
    seen.add(key)
    name = f"{PREFIX}{target}_{len(found)}"
    mutant.name = name
    mutant.decorator_list = []
    ast.fix_missing_locations(mutant)
    message = f"{change.words}{_where(original, node)}"
    found.append(Mistake(change.mistake_id, target, message, "", name, ast.unparse(mutant)))


def reference_mutants(solution: Submission, targets: Sequence[str]) -> list[Mistake]:
    """The mutants of every function target's reference, in target order."""
    globals_ = integer_globals(solution)
    found: list[Mistake] = []
    for target in targets:
        function = find_function(solution, target)
        if function is not None:
            found += mutants_of(function.node, target, globals_)
    return found
