"""Student mistakes no catalogue lists, whose feedback was misleading or silent: each test
grades a notebook with one such mistake and checks what the grader says points at the cause
(the line the student must change) and says nothing that is not so."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np
import pytest

from grader.course.config import Config, Tolerance
from grader.course.notebook import CodeCell, Submission
from grader.engine import grade_path
from grader.judge import derived
from grader.judge.fingerprints import catalogue_for
from grader.judge.flows import computed_from
from grader.judge.loop_bounds import early_stops
from grader.judge.number_patterns import (
    booleans_for_infinities,
    floor_division,
    running_totals,
    whole_numbers,
)
from grader.judge.static import find_function, function_hints
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory, write_notebook

UDL = REPO / "tests" / "notebooks" / "udl_12_1" / "correct.ipynb"


def one(config: Config, notebook: NotebookFactory, name: str, source: str) -> TargetResult:
    """A correct self_attention notebook with `name` rewritten as `source`; its result."""
    report = grade_path(notebook(students.cells(**{name: source})), config)
    return next(t for t in report.targets if t.name == name)


def udl(tmp_path: Path, config: Config, old: str, new: str) -> dict[str, TargetResult]:
    """The correct UDL 12.1 notebook with `old` replaced by `new`, graded; results by name."""
    notebook = nbformat.read(UDL, as_version=4)
    changed = [c for c in notebook.cells if old in c.source]
    assert len(changed) == 1, old
    changed[0].source = changed[0].source.replace(old, new)
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    return {t.name: t for t in grade_path(path, config, "udl_12_1").targets}


def test_a_return_inside_the_loop_is_pointed_at(config: Config, notebook: NotebookFactory) -> None:
    source = students.QKV_LOOP.replace("\n    return all_queries", "\n        return all_queries")
    result = one(config, notebook, "qkv_loop", source)
    assert result.status == "failed"
    line = source.splitlines().index("        return all_queries, all_keys, all_values") + 1
    said = [m for m in result.messages if "is inside the `for` loop" in m]
    assert said and f"line {line})" in said[0] and "first pass" in said[0], result.messages
    assert result.location is not None and result.location.line == line
    assert not any("no known mistake matches" in m for m in result.messages)


def test_a_return_after_the_loop_is_not_blamed(config: Config, notebook: NotebookFactory) -> None:
    # One item short for another reason (the loop skips the last input): the return is fine.
    source = students.QKV_LOOP.replace("for x in all_x:", "for x in all_x[:-1]:")
    result = one(config, notebook, "qkv_loop", source)
    assert result.status == "failed"
    assert not any("inside the `for` loop" in m for m in result.messages), result.messages


def test_a_print_instead_of_a_return_is_said_not_an_ignored_input(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SOFTMAX.replace("    return items_out", "    print(items_out)")
    result = one(config, notebook, "softmax", source)
    assert result.status == "failed"
    # the output is None whatever comes in: that is not ignoring `items_in`
    assert not any("ignores `items_in`" in m for m in result.messages), result.messages
    said = [m for m in result.messages if "prints its result" in m]
    assert result.location is not None and result.location.line == 3  # the print
    assert said and f"({result.location.describe()})" in said[0], result.messages
    assert "no `return`" in said[0]


def test_lists_filled_by_one_loop_are_not_each_others_inputs(
    tmp_path: Path, config: Config
) -> None:
    # The loop leaves the last input out: the three lists are each one item short, and none
    # is computed from another, so none may be told to "fix" another first (in a circle).
    results = udl(tmp_path, config, "for x in all_x:", "for x in all_x[:-1]:")
    for name in ("all_queries", "all_keys", "all_values"):
        assert results[name].status == "failed"
        assert not any(f.kind == "callee" for f in results[name].findings), results[name]
    # all_x_prime is computed from them, through the cell's temporaries
    callee = [f.message for f in results["all_x_prime"].findings if f.kind == "callee"]
    assert callee and callee[0].startswith("fix `all_keys` first"), callee
    # its cell crashed before the first append: an empty list holds no zeros
    assert not any("only zeros" in m for m in results["all_x_prime"].messages)


def test_what_a_variable_is_computed_from_follows_temporaries_not_neighbours() -> None:
    tree = ast.parse(
        "all_queries, all_keys, out = [], [], []\n"
        "for x in all_x:\n"
        "    all_queries.append(omega_q @ x)\n"
        "    all_keys.append(omega_k @ x)\n"
        "for n in range(N):\n"
        "    scores = [k.T @ all_queries[n] for k in all_keys]\n"
        "    weights = softmax(scores)\n"
        "    out.append(sum(w * v for w, v in zip(weights, all_values)))\n"
        "grid = np.zeros((N, N))\n"
        "grid[0, 1] = top\n"
    )
    queries = computed_from(tree, "all_queries")
    assert {"all_x", "omega_q"} <= queries and "all_keys" not in queries
    assert "out" not in queries and "omega_k" not in queries
    out = computed_from(tree, "out")
    assert {"all_queries", "all_keys", "all_values", "softmax", "N"} <= out
    assert {"top", "np", "N"} <= computed_from(tree, "grid")


def test_a_root_written_as_a_power_of_one_half_is_no_literal_divisor() -> None:
    # `d ** 1/2` is `(d ** 1) / 2`: its `2` is no size written as a number
    source = (
        "def f(x, d):\n    a = x / d ** 1/2\n    b = d ** 1 / 2\n    c = x / 2\n"
        "    return a + b + c\n"
    )
    cell = CodeCell(2, source, source)
    found = find_function(Submission(Path("student.ipynb"), "student", (cell,), None, ()), "f")
    assert found is not None
    hints = function_hints(found, set())
    assert [(h.kind, h.location.line, h.text) for h in hints] == [("literal_divisor", 4, "2")]


def test_a_square_root_written_as_a_power_of_one_half_is_named(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SCALED.replace("/ np.sqrt(queries.shape[0])", "/ queries.shape[0] ** 1/2")
    result = one(config, notebook, "scaled_dot_product_self_attention", source)
    assert result.status == "failed"
    # not "divides by the literal 2, right only when D_q = 4": the student computed D_q
    assert result.mistakes == ("operator_precedence",), result.messages
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "** 1/2" in text)
    assert result.location is not None and result.location.line == line
    said = next(m for m in result.messages if m.startswith("operator_precedence:"))
    assert "`(queries.shape[0] ** 1) / 2`" in said and "** 0.5" in said


def test_a_list_joined_into_one_array_is_said_so(config: Config, notebook: NotebookFactory) -> None:
    source = students.ATTENTION_LOOP.replace("return all_x_prime", "return np.hstack(all_x_prime)")
    result = one(config, notebook, "attention_loop", source)
    assert result.status == "failed"
    said = next(m for m in result.messages if m.startswith("output_transposed:"))
    # the student transposed nothing: the list became one array of columns
    assert "returns the transpose" not in said and "np.hstack" in said, said
    assert "return the list" in said


def test_an_elementwise_product_of_matrices_is_told_to_use_matmul(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SELF_ATTENTION.replace("values @ attention", "values * attention")
    assert source != students.SELF_ATTENTION
    result = one(config, notebook, "self_attention", source)
    assert result.status == "error"
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "values * attention" in text)
    said = [m for m in result.messages if "write `@`" in m]
    assert said and said[0].endswith(f"line {line})"), result.messages


MASKED = REPO / "tests" / "notebooks" / "masked_attention" / "correct.ipynb"
SENTENCE = REPO / "tests" / "notebooks" / "sentence_attention" / "correct.ipynb"


def test_a_mask_applied_whether_given_or_not_is_said_from_the_cases(
    tmp_path: Path, config: Config
) -> None:
    notebook = nbformat.read(MASKED, as_version=4)
    cell = next(c for c in notebook.cells if "def scaled_dot_product_attention" in c.source)
    old = "    if mask is not None:\n        scaled = scaled + mask\n"
    assert old in cell.source
    cell.source = cell.source.replace(old, "    scaled = scaled + causal_mask(len(q))\n")
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, "masked_attention")
    result = next(t for t in report.targets if t.name == "scaled_dot_product_attention")
    assert result.status == "failed" and "passed" in result.case_outcomes
    said = [m for m in result.messages if m.startswith("wrong exactly in the cases")]
    assert said and "leave out `mask`" in said[0] and "never reads `mask`" in said[0], said


def test_loops_that_miss_one_item_are_found_in_the_code() -> None:
    source = (
        "for n in range(len(xs) - 1):\n    pass\n"
        "for x in xs[:-1]:\n    pass\n"
        "ys = [y for y in xs[1:]]\n"
        "for i, x in enumerate(xs[:-1]):\n    pass\n"
        "for n in range(N):\n    pass\n"  # right
        "for n in range(0, N - 1, 2):\n    pass\n"  # a step: another count
        "for x in xs[1:-1]:\n    pass\n"  # two left out: not one
    )
    cell = CodeCell(2, source, source)
    found = early_stops(ast.parse(source), cell)
    assert [(where.line, what) for what, where in found] == [
        (
            1,
            "the loop over `range(len(xs) - 1)` stops one early (`range(n)` already stops "
            "before `n`)",
        ),
        (3, "the loop over `xs[:-1]` leaves out the last item"),
        (5, "the loop over `xs[1:]` leaves out the first item"),
        (6, "the loop over `enumerate(xs[:-1])` leaves out the last item"),
    ]


def test_a_loop_one_short_is_pointed_at(config: Config, notebook: NotebookFactory) -> None:
    source = students.QKV_LOOP.replace("for x in all_x:", "for x in all_x[:len(all_x) - 1]:")
    result = one(config, notebook, "qkv_loop", source)
    assert result.status == "failed"
    said = [m for m in result.messages if m.startswith("one item short in every case")]
    assert said and "`all_x[:len(all_x) - 1]` leaves out the last item" in said[0], said
    assert result.location is not None and result.location.line == 5


def test_a_loop_variable_one_short_is_pointed_at(tmp_path: Path, config: Config) -> None:
    results = udl(tmp_path, config, "for x in all_x:", "for x in all_x[:-1]:")
    for name in ("all_queries", "all_keys", "all_values"):
        said = [m for m in results[name].messages if m.startswith("one item short")]
        assert said and "`all_x[:-1]` leaves out the last item" in said[0], results[name]


def masked(tmp_path: Path, config: Config, function: str, source: str) -> TargetResult:
    """The correct masked notebook with the cell defining `function` replaced; its result."""
    return replaced(tmp_path, config, "masked_attention", function, source)


def replaced(
    tmp_path: Path, config: Config, assignment: str, function: str, source: str
) -> TargetResult:
    """The assignment's correct test notebook with the cell defining `function` replaced
    by `source`, graded; that function's result."""
    correct = REPO / "tests" / "notebooks" / assignment / "correct.ipynb"
    notebook = nbformat.read(correct, as_version=4)
    cell = next(c for c in notebook.cells if f"def {function}(" in c.source)
    cell.source = source
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, assignment)
    return next(t for t in report.targets if t.name == function)


