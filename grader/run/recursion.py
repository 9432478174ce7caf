"""A ceiling on the notebook's recursion limit, so that endless recursion is reported as
what it is.

In Python 3.11 a call from Python code to Python code takes no C stack, so a notebook that
sets `sys.setrecursionlimit(10**9)` and recurses without end grows its frames on the heap
for tens of seconds (about 14 million of them fill the 2 GB address space) and is stopped
by the cell's time limit: reported as a timeout, not as the runaway recursion it is. The
child therefore replaces `sys.setrecursionlimit` before any of the notebook's code with one
that sets at most CEILING: such a notebook raises RecursionError within a fraction of a
second, reported as its cell's (or its function's) error, as a lower limit in Jupyter would.
CEILING frames of a plain function take some 40 MB and a tenth of a second; far more than
the deep recursions course notebooks use. Recursion through C code (a `__repr__`, `map`)
overflows the C stack long before and crashes the process (SIGSEGV), reported as a crash.
"""

from __future__ import annotations

import sys

CEILING = 250_000
_REAL = sys.setrecursionlimit


def capped_setrecursionlimit(limit: int) -> None:
    """sys.setrecursionlimit for the notebook: `limit`, at most CEILING."""
    _REAL(min(limit, CEILING) if isinstance(limit, int) else limit)


def cap_recursion_limit() -> None:
    """In the child, before any of the notebook's code: its recursion limit capped."""
    sys.setrecursionlimit = capped_setrecursionlimit
