"""The derived mistakes' cache key hashes every module of the judge that makes them, the
modules those import included (issue 19's leftovers): a change to `static.integer_globals`
or `stubs.binds` changes the mutants, so it must change the key."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.judge import derived
from grader.judge.fingerprints import catalogue_for

JUDGE = Path(derived.__file__).parent


def _imports(module: str, folder: Path = JUDGE, package: str = "grader.judge") -> set[str]:
    """The modules of `package` that `module` (a file of `folder`) imports (at any depth of
    its code)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((folder / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(f"{package}."):
                found.add(node.module.split(".")[2])
            elif node.module == package:
                found.update(alias.name for alias in node.names)
    return found


def test_every_judge_module_the_makers_import_is_hashed() -> None:
    makers = {"mutants", "mutant_operators", "mutant_pairs", "mutant_helpers"}
    makers |= {"mutant_inputs", "mutant_places", "transplant"}
    todo, closure = list(makers), set()
    while todo:
        module = todo.pop()
        if module not in closure:
            closure.add(module)
            todo += _imports(module)
    assert {"static", "stubs"} <= closure  # what mutants.py imports (the brief's two)
    assert closure <= set(derived._MAKERS), sorted(closure - set(derived._MAKERS))


@pytest.mark.parametrize(
    ("module", "function"), [("static", "integer_globals"), ("stubs", "binds")]
)
def test_changing_an_imported_source_changes_the_key(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, function: str
) -> None:
    for source in JUDGE.glob("*.py"):
        shutil.copy(source, tmp_path / source.name)
    monkeypatch.setattr(derived, "__file__", str(tmp_path / "derived.py"))
    spec = config.assignment("self_attention")
    catalogue = catalogue_for(spec)
    before = derived.cache_key(spec, catalogue)
    assert derived.cache_key(spec, catalogue) == before
    edited = tmp_path / f"{module}.py"
    text = edited.read_text()
    assert f"def {function}(" in text
    edited.write_text(text.replace(f"def {function}(", f"def {function}(  # changed\n", 1))
    assert derived.cache_key(spec, catalogue) != before


def test_every_course_module_the_makers_read_with_is_hashed() -> None:
    course = derived.COURSE_SOURCES
    todo = [m for maker in derived._MAKERS for m in _imports(maker, JUDGE, "grader.course")]
    closure: set[str] = set()
    while todo:
        module = todo.pop()
        if module not in closure:
            closure.add(module)
            todo += _imports(module, course, "grader.course")
    assert {"mistakes", "notebook"} <= closure  # what mutants.py and transplant.py import
    assert closure <= set(derived._COURSE_MAKERS), sorted(closure - set(derived._COURSE_MAKERS))


def test_changing_the_course_layers_notebook_reader_changes_the_key(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for source in derived.COURSE_SOURCES.glob("*.py"):
        shutil.copy(source, tmp_path / source.name)
    monkeypatch.setattr(derived, "COURSE_SOURCES", tmp_path)
    spec = config.assignment("self_attention")
    catalogue = catalogue_for(spec)
    before = derived.cache_key(spec, catalogue)
    edited = tmp_path / "notebook.py"
    edited.write_text(edited.read_text() + "\n# changed\n")
    assert derived.cache_key(spec, catalogue) != before
