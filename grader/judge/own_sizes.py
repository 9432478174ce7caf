"""A global never masks another mistake: a function that reads the notebook's `D` is judged
again on the cases at the notebook's own sizes, where the global happens to be right. Wrong
there too, it has another mistake, and that one is named (or said to be there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from grader.judge.diagnose import Diagnosis, Evidence, diagnose
from grader.report import Finding

T = TypeVar("T")


def own_size_cases(ev: Evidence, own: Mapping[str, int]) -> list[int]:
    """Positions of the cases whose sizes equal the notebook's values of the globals read."""
    used = {h.name for h in ev.hints if h.kind == "global"}
    positions = []
    for position, case in enumerate(ev.cases):
        named = [n for n in used if n in case.sizes and n in own]
        if named and all(case.sizes[n] == own[n] for n in named):
            positions.append(position)
    return positions


def _pick(values: Sequence[T], positions: Sequence[int]) -> tuple[T, ...]:
    return tuple(values[p] for p in positions)


def restricted(ev: Evidence, positions: Sequence[int]) -> Evidence:
    """The evidence on those cases only, without the global hint (it is right there)."""
    reference = replace(
        ev.reference,
        outputs=_pick(ev.reference.outputs, positions),
        inputs=_pick(ev.reference.inputs, positions),
    )
    return replace(
        ev,
        cases=_pick(ev.cases, positions),
        answers=_pick(ev.answers, positions),
        passed=_pick(ev.passed, positions),
        reference=reference,
        fingerprints=[replace(f, outputs=_pick(f.outputs, positions)) for f in ev.fingerprints],
        hints=[h for h in ev.hints if h.kind != "global"],
        probes={},
        base_digest=None,
        reference_probes={},
    )


def unmasked(ev: Evidence, found: Diagnosis, own: Mapping[str, int]) -> Diagnosis:
    """`found`, with what is wrong at the notebook's own sizes added when the global is not
    the whole story."""
    if "uses_global" not in found.mistakes:
        return found
    positions = own_size_cases(ev, own)
    if not positions or all(ev.passed[p] for p in positions):
        return found  # right wherever the global is right: the global is the mistake
    sizes = ", ".join(f"{k}={v}" for k, v in ev.cases[positions[0]].sizes.items())
    there = diagnose(restricted(ev, positions))
    lead = Finding(
        "relation",
        f"it is wrong at the notebook's own sizes too ({sizes}), where the global is right: "
        "the global is not the only mistake",
    )
    said = {f.message for f in found.findings}  # a failing callee's "fix it first", say
    new = [
        f
        for f in there.findings
        if (f.mistake not in found.mistakes or f.mistake is None) and f.message not in said
    ]
    ids = tuple(dict.fromkeys((*found.mistakes, *there.mistakes)))
    return Diagnosis(ids, (*found.findings, lead, *new), found.location or there.location)
