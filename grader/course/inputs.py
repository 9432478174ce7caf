"""Case builders a course writes in Python, for inputs its config.yaml cannot declare.

A builder turns (random generator, sizes, case index) into the positional arguments of one
call. It lives in the course's `cases.py` (beside config.yaml, or where `cases:` says) and is
registered with the `builder` decorator, which states the size keys it reads:

    from grader.course.inputs import builder

    @builder(needs=["N"])
    def score_list(rng, sizes, index):
        return (list(rng.standard_normal(sizes["N"])),)

The config names it (`inputs: score_list`); when the config loads, every `sizes` entry of
such a target must hold the keys the builder needs (config.py). `cases.py` is the
instructor's code, like config.yaml: it runs in the grader's own (trusted) process, when the
config loads and when cases are built, and is never staged into a student's sandbox.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from grader.course.blake import blake2b
from grader.errors import ConfigError

if TYPE_CHECKING:  # numpy.random is imported where cases are drawn (not where they are recalled)
    from numpy.random import Generator

    Rng: TypeAlias = Generator
else:
    Rng = Any
Builder = Callable[[Rng, Mapping[str, int], int], tuple[Any, ...]]
F = TypeVar("F", bound=Callable[..., Any])

_NEEDS = "__grader_needs__"
_NAME = "__grader_builder__"


def builder(needs: Iterable[str], name: str | None = None) -> Callable[[F], F]:
    """Register a function of a course's cases.py as the case builder `name` (default: the
    function's own name) that reads the size keys `needs`."""
    keys = tuple(needs)
    if isinstance(needs, str) or not all(isinstance(k, str) and k for k in keys):
        raise TypeError("builder(needs=[...]) takes a list of size key names")

    def register(function: F) -> F:
        setattr(function, _NEEDS, keys)
        setattr(function, _NAME, name or function.__name__)
        return function

    return register


@dataclass(frozen=True)
class CourseCases:
    """A course's cases.py: where it is and a digest of its text (so that the caches keyed
    by an assignment's repr change when the file does)."""

    path: Path
    digest: str

    def builders(self) -> dict[str, tuple[Builder, tuple[str, ...]]]:
        """Its registered builders and the size keys each needs, by name."""
        return _load(self.path, self.digest)


def course_cases(path: Path) -> CourseCases:
    """The course's cases.py at `path`; ConfigError when it cannot be read."""
    try:
        data = path.read_bytes()
        # the modules beside it that it imports are its code too: an edit there is one to it
        for module in local_imports(path):
            data += b"\0" + module.relative_to(path.parent).as_posix().encode()
            data += b"\0" + module.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the course's case builders {path}: {exc}") from None
    return CourseCases(path, blake2b(data, digest_size=8).hexdigest())


_GRADER = Path(__file__).resolve().parents[1]  # the package: never the course's own module


def local_imports(path: Path) -> list[Path]:
    """The Python files beside `path` (a course's cases.py) that it imports, and those they
    import in turn: a module `helpers.py`, or every file of a package `helpers/`. What the
    Gradescope zip carries with it, and what its digest covers."""
    found: dict[Path, None] = {}
    todo = [path]
    while todo:
        source = todo.pop()
        try:
            tree = ast.parse(source.read_bytes())
        except SyntaxError:
            continue  # said in one line where the file is loaded
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            for name in names:
                if name == _GRADER.name:  # the grader itself (a checkout is its course's folder)
                    continue
                module, package = path.parent / f"{name}.py", path.parent / name
                files = [module] if module.is_file() else (
                    sorted(package.rglob("*.py")) if (package / "__init__.py").is_file() else []
                )  # fmt: skip
                for file in files:
                    if file not in found and file != path:
                        found[file] = None
                        todo.append(file)
    return list(found)


_LOADED: dict[tuple[Path, str], dict[str, tuple[Builder, tuple[str, ...]]]] = {}


def _load(path: Path, digest: str) -> dict[str, tuple[Builder, tuple[str, ...]]]:
    """Run cases.py once per content and collect what `builder` registered."""
    key = (path, digest)
    if key not in _LOADED:
        module = _run_module(path, f"_grader_course_cases_{digest}")
        found: dict[str, tuple[Builder, tuple[str, ...]]] = {}
        for value in vars(module).values():
            name = getattr(value, _NAME, None)
            if not callable(value) or not isinstance(name, str):
                continue
            if name in found and found[name][0] is not value:
                raise ConfigError(f"{path}: two case builders are named '{name}'")
            found[name] = (value, tuple(getattr(value, _NEEDS)))
        _LOADED[key] = found
    return _LOADED[key]


def _run_module(path: Path, name: str) -> Any:
    """Import a file as a module; any failure is one line naming the file and line."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # its folder first on the path while it loads: `import helpers` finds the course's own
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise ConfigError(f"{path}, line {exc.lineno}: does not parse: {exc.msg}") from None
    except Exception as exc:  # the course's own code: any failure is the course's
        sys.modules.pop(name, None)
        line = _line_in(exc, path)
        raise ConfigError(f"{path}{line}: fails when loaded: {type(exc).__name__}: {exc}") from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(path.parent))
    return module


def _line_in(exc: BaseException, path: Path) -> str:
    """', line N' for the deepest frame of `path` in the exception's traceback."""
    import traceback  # only when a course's builder failed

    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    return f", line {lines[-1]}" if lines else ""


class DeclaredSizes(Mapping[str, int]):
    """The sizes a builder sees: only the keys it declared, so reading another is a clear
    config error rather than a KeyError deep in grading."""

    def __init__(self, sizes: Mapping[str, int], needs: tuple[str, ...], name: str) -> None:
        self._sizes, self._needs, self._name = sizes, needs, name

    def __getitem__(self, key: str) -> int:
        if key not in self._needs:
            raise ConfigError(
                f"case builder '{self._name}' reads size key '{key}', which its "
                f"@builder(needs=[...]) does not list"
            )
        return self._sizes[key]

    def __iter__(self) -> Iterator[str]:
        return (k for k in self._sizes if k in self._needs)

    def __len__(self) -> int:
        return sum(1 for k in self._sizes if k in self._needs)
