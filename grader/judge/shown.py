"""What a student has been shown: the words of their own notebook's code and of the exercise
notebook's code (its stubs). A derived mistake's words are made from the reference's source
(mutants.py quotes the expression it changed); a student may be shown such a quote only when
no word of it is one of the solution's that they have not seen, and, when it is a few words
long, not one word away from their code (an expression of the reference's made of their
words, `axis=0` where they wrote `axis=1`, would read as a misquote of their line).
Otherwise the mistake is told in words of its kind, at the student's own line.
"""

from __future__ import annotations

import json
import re
from functools import cached_property, lru_cache
from pathlib import Path

from grader.course.notebook import Submission

# The names of the functions mutants.py and mutant_pairs.py make (their PREFIX and
# PAIR_PREFIX; tests/test_shown_words.py holds them equal): words made from the reference.
DERIVED_PREFIXES = ("_grader_mutant_", "_grader_pair_")
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|[0-9]+(?:\.[0-9]*)?(?:e-?[0-9]+)?")
_QUOTED = re.compile(r"`([^`]*)`")
_WHERE = re.compile(r" \((?:computing|filling) `[^`]*`\)")  # mutants._where's words
_HELPER = re.compile(r"^in `[A-Za-z_]\w*`, which [^:]*: ")  # mutant_helpers.py's words

# Each derived mistake's kind in words that quote no code (what mutant_operators.py says, less
# the expression it changed); where is told by the place that follows them.
KIND_WORDS = {
    "operands_swapped": "multiplies two arrays in the wrong order",
    "operand_transposed": "transposes one side of a matrix product, or leaves out its transpose",
    "intermediate_transposed": "transposes an intermediate product",
    "elementwise_product": "multiplies entry by entry (`*`) where a matrix product (`@`) is meant",
    "matrix_product_for_elementwise": "uses a matrix product (`@`) where `*` is meant",
    "wrong_log_base": "takes the logarithm to the wrong base",
    "softmax_wrong_axis": "normalises along the wrong axis",
    "reduction_axis": "reduces along the wrong axis, or over the whole array",
    "missing_bias": "leaves out a bias, or adds the wrong one",
    "term_dropped": "leaves out one term of a sum or a difference",
    "wrong_argument": "uses one argument where another is meant",
    "wrong_variable": "uses one computed value where another is meant",
    "uses_global": "reads a notebook global where a size of the arguments is meant",
    "size_hardcoded": "writes a literal number where a size of the arguments is meant",
    "wrong_dimension": "takes the wrong dimension of an array",
    "scale_missing": "leaves out the scaling by a square root",
    "scale_duplicated": "scales twice",
    "scale_inverted": "multiplies by the square root where it should divide by it",
    "scale_by_d": "divides by a size instead of its square root",
    "scale_misplaced": "scales at the wrong step",
    "operator_precedence": "is read by Python in another order than meant (`**` and `*` come "
    "before `/`): add parentheses",
    "order_swapped": "joins arrays in the wrong order",
    "off_by_one": "is off by one in a bound or an index",
    "wrong_loop_variable": "uses one loop variable where another is meant",
    "call_dropped": "skips a call of one of the notebook's functions",
    "wrong_function": "calls one of the notebook's functions where another is meant",
    "output_transposed": "returns the transpose of the expected result",
    "size_for_sum": "divides by the number of items where their sum is meant",
}
OTHER_WORDS = "computes one expression differently from a correct version"
# Finer words of a kind, when the reference's words name what was changed (by a word in them).
FINER_WORDS = {
    ("term_dropped", "max"): "leaves out the subtraction of the maximum before taking exp: "
    "the same numbers on small scores, inf or nan on large ones",
}


def words_of(text: str) -> frozenset[str]:
    """The names and numbers in a text of code."""
    return frozenset(_WORD.findall(text))


@lru_cache(maxsize=16)
def _notebook_text(path: Path, stamp: int, code_only: bool) -> str:
    """A course notebook's code cells, or every cell (prose included), as one text, read
    once per version of the file; empty when it cannot be read."""
    del stamp  # part of the cache key only: a changed notebook is read again
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n".join(
            "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for cell in cells
            if not code_only or cell.get("cell_type") == "code"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return ""


@lru_cache(maxsize=16)
def _notebook_words(path: Path, stamp: int, code_only: bool) -> frozenset[str]:
    """The words of a course notebook (`_notebook_text`), found once per version."""
    return words_of(_notebook_text(path, stamp, code_only))


