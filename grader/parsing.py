"""Parse a cell's source once: a class's notebooks share most cells (imports, given code,
tests), and both the loader (does it parse?) and the static hints (its tree) ask."""

from __future__ import annotations

import ast
from functools import lru_cache

# Recently used trees only: the shared cells stay in, each student's own cells pass
# through, and memory stays flat however large the class.
MAX_CACHED = 64


@lru_cache(maxsize=MAX_CACHED)
def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it does not parse. Trees are shared: read only."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
