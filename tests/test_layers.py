"""The package's shape: imports run one way, from the code that talks to users down to the
data model, and nothing the student's process imports belongs to the judging side.

The graph is read from the source with `ast` (imports inside functions and under
TYPE_CHECKING count too), so a shortcut cannot hide in a function body.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "grader"

# Each group may import itself and the groups listed; `interface` (the CLI, check(), the
# pytest plugin, the package's own entry points) may import anything.
ALLOWED = {
    "core": {"core"},  # errors, report: the data every layer speaks
    "course": {"core"},  # config, notebooks, cases, catalogues
    "render": {"core", "course"},  # every output, from data
    "run": {"core", "course"},  # the student's process and the workers that start it
    "judge": {"core", "course", "run"},  # references, comparison, scores, diagnosis
    "engine": {"core", "course", "run", "judge"},  # grading one notebook
    "batch": {"core", "course", "run", "judge", "engine", "render"},  # grading a class
    "author": {"core", "course", "run", "judge", "engine"},  # assign, selftest, export
    # the web service: beside the CLI, over everything but the CLI and the author's tools
    "serve": {"core", "course", "run", "judge", "engine", "render", "batch"},
}
CORE = {"errors", "report"}
INTERFACE = {"__init__", "__main__", "cli", "inline", "pytest_plugin"}
# What the sandboxed worker and the student's child start from.
CHILD_SIDE = ("grader.run.worker", "grader.run.child")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def group(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "interface"  # the package itself
    if parts[1] in CORE:
        return "core"
    if parts[1] in INTERFACE:
        return "interface"
    return parts[1]


def imports(path: Path, modules: set[str]) -> set[str]:
    """The grader modules a file imports (a name imported from a package counts as the
    submodule when there is one)."""
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("grader")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("grader"):
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & modules
            found |= subs or {target}
    return {m for m in found if m in modules and m != own}


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports(p, modules) for p in paths}


def layering_breaks(edges: dict[str, set[str]]) -> list[str]:
    return [
        f"{a} ({group(a)}) imports {b} ({group(b)})"
        for a, targets in edges.items()
        for b in sorted(targets)
        if group(a) != "interface" and group(b) not in ALLOWED[group(a)] | {group(a)}
    ]


def cycles(edges: dict[str, set[str]]) -> list[str]:
    found: list[str] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                found.append(" → ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    return found


def test_no_import_breaks_the_layering() -> None:
    assert layering_breaks(graph()) == []


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_the_student_side_imports_nothing_that_judges() -> None:
    edges = graph()
    seen, todo = set(), list(CHILD_SIDE)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(edges[module])
    assert {group(m) for m in seen} <= {"core", "course", "run"}, sorted(seen)
    assert "grader.course.mistakes" not in seen and "grader.judge.reference" not in seen


def test_the_top_level_is_a_handful_a_newcomer_can_name() -> None:
    entries = sorted(
        p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and not p.name.startswith(".")
    )
    packages = {"author", "batch", "cli", "course", "judge", "render", "run", "serve", "templates"}
    modules = {f"{m}.py" for m in CORE | INTERFACE - {"cli"} | {"engine"}}
    assert set(entries) == packages | modules


def test_the_checks_see_a_wrong_import_and_a_cycle() -> None:
    edges = graph()
    assert "grader.course.files" in edges["grader.course.config"]  # read from the source
    edges["grader.run.child"] = edges["grader.run.child"] | {"grader.judge.reference"}
    assert layering_breaks(edges) == [
        "grader.run.child (run) imports grader.judge.reference (judge)"
    ]
    edges["grader.course.cases"] = edges["grader.course.cases"] | {"grader.course.notebook"}
    edges["grader.course.notebook"] = edges["grader.course.notebook"] | {"grader.course.cases"}
    assert any("grader.course.cases → grader.course.notebook" in c for c in cycles(edges))
