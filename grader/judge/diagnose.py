"""Name the mistake: normalisers, then fingerprints, then static hints, then generic relations.

The normalisers are normalisers.py's, the data diagnosis_data.py's, the relations' sentences
relation_sentences.py's, the lines mistakes are placed on placement.py's; here: which mistake
is named, and its finding's words.

Runs in the trusted process on numbers the child sent and on the student's source text.
A diagnosis adds mistake ids and sentences; it never changes a status or a score.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np

from grader.course.mistakes import Mistake
from grader.judge import returns, signature
from grader.judge.compare import agrees, stack
from grader.judge.diagnosis_data import Diagnosis as Diagnosis
from grader.judge.diagnosis_data import Evidence as Evidence
from grader.judge.fingerprints import Fingerprint
from grader.judge.item_order import item_order, order_words
from grader.judge.mutant_vetting import as_in_code, contradicted, loop_dropped, never_called
from grader.judge.normalisers import CHAINS, TRANSPOSED, NoAnswer, apply_chain
from grader.judge.normalisers import NO_ANSWER as NO_ANSWER  # where the engine finds them
from grader.judge.normalisers import Answer as Answer
from grader.judge.number_patterns import rounds, swapped_infinities, whole_parts
from grader.judge.pair_store import pairs_of
from grader.judge.placement import (
    bound_line,
    does_itself,
    first_match,
    in_callees,
    in_helper,
    locate,
    root_line,
)
from grader.judge.relation_sentences import (
    NO_MATCH,
    answered_pairs,
    error_sentences,
    one_short,
    relation_sentences,
)
from grader.judge.shown import is_derived, told
from grader.judge.static import Hint, HintKind
from grader.judge.twin_values import TWIN_MISTAKES, twin_slip
from grader.judge.unread import unread_argument
from grader.report import Finding, Location
from grader.run.wire import Seq, Value

# Mistakes the grader names from a static hint whatever the course: changing an argument in
# place, reading a notebook global. A course's own such mistakes are catalogued with
# `requires=` (and, for their words, `static=`).
GENERIC_STATIC: dict[str, HintKind] = {
    "mutates_input": "mutates",
    "uses_global": "global",
    "none_compared": "none_compared",  # `if mask != None:`: an array has no one truth value
}
# The order in which mistakes found by static hints are named.
STATIC_ORDER: tuple[HintKind, ...] = (
    "mutates",
    "truthiness",
    "none_compared",
    "discarded",
    "literal_divisor",
    "global",
)


def _matches(ev: Evidence, answers: Sequence[Answer], outputs: Sequence[Value | Exception]) -> bool:
    for answer, expected in zip(answers, outputs, strict=True):
        if isinstance(answer, NoAnswer) or isinstance(expected, Exception):
            return False
        if not agrees(expected, answer, ev.spec.compare, ev.spec.tolerance):
            return False
    return True


def _resolve(matched: list[Fingerprint], hint_kinds: set[HintKind]) -> list[Fingerprint]:
    """Among variants with identical outputs, the static evidence decides."""
    confirmed = [f for f in matched if f.mistake.requires in hint_kinds]
    if confirmed:
        return confirmed
    plain = [f for f in matched if f.mistake.requires is None]
    if plain:
        return plain
    # A read of a notebook global is always seen when there is one (the other hints are
    # not: `0.5 *` is no literal divisor): with none, a mistake that needs one is not it.
    possible = [f for f in matched if f.mistake.requires != "global"]
    return possible or matched


def _untouched(ev: Evidence) -> str | None:
    """'returns only zeros' or 'returns its input unchanged' when it does so on every case."""
    arrays = [None if isinstance(a, NoAnswer) else stack(a) for a in ev.answers]
    if any(a is None for a in arrays):
        return None
    # an empty result holds no zeros: it is empty (a loop that never ran, a crash before it)
    if all(a is not None and a.size > 0 and not np.any(a) for a in arrays):
        return "returns only zeros"
    firsts = [stack(inputs[0]) if inputs else None for inputs in ev.reference.inputs]
    if all(
        a is not None and f is not None and a.shape == f.shape and np.array_equal(a, f)
        for a, f in zip(arrays, firsts, strict=True)
    ):
        return "returns its input unchanged"
    return None


def _stub_or_filler(ev: Evidence) -> Diagnosis | None:
    """The unfinished stub, said only of a body that is one; otherwise the plain fact (zeros
    on every case) with the crash or the code's own evidence, never a guess."""
    untouched = _untouched(ev)
    if untouched is None:
        return None
    function = ev.function
    if (
        not ev.is_stub
        and function is not None
        and function.first_line(rounds)
        and whole_parts(answered_pairs(ev))
    ):
        return None  # zeros that are the whole parts of values between -1 and 1: a rounding
    where = ev.function.location() if ev.function else None
    if ev.is_stub:
        text = f"not implemented yet: {untouched}: the body is still the unfinished stub"
        finding = Finding("not_implemented", text, "not_implemented", where)
        return Diagnosis(("not_implemented",), (finding,), where)
    if ev.function is None:
        text = "holds only zeros: the values computed never reach it"
    else:
        text = (
            f"{untouched} on every case, though the body computes something: "
            "the computed values never reach what it returns"
        )
    base = _mutant(ev) or _static_only(ev, [], [])
    return Diagnosis(base.mistakes, (Finding("relation", text), *base.findings), base.location)


