"""judge/relations.py called directly on small arrays (no child process)."""

from __future__ import annotations

import numpy as np

from grader.course.config import Tolerance
from grader.judge.relations import (
    constant_factor,
    differing_lines,
    dropped_axis,
    elementwise_not_matmul,
    ignored_inputs,
    matmul_sizes,
    only_some_sizes,
    optional_argument,
    repeated_items,
    rows_as_first,
    singleton_dimensions,
    size_factor,
    sums_to_one,
)

TOL = Tolerance()
EXPECTED = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_constant_factor_names_one_factor_or_one_per_case() -> None:
    same = constant_factor([(2 * EXPECTED, EXPECTED), (2 * EXPECTED[:1], EXPECTED[:1])], TOL)
    assert same == "off by a constant factor: every entry is 2 × the expected value"
    varying = constant_factor([(2 * EXPECTED, EXPECTED), (0.5 * EXPECTED, EXPECTED)], TOL)
    assert (
        varying == "off by a factor that changes from case to case (×2, 0.5 in the cases in turn)"
    )


def test_a_varying_factor_is_said_to_depend_on_the_size_only_when_the_sizes_show_it() -> None:
    # issue 19's leftovers, item 4: the words were "depends on the input size" for any
    # factor that changed between cases, the cosine's norm of the data included
    pairs = [(f * EXPECTED, EXPECTED) for f in (2.0, 2.0, 3.0)]
    by_size = constant_factor(pairs, TOL, [{"n": 2}, {"n": 2}, {"n": 3}])
    assert by_size is not None and "depends on the input size" in by_size  # one per size
    counted = constant_factor(pairs[::2], TOL, [{"n": 2}, {"n": 3}])
    assert counted is not None and "depends on the input size" in counted  # the factor is n
    pairs = [(f * EXPECTED, EXPECTED) for f in (2.0, 5.0, 3.0)]
    data = constant_factor(pairs, TOL, [{"n": 2}, {"n": 2}, {"n": 3}])
    assert data is not None and "depends on the data" in data  # one size, two factors
    assert "input size" not in data
    unproven = constant_factor(pairs[1:], TOL, [{"n": 2}, {"n": 3}])  # 5 and 3: none of n
    assert unproven is not None and "none of the sizes" in unproven
    assert "input size" not in unproven


def test_constant_factor_stays_silent_when_there_is_none() -> None:
    assert constant_factor([(EXPECTED, EXPECTED)], TOL) is None  # factor 1: right
    assert constant_factor([(EXPECTED + 1, EXPECTED)], TOL) is None  # not proportional
    assert constant_factor([(EXPECTED.T[:1], EXPECTED)], TOL) is None  # other shape
    assert constant_factor([(EXPECTED, np.zeros((2, 2)))], TOL) is None  # nothing to scale
    assert constant_factor([], TOL) is None


def test_sums_to_one_checks_the_axis_asked_for() -> None:
    rows = np.array([[0.25, 0.75], [0.5, 0.5]])  # each row sums to one, the columns do not
    assert sums_to_one(rows, "rows") is None
    assert sums_to_one(rows, "columns") == (
        "the rows sum to one instead of the columns: normalise each of the columns"
    )
    assert sums_to_one(np.ones((2, 2)), "rows") == ("the rows do not sum to one (sums from 2 to 2)")
    assert sums_to_one(np.full(4, 0.25), "all") is None
    assert sums_to_one(np.ones(4), "all") == "the weights sum to 4, not to one"
    assert sums_to_one(np.ones(3), "rows") is None  # not a matrix: nothing to say


def test_only_some_sizes_finds_the_notebooks_size() -> None:
    sizes = [{"D": 4, "N": 2}, {"D": 3, "N": 2}, {"D": 4, "N": 5}]
    found = only_some_sizes([True, False, True], sizes, {"N": 2, "D": 4})
    assert found is not None and found.startswith("right only in the cases where D = 4,")
    assert only_some_sizes([True, True, True], sizes, {"D": 4}) is None
    assert only_some_sizes([False, False, False], sizes, {"D": 4}) is None
    assert only_some_sizes([True, False, False], sizes, {"D": 4}) is None  # no size fits


