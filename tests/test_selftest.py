"""`grader selftest`: passes the real catalogue, fails when cases cannot tell a variant apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.author.selftest import MIN_MARGIN, render_selftest, run_selftest
from grader.cli import main
from grader.course.config import Config, load_config
from grader.judge.fingerprints import catalogue_for

from conftest import repo_config_raw


@pytest.mark.slow
def test_every_assignment_passes_its_selftest(config: Config) -> None:
    for assignment in config.assignments.values():
        result = run_selftest(assignment)
        assert result.ok, render_selftest(result)
        assert result.smallest_margin[0] >= MIN_MARGIN
        caught = [line for line in result.lines if "caught, diagnosed as" in line]
        names = {t.name for t in assignment.targets}
        catalogue = catalogue_for(assignment).mistakes
        variants = len([m for m in catalogue if m.target in names])
        assert len(caught) == variants > 0
        summary = f"catalogue variants: {variants} of {variants} caught, {variants} named exactly"
        assert summary in result.lines
        assert any(line.startswith("derived mistakes: ") for line in result.lines)


def only_d4_config(tmp_path: Path) -> Path:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["scaled_dot_product_self_attention"][
        "sizes"
    ] = [
        {"D": 4, "N": 3},
        {"D": 4, "N": 5},
    ]
    path = tmp_path / "only_d4.yaml"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.slow
def test_selftest_fails_when_cases_cannot_separate_a_variant(tmp_path: Path) -> None:
    config = load_config(only_d4_config(tmp_path))
    result = run_selftest(config.assignment("self_attention"))
    assert not result.ok
    text = render_selftest(result)
    assert (
        "scaled_dot_product_self_attention / scale_hardcoded: the variant passes the checks" in text
    )
    assert "uses_global: the variant passes the checks" in text
    assert result.smallest_margin[0] < MIN_MARGIN


@pytest.mark.slow
def test_selftest_command_exit_codes(tmp_path: Path) -> None:
    good = CliRunner().invoke(main, ["selftest", "--assignment", "self_attention"])
    assert good.exit_code == 0, good.output
    assert "smallest margin" in good.output
    bad = CliRunner().invoke(main, ["selftest", "--config", str(only_d4_config(tmp_path))])
    assert bad.exit_code == 1
    assert "FAILED" in bad.output


@pytest.mark.slow
def test_a_catalogue_variant_that_fails_to_run_is_told_with_its_error(tmp_path: Path) -> None:
    # r43: a variant with a typo (a NameError) was "diagnosed as nothing, not exactly …",
    # its error never named.
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    catalogue = Path(spec["mistakes"]).read_text(encoding="utf-8")
    broken = catalogue.replace(
        "    all_queries = [omega_q @ x for x in all_x]\n",
        "    all_queries = [omega_q @ x for x in all_xs]\n",
        1,
    )
    assert broken != catalogue
    (tmp_path / "mistakes.py").write_text(broken, encoding="utf-8")
    spec["mistakes"] = str(tmp_path / "mistakes.py")
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(raw))
    result = run_selftest(load_config(path).assignment("self_attention"))
    assert not result.ok
    said = [p for p in result.problems if p.startswith("qkv_loop / missing_bias: ")]
    assert len(said) == 1, result.problems
    assert "the variant itself fails to run (" in said[0]
    assert "raised NameError: name 'all_xs' is not defined" in said[0]
    # r50 #13: placed in the catalogue file, where the typo is, not in the solution's cell
    line = broken.split("\n").index("    all_queries = [omega_q @ x for x in all_xs]") + 1
    assert f"({tmp_path / 'mistakes.py'}, line {line})" in said[0], said


def _solution_with(tmp_path: Path, old: str, new: str) -> Path:
    """The repository's config, its self_attention solution with `old` written as `new`."""
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    notebook = Path(spec["solution"]).read_text(encoding="utf-8")
    changed = notebook.replace(old, new, 1)
    assert changed != notebook
    (tmp_path / "solution.ipynb").write_text(changed, encoding="utf-8")
    spec["solution"] = str(tmp_path / "solution.ipynb")
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(raw))
    return path