def diagnose(ev: Evidence) -> Diagnosis:
    """The mistakes named for one failing target; a crash that explains it comes first, an
    argument the code never reads last; each thing is said once."""
    found = _diagnose(ev)
    crashes = tuple(Finding("crash", text) for text in ev.crashes)
    findings = (*crashes, *found.findings)
    location, mistakes = found.location, found.mistakes
    if order := signature.parameter_order(ev):  # every name in the body then means another array
        kept = (f for f in findings if f.message != NO_MATCH)
        findings, location = (order, *kept), order.location
        mistakes = (signature.MISTAKE, *mistakes)
    if unread := unread_argument(ev, found.findings):
        findings, location = (*findings, unread), location or unread.location
    once = tuple({finding.message: finding for finding in reversed(findings)}.values())
    return Diagnosis(mistakes, once[::-1], location)


def _diagnose(ev: Evidence) -> Diagnosis:
    if all(isinstance(a, NoAnswer) for a in ev.answers):
        if ev.failing_callees:  # it raised inside, or because of, a broken callee
            return _root_cause(ev, [], ev.failing_callees[0], proven=False)
        base = _static_only(ev, [], [])
        told = (Finding("relation", sentence) for sentence in error_sentences(ev))
        return Diagnosis(base.mistakes, (*base.findings, *told), base.location)
    if filler := _stub_or_filler(ev):
        return filler
    hint_kinds = {h.kind for h in ev.hints}
    for ids, chain in CHAINS:
        normalised = apply_chain(chain, ev.answers)
        if _matches(ev, normalised, ev.reference.outputs):
            return _static_only(ev, list(ids), [])
        found = [f for f in _hand_made(ev) if _matches(ev, normalised, f.outputs)]
        # Consistent with its own wrong callee: the callee is the mistake, even when some
        # variant of this function happens to give the same numbers.
        inherited = [f for f in found if f.via is not None and f.via in ev.failing_callees]
        if inherited:
            return _root_cause(ev, list(ids), inherited[0].via or "", proven=True)
        own = _resolve([f for f in found if f.via is None], hint_kinds)
        if own:  # a catalogued scaling said as their code makes it, as a mutant's is
            return _static_only(ev, list(ids), [as_in_code(ev, f.mistake) for f in own])
        # The callee's mistake, made here: its own code is fine, or it is not called at all.
        borrowed = _resolve([f for f in found if f.via is not None], hint_kinds)
        if borrowed:
            return _static_only(ev, list(ids), [_borrowed(f) for f in borrowed])
    if partial := _itemwise(ev, transposes=False):
        return _items_wrong(ev, *partial)
    if ev.failing_callees:
        return _root_cause(ev, [], ev.failing_callees[0], proven=False)
    if swapped := swapped_infinities(answered_pairs(ev)):
        base = _static_only(ev, [], [])
        place = base.location or (ev.function.first_line(_INF.search) if ev.function else None)
        return Diagnosis(base.mistakes, (Finding("relation", swapped), *base.findings), place)
    if one_short(ev):
        # a list one short and the loop of theirs that misses one: said in their code's words
        short = relation_sentences(ev, _static_only(ev, [], []))
        ids = tuple(dict.fromkeys(("off_by_one", *short.mistakes)))
        return Diagnosis(ids, short.findings, short.location)
    if reordered := _reordered(ev):
        return reordered
    if derived := _mutant(ev):
        return derived
    # items of the tuple transposed: said once no mutant names it more closely (one that
    # transposes the product an item is computed from, say)
    if partial := _itemwise(ev, transposes=True):
        return _items_wrong(ev, *partial)
    return relation_sentences(ev, _static_only(ev, [], []))


