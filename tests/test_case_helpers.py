"""A course's cases.py may import modules of its own beside it (`from casehelp import …`):
it loads without a `sys.path` line of the author's, its digest (the caches' key) covers
them, and the Gradescope zip carries them (r50 #3: the zip held cases.py alone, and every
student then scored 0 with "No module named 'casehelp'")."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

from grader.author.export import export_gradescope
from grader.course.cases import target_cases
from grader.course.config import load_config
from grader.course.inputs import course_cases, local_imports

from conftest import REPO, repo_config_raw


def _course(folder: Path) -> Path:
    """The bundled course whose softmax cases come from a builder in a helper package."""
    folder.mkdir()
    (folder / "casehelp").mkdir()
    (folder / "casehelp" / "__init__.py").write_text("from casehelp.draw import scores\n")
    (folder / "casehelp" / "draw.py").write_text(
        "def scores(rng, n):\n    return [float(v) for v in rng.standard_normal(n)]\n"
    )
    (folder / "cases.py").write_text(
        (REPO / "cases.py").read_text()
        + "\n\nfrom casehelp import scores\n\n\n@builder(needs=['N'])\n"
        "def helped(rng, s, index):\n    return (scores(rng, s['N']),)\n"
    )
    raw = repo_config_raw()
    raw["cases"] = "cases.py"
    raw["assignments"] = {"self_attention": raw["assignments"]["self_attention"]}
    raw["assignments"]["self_attention"]["targets"]["softmax"]["inputs"] = "helped"
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder / "config.yaml"


def test_a_builder_from_a_helper_beside_cases_py_loads_and_its_edits_count(
    tmp_path: Path,
) -> None:
    path = _course(tmp_path / "course")
    spec = load_config(path).assignment("self_attention").target("softmax")
    assert len(target_cases(1, spec)) == len(spec.sizes)
    cases = tmp_path / "course" / "cases.py"
    helpers = sorted(p.relative_to(cases.parent).as_posix() for p in local_imports(cases))
    assert helpers == ["casehelp/__init__.py", "casehelp/draw.py"]
    before = course_cases(cases).digest
    with (tmp_path / "course" / "casehelp" / "draw.py").open("a") as edited:
        edited.write("# an edit\n")
    assert course_cases(cases).digest != before  # the caches keyed by it are made again


def test_the_gradescope_zip_carries_the_helpers_and_its_course_loads(tmp_path: Path) -> None:
    path = _course(tmp_path / "course")
    zipped = export_gradescope(load_config(path), "self_attention", tmp_path / "ag.zip")
    with zipfile.ZipFile(zipped) as bundle:
        names = set(bundle.namelist())
        assert {"cases.py", "casehelp/__init__.py", "casehelp/draw.py"} <= names
        bundle.extractall(tmp_path / "source")
    shutil.rmtree(tmp_path / "course")  # only what the zip holds
    for name in [m for m in sys.modules if m.split(".")[0] == "casehelp"]:
        del sys.modules[name]  # imported from the course folder, which is gone
    unpacked = load_config(tmp_path / "source" / "config.yaml")
    spec = unpacked.assignment("self_attention").target("softmax")
    assert len(target_cases(1, spec)) == len(spec.sizes)


def test_the_grader_package_is_never_one_of_the_courses_modules() -> None:
    # In a checkout the bundled course's cases.py lies beside the `grader` package it imports
    # its `builder` from: taken for a module of the course, every config load read and
    # parsed the whole package (2.7 s for each `grader check` instead of 0.2 s), and the
    # Gradescope zip would have carried it.
    assert (REPO / "grader" / "__init__.py").is_file()
    assert local_imports(REPO / "cases.py") == []
