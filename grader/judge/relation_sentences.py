"""The generic relations said of a wrong output no mistake explains (relations.py on the
numbers, with the student's code: returns.py, loop_bounds.py, number_patterns.py), and what
NumPy's errors in the failing calls mean.
"""

from __future__ import annotations

import ast
import re

import numpy as np

from grader.judge import loop_bounds, number_patterns, relations, returns, static
from grader.judge.compare import agrees, stack
from grader.judge.diagnosis_data import Diagnosis, Evidence
from grader.judge.normalisers import NoAnswer
from grader.report import Finding, Location
from grader.run.wire import Seq, Value

# Said when nothing else is: what the numbers show is then only in the cases below.
NO_MATCH = "no known mistake matches this output; compare the cases below"


def error_sentences(ev: Evidence) -> list[str]:
    """What NumPy's errors in the failing calls mean (a reduction that lost its axis, inner
    sizes of `@` that differ), each said once."""
    found = []
    axis = ev.spec.sums_to_one
    dropped = (relations.dropped_axis(m, axis) for m in ev.errors)
    if told := next(filter(None, dropped), None):
        found.append(told)
    if told := next(filter(None, map(relations.matmul_sizes, ev.errors)), None):
        found.append(told)
    if told := next(filter(None, map(relations.axis_beyond, ev.errors)), None):
        found.append(told)
    for message, place in zip(ev.errors, ev.error_places, strict=False):
        line = ev.function.text_at(place) if ev.function and place else None
        if place and line and (told := relations.elementwise_not_matmul(message, line)):
            found.append(f"{told} ({place.describe()})")
            break
    if any(
        _INFINITE_INTEGER.search(message) and _stored_into(ev, place)
        for message, place in zip(ev.errors, ev.error_places, strict=False)
    ):
        found.append(
            "an array of integers cannot hold inf or NaN: make it an array of floats "
            "(`np.zeros(shape)` and `np.full(shape, 0.0)` make floats; leave out `dtype=int`)"
        )
    return found


# NumPy's words for putting inf or NaN into an integer array (OverflowError, ValueError);
# `int(np.inf)` says the same, so the line must store into an array (`mask[i, j] = …`).
_INFINITE_INTEGER = re.compile(r"cannot convert float (?:infinity|NaN) to integer")
_STORE = re.compile(r"\]\s*(?:[-+*/]?=)(?!=)")


def _stored_into(ev: Evidence, place: Location | None) -> bool:
    """Whether the line an error was raised on stores into an item or slice of an array."""
    line = ev.function.text_at(place) if ev.function and place else None
    return bool(line and _STORE.search(line.split("#")[0]))


_LOOPING = (ast.For, ast.While, ast.comprehension, ast.Slice)
# A big number written out: `1e9`, `1e+30`, `10**9`, `99999` (outside a comment's words).
_BIG_NUMBER = re.compile(r"\b\d+(?:\.\d*)?[eE]\+?\d+|\b10\s*\*\*\s*\d+|\b\d{4,}\b")


def _loops_or_slices(ev: Evidence) -> bool:
    """Whether the function loops or slices: what "a loop or slice stops early" is about."""
    return ev.function is None or any(isinstance(n, _LOOPING) for n in ev.function.nodes)


_INFINITY_NAMES = {"inf", "infty", "infinity", "pinf", "ninf"}


def _infinities(ev: Evidence) -> bool:
    """Whether an infinity is in play: the function writes one (`np.inf`, `math.inf`,
    `float("-inf")`) or an input of a case holds one (an additive mask)."""
    nodes = ev.function.nodes if ev.function else []
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr.lower() in _INFINITY_NAMES:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str | float):
            text = str(node.value).strip().lstrip("+-").lower()
            if text in _INFINITY_NAMES:
                return True
    arrays = [arg for case in ev.cases for arg in case.args]
    while arrays:
        arg = arrays.pop()
        if isinstance(arg, list | tuple):
            arrays.extend(arg)
        elif isinstance(arg, np.ndarray) and arg.dtype.kind == "f" and np.isinf(arg).any():
            return True
    return False


