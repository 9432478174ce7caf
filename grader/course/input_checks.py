"""When the config loads: every target's inputs exist (declared `args`, or a builder of the
course's cases.py) and every `sizes` entry holds the size keys they need. A gap is one
ConfigError with the key path (exit 2), never a KeyError in the middle of grading."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.course.declared import ArgSpec, declared_needs, parse_args
from grader.course.inputs import CourseCases, course_cases
from grader.errors import ConfigError

DEFAULT_CASES = "cases.py"


def find_course_cases(raw: Mapping[str, Any], path: Path) -> CourseCases | None:
    """The course's cases.py: `cases:` when given (it must exist), else cases.py beside the
    config when there is one, else None."""
    base = path.resolve().parent
    if "cases" in raw:
        given = base / raw["cases"]
        if not given.is_file():
            raise ConfigError(f"{path}: cases: no such file: {given}")
        return course_cases(given)
    beside = base / DEFAULT_CASES
    return course_cases(beside) if beside.is_file() else None


def target_args(target: Mapping[str, Any], where: str) -> tuple[ArgSpec, ...]:
    """A target's declared arguments (none when it names a builder)."""
    return parse_args(target["args"], where) if "args" in target else ()


def check_inputs(raw: Mapping[str, Any], path: Path, cases: CourseCases | None) -> None:
    """Each non-variable target has exactly one of `inputs`/`args`, a named builder exists,
    and every `sizes` entry it is called with holds the keys its inputs need."""
    for aid, assignment in raw["assignments"].items():
        for name, target in assignment["targets"].items():
            key = f"assignments.{aid}.targets.{name}"
            where = f"{path}: {key}"
            if target.get("variable"):
                if "inputs" in target or "args" in target:
                    raise ConfigError(f"{where}: a variable target takes no `inputs`")
                continue
            if "inputs" in target and "args" in target:
                raise ConfigError(f"{where}: give `inputs` (a builder) or `args`, not both")
            if "inputs" not in target and "args" not in target:
                raise ConfigError(
                    f"{where}: missing required key 'inputs' (or `args`, or `variable: true`)"
                )
            if "args" in target:
                needs, what = declared_needs(target_args(target, where)), "its args"
            else:
                needs = _builder_needs(target["inputs"], cases, f"{where}.inputs", path)
                what = f"builder '{target['inputs']}'"
            if "sizes" in target:
                entries, at = target["sizes"], f"{key}.sizes"
            else:
                entries, at = assignment["sizes"], f"assignments.{aid}.sizes"
            for index, sizes in enumerate(entries):
                missing = [k for k in needs if k not in sizes]
                if missing:
                    also = "" if "sizes" in target else f" (used by targets.{name})"
                    raise ConfigError(
                        f"{path}: {at}[{index}]: needs size key {missing[0]} for {what}{also}"
                    )


def _builder_needs(name: str, cases: CourseCases | None, where: str, path: Path) -> tuple[str, ...]:
    builders = cases.builders() if cases is not None else {}
    if name not in builders:
        known = ", ".join(sorted(builders)) or "none"
        place = cases.path if cases is not None else path.parent / DEFAULT_CASES
        raise ConfigError(
            f"{where}: unknown input builder '{name}' (known: {known}; builders are "
            f"registered with @builder in {place})"
        )
    return builders[name][1]
