"""Reference outputs: the solution notebook run in the trusted process, on the seeded cases."""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .cases import Case
from .config import AssignmentSpec
from .errors import ConfigError
from .notebook import load_submission
from .wire import Value, decode_frame, encode_frame


def normalise(obj: Any) -> Value:
    """Pass a value through the wire format, so references and answers are shaped alike."""
    frame = encode_frame({}, {"v": obj})
    head_len = int.from_bytes(frame[:4], "big")
    _, values = decode_frame(frame[8 : 8 + head_len], frame[8 + head_len :])
    return values["v"]


@dataclass(frozen=True)
class Reference:
    """For one target: outputs per case, the inputs as normalised values, and parameter names."""

    outputs: tuple[Value, ...]
    inputs: tuple[tuple[Value, ...], ...]
    parameters: tuple[str, ...]


@cache
def _solution_namespace(path: Path, mtime: float) -> Mapping[str, Any]:
    submission = load_submission(path)
    namespace: dict[str, Any] = {"__name__": "__solution__"}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in submission.cells:
            code = compile(cell.source, f"<solution cell {cell.index}>", "exec")
            exec(code, namespace)
    return namespace


def solution_namespace(assignment: AssignmentSpec) -> Mapping[str, Any]:
    path = assignment.solution
    if not path.is_file():
        raise ConfigError(f"assignment {assignment.id}: solution notebook not found: {path}")
    try:
        return _solution_namespace(path, path.stat().st_mtime)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"assignment {assignment.id}: the solution notebook {path} fails to run: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def compute_references(
    assignment: AssignmentSpec, cases: Mapping[str, tuple[Case, ...]]
) -> dict[str, Reference]:
    namespace = solution_namespace(assignment)
    references = {}
    for target in assignment.targets:
        fn = namespace.get(target.name)
        if target.variable:
            if target.name not in namespace:
                raise ConfigError(
                    f"assignment {assignment.id}: the solution does not set `{target.name}`"
                )
            value = normalise(namespace[target.name])
            references[target.name] = Reference((value,), ((),), ())
            continue
        if not callable(fn):
            raise ConfigError(
                f"assignment {assignment.id}: the solution does not define `{target.name}`"
            )
        outputs, inputs = [], []
        for case in cases[target.name]:
            args = case.fresh_args()
            outputs.append(normalise(fn(*args)))
            inputs.append(tuple(normalise(a) for a in case.args))
        params = tuple(inspect.signature(fn).parameters)
        references[target.name] = Reference(tuple(outputs), tuple(inputs), params)
    return references