_INF = re.compile(r"\binf\b")  # a line that writes an infinity
# NumPy's words when an array is tested as one truth value (`if mask != None:`)
_AMBIGUOUS = "truth value of an array with more than one element is ambiguous"


def _hand_made(ev: Evidence) -> list[Fingerprint]:
    """The catalogue's fingerprints and those carried from other targets' catalogues."""
    return [f for f in ev.fingerprints if f.origin != "mutant"]


def _mutant(ev: Evidence) -> Diagnosis | None:
    """The first mutant of the reference that gives the student's outputs (after the
    structural normalisers), named with its generated words: single mutations first, on
    every normaliser; pairs of them (read only now) when none matches."""
    singles = [f for f in ev.fingerprints if f.origin == "mutant" and not f.also]
    # a pair is two mistakes already: not also returned transposed or in a tuple (a third)
    found = _first_mutant(ev, singles, CHAINS)
    return found or _first_mutant(ev, pairs_of(ev.fingerprints), CHAINS[:1])


def _first_mutant(
    ev: Evidence, mutants: Sequence[Fingerprint], chains: Sequence[tuple[tuple[str, ...], Any]]
) -> Diagnosis | None:
    for ids, chain in chains:
        normalised = apply_chain(chain, ev.answers)
        for fingerprint in mutants:
            if loop_dropped(fingerprint.mistake) and not ev.early_stops:
                continue  # no loop of theirs misses one: the same numbers come another way
            if never_called(ev, fingerprint.mistake):
                continue  # their code calls the meant function: another mutant says how
            if _matches(ev, normalised, fingerprint.outputs):
                first = fingerprint.mistake
                named = [first, *(m for m in fingerprint.also if m.id != first.id)]
                named = [as_in_code(ev, m) for m in named]
                kept = [m for m in named if not contradicted(ev, m)]
                return _static_only(ev, list(ids), kept or named)
    return None


def _borrowed(fingerprint: Fingerprint) -> Mistake:
    """A callee's catalogued mistake, said of the caller that makes it in its own code."""
    mistake = fingerprint.mistake
    message = (
        f"{mistake.message} (a mistake the course lists for `{fingerprint.via}`, made here "
        "in this function's own code)"
    )
    return replace(mistake, target=fingerprint.via or mistake.target, message=message)


def _items(values: Sequence[object], k: int, n: int) -> list[Any] | None:
    picked: list[Any] = []
    for value in values:
        if not isinstance(value, Seq) or len(value.items) != n:
            return None
        picked.append(value.items[k])
    return picked


def _items_wrong(
    ev: Evidence, wrong: list[int], named: list[Mistake], turned: list[int]
) -> Diagnosis:
    """The diagnosis of a tuple whose wrong items are each explained: by a variant's same
    item, or as the expected item transposed (`turned`)."""
    items = ", ".join(f"[{k}]" for k in wrong)
    base = _static_only(ev, [], named)
    several = len(wrong) > 1
    only = (
        f"only element{'s' * several} {items} of the returned tuple "
        f"{'are' if several else 'is'} wrong"
    )
    notes = [Finding("relation", only)] if len(wrong) < _width(ev) else []
    if turned:
        notes.insert(0, _items_transposed(ev, turned))
    said = (*notes, *base.findings)
    ids = ("output_transposed", *base.mistakes) if turned else base.mistakes
    place = base.location or next((f.location for f in said if f.location), None)
    return Diagnosis(tuple(dict.fromkeys(ids)), said, place)


def _reordered(ev: Evidence) -> Diagnosis | None:
    """The right items of a tuple returned in another order (item_order.py), said before a
    mutant that swaps two arguments, which gives the same numbers."""
    n = _width(ev)
    got = [_items(ev.answers, k, n) for k in range(n)]
    expected = [_items(ev.reference.outputs, j, n) for j in range(n)]
    if not got or any(g is None for g in got) or any(e is None for e in expected):
        return None
    fits = [[_matches(ev, cast(Any, g), cast(Any, e)) for e in expected] for g in got]
    order = item_order(fits)
    if order is None:
        return None
    what, where = order_words(order, ev.function)
    at = f" ({where.describe()})" if where else ""
    found = Finding("mistake", f"returns_tuple: {what}{at}.", "returns_tuple", where, None,
                    "returns the right values in the wrong places.")  # fmt: skip
    base = _static_only(ev, [], [])
    return Diagnosis(("returns_tuple", *base.mistakes), (found, *base.findings), where)


