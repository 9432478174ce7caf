"""`grader init` and `grader new-assignment`: a course folder and an assignment's skeleton,
written so that an author edits files and never reads the grader's code.

`init` writes a working course with one small example assignment (`standardize`), every key
of its config commented, so `grader selftest --course DIR` passes at once; `new-assignment`
adds a solution notebook with a stub to fill, an empty mistake catalogue and the config
entry with one declared argument per parameter, to be edited.
"""

from __future__ import annotations

import ast
import keyword
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from grader.author.course_template import files, notebook_text
from grader.course.config import parse_yaml
from grader.course.locate import CONFIG_NAME
from grader.errors import ConfigError, UsageError

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Signature:
    """A function to be written: its name and parameter names, as `--function` gives them."""

    name: str
    parameters: tuple[str, ...]

    def text(self) -> str:
        """`name(a, b)`."""
        return f"{self.name}({', '.join(self.parameters)})"


def parse_signature(text: str) -> Signature:
    """`f(x, y)` (or a bare name, taken as `name(x)`) as a Signature; UsageError otherwise."""
    source = text.strip()
    if keyword.iskeyword(source):
        raise UsageError(f"--function {text!r}: {source} is a Python keyword: name it otherwise")
    if NAME.match(source):
        return Signature(source, ("x",))
    try:
        node = ast.parse(f"def {source}: pass").body[0]
    except SyntaxError:
        raise UsageError(f"--function {text!r}: write it as name(arg, arg, …)") from None
    assert isinstance(node, ast.FunctionDef)
    plain = node.args.args
    extra = node.args.vararg or node.args.kwarg or node.args.kwonlyargs or node.args.posonlyargs
    if extra or node.args.defaults:
        raise UsageError(f"--function {text!r}: only plain positional parameters, no defaults")
    names = [a.arg for a in plain]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise UsageError(f"--function {text!r}: the parameter {twice[0]} is named twice")
    if not plain:
        raise UsageError(
            f"--function {text!r}: a graded function takes at least one argument, drawn per "
            "case (a value the notebook computes is a target with `variable: true`)"
        )
    return Signature(node.name, tuple(a.arg for a in plain))


def init_course(folder: Path) -> list[Path]:
    """Write a new course into `folder` (which must not exist, or be empty); the files made."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} already exists and is not empty: give a new folder")
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for name, text in files().items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        made.append(target)
    (folder / "exercises").mkdir(exist_ok=True)
    return made


def new_assignment(course: Path, name: str, function: str | None) -> list[Path]:
    """Add the assignment `name` to the course in `course`: its solution notebook, mistake
    catalogue and config entry. The files made (the config last)."""
    if not NAME.match(name):
        raise UsageError(f"assignment name {name!r}: use letters, digits and _ (e.g. layer_norm)")
    if function is None and keyword.iskeyword(name):
        raise UsageError(
            f"assignment name {name!r} is a Python keyword, which cannot name its function: "
            "give --function 'f(x)'"
        )
    signature = parse_signature(function or name)
    config = course / CONFIG_NAME
    if not config.is_file():
        raise UsageError(f"{course} has no {CONFIG_NAME}: make a course first (grader init DIR)")
    text = config.read_text(encoding="utf-8")
    if name in _assignments(parse_yaml(text, config)):
        raise UsageError(f"{config}: assignment '{name}' already exists")
    solution = course / "solutions" / f"{name}.ipynb"
    mistakes = course / "solutions" / f"{name}_mistakes.py"
    for path in (solution, mistakes):
        if path.exists():
            raise UsageError(f"{path} already exists: choose another name or move it")
    updated = _with_entry(config, text, name, _entry(name, signature))  # before any write
    solution.parent.mkdir(parents=True, exist_ok=True)
    solution.write_text(_solution_notebook(name, signature), encoding="utf-8")
    mistakes.write_text(_catalogue(signature), encoding="utf-8")
    config.write_text(updated, encoding="utf-8")
    return [solution, mistakes, config]


def _solution_notebook(name: str, signature: Signature) -> str:
    stub = (
        f"def {signature.text()}:\n"
        "    # BEGIN SOLUTION: what the student is asked to do (shown as a TODO)\n"
        "    raise NotImplementedError('write the reference solution here')\n"
        "    # END SOLUTION"
    )
    title = f"# {name}\n\nExplain the task to your students here."
    cells = [("markdown", title), ("code", "import numpy as np"), ("code", stub)]
    return notebook_text(cells, name)


def _catalogue(signature: Signature) -> str:
    params = ", ".join(signature.parameters)
    return (
        f"# Known mistakes of `{signature.name}`: one wrong variant per mistake, written as a\n"
        "# student would write it. The grader reads the decorator's words without running this\n"
        "# file; the variants run only in the sandbox, after the solution notebook (so `np` and\n"
        "# the solution's functions are in scope). `grader selftest` checks each one is caught.\n"
        "# Name each variant <function>__<mistake id>. Example:\n"
        "#\n"
        f"# @CATALOGUE.mistake(\n"
        f'#     "{signature.name}", "wrong_axis",\n'
        '#     "normalises over the wrong axis",          # what the student did\n'
        '#     hint="use axis=-1, the features of each row",  # how to fix it\n'
        "# )\n"
        f"# def {signature.name}__wrong_axis({params}):\n"
        "#     ...\n"
    )


def _assignments(raw: object) -> dict[object, object]:
    """The `assignments:` section of a parsed config; empty when the file has none yet."""
    section = raw.get("assignments") if isinstance(raw, dict) else None
    return section if isinstance(section, dict) else {}


def _key(name: str) -> str:
    """`name` as YAML text that reads back as that string (`yes`, `null`, `on` quoted)."""
    return name if yaml.safe_load(f"{name}: 1") == {name: 1} else f"'{name}'"


def _entry(name: str, signature: Signature) -> str:
    args = "\n".join(
        f"          - {{name: {_key(p)}, shape: [N]}}   # edit: shape, distribution, value…"
        for p in signature.parameters
    )
    return (
        f"  {_key(name)}:\n"
        f"    title: {_key(name)}\n"
        f"    solution: solutions/{name}.ipynb\n"
        f"    exercise: exercises/{name}.ipynb\n"
        f"    mistakes: solutions/{name}_mistakes.py\n"
        f"    seed: {zlib.crc32(name.encode()) % 100_000_000}\n"
        "    sizes: [{N: 3}, {N: 5}, {N: 2}]   # every size key the args use, in each entry\n"
        "    targets:\n"
        f"      {_key(signature.name)}:\n"
        "        points: 1\n"
        f"        args:\n{args}\n"
    )


def _with_entry(config: Path, text: str, name: str, entry: str) -> str:
    """The config's text with the entry added under `assignments:` (the file's last section,
    as `init` writes it), keeping the author's comments; refused when it would not read back."""
    lines = text.rstrip("\n").split("\n")
    empty = [i for i, line in enumerate(lines) if re.match(r"^assignments:\s*\{\}\s*(#.*)?$", line)]
    if empty:
        lines[empty[0]] = "assignments:"
    updated = "\n".join(lines) + "\n" + entry
    if name not in _assignments(parse_yaml(updated, config)):
        raise ConfigError(
            f"{config}: cannot add '{name}' under `assignments:`: keep that section the "
            "file's last, or add the entry by hand (docs/course-author.md)"
        )
    return updated