# A quote of this many words or more that is one word away from the student's code reads as
# a misquote of it (`np.max(data_in, axis=0, …)` beside their `axis=1`, `q.shape[0]` beside
# their `k.shape[0]`); shorter ones (`all_keys[:-1]`, `omega_q @ x`) name what to change.
_MISQUOTE_WORDS = 3


# The words before a quote of the form meant, not of the student's (mutant_operators.py's
# "takes `x` where `y` is meant", "write `d ** 0.5`", "divide by the product: `x / (a * b)`").
_FIX_BEFORE = ("where ", "write ", ": ")


def _fewest_differing(quote: tuple[str, ...], code: tuple[str, ...]) -> int:
    """How few of `quote`'s words differ where `code` holds as many words in a row as it
    (0: it is there as it stands; more than the quote's length: code too short)."""
    n = len(quote)
    fewest = n + 1
    for start in range(len(code) - n + 1):
        differ = sum(a != b for a, b in zip(quote, code[start : start + n], strict=True))
        fewest = min(fewest, differ)
        if not fewest:
            break
    return fewest


def _words_at(path: Path | None, code_only: bool) -> frozenset[str]:
    if path is None or not path.is_file():
        return frozenset()
    return _notebook_words(path, path.stat().st_mtime_ns, code_only)


class Shown:
    """What one student has seen, against the solution: read only when a derived mistake is
    told. The code of the student's notebook and of the exercise's (its stubs): a word the
    exercise's prose uses (`scores`) is no variable the student has."""

    def __init__(self, submission: Submission, exercise: Path | None, solution: Path) -> None:
        self._submission, self._exercise, self._solution = submission, exercise, solution

    @cached_property
    def hidden(self) -> frozenset[str]:
        """The words of the solution's code that neither the student's code nor the exercise
        notebook's holds: what no quote may show."""
        own = words_of("\n".join(cell.original for cell in self._submission.cells))
        seen = own | _words_at(self._exercise, code_only=True)
        return _words_at(self._solution, code_only=True) - seen

    @cached_property
    def tokens(self) -> tuple[tuple[str, ...], ...]:
        """The names and numbers of the student's code and of the exercise's, in order."""
        own = tuple(_WORD.findall("\n".join(cell.original for cell in self._submission.cells)))
        exercise = self._exercise
        if exercise is None or not exercise.is_file():
            return (own,)
        text = _notebook_text(exercise, exercise.stat().st_mtime_ns, code_only=True)
        return own, tuple(_WORD.findall(text))

    def quotes_only_shown(self, message: str) -> bool:
        """Whether every quoted piece of code in `message` is one the student may be shown:
        no word of the solution they have not seen, and not, when it is a few words long,
        one word away from what their code or the exercise's holds (a reference's
        expression made of their words would read as a misquote of their line)."""
        for found in _QUOTED.finditer(message):
            quoted = found[1]
            if words_of(quoted) & self.hidden:
                return False
            words = tuple(_WORD.findall(quoted))
            fix = message[: found.start()].endswith(_FIX_BEFORE)  # the meant form: one away
            if len(words) >= _MISQUOTE_WORDS and not fix:
                differing = [_fewest_differing(words, t) for t in self.tokens]
                if 0 not in differing and 1 in differing:
                    return False
        return True


def is_derived(function: str) -> bool:
    """Whether a mistake's function (and so its words) was made from the reference."""
    return function.startswith(DERIVED_PREFIXES)


def told(mistake_id: str, message: str, shown: Shown, line: str | None) -> str:
    """A derived mistake's words as the student may see them: unchanged when every quote is
    made of words they have seen; else without the reference's variable (`computing `x``) when
    that is the one unseen word; else the words of its kind (`in `helper`` kept when seen),
    with the student's own `line` quoted when the mistake is placed in their body."""
    if shown.quotes_only_shown(message):
        return message
    # the statement named by the reference's variable: dropped, the place says where
    kept = _WHERE.sub(lambda m: m[0] if shown.quotes_only_shown(m[0]) else "", message)
    if shown.quotes_only_shown(kept):
        return kept
    helper = _HELPER.match(message)
    prefix = helper.group(0) if helper and shown.quotes_only_shown(helper.group(0)) else ""
    said = words_of(message)
    finer = [w for (kind, word), w in FINER_WORDS.items() if kind == mistake_id and word in said]
    words = f"{prefix}{finer[0] if finer else KIND_WORDS.get(mistake_id, OTHER_WORDS)}"
    code = " ".join(line.split()) if line else ""
    if not code or "`" in code:
        return words
    return f"{words}, in `{code if len(code) <= 80 else code[:77] + '…'}`"