def _width(ev: Evidence) -> int:
    """How many items the reference's tuple has (0: it returns no tuple)."""
    first = ev.reference.outputs[0]
    return len(first.items) if isinstance(first, Seq) else 0


def _items_transposed(ev: Evidence, turned: list[int]) -> Finding:
    """The finding for tuple elements returned transposed, placed on the `return`."""
    items = ", ".join(f"[{k}]" for k in turned)
    several = len(turned) > 1
    what = (
        f"returns element{'s' * several} {items} of the tuple transposed: each row of the "
        f"expected array{'s' * several} is a column of {'those' if several else 'that'} returned"
    )
    where = locate(ev.function, None, "output_transposed")
    at = f" ({where.describe()})" if where else ""
    return Finding("mistake", f"output_transposed: {what}{at}.", "output_transposed", where,
                   None, f"{what}.")  # fmt: skip


def _itemwise(ev: Evidence, transposes: bool) -> tuple[list[int], list[Mistake], list[int]] | None:
    """For tuple results: each wrong element explained by a variant's same element, or (when
    `transposes`) as that element transposed (the third list)."""
    first = ev.reference.outputs[0]
    if not isinstance(first, Seq):
        return None
    n = len(first.items)
    wrong: list[int] = []
    turned: list[int] = []
    mistakes: dict[str, Mistake] = {}
    for k in range(n):
        answers, expected = _items(ev.answers, k, n), _items(ev.reference.outputs, k, n)
        if answers is None or expected is None:
            return None
        if _matches(ev, answers, expected):
            continue
        found = [
            f.mistake
            for f in _hand_made(ev)
            if f.via is None
            and (outputs := _items(f.outputs, k, n)) is not None
            and _matches(ev, answers, outputs)
        ]
        wrong.append(k)
        if not found and transposes and _matches(ev, apply_chain(TRANSPOSED, answers), expected):
            turned.append(k)
            continue
        if not found:
            return None
        mistakes.update((m.id, m) for m in found)
    return (wrong, list(mistakes.values()), turned) if wrong else None


def _root_cause(ev: Evidence, ids: list[str], callee: str, proven: bool) -> Diagnosis:
    base = _static_only(ev, ids, [])
    then = (
        "its output is exactly what a correct version gives with your `" + callee + "`"
        if proven
        else f"once it passes, check this {'variable' if ev.spec.variable else 'function'} again"
    )
    uses = "is computed from" if ev.spec.variable else "calls"
    message = (
        f"fix `{callee}` first: `{ev.spec.name}` {uses} it and it fails its own checks; {then}"
    )
    return Diagnosis(base.mistakes, (Finding("callee", message), *base.findings), base.location)


def _static_only(ev: Evidence, ids: list[str], variants: list[Mistake]) -> Diagnosis:
    """Combine structural ids, matched variants and what the code itself shows."""
    # The hand-written words win over those carried from another target.
    ordered = sorted(
        (f for f in _hand_made(ev) if f.via is None), key=lambda f: f.origin == "catalogue"
    )
    catalogue = {f.mistake.id: f.mistake for f in ordered}
    chosen: dict[str, Mistake | None] = {i: catalogue.get(i) for i in ids}
    chosen.update({m.id: m for m in variants})
    kinds: dict[HintKind, Hint] = {}
    for found in ev.hints:
        kinds.setdefault(found.kind, found)  # the first place each kind shows
    for known in ev.known_mistakes:
        chosen.setdefault(known, catalogue.get(known))
    for kind in STATIC_ORDER:
        if kind not in kinds or kind == "mutates":  # mutation is known from the call itself
            continue
        for mistake in catalogue.values():
            if mistake.requires == kind:
                chosen.setdefault(mistake.id, mistake)
        if kind == "global":
            chosen.setdefault("uses_global", catalogue.get("uses_global"))
        if kind == "none_compared" and any(_AMBIGUOUS in error for error in ev.errors):
            chosen.setdefault("none_compared", catalogue.get("none_compared"))
    for named in list(chosen.values()):
        if named is not None and named.replaces:
            chosen.pop(named.replaces, None)  # explained by this one: not named beside it
    findings = [_explain(ev, mistake_id, mistake, kinds) for mistake_id, mistake in chosen.items()]
    described = {m.requires for m in chosen.values() if m is not None and m.requires}
    for hint in ev.hints:
        if hint.kind == "discarded" and "discarded" not in described:
            text = (
                f"{hint.location.describe()}: `{hint.text}` is computed and thrown away; "
                "did you mean to assign it?"
                if not hint.name
                else f"{hint.location.describe()}: `{hint.name} = {hint.text}` is computed "
                f"and never used after; did you mean to go on with `{hint.name}`?"
            )
            findings.append(Finding("static", text, location=hint.location))
        elif hint.kind == "returns_global":
            text = (
                f"{hint.location.describe()}: returns the notebook's global `{hint.name}`, "
                "not a value this function computed"
            )
            findings.append(Finding("static", text, location=hint.location))
    located = [f.location for f in findings if f.location is not None]
    return Diagnosis(tuple(chosen), tuple(findings), located[0] if located else None)


