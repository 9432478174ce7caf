"""Comparison verdicts and the words they use."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from grader.course.config import Tolerance
from grader.judge.compare import compare, stack
from grader.judge.reference import normalise
from grader.run.wire import Seq

TOL = Tolerance(rtol=1e-5, atol=1e-8)
EXPECTED = np.arange(12.0).reshape(4, 3) + 1


def check(expected: object, got: object, mode: str = "exact") -> tuple[bool, str]:
    verdict = compare(normalise(expected), normalise(got), mode, TOL)
    return verdict.ok, verdict.message


@pytest.mark.parametrize(
    ("got", "mode", "ok", "words"),
    [
        (EXPECTED.copy(), "exact", True, ""),
        (EXPECTED * (1 + 1e-9), "exact", True, ""),
        (EXPECTED.T, "exact", False, "shape (3, 4), expected (4, 3) (the transposed shape)"),
        (EXPECTED.reshape(2, 6), "exact", False, "same number of entries, arranged differently"),
        (EXPECTED[:, :2], "exact", False, "shape (4, 2), expected (4, 3)"),
        (np.where(EXPECTED == 5, np.nan, EXPECTED), "exact", False, "1 of 12 entries are NaN"),
        (EXPECTED * 2, "exact", False, "12 of 12 entries differ (max abs difference 12"),
        (None, "exact", False, "returned None: is the `return` statement missing?"),
        ("a string", "exact", False, "returned a str, not numbers"),
        ([EXPECTED[0], EXPECTED[1, :2]], "exact", False, "do not stack into one array"),
        (list(EXPECTED), "exact", True, ""),
    ],
    ids=[
        "equal",
        "within-tol",
        "transposed",
        "reshaped",
        "wrong-shape",
        "nan",
        "factor",
        "none",
        "string",
        "ragged",
        "list-of-rows",
    ],
)
def test_array_verdicts(got: object, mode: str, ok: bool, words: str) -> None:
    verdict_ok, message = check(EXPECTED, got, mode)
    assert verdict_ok is ok
    assert words in message


def test_first_differing_entry_is_named() -> None:
    got = EXPECTED.copy()
    got[2, 1] = -1
    ok, message = check(EXPECTED, got)
    assert not ok
    assert "1 of 12 entries differ" in message
    assert "first at index (2, 1): got -1, expected 8" in message


def test_no_relative_difference_is_measured_against_an_expected_zero() -> None:
    # r43: a ReLU's expected zeros gave "max rel difference 2.92e+300" (divided by 1e-300).
    expected = np.array([[0.0, 2.0], [0.0, 4.0]])
    only_zeros = np.array([[0.5, 2.0], [-0.25, 4.0]])
    ok, message = check(expected, only_zeros)
    assert not ok and "(max abs difference 0.5, where 0 is expected)" in message
    both = np.array([[0.5, 2.0], [0.0, 5.0]])
    ok, message = check(expected, both)
    assert not ok and "(max abs difference 1, max rel difference 0.25)" in message


def test_squeeze_accepts_the_allowed_softmax_shapes() -> None:
    weights = np.array([0.2, 0.3, 0.5])
    for got in (weights.reshape(3, 1), weights.reshape(3, 1, 1), list(weights)):
        assert check(weights, got, "squeeze")[0]
    assert not check(weights, weights.reshape(3, 1), "exact")[0]


def test_sequences_are_compared_item_by_item_with_a_path() -> None:
    expected = ([np.ones((2, 1))] * 2, [np.zeros((2, 1))] * 2)
    got = [[np.ones((2, 1))] * 2, [np.zeros((2, 1)), np.zeros((3, 1))]]
    ok, message = check(expected, got)
    assert not ok
    assert message == "element [1][1]: shape (3, 1), expected (2, 1)"
    assert (
        check(expected, ([np.ones((2, 1))] * 2,))[1]
        == "returned a tuple of 1 items, expected 2 items"
    )


def test_sequences_pass_at_once_exactly_when_every_item_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = np.ones((2, 1)), np.full((2, 1), 2.0)
    near = a * (1 + 1e-7)
    pairs = [
        ([a, [b]], [a, [b]]),
        ([a, [b]], [[a], b]),  # same arrays, the nesting moved: not the same structure
        ((a, b), [a, b]),  # a tuple for a list is fine item by item
        ([a, b], [near, b]),
        ([a, b], [a * 1.001, b]),
        ([a, b], [a, np.where(b > 0, np.inf, b)]),
        ([np.full((1,), np.inf)], [np.full((1,), np.inf)]),  # equal infinities: item by item
        ([a, b], [a, b.T]),
        ([a, b], [a, b, b]),
        ([a, None], [a, None]),
        ([], []),
    ]
    quick = [compare(normalise(e), normalise(g), "exact", TOL).ok for e, g in pairs]
    monkeypatch.setattr("grader.judge.compare._all_within", lambda *args: False)
    slow = [compare(normalise(e), normalise(g), "exact", TOL).ok for e, g in pairs]
    assert quick == slow
    assert slow == [True, False, True, True, False, False, True, False, False, False, True]


def test_a_sequence_is_stacked_once_and_its_stack_never_pickled() -> None:
    # The diagnosis compares one answer with a thousand variants: a student's list of
    # 60,000 items was stacked again for each (6 s of the grader's CPU for one notebook).
    items = Seq("list", tuple(np.full((2, 1), float(i)) for i in range(5)))
    first = stack(items)
    assert first is not None and first.shape == (5, 2, 1)
    assert stack(items) is first
    copied = pickle.loads(pickle.dumps(items))
    assert "_stacked" not in copied.__dict__ and np.array_equal(stack(copied), first)
    # the first item that is no array ends it: None, as before
    assert stack(Seq("list", (np.ones(2), None, np.ones(2)))) is None
    assert stack(Seq("list", (np.ones(2), np.ones(3)))) is None
    assert stack(Seq("tuple", ())) is not None


def test_items_that_do_not_stack_are_named_in_the_order_returned() -> None:
    # r52 S6: (7, 2), (2,), (2, 5) was said as "((2, 5), (2,), (7, 2))", sorted as text
    got = Seq("tuple", (np.ones((7, 2)), np.ones(2), np.ones((2, 5)), np.ones(2)))
    verdict = compare(EXPECTED, got, "exact", Tolerance())
    assert not verdict.ok
    assert verdict.message.endswith("do not stack into one array ((7, 2), (2,), (2, 5))")
