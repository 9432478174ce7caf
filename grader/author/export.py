"""`grader export-gradescope` and `grader template`: ready-made CI for the places students are.

The Gradescope bundle holds the grader's source, a config with the one assignment, and that
assignment's solution, mistakes and data files, so the autograder image grades exactly as
`grader check`.
"""

from __future__ import annotations

import shlex
import zipfile
from importlib import resources
from pathlib import Path

import yaml

from grader.course.config import Config
from grader.errors import UsageError

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the grader package
TEMPLATES = ("github", "gitlab")


def template(name: str) -> str:
    """The text of the bundled CI template `name`; UsageError listing the templates when there is no
    such one."""
    if name not in TEMPLATES:
        raise UsageError(f"no template {name!r}; there are: {', '.join(TEMPLATES)}")
    return resources.files("grader").joinpath(f"templates/ci/{name}.yml").read_text("utf-8")


def export_gradescope(config: Config, assignment_id: str, out: Path) -> Path:
    """Write to `out`, and return it, a Gradescope autograder zip for one assignment: setup and run
    scripts, a config of that assignment alone, its solution, catalogue and data files, and the
    grader package."""
    assignment = config.assignment(assignment_id)
    raw_config = yaml.safe_load(config.path.read_text(encoding="utf-8"))
    spec = dict(raw_config["assignments"][assignment_id])
    spec["solution"] = f"solutions/{assignment.solution.name}"
    spec.pop("exercise", None)
    if assignment.mistakes is not None:
        spec["mistakes"] = f"solutions/{assignment.mistakes.name}"
    bundle_config = {
        "version": 1,
        "defaults": raw_config.get("defaults", {}),
        "assignments": {assignment_id: spec},
    }
    run = resources.files("grader").joinpath("templates/gradescope/run_autograder")
    setup = resources.files("grader").joinpath("templates/gradescope/setup.sh")
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", setup.read_text("utf-8"), executable=True)
        # quoted for the shell: an assignment id is any YAML key
        script = run.read_text("utf-8").replace("@ASSIGNMENT@", shlex.quote(assignment_id))
        _add(bundle, "run_autograder", script, executable=True)
        _add(bundle, "source/config.yaml", yaml.safe_dump(bundle_config, sort_keys=False))
        for path in (assignment.solution, assignment.mistakes):
            if path is not None:
                _add(bundle, f"source/solutions/{path.name}", path.read_text("utf-8"))
        for data in assignment.files:  # `files:` names them relative to the config
            bundle.writestr(f"source/{data.name}", data.source.read_bytes())
        _add(bundle, "source/pyproject.toml", (PACKAGE_ROOT.parent / "pyproject.toml").read_text())
        _add(bundle, "source/README.md", f"Autograder for {assignment_id}.\n")
        for file in sorted(PACKAGE_ROOT.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                name = f"source/grader/{file.relative_to(PACKAGE_ROOT).as_posix()}"
                bundle.writestr(name, file.read_bytes())
    return out


def _add(bundle: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, text)