def _explain(
    ev: Evidence, mistake_id: str, mistake: Mistake | None, hints: dict[HintKind, Hint]
) -> Finding:
    """The finding for one named mistake: its message is `id: [place: ]general[ Fix: …]`."""
    word = GENERIC_STATIC.get(mistake_id) or (mistake.requires if mistake else None)
    hint = hints.get(cast(HintKind, word)) if word else None
    fix = (mistake.hint or None) if mistake else None
    if mistake is not None and mistake.static and hint:
        return _static_words(mistake_id, mistake.static, hint, fix)
    if mistake_id == "mutates_input":
        general = (
            f"{f'`{hint.text}` ' if hint else ''}changes an argument in place, so the caller's "
            "data is changed too. Work on a copy (`x = x - m` instead of `x -= m`)."
        )
        return _placed(mistake_id, hint.location if hint else None, general, None)
    if mistake_id == "none_compared" and hint:
        meant = f"{hint.name} is not None" if "!=" in hint.text else f"{hint.name} is None"
        general = (
            f"`{hint.text}` compares each entry of an array `{hint.name}` with None, and the "
            f"array of answers it gives has no single truth value (NumPy raises): test "
            f"`{meant}` instead"
        )
        return _placed(mistake_id, hint.location, general, None)
    if mistake_id == "uses_global" and hint:
        read = sorted({h.name for h in ev.hints if h.kind == "global"})
        names = [f"`{name}`" for name in read]
        which = f"global {names[0]}" if len(names) == 1 else f"globals {', '.join(names)}"
        sizes = {name for case in ev.cases for name in case.sizes}
        if all(name in sizes for name in read):
            then = (
                "the grader calls the function with other sizes, where that is wrong. Use the "
                "shapes of the arguments."
            )
        elif not any(name in sizes for name in read):
            those = "that value is" if len(read) == 1 else "those values are"
            then = (
                f"the grader calls the function with its own arguments, and {those} none of "
                "them. Use the arguments (and their shapes) instead."
            )
        else:
            then = (
                "the grader calls the function with other arguments and sizes, where that is "
                "wrong. Use the arguments and their shapes instead."
            )
        general = f"reads the notebook's {which}; {then}"
        return _placed(mistake_id, hint.location, general, None)
    where = (
        hint.location
        if hint
        else locate(ev.function, mistake.locate if mistake else None, mistake_id)
    )
    if not hint and mistake and mistake.locate and ev.function and where == ev.function.location():
        where = (
            in_callees(ev.function, ev.functions, ev.fingerprints, mistake.locate, mistake_id)
            or where
        )  # in a helper of theirs
    if where is None and mistake and mistake.locate and ev.cell_lines:
        where = first_match(ev.cell_lines, mistake.locate)  # a variable's: the cells setting it
    thrown = next((h for h in ev.hints if h.kind == "discarded"), None)
    if thrown and ev.function and where == ev.function.location():
        where = thrown.location  # found nowhere else: the value the code computed and dropped
    at_def = ev.function is not None and where == ev.function.location()
    # a loop's bound (`range(…)`, a loop that drops an item) is the student's loop that
    # misses one, where they have one: the reference's bound may be on another loop of theirs
    loop = mistake is not None and (loop_dropped(mistake) or "`range(" in mistake.message)
    if mistake_id == "off_by_one" and ev.early_stops and (at_def or loop):
        where = ev.early_stops[0][1]  # found nowhere else: the loop that misses one
    what = mistake.message if mistake else STRUCTURAL.get(mistake_id, mistake_id)
    if mistake is not None and is_derived(mistake.function):
        where, what = _derived_words(ev, mistake_id, mistake, where)
    answered = [(a, r) for a, r in zip(ev.answers, ev.reference.outputs, strict=True)
                if not isinstance(a, NoAnswer)]  # fmt: skip
    if mistake_id == "output_transposed" and returns.list_joined(answered):
        what = returns.JOINED_LIST
    at = f" ({where.describe()})" if where else ""
    message = f"{mistake_id}: {what}{at}.{_fix(fix)}"
    return Finding("mistake", message, mistake_id, where, fix, f"{what}.")