def test_an_off_by_one_found_on_no_line_points_at_the_loop_that_misses_one(
    tmp_path: Path, config: Config
) -> None:
    source = (
        "def causal_mask(L):\n"
        "    mask = np.zeros((L, L))\n"
        "    for i in range(L):\n"
        "        for j in range(i + 1, L - 1):\n"
        "            mask[i, j] = -np.inf\n"
        "    return mask\n"
    )
    result = masked(tmp_path, config, "causal_mask", source)
    assert "off_by_one" in result.mistakes
    # the reference's changed expression is nowhere in this code: not the `def` line
    assert result.location is not None and result.location.line == 4, result.location


def test_a_mean_for_a_sum_is_told_by_its_factor_and_line(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SOFTMAX.replace("np.sum(np.exp(items_in))", "np.mean(np.exp(items_in))")
    assert source != students.SOFTMAX
    result = one(config, notebook, "softmax", source)
    said = [m for m in result.messages if m.startswith("the factor is N in every case")]
    assert said and "`np.mean` where `np.sum` is meant" in said[0], result.messages
    assert result.location is not None and result.location.line == 2


def test_running_totals_and_whole_numbers_are_read_from_the_numbers() -> None:
    tol = Tolerance()
    items = [np.array([1.0, 2.0]), np.array([0.5, 0.25]), np.array([2.0, -1.0])]
    totals = list(np.cumsum(items, axis=0))
    assert (running_totals(totals, items, tol) or "").startswith("each item is the running total")
    assert running_totals(items, items, tol) is None  # right
    assert running_totals(totals[::-1], items, tol) is None  # some other mistake
    assert whole_numbers(np.array([-1.0, 0.0]), np.array([-0.97, 0.46])) is not None
    assert whole_numbers(np.array([-1.0, 0.0]), np.array([-1.0, 1.0])) is None  # whole anyway
    assert whole_numbers(np.array([-1.5, 0.0]), np.array([-0.97, 0.46])) is None
    assert floor_division("    s = q @ k // np.sqrt(d)")
    assert not floor_division("    H = D // 2")  # an integer index: right
    assert not floor_division("    s = q @ k / np.sqrt(d)  # not // here")


def test_a_floor_division_is_pointed_at(config: Config, notebook: NotebookFactory) -> None:
    source = students.SCALED.replace("all_km_qn / np.sqrt", "all_km_qn // np.sqrt")
    assert source != students.SCALED
    result = one(config, notebook, "scaled_dot_product_self_attention", source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "//" in text)
    assert result.status == "failed" and result.location is not None
    assert result.location.line == line
    assert any(
        m.startswith(f"`//` (cell {result.location.cell}, line {line})") for m in result.messages
    )


def test_whole_numbers_are_not_called_a_factor_or_ignored_inputs(
    tmp_path: Path, config: Config
) -> None:
    notebook = nbformat.read(SENTENCE, as_version=4)
    cell = next(c for c in notebook.cells if "def cosine_similarity(" in c.source)
    cell.source = (
        "def cosine_similarity(a, b):\n"
        "    return float(a @ b // (np.linalg.norm(a) * np.linalg.norm(b)))\n"
    )
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, "sentence_attention")
    result = next(t for t in report.targets if t.name == "cosine_similarity")
    assert result.status == "failed"
    assert any(m.startswith("every value is a whole number") for m in result.messages)
    assert not any("off by a factor" in m or "ignores" in m for m in result.messages), result


