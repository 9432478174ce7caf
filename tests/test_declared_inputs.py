"""Inputs declared in config.yaml (`args:`) and built by a course's cases.py: the bundled
course draws exactly what the package's builders drew before they moved out of it, and a
size key a `sizes` entry lacks is one config error with its key path, never a KeyError."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import legacy_builders
import numpy as np
import pytest
import yaml

from grader.course.cases import PROBE_OFFSET, probe_base, probe_cases, target_cases
from grader.course.config import Config, load_config
from grader.errors import ConfigError

from conftest import REPO, repo_config_raw

# Which of the old package builders made each target's arguments (the old config's
# `inputs:`): the oracle each moved declaration or builder is compared with.
LEGACY = {
    "qkv_loop": "qkv_loop",
    "softmax": "score_list",
    "attention_loop": "qkv_lists",
    "softmax_cols": "score_matrix",
    "self_attention": "attention_columns",
    "scaled_dot_product_self_attention": "attention_columns",
    "causal_mask": "causal_size",
    ("masked_attention", "softmax"): "score_rows",
    "scaled_dot_product_attention": "qkv_rows",
    "multihead_scaled_self_attention": "two_heads",
    "project_qkv": "projection",
    "stable_softmax": "stable_scores",
    "word_attention": "qkv_word",
    "sentence_attention": "qkv_sentence",
    "cosine_similarity": "vector_pair",
    "low_rank_approximation": "low_rank",
    "pointwise_mutual_information": "probabilities",
}


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, arrays bit for bit (dtype and shape too)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def legacy_args(seed: int, name: str, builder: str, sizes: dict[str, int], index: int) -> Any:
    rng = np.random.default_rng([seed, zlib.crc32(name.encode()), index])
    return legacy_builders.BUILDERS[builder](rng, sizes, index)


def test_every_bundled_case_is_drawn_as_the_package_builders_drew_it(config: Config) -> None:
    compared = 0
    for assignment in config.assignments.values():
        for target in assignment.targets:
            if target.variable:
                continue
            builder = LEGACY.get((assignment.id, target.name)) or LEGACY[target.name]
            for case in target_cases(assignment.seed, target):
                old = legacy_args(
                    assignment.seed, target.name, builder, dict(case.sizes), case.index
                )
                assert same(case.args, old), (assignment.id, target.name, case.index)
                compared += 1
    assert compared == sum(
        len(t.sizes) for a in config.assignments.values() for t in a.targets if not t.variable
    )
    declared = [t for a in config.assignments.values() for t in a.targets if t.args]
    built = [t for a in config.assignments.values() for t in a.targets if t.cases]
    assert declared and built  # both routes are exercised


def write(folder: Path, raw: dict[str, Any], cases: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if cases is not None:
        (folder / "cases.py").write_text(cases)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def one_target(target: dict[str, Any], sizes: list[dict[str, int]]) -> dict[str, Any]:
    assignment = {"solution": "s.ipynb", "seed": 3, "sizes": sizes, "targets": {"f": target}}
    return {"version": 1, "assignments": {"a": assignment}}


def test_a_builder_needing_a_size_key_the_sizes_lack_is_refused_with_its_key_path(
    tmp_path: Path,
) -> None:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["softmax"]["sizes"] = [{"D": 3}]
    path = write(tmp_path / "course", raw)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: assignments.self_attention.targets.softmax.sizes[0]: "
        "needs size key N for builder 'score_list'"
    )


def test_declared_args_needing_a_missing_size_key_name_the_assignment_sizes(
    tmp_path: Path,
) -> None:
    target = {"points": 1, "args": [{"shape": ["N", "D"]}]}
    path = write(tmp_path, one_target(target, [{"N": 2, "D": 3}, {"N": 4}]))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: assignments.a.sizes[1]: needs size key D for its args (used by targets.f)"
    )


def test_the_cli_says_one_line_and_exits_2(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["softmax"]["sizes"] = [{"D": 3}]
    path = write(tmp_path / "course", raw)
    notebook = REPO / "solutions" / "self_attention.ipynb"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(notebook), "--config", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "softmax.sizes[0]: needs size key N" in lines[0]
    assert "Traceback" not in done.stderr


def test_each_declaration_draws_what_it_says(tmp_path: Path) -> None:
    args = [
        {"name": "x", "shape": ["N", "D"], "std": 2.0, "mean": 1.0},
        {"name": "w", "shape": ["D", "D"], "fan_in": "D"},
        {"name": "cols", "list": "N", "shape": ["D", 1]},
        {"name": "u", "shape": ["N"], "distribution": "uniform", "low": -1.0, "high": 1.0},
        {"name": "i", "distribution": "integers", "low": 0, "high": "N", "dtype": "int64"},
        {"name": "v", "shape": ["D"], "distribution": "positive", "std": 0.5},
        {"name": "s", "shape": ["N", "D"], "special": "overflow", "dtype": "float32"},
        {"name": "m", "shape": ["N", "D"], "special": "masked"},
        {"causal_mask": "N"},
        {"size": "D"},
        {"value": 1.0e-5},
    ]
    path = write(tmp_path, one_target({"points": 1, "args": args}, [{"N": 4, "D": 5}]))
    spec = load_config(path).assignment("a")
    (case,) = target_cases(spec.seed, spec.target("f"))
    x, w, cols, u, i, v, s, m, mask, size, eps = case.args
    rng = np.random.default_rng([3, zlib.crc32(b"f"), 0])
    assert np.array_equal(x, rng.standard_normal((4, 5)) * 2.0 + 1.0)
    assert np.array_equal(w, rng.standard_normal((5, 5)) / np.sqrt(5))
    assert isinstance(cols, list) and len(cols) == 4 and all(c.shape == (5, 1) for c in cols)
    for c in cols:
        assert np.array_equal(c, rng.standard_normal((5, 1)))
    assert np.array_equal(u, rng.uniform(-1.0, 1.0, size=4)) and np.all(np.abs(u) <= 1)
    assert i == int(rng.integers(0, 4)) and isinstance(i, int)
    assert np.array_equal(v, np.abs(rng.standard_normal(5)) * 0.5 + 0.1) and np.all(v > 0)
    assert s.dtype == np.float32 and np.all(s > 900)
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(np.exp(s.astype(float))))  # a naive softmax overflows
    rng.standard_normal((4, 5))
    expected_m = rng.standard_normal((4, 5))
    expected_m[np.triu_indices(4, k=2, m=5)] = -np.inf
    assert np.array_equal(m, expected_m) and np.all(np.isfinite(m).any(axis=1))
    assert np.array_equal(mask, np.triu(np.full((4, 4), -np.inf), k=1) + np.tril(np.zeros((4, 4))))
    assert size == 5 and eps == 1.0e-5


def test_a_course_builder_is_found_beside_the_config_and_sees_only_its_keys(
    tmp_path: Path,
) -> None:
    cases = (
        "from grader.course.inputs import builder\n\n"
        "@builder(needs=['N'])\n"
        "def pair(rng, sizes, index):\n"
        "    return (rng.standard_normal(sizes['N']), index)\n\n"
        "@builder(needs=['N'])\n"
        "def sneaky(rng, sizes, index):\n"
        "    return (sizes['D'],)\n"
    )
    raw = one_target({"points": 1, "inputs": "pair"}, [{"N": 2, "D": 7}, {"N": 3, "D": 1}])
    spec = load_config(write(tmp_path, raw, cases)).assignment("a")
    first, second = target_cases(spec.seed, spec.target("f"))
    assert first.args[0].shape == (2,) and second.args == (second.args[0], 1)
    raw["assignments"]["a"]["targets"]["f"]["inputs"] = "sneaky"
    spec = load_config(write(tmp_path, raw)).assignment("a")
    with pytest.raises(ConfigError, match="reads size key 'D', which its @builder"):
        target_cases(spec.seed, spec.target("f"))


@pytest.mark.parametrize(
    ("cases", "target", "message"),
    [
        (None, {"inputs": "nope"}, "targets.f.inputs: unknown input builder 'nope'"),
        ("x = (\n", {"inputs": "nope"}, "cases.py, line 1: does not parse"),
        ("1 / 0\n", {"inputs": "nope"}, "cases.py, line 1: fails when loaded: ZeroDivisionError"),
        (None, {"inputs": "a", "args": [{"size": "N"}]}, "give `inputs` (a builder) or `args`"),
        (None, {"args": [{"size": "N", "shape": [2]}]}, "args[0]: `size` is a value of its own"),
        (None, {"args": [{"distribution": "uniform", "std": 2}]}, "parameters of normal"),
        (None, {"args": [{"dtype": "complex"}]}, "args.0.dtype: must be one of"),
    ],
)
def test_broken_inputs_are_one_config_error(
    tmp_path: Path, cases: str | None, target: dict[str, Any], message: str
) -> None:
    path = write(tmp_path, one_target({"points": 1, **target}, [{"N": 2}]), cases)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(path)


def test_the_case_builders_are_never_a_students_data_file(tmp_path: Path) -> None:
    (tmp_path / "s.ipynb").write_text("x")
    raw = one_target({"points": 1, "args": [{"size": "N"}]}, [{"N": 2}])
    raw["assignments"]["a"]["files"] = ["cases.py"]
    path = write(tmp_path, raw, "# no builders\n")
    with pytest.raises(ConfigError, match=r"the case builders.*must never see it"):
        load_config(path)


def test_a_builder_must_return_the_tuple_of_arguments(tmp_path: Path) -> None:
    cases = (
        "from grader.course.inputs import builder\n\n"
        "@builder(needs=['N'])\n"
        "def bare(rng, sizes, index):\n"
        "    return rng.standard_normal(sizes['N'])\n"
    )
    raw = one_target({"points": 1, "inputs": "bare"}, [{"N": 2}])
    spec = load_config(write(tmp_path, raw, cases)).assignment("a")
    with pytest.raises(ConfigError, match="returned ndarray, not a tuple"):
        target_cases(spec.seed, spec.target("f"))
    (tmp_path / "cases.py").write_text(cases.replace("return rng", "return 1 / 0, rng"))
    spec = load_config(tmp_path / "config.yaml").assignment("a")
    with pytest.raises(ConfigError, match=r"'bare' fails on case 0 \({'N': 2}\): ZeroDivision"):
        target_cases(spec.seed, spec.target("f"))


def test_declared_args_too_large_for_memory_are_a_config_error(tmp_path: Path) -> None:
    # 10**7 x 10**7 doubles (800 TB, past any address space, so refused even where memory
    # is overcommitted): numpy's MemoryError was a traceback (exit 3) from check, selftest
    # and assign alike.
    target = {"points": 1, "args": [{"name": "x", "shape": ["N", "D"]}]}
    raw = one_target(target, [{"N": 10**7, "D": 10**7}])
    (tmp_path / "s.ipynb").write_text("x")
    spec = load_config(write(tmp_path, raw)).assignment("a")
    with pytest.raises(ConfigError) as caught:
        target_cases(spec.seed, spec.target("f"))
    assert str(caught.value) == (
        "target 'f': the args of case 0 ({'N': 10000000, 'D': 10000000}) need more memory than "
        "this machine has: use smaller sizes"
    )


def test_case_builders_named_by_cases_are_never_a_data_file_either(tmp_path: Path) -> None:
    (tmp_path / "s.ipynb").write_text("x")
    (tmp_path / "builders.py").write_text("# none yet\n")
    raw = one_target({"points": 1, "args": [{"size": "N"}]}, [{"N": 2}])
    raw["cases"] = "builders.py"
    raw["assignments"]["a"]["files"] = ["builders.py"]
    with pytest.raises(ConfigError, match=r"files: 'builders.py' is the course's case builders"):
        load_config(write(tmp_path, raw))


def test_probes_keep_labels_indices_and_masks_of_their_type(tmp_path: Path) -> None:
    """r43: the probes (does the output depend on each argument?) added noise to every
    array, so integer labels and boolean masks became floats and a solution indexing with
    them raised on a case its author never declared: every command of the course stopped."""
    args = [
        {"name": "p", "shape": ["N", "C"]},
        {"name": "y", "shape": ["N"], "distribution": "integers", "low": 0, "high": "C",
         "dtype": "int64"},
        {"name": "keep", "shape": ["N", "C"], "distribution": "uniform", "dtype": "bool"},
        {"name": "h", "shape": ["N"], "dtype": "float32"},
    ]  # fmt: skip
    sizes = [{"N": 5, "C": 3}, {"N": 6, "C": 4}]
    path = write(tmp_path, one_target({"points": 1, "args": args}, sizes))
    spec = load_config(path).assignment("a")
    cases = target_cases(spec.seed, spec.target("f"))
    base = probe_base(cases)
    probes = probe_cases(spec.seed, cases)
    assert [c.index for c in probes] == [PROBE_OFFSET + n for n in range(4)]
    for probe in probes:
        p, y, keep, h = probe.args
        assert y.dtype == np.int64 and keep.dtype == bool and h.dtype == np.float32
        p[np.arange(len(y)), y] += keep.sum(axis=1) + h  # indexes as a solution would
    changed = [probe.args[n] for n, probe in enumerate(probes)]
    assert not np.array_equal(changed[0], base.args[0])
    assert sorted(changed[1]) == sorted(base.args[1])  # the same labels, shuffled
    assert np.count_nonzero(changed[2] != base.args[2]) == 1  # one truth value flipped
    assert not np.array_equal(changed[3], base.args[3])
