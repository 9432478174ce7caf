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