def test_a_sum_never_reset_is_not_said_to_stop_early(tmp_path: Path, config: Config) -> None:
    notebook = nbformat.read(UDL, as_version=4)
    cell = next(c for c in notebook.cells if "all_x_prime = []" in c.source)
    changed = cell.source.replace("  x_prime = np.zeros((D,1))\n", "")
    changed = changed.replace("x_prime += attention[m]", "x_prime = x_prime + attention[m]")
    assert changed.count("x_prime = x_prime + ") == 1 and "zeros" not in changed
    # set once, before the loop over the outputs: each output adds to the last one
    cell.source = "x_prime = np.zeros((D,1))\n" + changed
    path = tmp_path / "student.ipynb"
    nbformat.write(notebook, path)
    report = grade_path(path, config, "udl_12_1")
    result = next(t for t in report.targets if t.name == "all_x_prime")
    assert result.status == "failed"
    assert any(m.startswith("each item is the running total") for m in result.messages)
    assert not any("stops early" in m for m in result.messages), result.messages


def test_a_square_inside_a_returned_tuple_of_lists_is_explained(
    config: Config, notebook: NotebookFactory
) -> None:
    # a 1-D input plus a D×1 bias: each query, key and value is D×D (in a tuple of lists)
    source = students.QKV_LOOP.replace(
        "    for x in all_x:\n", "    for x in all_x:\n        x = x.flatten()\n"
    )
    assert source != students.QKV_LOOP
    result = one(config, notebook, "qkv_loop", source)
    assert result.status == "failed"
    assert any("broadcasts them into a square" in m for m in result.messages), result.messages


