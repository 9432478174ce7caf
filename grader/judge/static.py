"""Static hints from the student's own code (AST only, never run): what a line *shows*.

Hints accompany the dynamic verdict; on their own they never fail a correct function.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from grader.course.notebook import CodeCell, Submission
from grader.report import Location

# Calls whose value is their only effect: a statement made of one of these throws work away.
_PURE_MODULES = {"np", "numpy", "math"}
_IMPURE_NUMPY = {"random", "copyto", "put", "putmask", "place", "fill_diagonal", "seterr",
                 "set_printoptions", "save", "savetxt", "savez"}  # fmt: skip
_PURE_METHODS = {"transpose", "dot", "sum", "max", "min", "mean", "reshape", "copy", "T"}
_BUILTIN_NAMES = set(dir(builtins))


HintKind = Literal[
    "discarded",
    "global",
    "literal_divisor",
    "returns_global",
    "mutates",
    "truthiness",
    "fixed_index",
    "none_compared",
]


@dataclass(frozen=True)
class Hint:
    """Something the student's code shows, at a place."""

    kind: HintKind
    location: Location
    text: str
    name: str = ""


@dataclass(frozen=True)
class FunctionSource:
    """A function definition found in the notebook, with the cell it is in."""

    node: ast.FunctionDef
    cell: CodeCell

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the function, walked once for all the hints (in `ast.walk`'s
        order: breadth first, each node's fields in order)."""
        found: list[ast.AST] = [self.node]
        for node in found:  # grows as it goes: the queue is the list itself
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    found.append(value)
                elif isinstance(value, list):
                    found.extend(item for item in value if isinstance(item, ast.AST))
        return found

    def location(self, line: int | None = None) -> Location:
        """A place in the function's cell: `line`, else the line of the `def`."""
        return Location(self.cell.index, line if line is not None else self.node.lineno)

    def line_text(self, line: int) -> str:
        """The cell's original text at this 1-based line, or "" outside the cell."""
        lines = self.cell.original.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def first_line(self, matches: Callable[[str], object]) -> Location | None:
        """The first line of the body whose text `matches` (is true of), if any."""
        if not self.node.body:
            return None
        end = self.node.end_lineno or self.node.lineno
        for line in range(self.node.body[0].lineno, end + 1):
            if matches(self.line_text(line)):
                return self.location(line)
        return None

    def text_at(self, place: Location) -> str | None:
        """The text of the function's cell at `place` (an error's line), if it is there."""
        return self.line_text(place.line) if place.cell == self.cell.index else None


def find_function(submission: Submission, name: str) -> FunctionSource | None:
    """The top-level definition of `name` that is in force after every cell has run."""
    found = None
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef) and node.name == name:
                found = FunctionSource(node, cell)
    return found


def notebook_globals(submission: Submission) -> set[str]:
    """Names that top-level code binds to data (not functions, classes or modules). A name the
    notebook also defines with `def` or `class` is its function, even when top-level code
    rebinds it (`softmax = softmax(x)`: told as that rebinding, not as a global read)."""
    names: set[str] = set()
    defined: set[str] = set()
    for cell in submission.cells:
        tree = submission.tree(cell.index)
        for node in tree.body if tree else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names |= _stored(target)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                names |= _stored(node.target)
            elif isinstance(node, ast.For):
                names |= _stored(node)
    return names - defined


def _stored(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Name):  # the usual target, without a walk
        return {node.id} if isinstance(node.ctx, ast.Store) else set()
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _local_names(fn: ast.FunctionDef, nodes: list[ast.AST]) -> set[str]:
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a}
    for node in nodes:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef) and node is not fn:
            names.add(node.name)
    return names


def _parameters(fn: ast.FunctionDef) -> set[str]:
    args = fn.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _changed_in_place(node: ast.AST) -> str | None:
    """`x -= …`, `x[...] = …` or `x.sort()`-style statements: the name whose object changes."""
    if isinstance(node, ast.AugAssign):
        return _root_name(node.target)
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Subscript | ast.Attribute):
                return _root_name(target)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        for keyword in call.keywords:  # `np.exp(x, out=x)`: written into x
            if keyword.arg == "out":
                return _root_name(keyword.value)
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _IN_PLACE_METHODS:
            return _root_name(func.value)
    return None


_IN_PLACE_METHODS = {"sort", "fill", "resize", "put", "partition", "itemset"}


def _aliases(nodes: list[ast.AST], params: set[str]) -> dict[str, str]:
    """Locals that only ever name a parameter's object or a part of it (`x = all_values[0]`,
    never a computed value): changing them in place changes the caller's data. By local."""
    found: dict[str, str] = {}
    computed: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if not isinstance(target, ast.Name):
                continue
            value = node.value
            while isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Name) and value.id in params and target.id not in params:
                found[target.id] = value.id
            else:
                computed.add(target.id)
    return {local: param for local, param in found.items() if local not in computed}


