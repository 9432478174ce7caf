"""`grader init` and `grader new-assignment`: a course an author can start from, and one-line
errors (exit 2) for what cannot be made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from grader.author.scaffold import parse_signature
from grader.cli import main
from grader.course.config import load_config
from grader.course.mistakes import load_catalogue
from grader.errors import ConfigError, UsageError


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_init_makes_a_course_that_loads_with_its_example(tmp_path: Path) -> None:
    code, out, _ = invoke("init", tmp_path / "course")
    assert code == 0, out
    course = tmp_path / "course"
    config = load_config(course / "config.yaml")
    example = config.assignment("example")
    assert example.solution.is_file() and example.exercise and example.exercise.is_file()
    assert example.mistakes and load_catalogue(example.mistakes).for_target("standardize")
    assert (course / "README.md").is_file() and (course / "cases.py").is_file()
    assert example.target("standardize").args  # declared inputs, no builder
    text = (course / "config.yaml").read_text()
    assert text.count("#") > 10  # the example explains itself


def test_new_assignment_adds_a_skeleton_that_loads(tmp_path: Path) -> None:
    course = tmp_path / "course"
    invoke("init", course)
    before = (course / "config.yaml").read_text()
    code, _, err = invoke(
        "new-assignment",
        "layer_norm",
        "--function",
        "layer_norm(x, gamma, beta, eps)",
        "--course",
        course,
    )
    assert code == 0, err
    after = (course / "config.yaml").read_text()
    assert after.startswith(before.rstrip("\n"))  # the author's comments are kept
    spec = load_config(course / "config.yaml").assignment("layer_norm")
    target = spec.target("layer_norm")
    assert [a.name for a in target.args] == ["x", "gamma", "beta", "eps"]
    notebook = json.loads(spec.solution.read_text())
    sources = ["".join(c["source"]) for c in notebook["cells"]]
    assert any(s.startswith("def layer_norm(x, gamma, beta, eps):") for s in sources)
    assert spec.mistakes is not None and load_catalogue(spec.mistakes).mistakes == []
    assert yaml.safe_load(after)["assignments"]["example"]["targets"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("new-assignment", "9lives"), "use letters, digits and _"),
        (("new-assignment", "ok", "--function", "f(x=1)"), "no defaults"),
        (("new-assignment", "ok", "--function", "f(x"), "write it as name(arg, arg, …)"),
        (("new-assignment", "example"), "assignment 'example' already exists"),
    ],
)
def test_what_cannot_be_added_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], words: str
) -> None:
    invoke("init", tmp_path / "c")
    code, _, err = invoke(*args, "--course", tmp_path / "c")
    assert code == 2 and err.count("\n") == 1 and words in err, err


def test_init_refuses_a_folder_that_has_something_in_it(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "notes.txt").write_text("mine")
    code, _, err = invoke("init", tmp_path / "c")
    assert code == 2 and "already exists and is not empty" in err
    code, _, err = invoke("new-assignment", "x", "--course", tmp_path / "c")
    assert code == 2 and "has no config.yaml" in err


def test_new_assignment_finds_the_course_from_a_folder_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r55 #7: run from the course's `solutions/` it said ". has no config.yaml", where
    `selftest` from the same folder found the course."""
    course = tmp_path / "course"
    invoke("init", course)
    monkeypatch.chdir(course / "solutions")
    code, _, err = invoke("new-assignment", "attn", "--function", "attn(q, k)")
    assert code == 0, err
    assert (course / "solutions" / "attn.ipynb").is_file()
    assert not (course / "solutions" / "solutions").exists()
    assert "attn" in yaml.safe_load((course / "config.yaml").read_text())["assignments"]
    monkeypatch.chdir(tmp_path)  # no course here nor above (tmp_path's parents hold none)
    code, _, err = invoke("new-assignment", "other")
    assert code == 2 and err.count("\n") == 1, err
    assert "no config.yaml in" in err and "or name it with --course DIR" in err


def test_signatures() -> None:
    assert parse_signature("softmax").text() == "softmax(x)"
    assert parse_signature(" f(a, b) ").parameters == ("a", "b")
    with pytest.raises(UsageError):
        parse_signature("f(*a)")


@pytest.mark.parametrize(
    ("signature", "said"),
    [
        ("f(x, x)", "the parameter x is named twice"),  # written, then a SyntaxError
        ("g(a, b, /, c)", "only plain positional parameters"),  # written as g(c)
        ("g(a, /)", "only plain positional parameters"),  # "takes at least one argument"
    ],
)
def test_a_signature_that_would_be_written_wrong_is_one_line(signature: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_signature(signature)
    assert str(caught.value) == f"--function {signature!r}: " + (
        said if said.startswith("the") else said + ", no defaults"
    )


def test_static_words_need_the_sign_they_describe(tmp_path: Path) -> None:
    catalogue = tmp_path / "m.py"
    catalogue.write_text(
        '@CATALOGUE.mistake("f", "m", "words", hint="h", static="`{code}` lost")\n'
        "def f__m(x):\n    return x\n"
    )
    with pytest.raises(ConfigError, match="static= words need requires="):
        load_catalogue(catalogue)
    catalogue.write_text(
        catalogue.read_text().replace('hint="h",', 'hint="h", requires="discarded",')
    )
    (mistake,) = load_catalogue(catalogue).mistakes
    assert mistake.static == "`{code}` lost" and mistake.requires == "discarded"


def test_inits_config_offers_the_sandbox_key_a_course_uncomments(tmp_path: Path) -> None:
    course = tmp_path / "course"
    assert CliRunner().invoke(main, ["init", str(course)]).exit_code == 0
    config = course / "config.yaml"
    assert load_config(config).sandbox_named is False  # auto, unasked, as before
    text = config.read_text(encoding="utf-8")
    assert text.count("# sandbox: required ") == 1
    config.write_text(text.replace("# sandbox: required ", "sandbox: required "))
    loaded = load_config(config)
    assert loaded.sandbox == "required" and loaded.sandbox_named


def test_inits_config_offers_the_semester_keys_a_course_uncomments(tmp_path: Path) -> None:
    """`due`, `late`, `keep` and `time_zone` are offered commented out (docs: "every key
    commented"), and load as written once uncommented (r55: init offered none of them)."""
    course = tmp_path / "course"
    assert CliRunner().invoke(main, ["init", str(course)]).exit_code == 0
    config = course / "config.yaml"
    assert load_config(config).assignment("example").late is None  # nothing late, unasked
    text = config.read_text(encoding="utf-8")
    for key in ("# time_zone: ", "    # due: ", "    # late: ", "    # keep: "):
        assert text.count(key) == 1, key
        text = text.replace(key, key.replace("# ", "", 1))
    config.write_text(text, encoding="utf-8")
    loaded = load_config(config)
    example = loaded.assignment("example")
    assert example.late is not None and example.late.percent == 10 and example.late.per == "day"
    assert example.late.due.isoformat() == "2026-03-01T23:59:00+01:00"
    assert example.keep == "latest" and str(loaded.zone()) == "Europe/Berlin"
