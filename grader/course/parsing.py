"""Parse a cell's source for static analysis, within bounds.

The source is the student's: a syntax tree costs hundreds of bytes of memory per byte of
source (a 5 MB cell took 11 s and 2.5 GB), in the trusted parent and in each worker. A cell
over MAX_CELL_SOURCE, or past MAX_ANALYSED_SOURCE of one submission's code, is therefore not
analysed (no hints for it, a note saying so); it still runs, as the child compiles it.

Nothing here is cached: a tree belongs to its Submission (notebook.py) and dies with it, so
no student's code outlives its grading in the trusted process.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass
from types import CodeType

MAX_CELL_SOURCE = 200 * 1024  # bytes (UTF-8) of one cell's source
MAX_ANALYSED_SOURCE = 512 * 1024  # bytes of one submission's source, all its cells together


def source_size(source: str) -> int:
    """The source's size in bytes, as the limits count it."""
    return len(source.encode("utf-8", "surrogatepass"))


def fits(source: str) -> bool:
    """Whether a cell is small enough to be parsed at all."""
    return len(source) <= MAX_CELL_SOURCE and source_size(source) <= MAX_CELL_SOURCE


# CPython 3.11 keeps the depth count of its syntax-tree builder in state shared by all threads
# (python/cpython#106905): two threads building trees at once can fail with "SystemError: AST
# constructor recursion depth mismatch". A batch parses in its job threads and judges in the
# main one, so every tree is built, and every tree compiled, under this lock.
AST_LOCK = threading.Lock()


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, one thread at a time (SyntaxError and the like pass through)."""
    with AST_LOCK:
        return ast.parse(source, filename)


def compile_tree(tree: ast.Module, filename: str) -> CodeType:
    """`compile` of a syntax tree (never run here), one thread at a time."""
    with AST_LOCK:
        return compile(tree, filename, "exec")


def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it does not parse or is over MAX_CELL_SOURCE."""
    if not fits(source):
        return None
    try:
        return parse_source(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@dataclass
class ParseBudget:
    """Which cells of one submission are analysed: each within MAX_CELL_SOURCE, and all of
    them within MAX_ANALYSED_SOURCE (counted in order, so the later cells are left out)."""

    left: int = MAX_ANALYSED_SOURCE

    def refusal(self, index: int, source: str) -> str | None:
        """None when cell `index` may be analysed (its size is then counted); else the note
        that says why it is not."""
        size = source_size(source)
        if size > MAX_CELL_SOURCE:
            return (
                f"cell {index} is too large to analyse ({size // 1024} KB, over "
                f"{MAX_CELL_SOURCE // 1024} KB); hints skipped for it, and IPython lines "
                "(% or !) in it are left as they are"
            )
        if size > self.left:
            return (
                f"cell {index} is not analysed: the notebook's code is over "
                f"{MAX_ANALYSED_SOURCE // 1024} KB in all; hints skipped for it, and IPython "
                "lines (% or !) in it are left as they are"
            )
        self.left -= size
        return None