def test_a_function_name_assigned_over_is_pointed_at(tmp_path: Path, config: Config) -> None:
    old = "  attention = softmax(all_km_qn)\n"
    new = "  softmax = softmax(all_km_qn)\n  attention = softmax\n"
    results = udl(tmp_path, config, old, new)
    result = results["softmax"]
    assert result.status == "missing" and result.score == 0
    said = [m for m in result.messages if "assigns `softmax` after its `def`" in m]
    assert said and "`softmax = softmax(all_km_qn)`" in said[0], result.messages
    assert result.location is not None and said[0].startswith(result.location.describe())


def test_a_missing_function_without_a_rebinding_says_nothing_more(
    tmp_path: Path, config: Config
) -> None:
    results = udl(tmp_path, config, "def softmax(items_in):", "def soft_max(items_in):")
    assert results["softmax"].status == "missing"
    assert not any("after its `def`" in m for m in results["softmax"].messages)


def test_a_boolean_mask_where_the_additive_one_is_expected_is_said(
    tmp_path: Path, config: Config
) -> None:
    source = "def causal_mask(L):\n    return np.triu(np.ones((L, L), dtype=bool), k=1)\n"
    result = masked(tmp_path, config, "causal_mask", source)
    assert result.status == "failed"
    said = [m for m in result.messages if m.startswith("1 (or True) exactly where -inf")]
    assert said and "np.where(mask == 1, -np.inf, 0.0)" in said[0], result.messages
    expected = np.array([[0.0, -np.inf], [0.0, 0.0]])
    assert booleans_for_infinities(np.array([[0.0, 1.0], [0.0, 0.0]]), expected) is not None
    assert booleans_for_infinities(np.array([[1.0, 0.0], [0.0, 0.0]]), expected) is None