def _none_compared(test: ast.expr, params: set[str]) -> list[tuple[ast.Compare, str]]:
    """The comparisons `p == None` and `p != None` of a parameter in a test: for an array
    they compare each entry with None, and the array that gives has no single truth value."""
    found = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
            continue
        sides = [node.left, node.comparators[0]]
        nones = [isinstance(s, ast.Constant) and s.value is None for s in sides]
        names = [s.id for s in sides if isinstance(s, ast.Name) and s.id in params]
        if any(nones) and names:
            found.append((node, names[0]))
    return found


def _is_pure_call(call: ast.Call) -> bool:
    if any(k.arg == "out" for k in call.keywords):
        return False  # `np.exp(x, out=x)` writes its result: nothing is thrown away
    func = call.func
    if isinstance(func, ast.Attribute):
        base = func.value
        if isinstance(base, ast.Name) and base.id in _PURE_MODULES:
            return func.attr not in _IMPURE_NUMPY
        return func.attr in _PURE_METHODS
    return False


def _discarded(node: ast.Expr) -> bool:
    value = node.value
    if isinstance(value, ast.BinOp | ast.UnaryOp | ast.Compare | ast.Subscript | ast.Name):
        return True
    if isinstance(value, ast.Attribute):
        return True
    return isinstance(value, ast.Call) and _is_pure_call(value)


def _rescaled(node: ast.AST) -> bool:
    """`name / …`, `name * …` or `name ** …`: a named value scaled (what a scaling thrown
    away under a new name looks like; `n = x.shape[1] - 1` is not)."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div | ast.Mult | ast.Pow)
        and isinstance(node.left, ast.Name)
    )


def _power_of_one(node: ast.AST) -> bool:
    """`a ** 1` ending the left side of a division (`x / a ** 1`, `a ** 1`): with the `/ 2`
    after it, a square root written `a ** 1/2`, which Python reads as `(a ** 1) / 2`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Mult):
        node = node.right
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Pow)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
    )


def _literal_divisor(node: ast.AST) -> ast.AST | None:
    """The literal a division divides by: `x / 2`, `x /= 2.0`, `x / np.sqrt(4)`; not the `2`
    of `x / d ** 1/2` (a root that lost its parentheses, not a size written as a number)."""
    if isinstance(node, ast.BinOp) and _power_of_one(node.left):
        return None
    if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Div):
        right = node.right if isinstance(node, ast.BinOp) else node.value
        if isinstance(right, ast.Constant) and isinstance(right.value, int | float):
            return right if right.value not in (0, 1) else None
        if (
            isinstance(right, ast.Call)
            and isinstance(right.func, ast.Attribute)
            and right.func.attr == "sqrt"
            and right.args
            and isinstance(right.args[0], ast.Constant)
        ):
            return right
    return None


# The only nodes `function_hints` reads a hint from: any other (most of a function's nodes:
# contexts, operators, calls, constants, attributes) is passed over at once.
_HINTED = (
    ast.Expr, ast.BinOp, ast.AugAssign, ast.Assign, ast.Name, ast.If, ast.While, ast.IfExp,
    ast.Return,
)  # fmt: skip


def function_hints(source: FunctionSource, global_names: set[str]) -> list[Hint]:
    """What the function's code shows, sorted by line: discarded results, literal divisors,
    truthiness of parameters, inputs changed in place, and reads or returns of the notebook's
    globals."""
    fn, cell = source.node, source.cell
    hints: list[Hint] = []
    lines = source_lines(cell.source)

    def text(node: ast.AST) -> str:
        return _segment(lines, node) or ast.unparse(node)

    def at(node: ast.AST) -> Location:
        return source.location(getattr(node, "lineno", fn.lineno))

    params = _parameters(fn)
    aliases = _aliases(source.nodes, params)
    loads: list[ast.Name] = []
    returns: list[ast.Return] = []
    read: Counter[str] = Counter()  # how often the function reads each name
    computed: list[tuple[str, ast.Assign]] = []  # `name = a / b`: a value under a new name
    for node in source.nodes:  # one walk; the hints are sorted by line at the end
        if not isinstance(node, _HINTED):
            continue
        if isinstance(node, ast.Expr) and _discarded(node):
            hints.append(Hint("discarded", at(node), text(node.value)))
        if isinstance(node, ast.Assign) and _rescaled(node.value):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            computed += [(name, node) for name in names if len(node.targets) == 1]
        if (divisor := _literal_divisor(node)) is not None:
            hints.append(Hint("literal_divisor", at(node), text(divisor)))
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read[node.id] += 1
                if node.id in global_names:
                    loads.append(node)
            continue
        test = node.test if isinstance(node, ast.If | ast.While | ast.IfExp) else None
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Name) and test.id in params:
            hints.append(Hint("truthiness", at(node), text(test), test.id))
        if test is not None:
            hints += [Hint("none_compared", at(node), text(c), name)
                      for c, name in _none_compared(test, params)]  # fmt: skip
        if (root := _changed_in_place(node)) and (root in params or root in aliases):
            hints.append(Hint("mutates", at(node), text(node), aliases.get(root, root)))
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            returns.append(node)
    # A name's value rescaled under a name the function never reads (`scaled = scores / 2`,
    # then `softmax(scores)`): computed and thrown away, as a bare `scores / 2` is.
    declared = {n for node in source.nodes if isinstance(node, ast.Global | ast.Nonlocal)
                for n in node.names}  # fmt: skip
    for new, assign in computed:
        assert isinstance(assign.value, ast.BinOp) and isinstance(assign.value.left, ast.Name)
        kept = new in read or new in declared or new.startswith("_")
        here = sum(isinstance(n, ast.Name) and n.id == assign.value.left.id
                   for n in ast.walk(assign.value))  # fmt: skip
        if not kept and new not in global_names and read[assign.value.left.id] > here:
            hints.append(Hint("discarded", at(assign), text(assign.value), new))
    local = _local_names(fn, source.nodes) if loads or returns else set()
    seen: set[str] = set()
    for name in loads:
        if name.id not in local and name.id not in seen:
            seen.add(name.id)
            hints.append(Hint("global", at(name), name.id, name.id))
    for ret in returns:
        assert isinstance(ret.value, ast.Name)
        returned = ret.value.id
        if returned in global_names and returned not in local:
            hints.append(Hint("returns_global", at(ret), returned, returned))
    return sorted(hints, key=lambda h: (h.location.line, h.kind))