def test_ignored_inputs_names_the_arguments_that_should_matter() -> None:
    base = np.zeros(3)
    probes = {0: np.ones(3), 1: np.zeros(3), 2: np.ones(3)}
    # The student's output did not move for arguments 0 and 1; the reference's moved for 0.
    assert ignored_inputs(("q", "k", "v"), {0, 1}, base, probes) == (
        "ignores `q`: changing it does not change the output, but it should"
    )
    assert ignored_inputs(("q", "k", "v"), {1}, base, probes) is None
    assert ignored_inputs(("q", "k", "v"), {0, 2}, base, probes) == (
        "ignores `q`, `v`: changing any of them does not change the output, but it should"
    )


def test_differing_lines_names_the_wrong_rows_or_columns() -> None:
    got = EXPECTED.copy()
    got[:, 1] += 1
    assert differing_lines(got, EXPECTED, TOL) == (
        "only columns 1 differ; the others are right: look at how column 1 is computed "
        "(an index that is off)"
    )
    got = EXPECTED.copy()
    got[0, :] += 1
    assert differing_lines(got, EXPECTED, TOL) == (
        "only rows 0 differ; the others are right: look at how row 0 is computed "
        "(an index that is off)"
    )
    assert differing_lines(EXPECTED + 1, EXPECTED, TOL) is None  # everything differs
    assert differing_lines(EXPECTED, EXPECTED, TOL) is None
    assert differing_lines(np.ones(2), np.ones(2), TOL) is None


def test_singleton_dimensions() -> None:
    assert singleton_dimensions(np.ones((1, 3)), np.ones(3)) == (
        "the shape (1, 3) differs from (3,) only by size-1 dimensions: reshape the result to (3,)"
    )
    assert singleton_dimensions(np.ones(3), np.ones(3)) is None
    assert singleton_dimensions(np.ones((3, 1)), np.ones((1, 4))) is None
    assert singleton_dimensions(np.ones((2, 3)), np.ones((3, 2))) is None


def test_nan_where_zero_is_expected_says_zero_times_inf() -> None:
    from grader.judge.relations import nan_where_finite

    expected = np.array([[0.0, -np.inf], [0.0, 0.0]])
    got = np.array([[np.nan, -np.inf], [np.nan, np.nan]])
    said = nan_where_finite(got, expected)
    assert said is not None and "3 entries" in said and "`0 * inf`" in said
    assert nan_where_finite(expected.copy(), expected) is None
    other = nan_where_finite(np.array([np.nan, 1.0]), np.array([2.0, 1.0]))
    assert other is not None and "where a finite value is expected" in other


def test_what_a_wrong_shape_or_order_says() -> None:
    from grader.judge.relations import shape_relations

    column = np.arange(1.0, 5.0).reshape(4, 1)
    square = column + np.zeros(4)  # a 4×1 column plus a length-4 vector
    square[np.diag_indices(4)] = column[:, 0]
    (said,) = shape_relations(square, column)
    assert "4×1 column and a length-4 vector" in said and "its diagonal holds" in said
    (said,) = shape_relations(np.array(3.0), np.ones((2, 3)))
    assert said.startswith("returns one number where an array of shape (2, 3)")
    expected = np.arange(6.0).reshape(3, 2)
    (said,) = shape_relations(expected[[2, 0, 1]], expected)
    assert "the right rows in another order (the expected 2, 0, 1 in turn)" in said
    mask = np.array([[0.0, -np.inf], [0.0, 0.0]])
    (said,) = shape_relations(np.where(np.isinf(mask), -1e9, mask), mask)
    assert said.startswith("a large finite number (-1e+09) where ±inf is expected")
    assert shape_relations(expected + 1, expected) == []


