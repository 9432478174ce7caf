"""`grader export-gradescope` and `grader template`: ready-made CI for the places students are.

The Gradescope autograder is laid out as Gradescope uses it: `setup.sh` and `run_autograder`
at the root of the zip, which Gradescope unpacks into `/autograder/source`; that folder is
also the course (a config with the one assignment, its solution, mistakes and data files),
and `package/` holds the grader as a project `setup.sh` installs, so the autograder image
grades exactly as `grader check`.
"""

from __future__ import annotations

import json
import shlex
import zipfile
from importlib import metadata, resources
from pathlib import Path

import yaml

from grader.author.assign import course_sources, readable_solution
from grader.course.config import AssignmentSpec, Config
from grader.course.inputs import local_imports
from grader.errors import UsageError
from grader.judge.preflight import check_files, checked_catalogue

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the grader package
DISTRIBUTION = "attention-grader"
TEMPLATES = ("github", "gitlab")


def template(name: str) -> str:
    """The CI file of a template (`github`, `gitlab`), as `grader template NAME` prints it."""
    if name not in TEMPLATES:
        raise UsageError(f"no template {name!r}; there are: {', '.join(TEMPLATES)}")
    return resources.files("grader").joinpath(f"templates/ci/{name}.yml").read_text("utf-8")


def package_project() -> str:
    """A pyproject.toml that installs this grader from its own files, however it was installed
    (a checkout or a wheel): its name, version and runtime dependencies, from its metadata."""
    requires = [r for r in metadata.requires(DISTRIBUTION) or [] if "extra ==" not in r]
    version = metadata.version(DISTRIBUTION)
    python = metadata.metadata(DISTRIBUTION)["Requires-Python"] or ">=3.11"
    return "\n".join(
        [
            "[build-system]",
            'requires = ["setuptools>=68"]',
            'build-backend = "setuptools.build_meta"',
            "",
            "[project]",
            f"name = {json.dumps(DISTRIBUTION)}",
            f"version = {json.dumps(version)}",
            f"requires-python = {json.dumps(python)}",
            f"dependencies = {json.dumps(requires)}",
            "",
            "[project.scripts]",
            'grader = "grader.cli:main"',
            "",
            "[tool.setuptools.packages.find]",
            'include = ["grader*"]',
            "",
            "[tool.setuptools.package-data]",
            'grader = ["templates/*.j2", "templates/serve/*", "templates/ci/*.yml",'
            ' "templates/gradescope/*"]',
            "",
        ]
    )


def _course_config(config: Config, assignment_id: str) -> str:
    """The course's config with only this assignment, its paths inside the autograder."""
    assignment = config.assignment(assignment_id)
    raw_config = yaml.safe_load(config.path.read_text(encoding="utf-8"))
    spec = dict(raw_config["assignments"][assignment_id])
    spec["solution"] = f"solutions/{assignment.solution.name}"
    spec.pop("exercise", None)
    # Gradescope runs `grader check`, which charges no lateness: its own late policy does.
    spec.pop("due", None)
    spec.pop("late", None)
    if assignment.mistakes is not None:
        spec["mistakes"] = f"solutions/{assignment.mistakes.name}"
    bundle_config = {
        "version": 1,
        "defaults": raw_config.get("defaults", {}),
        "assignments": {assignment_id: spec},
    }
    # On Gradescope the grader runs as root beside /autograder/results: a notebook run
    # without the sandbox could write its own results.json. Unless the course says
    # otherwise, the autograder grades only inside the sandbox (UNSANDBOXED_NOTE).
    bundle_config["sandbox"] = config.sandbox if config.sandbox_named else "required"
    if _course_cases(config, assignment_id) is not None:
        bundle_config["cases"] = "cases.py"
    return yaml.safe_dump(bundle_config, sort_keys=False)


UNSANDBOXED_NOTE = (
    "the autograder grades only inside the sandbox (`sandbox: required`): where Gradescope "
    "cannot make one, every result is 0 with the reason. `sandbox: auto` in config.yaml "
    "grades there with process limits alone, where a notebook can forge its own grade "
    "(docs/ci.md, 'Whose grade CI can forge')"
)


LATE_NOTE = (
    "the assignment's `due:` and `late:` are not in the autograder: Gradescope charges "
    "lateness by its own settings, so set the due date and late policy on the assignment's "
    "Gradescope page"
)


def _course_cases(config: Config, assignment_id: str) -> Path | None:
    """The course's cases.py when a target of the assignment names one of its builders."""
    targets = config.assignment(assignment_id).targets
    return next((t.cases.path for t in targets if t.cases is not None), None)


def _refuse(config: Config, assignment: AssignmentSpec, out: Path) -> None:
    """Before the zip is opened (which empties `out`): the course's files are there and read,
    and `out` is none of them, nor a folder. ConfigError or UsageError, in one line."""
    if str(out) == "-":  # `grader export --out -` writes text; a zip is a file to upload
        raise UsageError(
            "--out -: the autograder is a zip to upload, not text for standard output: "
            "name the file, e.g. --out autograder.zip"
        )
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder: name the zip, e.g. --out {out}/autograder.zip")
    kept = course_sources(config)
    kept.update({s.exercise.resolve(): f"assignments.{s.id}.exercise"
                 for s in config.assignments.values() if s.exercise is not None})  # fmt: skip
    if out.resolve() in kept:
        raise UsageError(f"--out {out} is {kept[out.resolve()]}: name a new file for the zip")
    check_files(config, [assignment])
    checked_catalogue(config, assignment)  # read as every grading command reads it
    readable_solution(assignment.solution)


def export_gradescope(config: Config, assignment_id: str, out: Path) -> Path:
    """Write the autograder zip for one assignment (see the module's docstring)."""
    assignment = config.assignment(assignment_id)
    _refuse(config, assignment, out)
    run = resources.files("grader").joinpath("templates/gradescope/run_autograder")
    setup = resources.files("grader").joinpath("templates/gradescope/setup.sh")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", setup.read_text("utf-8"), executable=True)
        # quoted for the shell: an assignment id is any YAML key
        script = run.read_text("utf-8").replace("@ASSIGNMENT@", shlex.quote(assignment_id))
        _add(bundle, "run_autograder", script, executable=True)
        _add(bundle, "config.yaml", _course_config(config, assignment_id))
        for path in (assignment.solution, assignment.mistakes):
            if path is not None:
                _add(bundle, f"solutions/{path.name}", path.read_text("utf-8"))
        if (cases := _course_cases(config, assignment_id)) is not None:
            _add(bundle, "cases.py", cases.read_text("utf-8"))
            for module in local_imports(cases):  # its own helpers, beside it (r50 #3)
                bundle.writestr(module.relative_to(cases.parent).as_posix(), module.read_bytes())
        for data in assignment.files:  # `files:` names them relative to the config
            bundle.writestr(data.name, data.source.read_bytes())
        _add(bundle, "package/pyproject.toml", package_project())
        _add(bundle, "package/README.md", f"The grader, for the autograder of {assignment_id}.\n")
        for file in sorted(PACKAGE_ROOT.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                name = f"package/grader/{file.relative_to(PACKAGE_ROOT).as_posix()}"
                bundle.writestr(name, file.read_bytes())
    return out


def _add(bundle: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, text)
