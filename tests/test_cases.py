"""Seeded cases: identical every time, of several shapes, never shared between calls."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import grader.course.cases as cases_module
from grader.course.cases import assignment_cases, build_cases, target_cases
from grader.course.config import Config


def test_cases_are_reproducible(config: Config) -> None:
    assignment = config.assignment("self_attention")
    first, second = assignment_cases(assignment), assignment_cases(assignment)
    for name, cases in first.items():
        for a, b in zip(cases, second[name], strict=True):
            assert repr(a.args) == repr(b.args)


def test_every_target_has_a_shape_that_unmasks_hard_coded_sizes(config: Config) -> None:
    for spec in config.assignment("self_attention").targets:
        sizes = spec.sizes
        assert len(sizes) >= 3, spec.name
        if "D" in sizes[0]:
            assert any(s["D"] != 4 and s["N"] != 3 and s["N"] != s["D"] for s in sizes), spec.name
        assert len({tuple(sorted(s.items())) for s in sizes}) == len(sizes)


def test_shapes_follow_the_sizes(config: Config) -> None:
    spec = config.assignment("self_attention").target("self_attention")
    for case in target_cases(1, spec):
        x, omega_v, *_ = case.args
        assert x.shape == (case.sizes["D"], case.sizes["N"])
        assert omega_v.shape == (case.sizes["D"], case.sizes["D"])


def test_softmax_cases_vary_the_container(config: Config) -> None:
    spec = config.assignment("self_attention").target("softmax")
    kinds = {type(c.args[0]).__name__ + type(c.args[0][0]).__name__ for c in target_cases(1, spec)}
    assert kinds == {"listfloat", "listndarray", "ndarrayfloat64"}


def test_fresh_args_are_deep_copies(config: Config) -> None:
    spec = config.assignment("self_attention").target("attention_loop")
    case = target_cases(1, spec)[0]
    args = case.fresh_args()
    args[0][0][:] = 99.0
    assert not np.any(case.args[0][0] == 99.0)


def test_seed_changes_the_numbers(config: Config) -> None:
    spec = config.assignment("self_attention").target("softmax_cols")
    assert not np.array_equal(target_cases(1, spec)[0].args[0], target_cases(2, spec)[0].args[0])


def test_an_assignment_built_on_two_threads_at_once_has_one_case_set(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    # grader check builds the cases on a thread (its early run) beside the engine, which
    # takes that run only with the very same set: two sets built at once made it run twice
    spec = replace(config.assignment("self_attention"), seed=987_654)  # built here first
    real = cases_module.assignment_cases
    both_in = threading.Barrier(2, timeout=1)

    def slow(assignment: Any) -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):
            both_in.wait()  # without the lock both build at once; with it, one waits 1 s
        return real(assignment)

    monkeypatch.setattr(cases_module, "assignment_cases", slow)
    built: list[object] = []
    threads = [threading.Thread(target=lambda: built.append(build_cases(spec))) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 2 and built[0] is built[1]


def test_a_builder_drawing_from_the_global_generator_makes_the_same_cases_anywhere(
    tmp_path: Any,
) -> None:
    # r50: such a builder made other public cases in every process (two releases differed),
    # and a regrade's hidden cases were not the first grading's.
    import json
    import random

    from grader.course.config import load_config

    from conftest import REPO, repo_config_raw

    (tmp_path / "cases.py").write_text(
        (REPO / "cases.py").read_text() + "\n\nimport random\n\n"
        "@builder(needs=['N'])\ndef careless(rng, s, index):\n"
        "    return ([float(v) for v in np.random.normal(size=s['N']) + random.random()],)\n"
    )
    raw = repo_config_raw()
    raw["cases"] = str(tmp_path / "cases.py")
    raw["assignments"]["self_attention"]["targets"]["softmax"]["inputs"] = "careless"
    (tmp_path / "config.yaml").write_text(json.dumps(raw))
    spec = load_config(tmp_path / "config.yaml").assignment("self_attention").target("softmax")
    made = []
    for state in (1, 2):
        np.random.seed(state)
        random.seed(state)
        made.append([repr(c.args) for c in target_cases(7, spec)])
        assert np.random.random() == np.random.RandomState(state).random()  # put back
    assert made[0] == made[1] and len(set(made[0])) == len(made[0]) > 1
