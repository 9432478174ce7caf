"""`pytest --notebook`: one item per target, the diagnosis as failure text, JUnit XML as usual."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow

BRUNO = REPO / "demo" / "submissions" / "bruno.ipynb"
CONFIG = REPO / "config.yaml"


def test_one_item_per_target_with_the_diagnosis(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "--notebook", str(BRUNO), "--grader-config", str(CONFIG), "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*scaled_dot_product_self_attention: failed, 0 / 3 points*",
            "*mistakes: output_transposed, scale_discarded, scale_hardcoded*",
            "*`all_km_qn / 2` computes the scaled scores and throws them away*",
        ]
    )


def test_junit_xml_carries_points(pytester: pytest.Pytester) -> None:
    xml_path = pytester.path / "out.xml"
    pytester.runpytest_subprocess(
        "--notebook", str(BRUNO), "--grader-config", str(CONFIG), f"--junitxml={xml_path}"
    )
    root = ET.parse(xml_path).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) >= {"qkv_loop", "self_attention", "scaled_dot_product_self_attention"}
    failure = cases["self_attention"].find("failure")
    assert failure is not None and "output_transposed" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in cases["softmax"].iter("property")}
    assert props == {"score": "1.0", "max_score": "1.0"}


def test_unreadable_notebook_is_a_collection_error(pytester: pytest.Pytester) -> None:
    bad = pytester.path / "bad.ipynb"
    bad.write_text("{not json")
    result = pytester.runpytest_subprocess("--notebook", str(bad), "--grader-config", str(CONFIG))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*the grader cannot read*invalid JSON*"])


def test_an_unreadable_notebook_is_named_once(pytester: pytest.Pytester) -> None:
    bad = pytester.path / "half.ipynb"
    bad.write_text('{"cells": [')
    result = pytester.runpytest_subprocess("--notebook", str(bad), "--grader-config", str(CONFIG))
    said = [line for line in result.stdout.lines if "invalid JSON" in line]
    assert len(said) == 1 and said[0].count(str(bad)) == 1, said


def test_without_the_option_nothing_changes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    assert True\n")
    (pytester.path / "ignored.ipynb").write_text(BRUNO.read_text())
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