def mentions_size(source: FunctionSource, name: str, value: int) -> bool:
    """Whether the function's code could tie it to one size: the number `value` written in
    it, or a read of a global `name` (a name it neither takes nor sets). Without either, a
    function right only at that size is so for another reason (a vector case that passes
    where the matrices fail), and the grader says nothing about sizes."""
    local: set[str] | None = None
    for node in source.nodes:
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value == value:
            return True
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            local = _local_names(source.node, source.nodes) if local is None else local
            if name not in local:
                return True
    return False


_LOOPS = (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)


def fixed_indexes(tree: ast.AST, cell: CodeCell) -> list[Hint]:
    """`name[0]` read inside a loop (of `tree`, in `cell`): an item that stays the same at
    every pass, where the loop's variable is often meant (`all_queries[0]` for `[n]`)."""
    lines = source_lines(cell.source)
    found: dict[int, Hint] = {}
    for loop in ast.walk(tree):
        if not isinstance(loop, _LOOPS):
            continue
        for node in ast.walk(loop):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.slice, ast.Constant)
                and type(node.slice.value) is int
                and node.slice.value == 0
            ):
                text = _segment(lines, node) or ast.unparse(node)
                at = Location(cell.index, node.lineno)
                found.setdefault(id(node), Hint("fixed_index", at, text, node.value.id))
    return sorted(found.values(), key=lambda h: (h.location.cell, h.location.line))


def source_lines(text: str) -> list[str]:
    """The text's lines, ends kept, where Python's parser ends them (`\n`, `\r\n`, `\r`):
    str.splitlines also breaks at `\v`, `\f`, `\x85`, `\u2028` … which a comment pasted
    from a web page may hold, and every node after one was quoted from the wrong line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ends = [line + "\n" for line in lines[:-1]]
    return [*ends, lines[-1]] if lines[-1] else ends


def _segment(lines: list[str], node: ast.AST) -> str | None:
    """ast.get_source_segment, with the cell split into lines once rather than per call."""
    start: int | None = getattr(node, "lineno", None)
    end: int | None = getattr(node, "end_lineno", None)
    first: int | None = getattr(node, "col_offset", None)
    last: int | None = getattr(node, "end_col_offset", None)
    if start is None or end is None or first is None or last is None or end > len(lines):
        return None
    if start == end:
        return lines[start - 1].encode()[first:last].decode(errors="replace")
    chunk = [lines[start - 1].encode()[first:].decode(errors="replace")]
    chunk += lines[start : end - 1]
    chunk.append(lines[end - 1].encode()[:last].decode(errors="replace"))
    return "".join(chunk)


def reads_name(source: FunctionSource, name: str) -> bool:
    """Whether the function's code reads the name (a parameter it may leave unused)."""
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in source.nodes
    )


# How deep the grader looks below a target for helpers of its own: a helper, and the helpers
# it calls (mutant_helpers.py makes their mistakes; diagnose.py places them).
HELPER_DEPTH = 2


def calls_in_order(source: FunctionSource) -> list[str]:
    """The plain names the function calls directly, each once, in the order of its code."""
    found = [n.func.id for n in source.nodes
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]  # fmt: skip
    return list(dict.fromkeys(found))


def called_names(source: FunctionSource) -> set[str]:
    """The names the function calls directly, builtins left out."""
    return set(calls_in_order(source)) - _BUILTIN_NAMES


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
