"""An argument the function never reads, where the expected result depends on it.

A function that takes `mask` and always adds a causal mask of its own, or takes `scaled` and
always scales, gives the same result whatever it is passed there: its code says so by never
loading the name. Said only when the reference's own result moves when that argument is
changed (its probe call on the probe case), so that an argument one may leave unused (a size
the shapes already give) is never blamed; and said alongside whatever else is wrong, since
a failing callee does not excuse it.
"""

from __future__ import annotations

import numpy as np

from grader.course.cases import probe_base
from grader.judge import static
from grader.judge.compare import stack
from grader.judge.diagnosis_data import Evidence
from grader.judge.relations import moved
from grader.report import Finding
from grader.run.wire import Seq, Value


def _arrays(value: Value | None) -> list[np.ndarray] | None:
    """The value as arrays: itself, or each item of a tuple of arrays of several shapes."""
    whole = stack(value) if value is not None else None
    if whole is not None:
        return [whole]
    if isinstance(value, Seq):
        items = [a for a in map(stack, value.items) if a is not None]
        return items if len(items) == len(value.items) else None
    return None


def _reference_depends_on(ev: Evidence, position: int) -> bool:
    """Whether changing the argument at `position` changes the reference's result on the
    probe case (the case the probes perturb: the second, when there are two)."""
    base = _arrays(ev.reference.outputs[probe_base(ev.cases).index])
    probed = _arrays(ev.reference_probes.get(position))
    if base is None or probed is None or len(base) != len(probed):
        return False
    return any(moved(a, b) for a, b in zip(base, probed, strict=True))


def unread_argument(ev: Evidence, said: tuple[Finding, ...]) -> Finding | None:
    """The first argument the function takes by the reference's name and never reads, on
    which the reference's result depends; None where `said` already names it."""
    function = ev.function
    if function is None or ev.is_stub or not ev.cases:
        return None
    arguments = function.node.args
    own = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    for position, name in enumerate(ev.reference.parameters):
        if name not in own or static.reads_name(function, name):
            continue
        if any(f"`{name}`" in finding.message for finding in said):
            continue
        if not _reference_depends_on(ev, position):
            continue
        text = (
            f"never reads its argument `{name}`: whatever the grader passes there, the result "
            f"is the same, but the expected result depends on it; use `{name}` in the body"
        )
        return Finding("relation", text, location=function.location())
    return None