def test_lists_returned_as_joined_arrays_are_said_so(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.QKV_LOOP.replace(
        "return all_queries, all_keys, all_values",
        "return np.hstack(all_queries), np.hstack(all_keys), np.hstack(all_values)",
    )
    assert source != students.QKV_LOOP
    result = one(config, notebook, "qkv_loop", source)
    assert result.status == "failed"
    assert any(
        m.startswith("returns arrays with each list's items joined") for m in result.messages
    )
    assert result.location is not None and result.location.line == len(source.splitlines())


def test_one_item_of_the_expected_pair_is_said_so(tmp_path: Path, config: Config) -> None:
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    scores = q @ k.T / np.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n"
        "        scores = scores + mask\n"
        "    return softmax(scores) @ v\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed"
    said = [m for m in result.messages if m.startswith("returns only item [0] of the 2")]
    assert said, result.messages
    assert result.location is not None and result.location.line == 5


def hints_of(source: str) -> list[tuple[str, int, str]]:
    """(kind, line, name) of each hint on `f`."""
    cell = CodeCell(2, source, source)
    found = find_function(Submission(Path("student.ipynb"), "student", (cell,), None, ()), "f")
    assert found is not None
    return [(h.kind, h.location.line, h.name) for h in function_hints(found, set())]


def test_a_change_in_place_through_a_local_naming_an_argument_is_hinted() -> None:
    source = "def f(xs, w):\n    acc = xs[0]\n    acc *= w\n    return acc\n"
    assert hints_of(source) == [("mutates", 3, "xs")]
    # a local that is also given a computed value is no alias: nothing is said
    source = "def f(xs, w):\n    acc = xs[0]\n    acc = acc * 1.0\n    acc *= w\n    return acc\n"
    assert hints_of(source) == []


def test_a_sum_started_on_an_input_item_points_at_the_change(
    config: Config, notebook: NotebookFactory
) -> None:
    source = (
        "def attention_loop(all_queries, all_keys, all_values):\n"
        "    all_x_prime = []\n"
        "    for query in all_queries:\n"
        "        weights = softmax([(key.T @ query).item() for key in all_keys])\n"
        "        x_prime = all_values[0]\n"
        "        x_prime *= weights[0]\n"
        "        for m in range(1, len(all_values)):\n"
        "            x_prime += weights[m] * all_values[m]\n"
        "        all_x_prime.append(x_prime)\n"
        "    return all_x_prime\n"
    )
    result = one(config, notebook, "attention_loop", source)
    assert "mutates_input" in result.mistakes
    assert result.location is not None and result.location.line == 6, result.messages


def test_the_derived_cache_key_covers_the_mutant_operators(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a new operator (the d ** 1/2 one) must make new derived mistakes, not read old ones
    spec = config.assignment("self_attention")
    hashed: list[Path] = []

    def digest(parts: object, files: tuple[Path, ...]) -> str:
        hashed.extend(files)
        return "key"

    monkeypatch.setattr(derived, "content_digest", digest)
    derived.cache_key(spec, catalogue_for(spec))
    names = {p.name for p in hashed}
    assert {"mutant_operators.py", "mutants.py", "mutant_places.py"} <= names, names


@pytest.mark.parametrize(
    ("scaling", "named", "line"),
    [
        # x / √d / √d is x / d: the code tells which mistake it is, and where
        (
            "    d_k = q.shape[-1]\n    scores = q @ k.T\n    scores = scores / d_k\n",
            "scale_by_d",
            4,
        ),
        (
            "    scores = q @ k.T / np.sqrt(q.shape[-1])\n"
            "    scores = scores / np.sqrt(q.shape[-1])\n",
            "scale_duplicated",
            2,
        ),
    ],
)
def test_dividing_by_the_size_is_not_told_as_scaling_twice(
    tmp_path: Path, config: Config, scaling: str, named: str, line: int
) -> None:
    # r44: `q @ k.T / d_k` was told "scales twice: `q @ k.T / np.sqrt(q.shape[-1])` again
    # (computing `scores`)", quoting code the student never wrote, at another line.
    source = (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        f"{scaling}"
        "    if mask is not None:\n"
        "        scores = scores + mask\n"
        "    attention = softmax(scores)\n"
        "    return attention @ v, attention\n"
    )
    result = masked(tmp_path, config, "scaled_dot_product_attention", source)
    assert result.status == "failed" and result.mistakes == (named,), result.messages
    assert result.location is not None and result.location.line == line, result.location
    quoted = any("np.sqrt(q.shape[-1])` again" in m for m in result.messages)
    assert quoted is (named == "scale_duplicated"), result.messages  # their own code only


@pytest.mark.parametrize(
    ("source", "said"),
    [
        # r38: told "uses `W_v` where `W_k` is meant", of arguments the student never swapped
        (
            "def project_qkv(X, W_q, W_k, W_v):\n    Q = X @ W_q\n    K = X @ W_k\n"
            "    V = X @ W_v\n    return Q, V, K\n",
            "elements [1] and [2] are swapped (check the order in `return Q, V, K`",
        ),
        # three moved: each place said
        (
            "def project_qkv(X, W_q, W_k, W_v):\n    return X @ W_v, X @ W_q, X @ W_k\n",
            "element [0] holds what [2] should, element [1] holds what [0] should, "
            "element [2] holds what [1] should",
        ),
    ],
)
def test_a_tuple_of_right_values_in_the_wrong_places_is_said_so_at_the_return(
    tmp_path: Path, config: Config, source: str, said: str
) -> None:
    result = replaced(tmp_path, config, "sentence_attention", "project_qkv", source)
    text = "\n".join(result.messages)
    assert result.mistakes[0] == "returns_tuple", text
    assert "returns the right values in the wrong places" in text and said in text, text
    assert "where `W_k` is meant" not in text, text
    assert result.location is not None
    line = source.split("\n").index(next(x for x in source.split("\n") if "return" in x)) + 1
    assert result.location.line == line, result.location


@pytest.mark.parametrize(
    ("read", "said", "not_said"),
    [
        # r44: a global that is no size was told "other sizes … use the shapes"
        ("np.exp(X)", "with its own arguments, and that value is none of them", "other sizes"),
        ("np.exp(data_in[:D]) + 0 * X[0, 0]", "other arguments and sizes", "none of them"),
        ("np.exp(data_in[:D])", "with other sizes, where that is wrong", "none of them"),
    ],
)
def test_a_global_read_is_told_as_a_size_only_when_it_is_one(
    tmp_path: Path, config: Config, read: str, said: str, not_said: str
) -> None:
    source = (
        "def softmax_cols(data_in):\n"
        f"    e = {read}\n"
        "    return e / np.sum(e, axis=0, keepdims=True)\n"
    )
    path = tmp_path / "s.ipynb"
    write_notebook(path, students.cells(softmax_cols=source))
    report = grade_path(path, config, "self_attention")
    result = next(t for t in report.targets if t.name == "softmax_cols")
    text = "\n".join(result.messages)
    assert "uses_global" in result.mistakes, text
    assert said in text and not_said not in text, text


@pytest.mark.parametrize("odd", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_code_after_a_comment_with_an_odd_line_break_is_quoted_from_its_own_line(odd: str) -> None:
    # r45: str.splitlines broke the cell at characters Python's parser does not; every
    # node after such a comment was quoted from the wrong line ("`s = K` computes …").
    source = f"def f(scores, K):\n    # pasted{odd}from the notes\n    scores / 2\n    return K\n"
    cell = CodeCell(2, source, source)
    found = find_function(Submission(Path("student.ipynb"), "student", (cell,), None, ()), "f")
    assert found is not None
    texts = {h.kind: (h.location.line, h.text) for h in function_hints(found, set())}
    assert texts["discarded"] == (3, "scores / 2"), texts


def test_values_rounded_to_two_places_are_told_so_not_as_a_changing_factor(
    tmp_path: Path, config: Config
) -> None:
    """r52 S3: `np.round(…, 2)` was told "off by a factor that changes from case to case"."""
    source = (
        "def cosine_similarity(a, b):\n"
        "    similarity = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))\n"
        "    return np.round(similarity, 2)\n"
    )
    result = replaced(tmp_path, config, "sentence_attention", "cosine_similarity", source)
    assert result.status == "failed" and result.location is not None
    said = "every value is the expected one rounded to 2 decimal places"
    assert any(m.startswith(said) for m in result.messages), result.messages
    assert not any("factor" in m for m in result.messages), result.messages
    assert result.location.line == 3  # the `return np.round(…)`


def test_whole_parts_of_small_values_are_a_rounding_not_values_that_never_arrive(
    tmp_path: Path, config: Config
) -> None:
    """r52 S3: `.astype(int)` of values between -1 and 1 gives zeros, which were told "the
    computed values never reach what it returns"."""
    source = (
        "def pointwise_mutual_information(p_x, p_y, p_xy):\n"
        "    return np.log2(p_xy / (p_x * p_y)).astype(int)\n"
    )
    result = replaced(
        tmp_path, config, "sentence_attention", "pointwise_mutual_information", source
    )
    assert result.status == "failed" and result.location is not None
    assert any(m.startswith("every value is a whole number") for m in result.messages)
    assert not any("never reach" in m for m in result.messages), result.messages
    assert result.location.line == 2


def test_a_body_that_never_fills_its_zeros_is_still_told_so(tmp_path: Path, config: Config) -> None:
    """Zeros from a body with no rounding in it are values that never reached the result,
    even where they are also the whole parts of the expected values."""
    source = (
        "def pointwise_mutual_information(p_x, p_y, p_xy):\n"
        "    out = np.zeros_like(p_xy)\n"
        "    pmi = np.log2(p_xy / (p_x * p_y))\n"
        "    return out\n"
    )
    result = replaced(
        tmp_path, config, "sentence_attention", "pointwise_mutual_information", source
    )
    assert any("never reach what it returns" in m for m in result.messages), result.messages
