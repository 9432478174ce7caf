"""config.yaml: loading, defaults, and key-path error messages (never a traceback)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from grader.course.config import MODES, _passes, load_config
from grader.course.schema import SCHEMA
from grader.errors import ConfigError

from conftest import REPO, repo_config_raw


def write(tmp_path: Path, raw: Any) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(raw if isinstance(raw, str) else yaml.safe_dump(raw))
    return path


def base() -> dict[str, Any]:
    raw: dict[str, Any] = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["cases"] = str(REPO / raw["cases"])  # the course's case builders stay where they are
    return raw


def test_repository_config_loads_with_defaults_and_overrides() -> None:
    config = load_config(REPO / "config.yaml")
    assignment = config.assignment("self_attention")
    assert assignment.solution == REPO / "solutions" / "self_attention.ipynb"
    softmax = assignment.target("softmax")
    assert softmax.compare == "squeeze"
    assert len(softmax.sizes) == 6
    assert assignment.target("qkv_loop").sizes[1] == {"D": 5, "N": 7}
    assert assignment.time_limit.call == 2


def test_scientific_notation_without_a_dot_is_a_number(tmp_path: Path) -> None:
    text = (REPO / "config.yaml").read_text().replace("atol: 1.0e-8", "atol: 1e-7")
    text = text.replace("cases: cases.py", f"cases: {REPO / 'cases.py'}")
    assert "atol: 1e-7" in text
    config = load_config(write(tmp_path, text))
    assert config.assignment("self_attention").target("softmax").tolerance.atol == 1e-7


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda r: r["assignments"]["self_attention"]["targets"]["softmax"].update(points="two"),
            "assignments.self_attention.targets.softmax.points: must be a number, not 'two'",
        ),
        (
            lambda r: r["assignments"]["self_attention"]["targets"]["softmax"].pop("inputs"),
            "assignments.self_attention.targets.softmax: missing required key 'inputs'",
        ),
        (
            lambda r: r["assignments"]["self_attention"].update(colour="red"),
            "assignments.self_attention: unknown key 'colour'",
        ),
        (
            lambda r: r["defaults"]["time_limit"].update(call=0),
            "defaults.time_limit.call: must be > 0, not 0",
        ),
        (
            lambda r: r["assignments"]["self_attention"]["targets"]["softmax"].update(
                compare="fuzzy"
            ),
            "targets.softmax.compare: must be one of 'exact', 'squeeze', not 'fuzzy'",
        ),
        (
            lambda r: r["assignments"]["self_attention"].update(sizes=[{"D": 0}]),
            "assignments.self_attention.sizes.0.D: must be ≥ 1, not 0",
        ),
        (
            lambda r: r["assignments"]["self_attention"]["targets"]["softmax"].update(
                inputs="nonsense"
            ),
            "targets.softmax.inputs: unknown input builder 'nonsense'",
        ),
        (lambda r: r.update(version=2), "version: must be one of 1, not 2"),
    ],
    ids=["points", "required", "unknown-key", "limit", "enum", "size", "builder", "version"],
)
def test_invalid_config_names_the_key_path(tmp_path: Path, edit: Any, message: str) -> None:
    raw = base()
    edit(raw)
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, raw))
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("key_path", "edit"),
    [
        ("assignments.self_attention.late.percent", lambda a: a.update(
            due="2026-03-01T23:59:00+01:00", late={"percent": float("nan")})),
        ("assignments.self_attention.targets.softmax.points",
         lambda a: a["targets"]["softmax"].update(points=float("nan"))),
        ("assignments.self_attention.targets.softmax.tolerance.rtol",
         lambda a: a["targets"]["softmax"].update(tolerance={"rtol": float("nan")})),
    ],
    ids=["late-percent", "points", "tolerance"],
)  # fmt: skip
def test_a_nan_passes_no_bound_and_is_refused_with_its_key_path(
    tmp_path: Path, key_path: str, edit: Any
) -> None:
    # YAML's `.nan` is a number that every minimum and maximum lets through: a late
    # penalty of `nan`%, NaN points or a NaN tolerance made every total NaN or every case fail.
    raw = base()
    edit(raw["assignments"]["self_attention"])
    path = write(tmp_path, raw)
    assert ".nan" in path.read_text()
    with pytest.raises(ConfigError) as info:
        load_config(path)
    said = str(info.value)
    assert said == f"{path} is not a valid grader config: {key_path}: must be a number, not nan"
    assert info.value.exit_code == 2


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    "moment",
    [
        "2026-02-30T23:59:00+01:00",
        "2026-03-01T25:00:00+01:00",
        "2026-03-32",
        "2026-03-01T23:59:00+25:00",
    ],
)
def test_a_date_that_does_not_exist_is_one_line_with_its_line(tmp_path: Path, moment: str) -> None:
    """Unquoted, YAML makes a date of it itself, and one that cannot be is its ValueError
    (a traceback, exit 3, in every command): now a config error naming the line."""
    path = tmp_path / "config.yaml"
    path.write_text(f"version: 1\nassignments:\n  a:\n    due: {moment}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(
        f"{path}: line 4: {moment} is not a date and time that exists ("
    )
    assert info.value.exit_code == 2


def test_invalid_yaml_gives_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not valid YAML at line 2, column \d+"):
        load_config(write(tmp_path, "version: 1\nassignments: a: b\n"))


# Aliases repeating a list nine times, eight levels down: 9**8 values written out. Before,
# reading the dates of this 300-byte file took over 3 GB and never ended; an alias inside its
# own anchor was a RecursionError traceback (exit 3).
BOMB = "".join(
    f"l{level}: &l{level} [{', '.join([f'*l{level - 1}' if level else 'x'] * 9)}]\n"
    for level in range(8)
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (BOMB, "holds more than 200,000 values once its aliases (*name) are written out"),
        ("version: &v\n  me: *v\n", "an alias (*name) is used inside the anchor it names"),
        ("a: " + "[" * 70 + "]" * 70 + "\n", "nested more than 64 levels deep"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nest"),  # libyaml's words, or ours
    ],
)
def test_yaml_that_expands_without_end_is_refused_at_once(
    tmp_path: Path, text: str, words: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert words in str(info.value)


def test_a_config_file_of_megabytes_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("# a comment of ten bytes\n" * 300_000)
    with pytest.raises(ConfigError, match=r"config.yaml: over 2 MB: not a course's config$"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"^/dev/zero: over 2 MB"):  # endless: 24 GB read
        load_config(Path("/dev/zero"))


def test_aliases_within_bounds_still_share_a_value(tmp_path: Path) -> None:
    raw = repo_config_raw()
    shared = {"atol": 1e-6, "rtol": 1e-4}
    for assignment in raw["assignments"].values():
        for target in assignment["targets"].values():
            target["tolerance"] = shared  # one object: dumped once as &id001, then *id001
    (tmp_path / "aliased").mkdir()
    (tmp_path / "written_out").mkdir()
    aliased = write(tmp_path / "aliased", raw)
    written_out = write(tmp_path / "written_out", json.loads(json.dumps(raw)))
    assert "*id001" in aliased.read_text() and "*id" not in written_out.read_text()
    assert load_config(aliased).assignments == load_config(written_out).assignments


def test_yaml_that_would_build_objects_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"version: !!python/object/apply:os.system ['touch {marker}']\nassignments: {{}}\n"
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, text))
    assert not marker.exists()


def test_unknown_assignment_lists_the_known_ones() -> None:
    config = load_config(REPO / "config.yaml")
    with pytest.raises(ConfigError) as info:
        config.assignment("nope")
    assert f"known: {', '.join(sorted(config.assignments))})" in str(info.value)
    assert "self_attention" in str(info.value)


def test_preload_is_read_and_checked(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["assignments"]["udl_12_1"]["preload"] = ["matplotlib.pyplot", "scipy.special"]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    config = load_config(path)
    assert config.assignment("udl_12_1").preload == ("matplotlib.pyplot", "scipy.special")
    assert config.assignment("self_attention").preload == ()
    raw["assignments"]["udl_12_1"]["preload"] = ["os; import evil"]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=r"assignments\.udl_12_1\.preload\.0"):
        load_config(path)


_ODD_VALUES: list[Any] = ["x", -1, 0, 1.5, True, None, [], {}, 2, [{"D": 1}]]


def _broken_variants(raw: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every key or item of `raw` replaced by each odd value, deleted, or given a stranger."""

    def places(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        yield at
        if isinstance(node, dict | list):
            for key, child in node.items() if isinstance(node, dict) else enumerate(node):
                yield from places(child, (*at, key))

    def edited(at: tuple[Any, ...], change: Callable[[Any, Any], None]) -> dict[str, Any]:
        copy_ = copy.deepcopy(raw)
        node: Any = copy_
        for key in at[:-1]:
            node = node[key]
        change(node, at[-1])
        return copy_

    for at in list(places(raw))[1:]:
        for odd in _ODD_VALUES:
            yield edited(at, lambda node, key, odd=odd: node.__setitem__(key, copy.deepcopy(odd)))
        yield edited(at, lambda node, key: node.pop(key) if isinstance(node, dict) else None)
        yield edited(
            at, lambda node, key: node[key].update(stranger=1) if isinstance(node[key], dict) else 0
        )


@pytest.mark.slow
def test_quick_verdict_agrees_with_jsonschema_on_broken_configs() -> None:
    """Configs are judged by fastjsonschema (cheap to import) and explained by jsonschema:
    the two must agree, or a broken config could pass unexplained."""
    raw = base()
    raw["assignments"] = {"self_attention": raw["assignments"]["self_attention"]}
    validator = jsonschema.Draft202012Validator(SCHEMA)
    verdicts = [
        (_passes(variant), not any(True for _ in validator.iter_errors(variant)))
        for variant in _broken_variants(raw)
    ]
    assert len(verdicts) > 500
    assert sum(not slow for _, slow in verdicts) > 400  # most variants really are broken
    assert [fast for fast, _ in verdicts] == [slow for _, slow in verdicts]


def test_a_valid_config_is_loaded_without_importing_jsonschema() -> None:
    code = (
        "import sys; from grader.course.config import load_config; load_config(); "
        "print('jsonschema' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_sandbox_is_read_defaults_to_auto_and_is_checked(tmp_path: Path) -> None:
    from grader.course.schema import SANDBOX_MODES

    assert SANDBOX_MODES == MODES
    assert load_config(REPO / "config.yaml").sandbox == "auto"
    for mode in SANDBOX_MODES:
        assert load_config(write(tmp_path, {**base(), "sandbox": mode})).sandbox == mode
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, {**base(), "sandbox": "sometimes"}))
    assert "sandbox: must be one of 'auto', 'required', 'none', not 'sometimes'" in str(info.value)
    assert "description" in SCHEMA["properties"]["sandbox"]


