"""`judge_cases` (a target's cases, with one vectorised check for a target whose answers all
pass) gives exactly the outcomes of `judge_case` on each case, over generated targets: cases
that pass, fail by a hair, hold NaN or infinities, come back in another structure or dtype,
raise, time out or are not answered, with arguments kept or changed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_compare_agrees import ENTRIES, PROPS, TOLERANCES, VALUES, near

import grader.judge.score as score
from grader.course.cases import Case
from grader.course.config import TargetSpec, Tolerance
from grader.judge.compare import all_pass, compare, flatten
from grader.judge.identity import identical, tokens
from grader.judge.reference import Reference
from grader.judge.score import changed_arguments, judge_case, judge_cases
from grader.run.frames import ResultFrame
from grader.run.wire import Other, Seq, Value

FLOATS = st.builds(
    lambda rows, cols, fill: np.full((rows, cols), fill),
    st.integers(1, 3),
    st.integers(1, 3),
    ENTRIES,
)
# Outputs as the course's are: arrays, or sequences of them, all float64 (the fast path's
# own ground), besides the odd value (`VALUES`) it must leave to `compare`.
OUTPUTS = st.one_of(
    FLOATS,
    st.lists(FLOATS, min_size=1, max_size=4).map(lambda items: Seq("list", tuple(items))),
    VALUES,
)


def target(tol: Tolerance, mode: str, mutation: str) -> TargetSpec:
    return TargetSpec("t", 2.0, "matrix", ({},), compare=mode, tolerance=tol, mutation=mutation)


def answer_for(expected: Value, inputs: tuple[Value, ...], data: st.DataObject) -> Any:
    """One case's frame: the expected value (as is, perturbed, another value or another
    dtype), or an error, a timeout, no frame at all; arguments kept or changed."""
    kind = data.draw(st.sampled_from(["same", "same", "near", "other", "int", "error", "none"]))
    if kind == "none":
        return None
    if kind == "error":
        status = data.draw(st.sampled_from(["error", "timeout"]))
        return ResultFrame("t", 0, status, error={"type": "ValueError", "message": "no"})
    value: Value = expected
    if kind == "near":
        value = near(expected, data)
    elif kind == "other":
        value = data.draw(OUTPUTS)
    elif kind == "int" and isinstance(expected, np.ndarray):
        value = np.asarray(np.clip(np.nan_to_num(expected), -1e6, 1e6)).astype(np.int64)
    args = tuple(a.copy() + data.draw(st.sampled_from([0.0, 0.0, 1.0])) for a in inputs)
    return ResultFrame("t", 0, "ok", values={"value": value, "args": Seq("tuple", args)})


@PROPS
@given(
    st.lists(OUTPUTS, min_size=1, max_size=4),
    TOLERANCES,
    st.sampled_from(["exact", "squeeze"]),
    st.sampled_from(["fail", "allow"]),
    st.data(),
)
def test_judge_cases_is_judge_case_on_each_case(
    outputs: list[Value], tol: Tolerance, mode: str, mutation: str, data: st.DataObject
) -> None:
    spec = target(tol, mode, mutation)
    inputs = tuple((np.ones((2, 2)) * i,) for i in range(len(outputs)))
    reference = Reference(tuple(outputs), inputs, ("x",))
    cases = tuple(Case("t", i, {}, inputs[i]) for i in range(len(outputs)))
    frames = [answer_for(out, inputs[i], data) for i, out in enumerate(outputs)]
    results = {("t", i): frame for i, frame in enumerate(frames) if frame is not None}
    over_time = data.draw(st.booleans())
    each = [
        judge_case(spec, c, reference, results.get(("t", c.index)), "gone", over_time)
        for c in cases
    ]
    assert judge_cases(spec, cases, reference, results, "gone", over_time) == each


@PROPS
@given(st.lists(OUTPUTS, min_size=1, max_size=4), TOLERANCES, st.data())
def test_all_pass_only_when_compare_passes_every_one(
    outputs: list[Value], tol: Tolerance, data: st.DataObject
) -> None:
    got = [data.draw(st.one_of(st.just(o), st.builds(lambda o=o: near(o, data)))) for o in outputs]
    flat = flatten(outputs)
    if flat is not None and all_pass(flat, got, tol):
        for mode in ("exact", "squeeze"):
            assert all(compare(o, g, mode, tol).ok for o, g in zip(outputs, got, strict=True))


def test_a_passing_target_is_judged_without_comparing_case_by_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outputs = (np.full((2, 2), 2.0), Seq("list", (np.ones(3), np.zeros((1, 2)))))
    inputs = ((np.ones((2, 2)),), (np.ones((2, 2)),))
    reference = Reference(outputs, inputs, ("x",))
    cases = tuple(Case("t", i, {}, inputs[i]) for i in range(2))
    results = {
        ("t", i): ResultFrame(
            "t", i, "ok", values={"value": outputs[i], "args": Seq("tuple", inputs[i])}
        )
        for i in range(2)
    }
    results[("t", 0)].values["value"] = np.full((2, 2), 2.0 + 1e-12)  # close, not the same

    def no_compare(*args: object) -> None:
        raise AssertionError("compared case by case")

    monkeypatch.setattr(score, "compare", no_compare)
    spec = target(Tolerance(), "exact", "fail")
    outcomes = judge_cases(spec, cases, reference, results, "gone")
    assert [o.kind for o in outcomes] == ["passed", "passed"]
    assert reference.flat_outputs((0, 1)) is reference.flat_outputs((0, 1))  # made once


# Arguments as cases build them: arrays, and sequences of them (an argument that is not an
# array, against an array sent back, is left out: `identical` cannot say it at all).
ARRAYS = st.recursive(
    FLOATS,
    lambda inner: st.builds(
        Seq, st.sampled_from(["list", "tuple"]), st.lists(inner, max_size=3).map(tuple)
    ),
    max_leaves=5,
)
ARGUMENTS = st.lists(ARRAYS, max_size=3).map(tuple)


def changed(value: Value, data: st.DataObject) -> Value:
    """The same argument, or one changed as a call can: its numbers, its shape, its kind,
    or one of its items."""
    how = data.draw(st.sampled_from(["same", "near", "other", "kind", "shape", "inside"]))
    if how == "inside" and isinstance(value, Seq) and value.items:
        at = data.draw(st.integers(0, len(value.items) - 1))
        items = tuple(changed(v, data) if i == at else v for i, v in enumerate(value.items))
        return Seq(value.kind, items)
    if how == "near":
        return near(value, data)
    if how == "other":
        return data.draw(ARRAYS)
    if how == "kind" and isinstance(value, Seq):
        return Seq("tuple" if value.kind == "list" else "list", value.items)
    if how == "shape" and isinstance(value, np.ndarray):
        return value.reshape(-1)
    return value


@PROPS
@given(ARGUMENTS, st.data())
def test_changed_arguments_from_kept_tokens_is_identical_on_each(
    inputs: tuple[Value, ...], data: st.DataObject
) -> None:
    after = Seq("tuple", tuple(changed(value, data) for value in inputs))
    values = {"args": after}
    each = [
        i for i, (k, g) in enumerate(zip(inputs, after.items, strict=True)) if not identical(k, g)
    ]
    assert changed_arguments(inputs, values, tokens(inputs)) == each
    assert changed_arguments(inputs, values) == each


def test_kept_tokens_tell_every_change_identical_tells() -> None:
    # Changes that keep every byte (a reshape, another kind of sequence, at any depth), or
    # keep the shapes: the tokens must tell each of them, as `identical` does.
    square = np.arange(4.0).reshape(2, 2)
    kept = (Seq("list", (square, Seq("tuple", (square,)))), square)
    changes = [
        Seq("list", (square.reshape(-1), Seq("tuple", (square,)))),
        Seq("list", (square, Seq("list", (square,)))),
        Seq("list", (square, Seq("tuple", (square.T.copy(),)))),
        Seq("tuple", (square, Seq("tuple", (square,)))),
        Seq("list", (square, Seq("tuple", (square, square)))),
        square.reshape(4, 1),
        square.T.copy(),
        square,
    ]
    for first in changes:
        for second in changes[-3:]:
            after = Seq("tuple", (first, second))
            each = [
                i
                for i, (k, g) in enumerate(zip(kept, after.items, strict=True))
                if not identical(k, g)
            ]
            assert changed_arguments(kept, {"args": after}, tokens(kept)) == each


@pytest.mark.parametrize("kept", [None, Other("str")], ids=["None", "other"])
def test_an_array_forged_in_place_of_an_input_that_is_not_one_is_a_change(kept: Value) -> None:
    """A child may send back anything as its arguments: an array where the input was None or
    not numbers is a changed argument, never a grader fault (`None == array` is an array)."""
    forged = np.arange(3.0)
    assert not identical(kept, forged)
    assert identical(kept, kept)
    after = {"args": Seq("list", (forged, np.ones(2)))}
    assert changed_arguments([kept, np.ones(2)], after) == [0]