def test_a_sum_without_axis_and_a_pattern_of_wrong_lines() -> None:
    e = np.exp(np.arange(6.0).reshape(2, 3))
    said = sums_to_one(e / e.sum(), "columns")
    assert said is not None and said.startswith("the whole matrix sums to one")
    expected = np.zeros((3, 4))
    got = expected.copy()
    got[:, 2:] = 1
    said = differing_lines(got, expected, Tolerance())
    assert said == (
        "only columns 2, 3 differ; the others are right: the last columns are wrong, "
        "as when a loop or slice stops early"
    )


def test_dropped_axis_reads_numpys_broadcast_error() -> None:
    def message(a: tuple[int, ...], b: tuple[int, ...]) -> str:
        try:
            np.ones(a) / np.ones(b)
        except ValueError as error:
            return str(error)
        raise AssertionError(f"{a} and {b} broadcast")

    said = dropped_axis(message((5, 6), (5,)))
    assert said is not None
    assert said.startswith("shapes (5, 6) and (5,) do not line up")
    assert "axis 1" in said and "`keepdims=True`" in said and "(5, 1)" in said
    middle = dropped_axis(message((2, 5, 6), (2, 5)))
    assert middle is not None and "axis 2" in middle and "(2, 5, 1)" in middle
    assert dropped_axis(message((5, 6), (6, 5))) is None  # not one axis fewer
    assert dropped_axis(message((5, 6), (4,))) is None
    assert dropped_axis("name 'L' is not defined") is None
    # A column softmax summed along the rows was told to keep that (wrong) axis.
    columns = dropped_axis(message((3, 4), (3,)), "columns")
    assert columns is not None and "each row" not in columns
    assert columns.endswith("`axis=0, keepdims=True`")
    assert "(5, 1)" in (dropped_axis(message((5, 6), (5,)), "rows") or "")


def test_rows_that_all_equal_the_first_are_said_to_ignore_the_loop() -> None:
    expected = np.arange(12.0).reshape(4, 3)
    same = np.repeat(expected[:1], 4, axis=0)  # row 0 right, every row a copy of it
    said = differing_lines(same, expected, TOL)
    assert said is not None and said.startswith("only rows 1, 2, 3 differ")
    assert "every row equals row 0" in said
    stopped = expected.copy()
    stopped[1:] = 0  # the rows a loop that stops early leaves at zero
    other = differing_lines(stopped, expected, TOL)
    assert other is not None and "every row equals" not in other
    assert rows_as_first(same, expected, TOL)
    assert not rows_as_first(stopped, expected, TOL)
    assert not rows_as_first(expected, expected, TOL)  # nothing wrong
    assert not rows_as_first(same + 1, expected, TOL)  # row 0 wrong too


def test_repeated_items_needs_the_square_of_the_length() -> None:
    said = repeated_items(9, 3)
    assert said is not None and said.startswith("9 items where 3 are expected (3 × 3)")
    assert repeated_items(6, 3) is None
    assert repeated_items(1, 1) is None  # one item: its square says nothing


def test_matmul_sizes_reads_numpys_matrix_product_errors() -> None:
    def message(product: str) -> str:
        left, right = np.ones((4, 4)), np.ones((2, 3))
        try:
            left @ right if product == "@" else left.dot(right)
        except ValueError as error:
            return str(error)
        raise AssertionError("the sizes fit")

    said = matmul_sizes(message("@"))
    assert said is not None
    assert said.startswith("a matrix product `A @ B` met a left side with 4 columns and a right")
    assert "with 2 rows;" in said
    dot = matmul_sizes(message("dot"))
    assert dot is not None and "4 columns" in dot and "2 rows (shapes (4,4) and (2,3))" in dot
    assert matmul_sizes("operands could not be broadcast together with shapes (5,6) (5,)") is None


