"""Mistakes no catalogue lists, in the masked (rows) notebook: what the grader says comes from
the outputs and the student's own code, and never points at a cause the code cannot have."""

from __future__ import annotations

from pathlib import Path

import nbformat

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory

CORRECT = REPO / "tests" / "notebooks" / "masked_attention" / "correct.ipynb"


def graded(
    tmp_path: Path, config: Config, name: str, old: str, new: str, source: Path = CORRECT
) -> TargetResult:
    """The notebook `source` (the correct masked one) with `old` replaced by `new`, graded as
    a student's; `name`'s result."""
    notebook = nbformat.read(source, as_version=4)
    changed = [c for c in notebook.cells if old in c.source]
    assert len(changed) == 1, old
    changed[0].source = changed[0].source.replace(old, new)
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config)
    return next(t for t in report.targets if t.name == name)


SIZES = "right only in the cases where"


def test_a_softmax_without_keepdims_is_told_to_keep_the_axis(
    tmp_path: Path, config: Config
) -> None:
    # The vector case (case 1) passes, the matrices raise: that is no hard-coded size.
    old = "e / np.sum(e, axis=-1, keepdims=True)"
    result = graded(tmp_path, config, "softmax", old, "e / np.sum(e, axis=-1)")
    assert result.status == "error" and result.case_outcomes[0] == "passed"
    assert not any(SIZES in m for m in result.messages), result.messages
    assert any(
        m.startswith("shapes (5, 6) and (5,) do not line up") and "keepdims=True" in m
        for m in result.messages
    ), result.messages


def test_a_softmax_summed_over_everything_is_not_blamed_on_a_size(
    tmp_path: Path, config: Config
) -> None:
    # Both the max and the sum lost their axis: the max's is silent (a softmax is the same
    # whatever it subtracts), so since issue 19's leftovers (item 2) the pair of the two
    # mutants names it; never a size.
    old = (
        "np.max(x, axis=-1, keepdims=True)\n    e = np.exp(x - x_max)\n"
        "    return e / np.sum(e, axis=-1, keepdims=True)"
    )
    new = "np.max(x)\n    e = np.exp(x - x_max)\n    return e / np.sum(e)"
    result = graded(tmp_path, config, "softmax", old, new)
    assert result.status == "failed" and result.case_outcomes[0] == "passed"
    assert result.mistakes == ("softmax_wrong_axis",), result.messages
    assert not any(SIZES in m for m in result.messages), result.messages


def test_a_size_written_as_the_example_number_is_still_said(tmp_path: Path, config: Config) -> None:
    # The same pattern of passing cases, with a 4 in the code: now the size is the likely cause.
    old = "e / np.sum(e, axis=-1, keepdims=True)"
    new = "e / np.sum(e, axis=-1, keepdims=True) * 4 / len(e)"
    result = graded(tmp_path, config, "softmax", old, new)
    assert result.status != "passed" and result.case_outcomes[0] == "passed"
    assert any(f"{SIZES} L = 4" in m for m in result.messages), result.messages


def test_nan_in_the_first_item_of_a_pair_is_explained(tmp_path: Path, config: Config) -> None:
    # The mask multiplied in: 0 × -inf and inf − inf give NaN in `out` of `(out, attention)`.
    old = "scaled = scaled + mask"
    result = graded(tmp_path, config, "scaled_dot_product_attention", old, "scaled = scaled * mask")
    assert result.status == "failed" and result.mistakes == ()
    assert any(m.startswith("NaN in ") for m in result.messages), result.messages


def test_an_append_inside_the_inner_loop_is_found_from_the_length(
    config: Config, notebook: NotebookFactory
) -> None:
    inner = students.ATTENTION_LOOP.replace(
        "            x_prime = x_prime + all_values[m] * attention[m]\n        all_x_prime",
        "            x_prime = x_prime + all_values[m] * attention[m]\n            all_x_prime",
    )
    assert inner != students.ATTENTION_LOOP
    report = grade_path(notebook(students.cells(attention_loop=inner)), config)
    result = next(t for t in report.targets if t.name == "attention_loop")
    assert result.status == "failed" and result.mistakes == ()
    assert any(m.startswith("9 items where 3 are expected") for m in result.messages)


def test_a_loop_that_always_uses_the_first_query_is_not_said_to_stop_early(
    config: Config, notebook: NotebookFactory
) -> None:
    first = students.ATTENTION_LOOP.replace("all_queries[n]", "all_queries[0]")
    assert first != students.ATTENTION_LOOP
    report = grade_path(notebook(students.cells(attention_loop=first)), config)
    result = next(t for t in report.targets if t.name == "attention_loop")
    assert result.status == "failed"
    said = [m for m in result.messages if m.startswith("only rows")]
    assert said and "every row equals row 0" in said[0] and "stops early" not in said[0]
    # and the code that does it, with its place (the feedback's place too)
    line = next(i for i, text in enumerate(first.split("\n"), start=1) if "all_queries[0]" in text)
    assert f"`all_queries[0]` (cell 5, line {line}) is the same at every pass" in " ".join(
        result.messages
    )
    assert result.location is not None and (result.location.cell, result.location.line) == (
        5,
        line,
    )


