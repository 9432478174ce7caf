"""judge/static.py called directly on small sources (no child process, nothing run)."""

from __future__ import annotations

from pathlib import Path

from grader.course.notebook import CodeCell, Submission
from grader.judge.static import (
    FunctionSource,
    called_names,
    find_function,
    fixed_indexes,
    function_hints,
    mentions_size,
    notebook_globals,
)
from grader.report import Location


def submission(*sources: str) -> Submission:
    """Cells numbered from 2, as in a notebook whose first cell is a markdown title."""
    cells = tuple(CodeCell(i + 2, src, src) for i, src in enumerate(sources))
    return Submission(Path("student.ipynb"), "student", cells, None, ())


def function(sub: Submission, name: str) -> FunctionSource:
    found = find_function(sub, name)
    assert found is not None
    return found


def test_find_function_takes_the_last_definition() -> None:
    sub = submission("def f(x):\n    return 1\n", "x = 3\n\n\ndef f(x):\n    return 2\n")
    found = function(sub, "f")
    assert found.cell.index == 3
    assert found.location() == Location(3, 4)
    assert found.line_text(5) == "    return 2"
    assert found.line_text(99) == ""
    assert find_function(sub, "g") is None


def test_notebook_globals_are_the_data_names_top_level_code_binds() -> None:
    sub = submission(
        "import numpy as np\nD = 4\nN: int = 3\nD += 1\na, (b, c) = 1, (2, 3)\n",
        "for i in range(3):\n    total = i\n",
        "def f():\n    inner = 1\n\n\nclass K:\n    field = 2\n",
        "this does not parse (",
    )
    # `total` is bound inside the loop's body: the whole `for` statement is walked.
    assert notebook_globals(sub) == {"D", "N", "a", "b", "c", "i", "total"}


def test_called_names_leave_out_builtins_and_methods() -> None:
    sub = submission("def f(x):\n    y = helper(x)\n    z = np.sum(y)\n    return len(z) + g(x)\n")
    assert called_names(function(sub, "f")) == {"helper", "g"}


Found = list[tuple[str, int, str, str]]


def kinds(source: str, global_names: frozenset[str] = frozenset()) -> Found:
    """(kind, line, text, name) of each hint on `f`, in the order function_hints gives."""
    hints = function_hints(function(submission(source), "f"), set(global_names))
    return [(h.kind, h.location.line, h.text, h.name) for h in hints]


def test_a_clean_function_has_no_hints() -> None:
    assert kinds("def f(x, y):\n    z = x @ y.T\n    return z / np.sqrt(x.shape[1])\n") == []


def test_discarded_values_are_hinted() -> None:
    source = "def f(x):\n    x + 1\n    np.exp(x)\n    np.random.seed(0)\n    return x\n"
    # np.random.seed is not pure: calling it is its effect.
    assert kinds(source) == [("discarded", 2, "x + 1", ""), ("discarded", 3, "np.exp(x)", "")]


def test_a_value_written_out_is_not_thrown_away() -> None:
    # `out=` is where the result goes: "computed and thrown away" was false.
    source = "def f(x):\n    np.exp(x, out=x)\n    np.subtract(x, 1, out=x)\n    return x\n"
    assert [k for k in kinds(source) if k[0] == "discarded"] == []


def test_writing_into_an_argument_through_out_or_a_method_is_changing_it() -> None:
    source = "def f(x, y):\n    np.exp(x, out=x)\n    y.sort()\n    return x + y\n"
    assert [k for k in kinds(source) if k[0] == "mutates"] == [
        ("mutates", 2, "np.exp(x, out=x)", "x"),
        ("mutates", 3, "y.sort()", "y"),
    ]


def test_a_value_under_a_name_never_read_is_thrown_away_too() -> None:
    # EXERCISES.md: the scaled scores "assigned a new name and then used the old one".
    source = (
        "def f(s, d):\n    scaled = s / np.sqrt(d)\n    _unused = s * 2\n"
        "    used = s + 1\n    return np.exp(s) + used\n"
    )
    assert kinds(source) == [("discarded", 2, "s / np.sqrt(d)", "scaled")]