def relation_sentences(ev: Evidence, base: Diagnosis) -> Diagnosis:
    """`base` with what the numbers and the code show said after it (generic relations)."""
    sentences = []
    place = base.location  # where the feedback points: a relation's static evidence, if any
    pairs = answered_pairs(ev)
    told, place, whole = _number_sentences(ev, pairs, place)
    sentences += told
    sums_axis = ev.spec.sums_to_one
    if sums_axis and pairs and (sums := relations.sums_to_one(pairs[0][0], sums_axis)):
        sentences.append(sums)
    # The first case is the notebook's example; a size its code cannot depend on is not said.
    fn = ev.function
    example = {k: v for k, v in ev.cases[0].sizes.items() if fn and static.mentions_size(fn, k, v)}
    if sizes := relations.only_some_sizes(ev.passed, [c.sizes for c in ev.cases], example):
        sentences.append(sizes)
    sentences += error_sentences(ev)
    if optional := _optional(ev):
        sentences.append(optional)
    if repeated := _repeated_items(ev):
        sentences.append(repeated)
    if not whole and (ignored := _ignored(ev)):
        sentences.append(ignored)
    shaped, place, totals = _code_sentences(ev, place)
    sentences += shaped
    for got, want in [*pairs[:1], *_item_pairs(ev)[:1]]:  # the whole, else an item
        if said := relations.shape_relations(got, want):
            sentences += said
            if fn and any(s.startswith(relations.LARGE_FINITE) for s in said):
                place = place or fn.first_line(_BIG_NUMBER.search)  # its `-1e9`
            break
    # the whole, else the first item of a pair or list that holds a NaN (an `(out, weights)`)
    infinite = _infinities(ev)
    nans = (relations.nan_where_finite(*pair, infinite) for pair in [*pairs[:1], *_item_pairs(ev)])
    if nan := next(filter(None, nans), None):
        sentences.append(nan)
    if pairs and (extra := relations.singleton_dimensions(pairs[0][0], pairs[0][1])):
        sentences.append(extra)
    tol = ev.spec.tolerance
    looped = _loops_or_slices(ev)
    # items changed in place by the function (mutates_input, already told) are wrong by
    # that, whatever their pattern: no loop that stops early is suggested beside it
    mutated = "mutates_input" in ev.known_mistakes
    lines = None if mutated else relations.lines_in_every_case(pairs, tol, looped)
    if lines and not totals:
        sentences.append(lines)
        if ev.fixed and relations.rows_as_first(pairs[0][0], pairs[0][1], ev.spec.tolerance):
            fixed = ev.fixed[0]
            place = place or fixed.location
            sentences.append(
                f"`{fixed.text}` ({fixed.location.describe()}) is the same at every pass of its "
                "loop: index with the loop's variable where each pass needs its own item"
            )
    if not sentences and not base.mistakes:
        sentences.append(NO_MATCH)
    found = (Finding("relation", sentence) for sentence in sentences)
    return Diagnosis(base.mistakes, (*base.findings, *found), place)


def _number_sentences(
    ev: Evidence, pairs: list[tuple[np.ndarray, np.ndarray]], place: Location | None
) -> tuple[list[str], Location | None, bool]:
    """What the wrong numbers show (whole numbers or a few decimal places, a `//`, a
    True/False mask, a factor, one that is a size), the place they point at, and whether
    they are rounded."""
    sentences: list[str] = []
    # whole numbers: a rounding, whose factors and insensitivity to inputs are by-products
    whole = number_patterns.whole_numbers(*pairs[0]) if pairs else None
    whole = whole or number_patterns.decimal_places(pairs)
    function = ev.function
    if whole:
        sentences.append(whole)
        place = place or (function.first_line(number_patterns.rounds) if function else None)
    if not whole and (narrow := _narrowed(ev, pairs)):
        sentences.append(narrow[0])
        place = place or narrow[1]
    if function and (floor := function.first_line(number_patterns.floor_division)):
        sentences.append(f"`//` ({floor.describe()}) rounds down to a whole number; `/` divides")
        place = place or floor
    if pairs and (flags := number_patterns.booleans_for_infinities(*pairs[0])):
        sentences.append(flags)
    failing = [c.sizes for c, ok, a in zip(ev.cases, ev.passed, ev.answers, strict=True)
               if not ok and not isinstance(a, NoAnswer)]  # fmt: skip
    tol = ev.spec.tolerance
    factor = relations.constant_factor(pairs, tol, failing) if pairs and not whole else None
    if factor:
        sentences.append(factor)
        if counted := relations.size_factor(pairs, failing, ev.spec.tolerance):
            sentences.append(counted)
            place = place or (
                function.first_line(number_patterns.MEAN.search) if function else None
            )
    return sentences, place, bool(whole)


def _narrowed(
    ev: Evidence, pairs: list[tuple[np.ndarray, np.ndarray]]
) -> tuple[str, Location] | None:
    """A computation in float16 or float32: a line of theirs that narrows the numbers, and
    values that agree with the expected ones to that type's precision only."""
    function = ev.function
    line = function.first_line(number_patterns.narrows) if function else None
    text = function.text_at(line) if function and line else None
    kind = number_patterns.float_precision(pairs or _item_pairs(ev)) if line else None
    if not (line and text and kind):
        return None
    name, digits = kind
    told = (
        f"every value agrees with the expected one to the precision of {name} (about "
        f"{digits} significant digits), not to the grader's tolerance: `{text.strip()}` "
        f"({line.describe()}) computes in {name}; "
        "leave the conversion out and compute in float64, NumPy's default"
    )
    return told, line


def _code_sentences(
    ev: Evidence, place: Location | None
) -> tuple[list[str], Location | None, bool]:
    """What the returned form and the code's loops show (running totals, lists joined, one
    item of a pair, the place of the `return`, a loop one short), where, and whether the
    items are running totals."""
    sentences: list[str] = []
    function = ev.function
    answered = _answered(ev)
    wrong = [p for p, ok in zip(_pairs_of(ev), ev.passed, strict=True) if p and not ok]
    if totals := number_patterns.first_running_totals(wrong, ev.spec.tolerance):
        sentences.append(totals)
    if form := returns.returned_form(answered):
        sentences += form
        place = place or (function.first_line(returns.RETURN.search) if function else None)
    placed = returns.return_place(function, answered) if function else None
    if told := placed or loop_bounds.early_stop(answered, ev.early_stops):
        sentences.append(told[0])
        place = place or told[1]
    return sentences, place, bool(totals)