MULTIHEAD = REPO / "solutions" / "multihead_attention.ipynb"


def multihead(tmp_path: Path, config: Config, old: str, new: str) -> TargetResult:
    """The multihead solution with `old` replaced by `new`, graded as a student's notebook."""
    return graded(tmp_path, config, "multihead_scaled_self_attention", old, new, MULTIHEAD)


def test_heads_joined_side_by_side_are_told_the_sizes_of_the_product(
    tmp_path: Path, config: Config
) -> None:
    result = multihead(tmp_path, config, "np.vstack([head1, head2])", "np.hstack([head1, head2])")
    assert result.status == "error"  # every case raised: no output to compare
    said = [m for m in result.messages if m.startswith("a matrix product `A @ B` met")]
    assert said and "arrays joined along the other axis" in said[0]


def test_heads_stacked_in_the_other_order_are_named(tmp_path: Path, config: Config) -> None:
    result = multihead(tmp_path, config, "np.vstack([head1, head2])", "np.vstack([head2, head1])")
    assert result.status == "failed"
    assert result.mistakes == ("order_swapped",)
    assert any(
        "puts `head2` before `head1` in `np.vstack([head2, head1])`" in m for m in result.messages
    )


def test_a_dropped_term_found_nowhere_else_points_at_the_value_thrown_away(
    tmp_path: Path, config: Config
) -> None:
    # `scaled + mask` computed and dropped: the mutant that leaves out `+ mask` matches, and
    # the student's names (`scaled`) are not the reference's (`scores`).
    old = "scaled = scaled + mask"
    result = graded(tmp_path, config, "scaled_dot_product_attention", old, "scaled + mask")
    assert result.mistakes == ("term_dropped",)
    assert result.location is not None and (result.location.cell, result.location.line) == (5, 5)
    assert result.messages[1].startswith("term_dropped: leaves out `+ mask`")
    assert result.messages[1].endswith("(cell 5, line 5).")


def test_a_slip_inside_a_loop_the_reference_writes_as_a_comprehension_is_placed_on_its_line(
    tmp_path: Path, config: Config
) -> None:
    # The line was `all_keys = []`: the assignment the reference's comprehension makes.
    loop = (
        "all_queries, all_keys, all_values = [], [], []\n"
        "    for x in all_x:\n"
        "        all_queries.append(omega_q @ x + beta_q)\n"
        "        all_keys.append(omega_k @ x + beta_q)\n"
        "        all_values.append(omega_v @ x + beta_v)\n"
        "    return all_queries, all_keys, all_values"
    )
    old = (
        "all_queries = [omega_q @ x + beta_q for x in all_x]\n"
        "    all_keys = [omega_k @ x + beta_k for x in all_x]\n"
        "    all_values = [omega_v @ x + beta_v for x in all_x]\n"
        "    return all_queries, all_keys, all_values"
    )
    source = REPO / "solutions" / "self_attention.ipynb"
    result = graded(tmp_path, config, "qkv_loop", old, loop, source)
    assert result.mistakes == ("wrong_argument",)
    said = next(f for f in result.findings if f.kind == "mistake")
    cell = next(c for c in nbformat.read(tmp_path / "student.ipynb", 4).cells if loop in c.source)
    slip = cell.source.splitlines().index("        all_keys.append(omega_k @ x + beta_q)") + 1
    assert said.location is not None and said.location.line == slip


def test_a_last_column_left_out_in_every_case_is_said_so_of_every_case(
    config: Config, notebook: NotebookFactory
) -> None:
    # r44: "only columns 3 differ …: look at how column 3 is computed" from case 1 alone,
    # where each case (N = 3, 5, 2, 4) missed its own last column.
    short = (
        "def softmax_cols(data_in):\n"
        "    out = np.zeros_like(data_in)\n"
        "    for n in range(data_in.shape[1] - 1):\n"
        "        column = np.exp(data_in[:, n])\n"
        "        out[:, n] = column / column.sum()\n"
        "    return out"
    )
    report = grade_path(notebook(students.cells(softmax_cols=short)), config)
    result = next(t for t in report.targets if t.name == "softmax_cols")
    assert result.status == "failed"
    assert (
        "only the last column differs in every case; the others are right, as when a loop or "
        "slice stops early"
    ) in result.messages, result.messages
    assert not any("look at how column" in m for m in result.messages)
