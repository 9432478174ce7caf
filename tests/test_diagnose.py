"""Every catalogued mistake, written by hand in student style, is named where the code shows it.

The notebooks in tests/notebooks/self_attention/ are a correct student notebook with one
function rewritten the wrong way; the cell numbers below count the markdown title as cell 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import Location, Report, TargetResult

import students
from conftest import REPO, NotebookFactory

NOTEBOOKS = REPO / "tests" / "notebooks" / "self_attention"

# (notebook, target, mistake ids, cell, line) — cells: 3 qkv_loop, 4 softmax,
# 5 attention_loop, 6 softmax_cols, 7 self_attention, 8 scaled_dot_product_self_attention.
CASES = [
    ("missing_bias", "qkv_loop", ["missing_bias"], 3, 4),
    ("elementwise_product", "qkv_loop", ["elementwise_product"], 3, 7),
    ("softmax_no_exp", "softmax", ["softmax_no_exp"], 4, 1),
    ("sum_of_raw_scores", "softmax", ["sum_of_raw_scores"], 4, 2),
    ("softmax_wrong_axis", "softmax_cols", ["softmax_wrong_axis"], 6, 3),
    ("attention_transposed", "self_attention", ["attention_transposed"], 7, 5),
    ("softmax_over_queries", "self_attention", ["softmax_over_queries"], 7, 5),
    ("scale_in_unscaled", "self_attention", ["scale_in_unscaled"], 7, 6),
    ("output_transposed", "self_attention", ["output_transposed"], 7, 8),
    ("returns_tuple", "self_attention", ["returns_tuple"], 7, 8),
    ("scale_discarded", "scaled_dot_product_self_attention", ["scale_discarded"], 8, 7),
    ("scale_missing", "scaled_dot_product_self_attention", ["scale_missing"], 8, 1),
    ("scale_hardcoded", "scaled_dot_product_self_attention", ["scale_hardcoded"], 8, 6),
    ("scale_by_d", "scaled_dot_product_self_attention", ["scale_by_d"], 8, 7),
    ("scale_wrong_dim", "scaled_dot_product_self_attention", ["scale_wrong_dim"], 8, 7),
    ("uses_global", "scaled_dot_product_self_attention", ["uses_global"], 8, 6),
    ("mutates_input", "softmax_cols", ["mutates_input"], 6, 3),
    ("not_implemented", "softmax_cols", ["not_implemented"], 6, 1),
]


# Rows-convention notebooks (seeds 000 and 002 style): cells 3 causal_mask, 4 softmax,
# 5 scaled_dot_product_attention.
MASKED = [
    ("mask_not_neg_inf", "causal_mask", ["mask_not_neg_inf"], 3, 2),
    ("mask_wrong_triangle", "causal_mask", ["mask_wrong_triangle"], 3, 3),
    ("softmax_overflow", "softmax", ["softmax_overflow"], 4, 2),
    ("softmax_wrong_axis", "softmax", ["softmax_wrong_axis"], 4, 3),
    ("mutates_input", "softmax", ["mutates_input"], 4, 2),
    ("scale_missing", "scaled_dot_product_attention", ["scale_missing"], 5, 3),
    ("scale_wrong_dim", "scaled_dot_product_attention", ["scale_wrong_dim"], 5, 3),
    ("mask_after_softmax", "scaled_dot_product_attention", ["mask_after_softmax"], 5, 6),
    ("mask_truthiness", "scaled_dot_product_attention", ["mask_truthiness"], 5, 4),
    ("returns_tuple", "scaled_dot_product_attention", ["returns_tuple"], 5, 8),
]


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def one(config: Config, notebook: NotebookFactory, name: str, source: str) -> TargetResult:
    """Grade a correct student notebook with `name` rewritten as `source`."""
    return target(grade_path(notebook(students.cells(**{name: source})), config), name)


# Cell 2 holds the given helpers, cell 3 the student's multihead_scaled_self_attention.
MULTIHEAD = [
    ("scale_missing", "multihead_scaled_self_attention", ["scale_missing"], 3, 1),
    ("scale_wrong_dim", "multihead_scaled_self_attention", ["scale_wrong_dim"], 3, 9),
    ("output_transposed", "multihead_scaled_self_attention", ["output_transposed"], 3, 6),
    ("missing_bias", "multihead_scaled_self_attention", ["missing_bias"], 3, 3),
]
# Cells: 3 project_qkv, 4 stable_softmax, 5 word_attention, 6 sentence_attention,
# 7 cosine_similarity, 8 low_rank_approximation, 9 pointwise_mutual_information.
SENTENCE = [
    ("softmax_mutates_input", "stable_softmax", ["mutates_input"], 4, 2),
    ("softmax_overflow", "stable_softmax", ["softmax_overflow"], 4, 2),
    ("softmax_wrong_axis", "stable_softmax", ["softmax_wrong_axis"], 4, 2),
    ("word_scale_missing", "word_attention", ["scale_missing"], 5, 1),
    ("word_scale_discarded", "word_attention", ["scale_discarded"], 5, 7),
    ("word_scale_in_unscaled", "word_attention", ["scale_in_unscaled"], 5, 6),
    ("word_scale_wrong_dim", "word_attention", ["scale_wrong_dim"], 5, 7),
    ("sentence_scale_missing", "sentence_attention", ["scale_missing"], 6, 1),
    ("sentence_scale_in_unscaled", "sentence_attention", ["scale_in_unscaled"], 6, 3),
    ("sentence_softmax_wrong_axis", "sentence_attention", ["softmax_wrong_axis"], 6, 5),
    ("attention_transposed", "sentence_attention", ["attention_transposed"], 6, 2),
    ("wrong_log_base", "pointwise_mutual_information", ["wrong_log_base"], 9, 3),
]
ALL_CASES = (
    [("self_attention", *c) for c in CASES]
    + [("masked_attention", *c) for c in MASKED]
    + [("multihead_attention", *c) for c in MULTIHEAD]
    + [("sentence_attention", *c) for c in SENTENCE]
)


@pytest.mark.parametrize(
    ("assignment", "notebook", "name", "ids", "cell", "line"),
    ALL_CASES,
    ids=[f"{c[0]}-{c[1]}" for c in ALL_CASES],
)
def test_hand_written_mistake_is_named_and_located(
    config: Config, assignment: str, notebook: str, name: str, ids: list[str], cell: int, line: int
) -> None:
    path = REPO / "tests" / "notebooks" / assignment / f"{notebook}.ipynb"
    report = grade_path(path, config)
    assert report.assignment == assignment
    result = target(report, name)
    assert result.status == ("error" if ids == ["mask_truthiness"] else "failed")
    assert list(result.mistakes) == ids
    assert result.location == Location(cell, line)
    assert len(result.messages) >= 2 and ids[0].replace("_", " ") not in result.messages[0]
    # Nothing else is blamed: targets that merely call the broken one are told to fix it first.
    for other in report.targets:
        if other.name != name:
            assert other.mistakes == ()
            if other.status != "passed":
                assert other.messages[1].startswith(f"fix `{name}` first")


@pytest.mark.parametrize(
    "assignment",
    ["self_attention", "masked_attention", "multihead_attention", "sentence_attention"],
)
def test_every_catalogued_id_has_a_notebook(config: Config, assignment: str) -> None:
    from grader.judge.fingerprints import catalogue_for

    catalogue_ids = {m.id for m in catalogue_for(config.assignment(assignment)).mistakes}
    table = [c[1:] for c in ALL_CASES if c[0] == assignment]
    covered = {ids[0] for _, _, ids, _, _ in table}
    assert catalogue_ids <= covered
    folder = REPO / "tests" / "notebooks" / assignment
    extra = {"correct", "cosine_missing_norm"}  # not catalogued: see the relation tests
    assert {p.stem for p in folder.glob("*.ipynb")} - extra == {c[0] for c in table}


@pytest.mark.parametrize(
    "assignment", ["masked_attention", "multihead_attention", "sentence_attention"]
)
def test_correct_student_notebook_passes(config: Config, assignment: str) -> None:
    path = REPO / "tests" / "notebooks" / assignment / "correct.ipynb"
    report = grade_path(path, config)
    assert report.assignment == assignment and report.score == report.max_score


def test_seed_001_is_reported_with_all_three_mistakes(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(scaled_dot_product_self_attention=students.SEED_001_SCALED))
    result = target(grade_path(path, config, "self_attention"), "scaled_dot_product_self_attention")
    assert result.mistakes == ("output_transposed", "scale_discarded", "scale_hardcoded")
    discarded = next(m for m in result.messages if "throws them away" in m)
    assert discarded.startswith("scale_discarded: cell 8, line 6: `all_km_qn / 2`")
    assert "all_km_qn = all_km_qn / 2" in discarded


def test_root_cause_is_proven_when_the_callee_explains_everything(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS))
    result = target(grade_path(path, config, "self_attention"), "self_attention")
    assert result.mistakes == ()
    assert "exactly what a correct version gives with your `softmax_cols`" in result.messages[1]


# Mistakes outside the catalogue: the message names a relation, never just "wrong".
UNKNOWN = [
    (
        "self_attention",
        students.SELF_ATTENTION.replace("return X_prime", "return 0.5 * X_prime"),
        "every entry is 0.5 × the expected value",
    ),
    (
        "self_attention",
        students.SELF_ATTENTION.replace("X_prime = values @ attention", "X_prime = X @ attention"),
        "ignores `omega_v`, `beta_v`",
    ),
    (
        "self_attention",
        students.SELF_ATTENTION.replace(
            "X_prime = values @ attention", "X_prime = values @ attention\n    X_prime[0] = 0"
        ),
        "only rows 0 differ",
    ),
]


@pytest.mark.parametrize(("name", "source", "words"), UNKNOWN, ids=["factor", "ignores", "rows"])
def test_unknown_mistakes_get_a_relation(
    config: Config, notebook: NotebookFactory, name: str, source: str, words: str
) -> None:
    result = target(grade_path(notebook(students.cells(**{name: source})), config), name)
    assert result.status == "failed"
    assert result.mistakes == ()
    assert any(words in m for m in result.messages), result.messages


def test_a_column_softmax_without_shift_summed_over_everything_is_named(
    config: Config, notebook: NotebookFactory
) -> None:
    # Among the unknown mistakes above until issue 19's leftovers (item 2): the pair of the
    # silent single (no max shift) and the sum without its axis now gives these numbers.
    source = "def softmax_cols(data_in):\n    e = np.exp(data_in)\n    return e / np.sum(e)\n"
    path = notebook(students.cells(softmax_cols=source))
    result = target(grade_path(path, config), "softmax_cols")
    assert result.status == "failed"
    assert "softmax_wrong_axis" in result.mistakes, result.messages


def test_a_mistake_no_catalogue_lists_is_named_from_a_mutant_of_the_reference(
    config: Config, notebook: NotebookFactory
) -> None:
    """Only the value bias left out: no catalogued variant does exactly that (the catalogue's
    missing_bias drops all three), but a mutant of the reference does, and says where."""
    source = students.SELF_ATTENTION.replace("beta_v + omega_v @ X", "omega_v @ X")
    result = one(config, notebook, "self_attention", source)
    assert result.status == "failed"
    assert result.mistakes == ("missing_bias",)
    assert "missing_bias: leaves out `+ beta_v` (computing `values`)" in result.messages[1]


def test_only_the_example_size_passes(config: Config, notebook: NotebookFactory) -> None:
    # Right by accident when each value has 4 rows, wrong otherwise; no catalogued variant.
    hard = students.ATTENTION_LOOP.replace(
        "all_x_prime.append(x_prime)", "all_x_prime.append(x_prime * 4 / len(x_prime))"
    )
    result = target(
        grade_path(notebook(students.cells(attention_loop=hard)), config), "attention_loop"
    )
    assert result.status == "failed" and result.mistakes == ()
    assert any("right only in the cases where D = 4" in m for m in result.messages)


def test_a_correct_function_gets_no_diagnosis(config: Config, tmp_path: Path) -> None:
    report = grade_path(REPO / "solutions" / "self_attention.ipynb", config)
    assert all(t.mistakes == () and t.status == "passed" for t in report.targets)


def test_discarded_expression_outside_scaling_is_pointed_at(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SELF_ATTENTION.replace(
        "X_prime = values @ attention\n    return X_prime",
        "values @ attention\n    return values",
    )
    result = target(
        grade_path(notebook(students.cells(self_attention=source)), config), "self_attention"
    )
    assert any(
        m.startswith("cell 7, line 7: `values @ attention` is computed and thrown away")
        for m in result.messages
    ), result.messages


def test_returning_a_global_is_pointed_at(config: Config, notebook: NotebookFactory) -> None:
    source = students.SELF_ATTENTION.replace(
        "X_prime = values @ attention\n", "values @ attention\n"
    )
    cells = students.cells(self_attention=source)
    cells.insert(1, "X_prime = np.zeros((4, 3))")
    result = target(grade_path(notebook(cells), config), "self_attention")
    assert result.mistakes == ("uses_global",)
    assert any("returns the notebook's global `X_prime`" in m for m in result.messages)


def test_extra_size_one_dimensions_are_named(config: Config, notebook: NotebookFactory) -> None:
    source = students.SELF_ATTENTION.replace("return X_prime", "return X_prime[:, :, None]")
    result = target(
        grade_path(notebook(students.cells(self_attention=source)), config), "self_attention"
    )
    assert any("only by size-1 dimensions" in m for m in result.messages), result.messages


def test_a_mistake_in_one_element_of_a_tuple_is_named(
    config: Config, notebook: NotebookFactory
) -> None:
    result = one(config, notebook, "qkv_loop", students.ELEMENTWISE)  # queries only
    assert result.mistakes == ("elementwise_product",)
    assert result.messages[1] == "only element [0] of the returned tuple is wrong"


def test_cosine_without_one_norm_gets_a_factor_relation(config: Config) -> None:
    path = REPO / "tests" / "notebooks" / "sentence_attention" / "cosine_missing_norm.ipynb"
    result = target(grade_path(path, config), "cosine_similarity")
    assert result.status == "failed" and result.mistakes == ()
    # a norm of the data, not a size: the words were "depends on the input size" before
    # issue 19's leftovers (item 4) made them say so only when the sizes show it
    assert "off by a factor that changes from case to case" in result.messages[1]
    assert "none of the sizes" in result.messages[1] and "input size" not in result.messages[1]


def test_a_callee_that_makes_the_caller_raise_is_the_root_cause(config: Config) -> None:
    path = REPO / "tests" / "notebooks" / "sentence_attention" / "softmax_wrong_axis.ipynb"
    result = target(grade_path(path, config), "word_attention")
    assert result.status == "error" and result.mistakes == ()
    assert result.messages[1].startswith("fix `stable_softmax` first")


@pytest.mark.parametrize(
    ("name", "source", "line"),
    [
        (
            "softmax_cols",
            "def softmax_cols(data_in):\n"
            "    exp_values = np.exp(data_in)\n"
            "    return exp_values / np.sum(data_in, axis=0, keepdims=True)\n",
            3,
        ),
    ],
)
def test_a_softmax_summing_the_raw_scores_is_told_so_at_its_sum(
    config: Config, notebook: NotebookFactory, name: str, source: str, line: int
) -> None:
    """r54 sa02 (softmax: the notebook `sum_of_raw_scores`): told as a pair, "uses one
    computed value where another is meant" at the return and the max shift left out (which
    changes no number here)."""
    result = one(config, notebook, name, source)
    assert result.mistakes == ("sum_of_raw_scores",), result.messages
    assert result.location is not None and result.location.line == line
    said = next(f for f in result.findings if f.mistake == "sum_of_raw_scores").message
    assert "sum of the raw scores" in said or "sums of the raw scores" in said
