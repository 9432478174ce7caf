"""The grader from a wheel: built from this repository, installed (not editable) into a fresh
virtual environment, it holds no course and grades anywhere against a course it is shown.

Slow: it builds the wheel and installs it with its dependencies from the package index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow

ENV = ("GRADER_CONFIG", "GRADER_COURSE")
# What a copy of the repository leaves out: build outputs and local state, not course files.
LOCAL = (".git", ".venv", "build", "*.egg-info", "__pycache__", "results", ".*_cache")
DEMO = REPO / "demo" / "submissions"


def run(*args: str | Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ENV and k != "PYTHONPATH"}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def installed() -> Iterator[tuple[Path, Path]]:
    """(the wheel, the `grader` script of a fresh venv that has it installed). In a folder
    any user can read, as an installed package is: bubblewrap runs as nobody for root."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-wheel-"))
    root.chmod(0o755)
    try:
        yield _install(root)
    finally:
        shutil.rmtree(root)


def _install(root: Path) -> tuple[Path, Path]:
    source = root / "source"  # a copy: building in place would leave build/ in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LOCAL))
    built = run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", root / "dist", source, cwd=root
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("*.whl")
    venv = root / "venv"
    made = run("/usr/bin/python3.11", "-m", "venv", venv, cwd=root)
    assert made.returncode == 0, made.stderr
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    done = run(venv / "bin" / "pip", "install", "--quiet", wheel, cwd=root)
    assert done.returncode == 0, done.stderr
    return wheel, venv / "bin" / "grader"


def test_the_wheel_holds_the_package_and_no_course(installed: tuple[Path, Path]) -> None:
    names = zipfile.ZipFile(installed[0]).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"grader", "attention_grader-0.1.0.dist-info"}, tops
    assert "grader/cli/grading.py" in names
    assert "grader/templates/gradescope/run_autograder" in names
    course = {p.name for p in REPO.iterdir()} & {"solutions", "exercises", "config.yaml"}
    assert course == {"solutions", "exercises", "config.yaml"}  # what must stay out
    assert not [n for n in names if any(part in course for part in n.split("/"))]
    site = installed[1].parent.parent / "lib" / "python3.11" / "site-packages"
    assert not [p.name for p in site.iterdir() if p.name in course]


@pytest.mark.sandbox
def test_the_installed_grader_checks_a_notebook_anywhere(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The same JSON as the checkout's grader gives, with --course and with $GRADER_COURSE."""
    away = tmp_path / "away"
    away.mkdir()
    notebook = shutil.copy(DEMO / "bruno.ipynb", away / "bruno.ipynb")
    grader = installed[1]
    check = ("check", "bruno.ipynb", "--format", "json")
    results = [
        run(sys.executable, "-m", "grader", *check, "--course", REPO, cwd=away),
        run(grader, *check, "--course", REPO, cwd=away),
        run(grader, *check, cwd=away, GRADER_COURSE=str(REPO)),
    ]
    reports = []
    for result in results:
        assert result.returncode in (0, 1) and result.stderr == "", result.stderr
        report = json.loads(result.stdout)
        report.pop("seconds")
        reports.append(report)
    assert reports[0]["submission"] == Path(notebook).name and reports[0]["max_score"] > 0
    assert not [note for note in reports[0]["notes"] if "sandbox" in note]  # it had one
    assert reports[1] == reports[0] and reports[2] == reports[0]
    assert {r.returncode for r in results} == {results[0].returncode}


def test_the_installed_grader_without_a_course_says_how_to_name_one(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    shutil.copy(DEMO / "bruno.ipynb", tmp_path / "bruno.ipynb")
    result = run(installed[1], "check", "bruno.ipynb", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "no course found" in lines[0] and "--course DIR" in lines[0]


def _solution_bodies() -> dict[str, str]:
    """The bundled course's solution functions (bodies its exercises do not hand out), as
    normalised ASTs."""
    import ast

    from grader.course.notebook import load_submission

    def bodies(path: Path) -> dict[str, str]:
        notebook = load_submission(path)
        return {
            node.name: ast.dump(ast.Module(node.body, []))
            for cell in notebook.cells
            for node in notebook.tree(cell.index).body
            if isinstance(node, ast.FunctionDef)
        }

    found: dict[str, str] = {}
    for solution in (REPO / "solutions").glob("*.ipynb"):
        stubs = (
            bodies(REPO / "exercises" / solution.name)
            if (REPO / "exercises" / solution.name).is_file()
            else {}
        )
        found.update({n: b for n, b in bodies(solution).items() if stubs.get(n) != b})
    return found


def test_no_solution_function_body_is_in_the_wheel(installed: tuple[Path, Path]) -> None:
    import ast

    solutions = set(_solution_bodies().values())
    assert len(solutions) >= 6
    with zipfile.ZipFile(installed[0]) as wheel:
        sources = [wheel.read(n) for n in wheel.namelist() if n.endswith(".py")]
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef):
                assert ast.dump(ast.Module(node.body, [])) not in solutions, node.name


STUDENT_RUN = """
import sys
import nbclient, nbformat
notebook = nbformat.read(sys.argv[1], as_version=4)
where = {"metadata": {"path": sys.argv[2]}}
nbclient.NotebookClient(notebook, timeout=120, resources=where).execute()
for output in notebook.cells[-1].outputs:
    data = output.get("data", {})
    print(data.get("text/plain", ""), data.get("text/html", ""))
"""


def test_a_student_checks_from_the_released_bundle_only(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    """The Done-when of issue 16's bundle: a course in an empty folder, `grader release`,
    then a notebook run headlessly (nbclient) in a folder holding only the bundle."""
    import yaml

    grader = installed[1]
    course = tmp_path / "course"
    course.mkdir()
    for name in ("solutions", "exercises"):
        shutil.copytree(REPO / name, course / name)
    shutil.copy(REPO / "cases.py", course)  # the course's own input builders
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    for target in raw["assignments"]["self_attention"]["targets"].values():
        target["public_cases"] = 2
    (course / "config.yaml").write_text(yaml.safe_dump(raw))
    released = run(grader, "release", "--assignment", "self_attention", "--out", tmp_path / "b",
                   cwd=course)  # fmt: skip
    assert released.returncode == 0, released.stderr
    student = tmp_path / "student"
    shutil.copytree(tmp_path / "b", student)
    assert not [p for p in student.rglob("*") if "solution" in p.name]
    notebook = json.loads((DEMO / "bruno.ipynb").read_text())
    notebook["cells"].append(
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "from grader import check\ncheck()"}
    )  # fmt: skip
    path = student / "bruno.ipynb"
    path.write_text(json.dumps(notebook))
    pip = installed[1].parent / "pip"
    assert run(pip, "install", "--quiet", "nbclient", "ipykernel", cwd=tmp_path).returncode == 0
    python = installed[1].parent / "python"
    shown = run(python, "-c", STUDENT_RUN, path, student, cwd=student, JPY_SESSION_NAME=str(path))
    assert shown.returncode == 0, shown.stderr
    assert (
        "public cases: 8 of 12 passed; 14 hidden cases are graded when you submit" in shown.stdout
    )
    assert "output_transposed" in shown.stdout and "scale_discarded" in shown.stdout
