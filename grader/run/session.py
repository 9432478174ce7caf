"""`keep_going()`: "Run All" on a handed-out exercise reaches every `check()` cell.

A stub raises NotImplementedError, and Jupyter stops "Run All" at the first cell that
raises, long before the `check()` cell that would say what is left. `keep_going()` (the
first code cell of an exercise `grader assign` writes) asks IPython to run each later cell
inside a guard: a cell that meets an unfinished function stops there with a one-line note
instead of an error, and once one has, so do later cells that fail for want of its result
(a name it never set). Any other error, before anything unfinished was met, is an error as
usual. Outside IPython (a script, the grader's own child process) it does nothing.
"""

from __future__ import annotations

import ast
import traceback
from typing import Any

VALUE = "_grader_cell_value"  # the cell's last expression, shown after the guard
_GUARD = """
try:
    pass
except Exception as _grader_error:
    if not __import__("grader.run.session", fromlist=["skipped"]).skipped(_grader_error):
        raise
"""
UNFINISHED: list[str] = []  # the unfinished functions this session has met, in order


class _Guard(ast.NodeTransformer):
    """Wraps a cell's code in the guard; its last expression is still shown as the value."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        """The cell: reset the value, the guarded code, then the value as its last line."""
        body, shown = list(node.body), []
        if not body:
            return node
        last = body[-1]
        if isinstance(last, ast.Expr):
            body[-1] = ast.Assign(targets=[ast.Name(VALUE, ast.Store())], value=last.value)
            shown = [ast.Expr(ast.Name(VALUE, ast.Load()))]
        reset = ast.parse(f"{VALUE} = None").body
        guard = ast.parse(_GUARD).body[0]
        assert isinstance(guard, ast.Try)
        guard.body = body
        node.body = [*reset, guard, *shown]
        return ast.fix_missing_locations(node)


def _where(error: BaseException) -> str:
    """The function the error was raised in (the stub's name), else ''."""
    frames = traceback.extract_tb(error.__traceback__)
    return frames[-1].name if frames and frames[-1].name != "<module>" else ""


def skipped(error: BaseException) -> bool:
    """Whether the cell that raised `error` is skipped with a note instead of failing: an
    unfinished function (NotImplementedError), or, once one was met, a name never set (the
    result an unfinished cell did not get to). A finished function's own error still fails."""
    if isinstance(error, NotImplementedError):
        name = _where(error) or "a function"
        if name not in UNFINISHED:
            UNFINISHED.append(name)
        said = f" ({error})" if str(error) else ""
        print(
            f"⏭ {name} is not finished yet{said}: the rest of this cell was skipped. Run All "
            "goes on; check() at the end says what is left."
        )
        return True
    if UNFINISHED and isinstance(error, NameError):  # a result the unfinished cell never set
        first = ", ".join(UNFINISHED)
        print(
            f"⏭ skipped: {type(error).__name__}: {error}. This cell needs the result of "
            f"unfinished work ({first}); finish that first."
        )
        return True
    return False  # any other error is the cell's own, as usual


def keep_going() -> None:
    """Guard the cells run after this one in IPython (see the module's docstring)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell: Any = get_ipython()
    if shell is not None and not any(isinstance(t, _Guard) for t in shell.ast_transformers):
        shell.ast_transformers.append(_Guard())
