"""Pairs of mutations (issue 17, item 1): two distinct single mutants of the reference applied
together, bounded, cached with the singles, and matched only when no single one matches."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from grader.course.config import Config
from grader.course.mistakes import Mistake
from grader.engine import grade_path
from grader.judge import derived, mutant_pairs
from grader.judge.fingerprints import Fingerprint
from grader.judge.mutants import mutants_of
from grader.run.wire import Seq

from conftest import REPO

SAMPLE = """
def attend(X, omega_q, omega_k, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    scores = keys.T @ queries / np.sqrt(queries.shape[0])
    return softmax(scores)
"""


def reference() -> ast.FunctionDef:
    node = ast.parse(SAMPLE).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_two_singles_make_one_function_with_both_changes() -> None:
    singles = mutants_of(reference(), "attend", {"D": 4}, functions=frozenset({"softmax"}))
    bias = next(m for m in singles if m.message.startswith("leaves out `+ beta_q`"))
    scale = next(m for m in singles if m.id == "scale_by_d")
    (pair,) = mutant_pairs.pair_mutants(reference(), [bias, scale])
    body = ast.unparse(ast.parse(pair.mistake.source).body[0])
    assert "queries = omega_q @ X\n" in body + "\n"
    assert "/ queries.shape[0]" in body and "np.sqrt" not in body
    assert (pair.mistake.id, pair.second.id) == ("missing_bias", "scale_by_d")
    assert pair.mistake.function.startswith(mutant_pairs.PAIR_PREFIX)


def test_changes_one_inside_the_other_are_not_paired() -> None:
    singles = mutants_of(reference(), "attend", {"D": 4})
    scaled = [m for m in singles if "scores" in m.message and m.id.startswith("scale_")]
    assert len(scaled) >= 2  # all change the one expression `… / np.sqrt(…)` or inside it
    made = mutant_pairs.pair_mutants(reference(), scaled)
    for pair in made:  # never both in one expression: every pair is two places
        assert pair.mistake.source != pair.second.source
    assert len(made) < len(scaled) * (len(scaled) - 1) // 2


def test_the_number_of_pairs_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    singles = mutants_of(reference(), "attend", {"D": 4})
    monkeypatch.setattr(mutant_pairs, "MAX_PAIRS", 5)
    assert len(mutant_pairs.pair_mutants(reference(), singles)) == 5
    monkeypatch.setattr(mutant_pairs, "MAX_SOURCES", 2)
    monkeypatch.setattr(mutant_pairs, "MAX_PAIRS", 1000)
    assert len(mutant_pairs.pair_mutants(reference(), singles)) <= 1


def test_the_cache_keeps_the_second_mistake_of_a_pair(tmp_path: Path) -> None:
    first = Mistake("scale_by_d", "t", "divides by D", "", "_grader_pair_t_0", "def f(): pass")
    second = Mistake("missing_bias", "t", "leaves out `+ beta`", "", "g", "def g(): pass")
    prints = [
        Fingerprint(first, (np.arange(3.0) + i,), None, "mutant", (second,)) for i in range(120)
    ]
    single = Fingerprint(second, (np.zeros(3),), None, "mutant")
    path = tmp_path / "derived.bin"
    derived._save(path, {"t": [single, *prints], "u": []})  # 120 pairs: more than one frame
    singles = derived._load(path)
    assert singles is not None and singles["u"] == []
    assert [f.mistake for f in singles["t"]] == [second]
    # the pairs are in a file of their own, read on demand
    assert derived._load_pairs(path, "u") == []
    loaded = {"t": derived._load_pairs(path, "t")}
    assert [f.also for f in loaded["t"]] == [(second,)] * 120
    assert np.array_equal(loaded["t"][119].outputs[0], np.arange(3.0) + 119)
    assert not isinstance(loaded["t"][0].outputs[0], Seq)


@pytest.mark.slow
def test_a_function_with_two_mistakes_is_told_both(config: Config) -> None:
    path = REPO / "tests/notebooks/corpus/self_attention/scaled_by_d_no_value_bias.ipynb"
    report = grade_path(path, config, "self_attention")
    result = next(t for t in report.targets if t.name == "scaled_dot_product_self_attention")
    assert {"scale_by_d", "missing_bias"} <= set(result.mistakes)
    # each told at the line of its expression, not the def line (`V = omega_v @ X`, line 4)
    (bias,) = [f for f in result.findings if f.mistake == "missing_bias"]
    assert "`+ beta_v`" in bias.message and bias.location is not None
    assert bias.location.line == 4