def test_a_leftover_unused_value_is_no_scaling_thrown_away() -> None:
    # Any unused `n = x.shape[1] - 1` in a failing function named scale_discarded (r26).
    for body in ("n = x.shape[1] - 1", "global t\n    t = x / 2", "y = x / 2"):
        source = f"def f(x):\n    {body}\n    return 1\n"
        assert [k for k in kinds(source) if k[0] == "discarded"] == [], body


def test_literal_divisors_are_hinted_but_not_one() -> None:
    source = (
        "def f(x):\n    a = x / 2\n    b = x / np.sqrt(4)\n    c = x / 1\n    return a + b + c\n"
    )
    assert kinds(source) == [
        ("literal_divisor", 2, "2", ""),
        ("literal_divisor", 3, "np.sqrt(4)", ""),
    ]


def test_globals_read_inside_a_function_are_hinted_once() -> None:
    source = "def f(x):\n    y = x * D\n    return y + D + N\n"
    found = kinds(source, global_names=frozenset({"D", "N", "x"}))
    # `x` is a parameter (local); D is hinted at its first use only.
    assert found == [("global", 2, "D", "D"), ("global", 3, "N", "N")]


def test_a_global_rebound_locally_is_not_hinted() -> None:
    source = "def f(x):\n    D = x.shape[0]\n    return D\n"
    assert kinds(source, global_names=frozenset({"D"})) == []


def test_returning_a_global_is_hinted() -> None:
    source = "def f(x):\n    result[0] = x\n    return result\n"
    found = kinds(source, global_names=frozenset({"result"}))
    assert ("returns_global", 3, "result", "result") in found


def test_changing_a_parameter_in_place_is_hinted() -> None:
    source = "def f(x, y):\n    x -= 1\n    y[0] = 2\n    z = y\n    return z\n"
    assert kinds(source) == [("mutates", 2, "x -= 1", "x"), ("mutates", 3, "y[0] = 2", "y")]


def test_testing_an_array_parameter_for_truth_is_hinted() -> None:
    source = "def f(mask, x):\n    if not mask:\n        return x\n    return x if x.size else 0\n"
    assert kinds(source) == [("truthiness", 2, "mask", "mask")]


def test_a_size_is_mentioned_by_its_number_or_by_a_global_of_its_name() -> None:
    def says(source: str, name: str = "L", value: int = 4) -> bool:
        return mentions_size(function(submission(source), "f"), name, value)

    assert says("def f(x):\n    return x * 4 / len(x)\n")  # the number
    assert says("def f(x):\n    return x[:L]\n")  # the notebook's global
    assert not says("def f(x, L):\n    return x[:L]\n")  # a parameter of that name
    assert not says("def f(x):\n    L = len(x)\n    return x[:L]\n")  # set inside
    assert not says("def f(x):\n    return x[:3] * 4.0\n")  # another number; a float
    assert not says("def f(x):\n    return x.sum(axis=-1)\n")  # nothing that fixes a size


def test_an_index_of_zero_read_inside_a_loop_is_a_fixed_index() -> None:
    source = (
        "first = xs[0]\n"  # outside any loop: not one
        "for n in range(3):\n"
        "    a = qs[0] @ ks[n]\n"
        "    b = X[:, 0] + X.shape[0]\n"  # a tuple index, an attribute's item: not ones
        "ys = [vs[0] * v for v in vs]\n"
    )
    sub = submission(source)
    found = fixed_indexes(sub.tree(2), sub.cells[0])  # type: ignore[arg-type]
    assert [(h.kind, h.location, h.text, h.name) for h in found] == [
        ("fixed_index", Location(2, 3), "qs[0]", "qs"),
        ("fixed_index", Location(2, 5), "vs[0]", "vs"),
    ]


def test_a_value_thrown_away_is_assigned_to_the_name_it_works_on_or_to_result() -> None:
    from grader.judge.diagnose import _assignment_for

    assert _assignment_for("all_km_qn / 2") == "all_km_qn = all_km_qn / 2"
    assert _assignment_for("np.divide(S, 2)") == "S = np.divide(S, 2)"  # never `np = …`
    assert _assignment_for("K @ Q / 2") == "result = K @ Q / 2"  # K would change