def test_an_elementwise_product_that_fits_a_matrix_product_is_told_to_use_matmul() -> None:
    error = "operands could not be broadcast together with shapes (4,3) (3,3) "
    said = elementwise_not_matmul(error, "    return values * attention")
    assert said is not None and "write `@`" in said and "(4, 3) and (3, 3)" in said
    # not on a line without `*`, not for `**`, not for sizes no product takes
    assert elementwise_not_matmul(error, "    return values + attention") is None
    assert elementwise_not_matmul(error, "    return values ** attention") is None
    other = "operands could not be broadcast together with shapes (4,3) (4,4) "
    assert elementwise_not_matmul(other, "    return a * b") is None
    vectors = "operands could not be broadcast together with shapes (4,) (3,) "
    assert elementwise_not_matmul(vectors, "    out = out * w") is None


def test_failing_exactly_where_an_argument_is_left_out_or_a_flag_is_set_is_said() -> None:
    params = ("q", "k", "mask")
    args = [(1, 2), (1, 2, "m"), (1, 2), (1, 2, "m")]
    assert optional_argument([False, True, False, True], args, params) == ("mask", "left out")
    assert optional_argument([True, False, True, False], args, params) == ("mask", "given")
    flags = [(1, True), (1, False), (1,), (1, False)]
    assert optional_argument([True, False, True, False], flags, ("x", "scaled")) == (
        "scaled",
        "False",
    )
    # every case fails, or the failing ones are no group of one argument: nothing to say
    assert optional_argument([False] * 4, args, params) is None
    assert optional_argument([False, False, True, True], args, params) is None


def test_a_factor_equal_to_a_size_in_every_case_is_named() -> None:
    vector = np.array([1.0, 2.0, 3.0])
    pairs = [(3 * vector, vector), (7 * vector, vector)]
    said = size_factor(pairs, [{"N": 3}, {"N": 7}], TOL)
    assert said is not None and said.startswith("the factor is N in every case (N = 3, 7)")
    shrunk = [(vector / 2, vector), (vector / 5, vector)]
    assert (size_factor(shrunk, [{"N": 4, "D": 2}, {"N": 4, "D": 5}], TOL) or "").startswith(
        "the factor is 1/D in every case"
    )
    # a factor that is no size, or sizes the same in every case: nothing to say
    assert (
        size_factor([(2 * vector, vector), (3 * vector, vector)], [{"N": 3}, {"N": 7}], TOL) is None
    )
    assert (
        size_factor([(3 * vector, vector), (3 * vector, vector)], [{"N": 3}, {"N": 3}], TOL) is None
    )


def test_rows_or_columns_are_said_wrong_only_in_a_pattern_every_case_shows() -> None:
    """r43/r44: the pattern of case 1 alone was said ("only columns 1, 2, 3 differ …, as when
    a loop or slice stops early" of a leaky ReLU whose wrong negative entries fell there by
    chance; "look at how column 3 is computed" where each case's last column was wrong)."""
    from grader.judge.relations import lines_in_every_case

    def last_column_wrong(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
        want = np.arange(rows * cols, dtype=float).reshape(rows, cols) + 1
        got = want.copy()
        got[:, -1] = 0
        return got, want

    tol = TOL
    sizes = [last_column_wrong(3, 4), last_column_wrong(5, 2), last_column_wrong(2, 6)]
    assert lines_in_every_case(sizes, tol) == (
        "only the last column differs in every case; the others are right, "
        "as when a loop or slice stops early"
    )
    assert lines_in_every_case(sizes, tol, looped=False) == (
        "only the last column differs in every case; the others are right"
    )
    # the same columns of cases of one size: case 1's words, which name them
    same = [last_column_wrong(3, 4), last_column_wrong(5, 4)]
    said = lines_in_every_case(same, tol)
    assert said is not None and said.startswith("only columns 3 differ")
    # wrong in other places in each case: chance, not said
    chance = [last_column_wrong(3, 4)]
    want = np.ones((5, 2))
    got = want.copy()
    got[1, :] = 0  # rows, not columns
    chance.append((got, want))
    assert lines_in_every_case(chance, tol) is None
    assert lines_in_every_case(chance[:1], tol) is not None  # one case: its own pattern
