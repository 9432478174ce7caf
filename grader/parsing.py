"""Parse a cell's source once: a class's notebooks share most cells (imports, given code,
tests), and both the loader (does it parse?) and the static hints (its tree) ask."""

from __future__ import annotations

import ast

_PARSED: dict[str, ast.Module | None] = {}
MAX_CACHED = 4096


def parse_cell(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it does not parse. Trees are shared: read only."""
    if source not in _PARSED:
        if len(_PARSED) > MAX_CACHED:
            _PARSED.clear()
        try:
            _PARSED[source] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            _PARSED[source] = None
    return _PARSED[source]
