"""Where a named mistake is said to be: the line of the student's code it points at.

A catalogued mistake carries a pattern (`locate`) looked for in the body of the failing
function, then in the helpers of the student's it calls; a derived mistake made in a helper
carries the helper's name (`within`); a bound or a square root the reference has and the
student wrote elsewhere is found by the kind of line (a range, a triangle, a root).

Runs in the trusted process on the student's source text (static.FunctionSource); it reads
no numbers and names no mistake (diagnose.py does).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from grader.course.mistakes import Mistake
from grader.judge.fingerprints import Fingerprint
from grader.judge.static import HELPER_DEPTH, FunctionSource, calls_in_order
from grader.report import Location

# The student's functions by name (None: not defined in the notebook).
Functions = Callable[[str], FunctionSource | None]

# A line that takes a square root (`np.sqrt`, `math.sqrt`, `** 0.5`, `** (1/2)`).
_ROOT = re.compile(r"\bsqrt\b|\*\*\s*\(?\s*(?:0?\.5\b|1\s*/\s*2\b)")
# A line that sets an integer bound: a range, a triangle and its `k=` (where off by one shows).
_BOUNDS = re.compile(r"\b(?:range|arange|tril|triu\w*)\s*\(|\bk\s*=\s*-?\d")
_TRIANGLE = re.compile(r"\b(?:tril|triu\w*)\s*\(|\bk\s*=\s*-?\d")
_STARTED = re.compile(r"\b(?:range|arange)\s*\((?!\s*0\s*,)[^,()]*(?:\([^()]*\)[^,()]*)*,")


def first_match(lines: Sequence[tuple[Location, str]], pattern: str) -> Location | None:
    """The place of the first line matching `pattern` (one pattern per line of it, tried
    in turn: mutants.locate_pattern); a comment is no place."""
    for each in pattern.split("\n"):
        for place, text in lines:
            if not text.lstrip().startswith("#") and re.search(each, text):
                return place
    return None


def locate(
    function: FunctionSource | None, pattern: str | None, mistake_id: str
) -> Location | None:
    """The first line of the function's body matching `pattern` (one pattern per line of it,
    tried in turn: mutants.locate_pattern); the `def` line when none does."""
    if function is None:
        return None
    if pattern is None and mistake_id in ("output_transposed", "returns_tuple"):
        pattern = r"^\s*return\b"
    # The body only: a default like `axis=-1` in the signature is not the mistake; nor is a
    # docstring or a comment that names the arrays.
    body = function.node.body
    docstring = bool(body) and ast.get_docstring(function.node, clean=False) is not None
    first = body[1] if docstring and len(body) > 1 else body[0] if body else None
    start = first.lineno if first else function.node.lineno
    end = function.node.end_lineno or function.node.lineno
    lines = [(function.location(n), function.line_text(n)) for n in range(start, end + 1)]
    return (first_match(lines, pattern) if pattern else None) or function.location()


def bound_line(function: FunctionSource) -> Location | None:
    """The student's own bound, where an off-by-one the reference makes elsewhere shows: a
    triangle or its `k=` first, then a range that starts somewhere (`range(i, L)`, the inner
    loop of a triangle), then any range (`range(L)`, the outer loop)."""
    return (
        function.first_line(_TRIANGLE.search)
        or function.first_line(_STARTED.search)
        or function.first_line(_BOUNDS.search)
    )


def root_line(function: FunctionSource) -> Location | None:
    """The student's own square root (where a wrong scaling shows), wherever they put it."""
    return function.first_line(_ROOT.search)


def in_callees(
    function: FunctionSource,
    functions: Functions,
    fingerprints: Sequence[Fingerprint],
    pattern: str,
    mistake_id: str,
) -> Location | None:
    """Where `pattern` is found in the body of a function of the student's that `function`
    calls (a helper the solution has too, not a graded one), in the order of the calls: a
    mistake found nowhere in the target's own body is made in that helper (`one_head`)."""
    # only helpers the solution has too (the ones its derived mistakes are made in): a
    # helper of the student's own (a softmax of theirs) holds `/` and `exp` for other ends
    known = {f.mistake.within[0] for f in fingerprints if f.mistake.within}
    for name in calls_in_order(function):
        helper = functions(name) if name in known else None
        spot = locate(helper, pattern, mistake_id) if helper else None
        if helper and spot is not None and spot != helper.location():
            return spot
    return None


def in_helper(
    function: FunctionSource | None, functions: Functions, mistake: Mistake
) -> tuple[FunctionSource, Location] | None:
    """The student's helper a helper's derived mistake is made in, and its changed line, when
    their notebook defines the helper under its name, the target reaches it, and the line is
    found in its body."""
    if mistake.within is None:
        return None
    name, pattern = mistake.within
    helper = functions(name) if name in reached(function, functions) else None
    if helper is None or pattern is None:
        return None
    spot = locate(helper, pattern, mistake.id)
    return (helper, spot) if spot is not None and spot != helper.location() else None


def does_itself(
    function: FunctionSource | None,
    functions: Functions,
    fingerprints: Sequence[Fingerprint],
    helper: str,
) -> bool:
    """Whether `function` does the work of the solution's helper `helper` in its own body:
    it reaches no `helper` of the student's, and every function of theirs it calls is one
    the solution has too (a `softmax_cols`), none a helper of their own under another name
    (an `attend` that is their `one_head`)."""
    if function is None or helper in reached(function, functions):
        return False
    known = {f.mistake.within[0] for f in fingerprints if f.mistake.within}
    return all(name in known for name in calls_in_order(function) if functions(name))


def reached(function: FunctionSource | None, functions: Functions) -> set[str]:
    """The student's (non-graded) functions `function` calls, and those they call in turn
    (as deep as the grader makes helpers' mistakes: HELPER_DEPTH)."""
    reached: set[str] = set()
    frontier = [function] if function else []
    for _ in range(HELPER_DEPTH):
        callees = [f for source in frontier for name in calls_in_order(source)
                   if name not in reached and (f := functions(name))]  # fmt: skip
        reached |= {f.node.name for f in callees}
        frontier = callees
    return reached