def course_with_files(tmp_path: Path, files: list[str]) -> Path:
    """A course folder: its solution and catalogue in solutions/, data in data/, a secret."""
    (tmp_path / "solutions").mkdir()
    (tmp_path / "data").mkdir()
    for name in ("solutions/s.ipynb", "solutions/m.py", "data/x.npy", "notes.txt"):
        (tmp_path / name).write_text("x")
    raw = base()
    spec = raw["assignments"]["self_attention"]
    spec.update(solution="solutions/s.ipynb", mistakes="solutions/m.py", files=files)
    spec.pop("exercise")
    raw["assignments"] = {"self_attention": spec}
    return write(tmp_path, raw)


def test_files_are_read_relative_to_the_course(tmp_path: Path) -> None:
    config = load_config(course_with_files(tmp_path, ["data/x.npy", "./notes.txt", "data/x.npy"]))
    files = config.assignment("self_attention").files
    assert [(f.name, f.source) for f in files] == [
        ("data/x.npy", tmp_path.resolve() / "data" / "x.npy"),
        ("notes.txt", tmp_path.resolve() / "notes.txt"),
    ]
    assert "description" in SCHEMA["$defs"]["assignment"]["properties"]["files"]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("data/missing.npy", "does not exist"),
        ("/etc/passwd", "must be a path inside the course folder"),
        ("../outside.txt", "must be a path inside the course folder"),
        ("data/../../outside.txt", "must be a path inside the course folder"),
        ("link.txt", "leads out of the course folder"),
        ("data", "is not a file"),
        ("solutions/s.ipynb", "students' notebooks must never see it"),
        ("solutions/other.npy", "students' notebooks must never see it"),
        ("solutions/m.py", "students' notebooks must never see it"),
        ("hidden/m.py", "students' notebooks must never see it"),
        ("config.yaml", "students' notebooks must never see it"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_key(tmp_path: Path, entry: str, words: str) -> None:
    course = tmp_path / "course"
    course.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    path = course_with_files(course, [entry])
    (course / "link.txt").symlink_to(tmp_path / "outside.txt")
    (course / "solutions" / "other.npy").write_text("x")
    (course / "hidden").symlink_to(course / "solutions")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: assignments.self_attention.files: {entry!r}")
    assert words in message


def test_a_solution_at_the_course_root_hides_itself_not_the_course(tmp_path: Path) -> None:
    path = course_with_files(tmp_path, ["notes.txt"])
    raw = yaml.safe_load(path.read_text())
    raw["assignments"]["self_attention"]["solution"] = "s.ipynb"
    (tmp_path / "s.ipynb").write_text("x")
    path.write_text(yaml.safe_dump(raw))
    assert [f.name for f in load_config(path).assignment("self_attention").files] == ["notes.txt"]
    raw["assignments"]["self_attention"]["files"] = ["s.ipynb"]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match="must never see it"):
        load_config(path)


