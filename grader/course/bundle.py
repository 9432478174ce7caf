"""A student bundle's data file (`grader release`): what a student's check() needs to grade
the public cases, as numbers, and none of the course's code.

One `.npz` file (a zip of `.npy` arrays, read with `allow_pickle=False`, so reading it runs
nothing): the arrays, and a JSON manifest stored as text. The manifest holds each assignment
as the config states it (targets, tolerances, time limits) with only its public sizes, and
trees of values whose arrays are named by their position in the file. The judging side
(grader/judge/released.py) turns the manifest's cases and outputs back into what grading
needs; config.py reads the assignments (`load_bundle`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from grader.errors import ConfigError

BUNDLE_NAME = "grader-bundle.npz"
FORMAT = 1
_MANIFEST = "manifest"


def encode(value: Any, arrays: list[np.ndarray]) -> Any:
    """A value as JSON, its arrays appended to `arrays` and named by position: arrays,
    lists, tuples, dicts with text keys, numbers, text, booleans and None."""
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise ValueError("an array of Python objects cannot go in a bundle")
        arrays.append(value)
        return {"a": len(arrays) - 1}
    if isinstance(value, np.generic):
        return encode(value.item(), arrays)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {"v": value}
    if isinstance(value, int):
        return {"i": value}
    if isinstance(value, float):
        return {"f": repr(value)}  # repr: nan and inf too, exactly
    if isinstance(value, list | tuple):
        return {"l" if isinstance(value, list) else "t": [encode(v, arrays) for v in value]}
    if isinstance(value, dict):
        return {"d": {str(k): encode(v, arrays) for k, v in value.items()}}
    raise ValueError(f"a {type(value).__name__} cannot go in a bundle")


def decode(node: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    """The inverse of `encode` (arrays as read back from the file)."""
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError("malformed value")
    ((kind, body),) = node.items()
    if kind == "a":
        return arrays[f"arr_{int(body)}"].copy()
    if kind == "v":
        return body
    if kind == "i":
        return int(body)
    if kind == "f":
        return float(body)
    if kind in ("l", "t"):
        items = [decode(v, arrays) for v in body]
        return items if kind == "l" else tuple(items)
    if kind == "d":
        return {str(k): decode(v, arrays) for k, v in body.items()}
    raise ValueError(f"malformed value kind {kind!r}")


def write_data(path: Path, manifest: Mapping[str, Any], arrays: list[np.ndarray]) -> None:
    """Write the data file: the arrays as arr_0, arr_1, … and the manifest as text."""
    text = json.dumps({"format": FORMAT, **manifest}, sort_keys=True)
    named: dict[str, Any] = {f"arr_{i}": a for i, a in enumerate(arrays)}
    named[_MANIFEST] = np.array(text)
    with path.open("wb") as file:  # np.savez would add ".npz" to a name without it
        np.savez_compressed(file, **named)


def _bad_zip() -> type[Exception]:
    """zipfile's error for a broken zip, imported only when a read failed (a grader that
    reads no bundle imports no zipfile: a few milliseconds of every start)."""
    import zipfile

    return zipfile.BadZipFile


def read_data(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and the arrays of a data file; ConfigError when it is not one."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        manifest = json.loads(str(arrays.pop(_MANIFEST)))
    except (OSError, EOFError, ValueError, KeyError, _bad_zip()) as exc:  # EOF: an empty file
        raise ConfigError(f"{path}: not a readable student bundle: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ConfigError(f"{path}: a student bundle of another format: release it again")
    return manifest, arrays