def test_a_reference_drawing_from_the_global_generator_is_refused(tmp_path: Path) -> None:
    # r50: it passed selftest (the solution, seeded alike, matched itself) and a correct
    # student's softmax was told "term_dropped".
    from grader.author.selftest_reference import random_references
    from grader.course.notebook import load_submission

    drawn = "np.exp(data_in - np.max(data_in, axis=0, keepdims=True)) + np.random.normal() * 1e-3"
    seeded = drawn.replace("np.exp", "(np.random.seed(5), 0)[1] + np.exp", 1)
    shown = "np.exp(data_in - np.max(data_in, axis=0, keepdims=True))"
    for code, refused in ((drawn, True), (seeded, False), ("np.random.default_rng(1).normal()"
                          " * 0 + " + shown, False)):  # fmt: skip
        config = load_config(_solution_with(tmp_path, shown, code))
        spec = config.assignment("self_attention")
        problems = random_references(spec, load_submission(spec.solution))
        said = [p for p in problems if "global random generator" in p]
        assert bool(said) == refused, problems
        if refused:
            # softmax_cols's own, and its callers' (self_attention and its scaled kin)
            own = [p for p in said if p.startswith("softmax_cols: ")]
            assert len(own) == 1 and "`np.random.normal`" in own[0] and "which it" not in own[0]
            callers = [p for p in said if "(in `softmax_cols`, which it calls)" in p]
            assert any(p.startswith("self_attention: the reference draws") for p in callers)


@pytest.mark.slow
def test_a_reference_that_returns_nan_fails_the_selftest(tmp_path: Path) -> None:
    shown = "np.exp(data_in - np.max(data_in, axis=0, keepdims=True))"
    path = _solution_with(tmp_path, shown, f"{shown} * np.nan")
    done = CliRunner().invoke(main, ["selftest", "--config", str(path), "-a", "self_attention"])
    assert done.exit_code == 1, done.output
    assert "softmax_cols: the reference returns NaN on case 1" in done.output


def test_floats_compared_with_no_tolerance_are_refused(tmp_path: Path) -> None:
    import numpy as np

    from grader.author.selftest import _leaves
    from grader.author.selftest_reference import unmatchable_outputs
    from grader.judge.reference import Reference

    raw = repo_config_raw()
    targets = raw["assignments"]["self_attention"]["targets"]
    targets["softmax"]["tolerance"] = {"rtol": 0, "atol": 0}
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(raw))
    spec = load_config(path).assignment("self_attention")
    floats = Reference((np.array([0.25, 0.75]),), ((),), ())
    whole = Reference((np.array([1, 2]),), ((),), ())
    said = unmatchable_outputs(spec, {"softmax": floats}, _leaves)
    assert len(said) == 1 and said[0].startswith("softmax: floats compared with a tolerance of 0")
    assert unmatchable_outputs(spec, {"softmax": whole}, _leaves) == []  # integers: exact
    assert unmatchable_outputs(spec, {"softmax_cols": floats}, _leaves) == []  # its own rtol


@pytest.mark.slow
def test_a_failing_reference_is_told_with_why_it_fails(tmp_path: Path) -> None:
    # r50 #10: a reference that changed its argument failed selftest with only the target's
    # name ("the reference solution fails: softmax_cols"); `grader check` named the reason.
    shown = "np.exp(data_in - np.max(data_in, axis=0, keepdims=True))"
    mutating = "np.exp(data_in.__isub__(np.max(data_in, axis=0, keepdims=True)))"
    path = _solution_with(tmp_path, shown, mutating)
    done = CliRunner().invoke(main, ["selftest", "--config", str(path), "-a", "self_attention"])
    assert done.exit_code == 1, done.output
    said = [line for line in done.output.splitlines() if "the reference solution fails" in line]
    assert said and said[0].strip().startswith("- the reference solution fails: softmax_cols: ")
    assert "argument in place" in said[0] or "argument `data_in` in place" in said[0], said