@pytest.mark.parametrize("text", [".inf", "1e400"])
def test_an_infinity_passes_the_bounds_but_is_refused_with_its_key_path(
    tmp_path: Path, text: str
) -> None:
    # points: .inf (or 1e400) passed `minimum: 0`, and a student passing nothing scored
    # 0 × inf = NaN; selftest said "the untouched exercise scores nan".
    raw = base()
    raw["assignments"]["self_attention"]["targets"]["softmax"]["points"] = 12345.0
    path = write(tmp_path, raw)
    path.write_text(path.read_text().replace("12345.0", text))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    key_path = "assignments.self_attention.targets.softmax.points"
    said = str(info.value)
    assert (
        said == f"{path} is not a valid grader config: {key_path}: must be a finite number, not inf"
    )
    assert info.value.exit_code == 2


def test_a_course_or_bundle_named_by_its_folder_is_read_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--config DIR` (and pytest's `--grader-config DIR`, as the bundle hint says: "name
    that folder") was "[Errno 21] Is a directory"."""
    from grader.course import config as config_module

    assert load_config(REPO).path == REPO / "config.yaml"
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "grader-bundle.npz").write_bytes(b"")
    read: list[Path] = []
    monkeypatch.setattr(config_module, "load_bundle", read.append)
    load_config(bundle)
    assert read == [bundle / "grader-bundle.npz"]
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)  # holds the bundle folder, not a course
    assert str(caught.value) == f"config file not found: {tmp_path / 'config.yaml'}"


def test_a_course_named_by_the_folder_of_the_graded_notebook_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named by its folder, the config beside the notebook was taken (the refusal looked for
    a file), and the note said it was ignored."""
    from grader.course.locate import choose_course, ignored_configs, refuse_beside

    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    monkeypatch.chdir(tmp_path)  # named as `--config .`: no other config.yaml around
    notebook = tmp_path / "x.ipynb"
    course = choose_course(Path("."), notebook)
    assert course.config == Path("config.yaml")
    with pytest.raises(ConfigError, match="never supplies its course"):
        refuse_beside(course, notebook, "--course DIR")
    assert ignored_configs(course, notebook, "--course DIR") == []


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys without a word: a second `points:` under one
    target would silently win. The config says where both are."""
    text = (REPO / "config.yaml").read_text()
    text = text.replace("cases: cases.py", f"cases: {REPO / 'cases.py'}")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("points:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f"{indent}points: 5\n")
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "".join(lines)))
    message = str(info.value)
    assert f"at line {at + 2}, column {len(indent) + 1}" in message
    assert f"`points` is given twice (line {at + 1} and here)" in message
    assert "\n" not in message


def test_merge_keys_and_equal_keys_in_different_mappings_are_still_read(tmp_path: Path) -> None:
    text = (
        "defaults: &d {points: 1, inputs: x}\none: {<<: *d, points: 2}\ntwo: {<<: *d, points: 3}\n"
    )
    from grader.course.config import parse_yaml

    raw = parse_yaml(text, tmp_path / "config.yaml")
    assert raw["one"] == {"points": 2, "inputs": "x"}
    assert raw["two"]["points"] == 3


def test_more_public_cases_than_the_target_has_is_refused(tmp_path: Path) -> None:
    # r50: `public_cases: 10` of 4 sizes made every case public without a word.
    raw = repo_config_raw()
    targets = raw["assignments"]["self_attention"]["targets"]
    targets["softmax"]["public_cases"] = 10
    path = write(tmp_path, raw)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    count = len(
        load_config(REPO / "config.yaml").assignment("self_attention").target("softmax").sizes
    )
    assert str(info.value) == (
        f"{path}: assignments.self_attention.targets.softmax.public_cases: 10, but the target "
        f"has {count} sizes (cases): give at most {count}, or leave it out to make every case "
        "public"
    )
    targets["softmax"]["public_cases"] = count  # every case, said so: taken
    assert load_config(write(tmp_path, raw)).assignment("self_attention").target("softmax")


def test_a_file_that_is_no_config_is_quoted_short_in_its_error(tmp_path: Path) -> None:
    """r55 #8: a roster passed as --config put all of its 7 KB into the one-line error."""
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"s{i:03},Student {i}\n" for i in range(300)))
    with pytest.raises(ConfigError) as refused:
        load_config(roster)
    said = str(refused.value)
    assert said.startswith(f"{roster} is not a valid grader config: (top level): must be a ")
    assert "'id,name s000,Student 0" in said and len(said) < 300, said
    assert said.endswith(" characters)") and "s299" not in said