def answered_pairs(ev: Evidence) -> list[tuple[np.ndarray, np.ndarray]]:
    """(student, reference) arrays of the failing cases that answered with numbers."""
    pairs = []
    for answer, expected, ok in zip(ev.answers, ev.reference.outputs, ev.passed, strict=True):
        got = None if isinstance(answer, NoAnswer) else stack(answer)
        want = stack(expected)
        if not ok and got is not None and want is not None:
            if ev.spec.compare == "squeeze":
                got, want = np.squeeze(got), np.squeeze(want)
            pairs.append((got, want))
    return pairs


def _item_pairs(ev: Evidence) -> list[tuple[np.ndarray, np.ndarray]]:
    """For list or tuple results: (student, reference) items that differ, first case first."""
    found = []
    for answer, expected in zip(ev.answers, ev.reference.outputs, strict=True):
        if not (isinstance(answer, Seq) and isinstance(expected, Seq)):
            continue
        for got, want in _leaves(answer, expected):
            a, b = stack(got), stack(want)
            if (
                a is not None
                and b is not None
                and not agrees(want, got, "squeeze", ev.spec.tolerance)
            ):
                found.append((a, b))
    return found


def _leaves(answer: Seq, expected: Seq) -> list[tuple[Value, Value]]:
    """The items of a list or tuple, and those of its lists (a tuple of three lists)."""
    found: list[tuple[Value, Value]] = []
    for got, want in zip(answer.items, expected.items, strict=False):
        if isinstance(got, Seq) and isinstance(want, Seq):
            found += zip(got.items, want.items, strict=False)
        else:
            found.append((got, want))
    return found


def _repeated_items(ev: Evidence) -> str | None:
    """The first failing case whose list holds N×N items where N are expected, said once."""
    for answer, expected, ok in zip(ev.answers, ev.reference.outputs, ev.passed, strict=True):
        if ok or not (isinstance(answer, Seq) and isinstance(expected, Seq)):
            continue
        if said := relations.repeated_items(len(answer.items), len(expected.items)):
            return said
    return None


def _pairs_of(ev: Evidence) -> list[tuple[Value, Value] | None]:
    """(the student's value, the reference's) for each case; None where it did not answer."""
    pairs = zip(ev.answers, ev.reference.outputs, strict=True)
    return [None if isinstance(a, NoAnswer) else (a, r) for a, r in pairs]


def one_short(ev: Evidence) -> bool:
    """Lists one item short in every case that answered, and a loop of theirs that misses
    one (loop_bounds.py): what `_form` tells, in their code's words."""
    return loop_bounds.early_stop(_answered(ev), ev.early_stops) is not None


def _answered(ev: Evidence) -> list[tuple[Value, Value]]:
    """(the student's value, the reference's) for each case that answered."""
    return [pair for pair in _pairs_of(ev) if pair is not None]


def _optional(ev: Evidence) -> str | None:
    """Wrong exactly in the cases that leave out an argument (or set a flag one way)."""
    found = relations.optional_argument(
        ev.passed, [c.args for c in ev.cases], ev.reference.parameters
    )
    if found is None:
        return None
    name, kind = found
    how = {"left out": f"leave out `{name}`", "given": f"pass `{name}`"}.get(
        kind, f"pass `{name}={kind}`"
    )
    said = f"wrong exactly in the cases that {how}, right in the others"
    if ev.function is not None and not static.reads_name(ev.function, name):
        said += f": the function never reads `{name}`, so it does the same either way"
    return said


def _ignored(ev: Evidence) -> str | None:
    answered = [a for a in ev.answers if not isinstance(a, NoAnswer)]
    if answered and all(a is None for a in answered):  # no `return`: None whatever comes in
        return None
    base = 1 % len(ev.cases)
    base_index = ev.cases[base].index
    reference_base = stack(ev.reference.outputs[base_index])
    if ev.base_digest is None or reference_base is None:
        return None
    answer = ev.answers[base]
    if not isinstance(answer, np.ndarray | Seq):
        return None  # no numbers (a string, an array too large to send): nothing to move
    got = stack(answer)
    if got is not None and got.size and (not np.isfinite(got).all() or np.ptp(got) == 0):
        # one value everywhere, or inf and NaN: a result saturated on this case (`exp` of
        # large scores overflowing to 0 after the division) stays put whatever the input
        return None
    unchanged = {p for p, d in ev.probes.items() if d is not None and d == ev.base_digest}
    reference = {p: a for p, v in ev.reference_probes.items() if (a := stack(v)) is not None}
    return relations.ignored_inputs(ev.reference.parameters, unchanged, reference_base, reference)