def _derived_words(
    ev: Evidence, mistake_id: str, mistake: Mistake, where: Location | None
) -> tuple[Location | None, str]:
    """A derived mistake's place and words: one twin value used for both is placed where the
    student's code does it (twin_values.py); words that quote the solution beyond what the
    student has seen are told in words of the kind, or of their own code (shown.py)."""
    if inside := in_helper(ev.function, ev.functions, mistake):
        helper, spot = inside
        line = helper.text_at(spot)
        return spot, told(mistake_id, mistake.message, ev.shown, line) if ev.shown else (
            mistake.message
        )
    if mistake.within and does_itself(
        ev.function, ev.functions, ev.fingerprints, mistake.within[0]
    ):
        # the helper's work done here: its changed line, if written alike, else no line (the
        # call the mistake's place looks for is not there; another call would mislead)
        name, pattern = mistake.within
        mistake = replace(mistake, message=_not_called(ev, mistake.message, name))
        where = locate(ev.function, pattern, mistake_id)
    slip = twin_slip(ev.function) if mistake_id in TWIN_MISTAKES else None
    where = slip[0] if slip else where
    if mistake_id == "off_by_one" and ev.function and where == ev.function.location():
        # the reference's bound is not in the student's code: their own bound instead
        where = bound_line(ev.function) or where
    if mistake_id.startswith("scale_") and ev.function and where == ev.function.location():
        # nor the reference's scaling: their own square root, wherever they put it
        where = root_line(ev.function) or where
    if ev.shown is None:
        return where, mistake.message
    body = ev.function and where and where != ev.function.location()
    line = ev.function.text_at(where) if ev.function and where and body else None
    what = told(mistake_id, mistake.message, ev.shown, line)
    return where, slip[1] if slip and what != mistake.message else what


def _not_called(ev: Evidence, message: str, helper: str) -> str:
    """A helper's mistake told of a target that does the helper's work itself: not "in
    `one_head`, which it calls" (it calls no `one_head`) but in what `one_head` computes."""
    said = f"in what `{helper}` computes (`{ev.spec.name}` does not call it): "
    return re.sub(rf"^in `{re.escape(helper)}`, which (?:it|`\w+`) calls: ", said, message)


def _static_words(mistake_id: str, words: str, hint: Hint, fix: str | None) -> Finding:
    """A mistake shown by a static hint, in the catalogue's words (`{code}`: what the hint
    points at). A discarded value's fix is always to assign it, so the grader says so."""
    general = words.format(code=hint.text)
    if hint.kind == "discarded":
        kept = f" (`{hint.name}` is never used after)" if hint.name else ""
        general = f"{general}{kept}. Assign it: `{_assignment_for(hint.text)}`."
        return _placed(mistake_id, hint.location, general, None)
    return _placed(mistake_id, hint.location, f"{general}.", fix)


def _placed(mistake_id: str, where: Location | None, general: str, fix: str | None) -> Finding:
    """A mistake's finding told as `id: place: general[ Fix: fix.]`."""
    at = f"{where.describe()}: " if where else ""
    message = f"{mistake_id}: {at}{general}{_fix(fix)}"
    return Finding("mistake", message, mistake_id, where, fix, general)


def _fix(fix: str | None) -> str:
    return f" Fix: {fix}." if fix is not None else ""


# Words for mistakes found without a catalogue entry (structure, or the untouched stub).
STRUCTURAL = {
    "not_implemented": "the function is still the unfinished stub",
    "output_transposed": "returns the transpose of the expected result",
    "returns_tuple": "returns a tuple where a single array is expected (or its items swapped)",
}


def _assignment_for(text: str) -> str:
    """`text` (a value computed and thrown away) assigned to the name it works on: the left
    operand when it is a plain name (`s = s / 2`), or a call's first argument when it is
    one (`s = np.divide(s, 2)`), never the module or function called (`np = …` would hide
    numpy) nor one operand of a product (`K @ Q / 2`: `K = …` would change K); else
    `result`."""
    try:
        node: ast.AST = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return f"result = {text}"
    if isinstance(node, ast.BinOp):
        node = node.left
    elif isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    name = node.id if isinstance(node, ast.Name) else "result"
    return f"{name} = {text}"
