"""The judging side of a student bundle: an assignment's public cases, their expected
outputs and what the diagnosis needs on them (probes, the catalogued and derived mistakes'
outputs with their words), written as plain numbers by `grader release` and read back by a
student's check() in place of running the course's code. No solution source goes in: a
mistake's words go, its variant's source does not.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from grader.course.bundle import decode, encode, read_data
from grader.course.cases import Case, CaseSet
from grader.course.config import AssignmentSpec
from grader.course.mistakes import Mistake
from grader.errors import ConfigError
from grader.judge.course_code import CallFailed
from grader.judge.expected import Expected
from grader.judge.fingerprints import Fingerprint
from grader.judge.reference import Reference
from grader.run.wire import Other, Seq, Value

# What a mistake keeps in a bundle: its words, never its variant's source (nor a `locate`
# pattern made from it: `_words`).
_WORDS = tuple(f.name for f in fields(Mistake) if f.name != "source")


def _plain(value: Value | Exception) -> Any:
    """A decoded value (or a failed call) as the bundle's codec takes it."""
    if isinstance(value, Seq):
        return {"seq": value.kind, "items": [_plain(v) for v in value.items]}
    if isinstance(value, Other):
        return {"other": value.type_name}
    if isinstance(value, Exception):
        return {"error": str(value)}
    return value


def _value(plain: Any) -> Any:
    """The inverse of `_plain`."""
    if isinstance(plain, dict) and "seq" in plain:
        return Seq(str(plain["seq"]), tuple(_value(v) for v in plain["items"]))
    if isinstance(plain, dict) and "other" in plain:
        return Other(str(plain["other"]))
    if isinstance(plain, dict) and "error" in plain:
        return CallFailed(str(plain["error"]))
    if plain is None or isinstance(plain, np.ndarray):
        return plain
    raise ValueError("malformed output in the bundle")


def _cases(cases: tuple[Case, ...], arrays: list[np.ndarray]) -> list[Any]:
    return [
        {"index": c.index, "sizes": dict(c.sizes), "args": encode(c.args, arrays)} for c in cases
    ]


def _reference(reference: Reference, arrays: list[np.ndarray]) -> dict[str, Any]:
    return {
        "outputs": encode([_plain(v) for v in reference.outputs], arrays),
        "inputs": encode([[_plain(v) for v in case] for case in reference.inputs], arrays),
        "parameters": list(reference.parameters),
    }


def _words(mistake: Mistake) -> dict[str, Any]:
    """What a bundle keeps of a mistake: its words and the course's own pattern for its line
    (without_place), never its variant's source nor a pattern made from it."""
    return {k: getattr(mistake, k) for k in _WORDS}


def bundle_entry(
    spec: AssignmentSpec, case_set: CaseSet, expected: Expected, arrays: list[np.ndarray]
) -> dict[str, Any]:
    """The numbers of one (public) assignment for the manifest, arrays into `arrays`."""
    from grader.judge.reference import load_solution
    from grader.judge.static import find_function
    from grader.judge.variant_places import without_place

    solution = load_solution(spec)
    targets = {}
    for t in spec.targets:
        found = find_function(solution, t.name)
        reference = found.node if found else None
        targets[t.name] = {
            "cases": _cases(case_set.cases[t.name], arrays),
            "probes": _cases(case_set.probes[t.name], arrays),
            "reference": _reference(expected.references[t.name], arrays),
            "probe_reference": _reference(expected.probe_references[t.name], arrays),
            "fingerprints": [
                {
                    "mistake": _words(without_place(f.mistake, reference)),
                    "outputs": encode([_plain(v) for v in f.outputs], arrays),
                    "via": f.via,
                    "origin": f.origin,
                }
                for f in expected.fingerprints[t.name]
                # A derived mistake's words quote the reference's own code ("leaves out
                # `+ beta_q` (computing `all_queries`)"): all of them together spell out much
                # of the solution. They are named once a notebook is handed in, not from here.
                if f.origin != "mutant"
            ],
        }
    return targets


def _read_cases(
    entries: list[Any], name: str, variable: bool, probe: bool, arrays: dict[str, np.ndarray]
) -> tuple[Case, ...]:
    return tuple(
        Case(
            name,
            int(e["index"]),
            {str(k): int(v) for k, v in e["sizes"].items()},
            tuple(decode(e["args"], arrays)),
            variable=variable,
            probe=probe,
        )
        for e in entries
    )


def _read_reference(entry: dict[str, Any], arrays: dict[str, np.ndarray]) -> Reference:
    outputs = tuple(_value(v) for v in decode(entry["outputs"], arrays))
    inputs = tuple(tuple(_value(v) for v in case) for case in decode(entry["inputs"], arrays))
    return Reference(outputs, inputs, tuple(entry["parameters"]))


@cache
def _read(path: Path, stamp: int, aid: str) -> tuple[CaseSet, Expected]:
    del stamp  # part of the cache key only: a bundle released again is read again
    manifest, arrays = read_data(path)
    numbers = manifest["numbers"][aid]
    variables = {t["name"]: t["variable"] for a in manifest["assignments"] for t in a["targets"]}
    cases, probes, references, probe_refs, prints = {}, {}, {}, {}, {}
    for name, entry in numbers.items():
        variable = bool(variables[name]) if name in variables else False
        cases[name] = _read_cases(entry["cases"], name, variable, False, arrays)
        probes[name] = _read_cases(entry["probes"], name, variable, True, arrays)
        references[name] = _read_reference(entry["reference"], arrays)
        probe_refs[name] = _read_reference(entry["probe_reference"], arrays)
        prints[name] = [
            Fingerprint(
                Mistake(**f["mistake"]),
                tuple(_value(v) for v in decode(f["outputs"], arrays)),
                f["via"],
                f["origin"],
            )
            for f in entry["fingerprints"]
        ]
    return CaseSet(cases, probes), Expected(references, probe_refs, prints)


def released_data(spec: AssignmentSpec) -> tuple[CaseSet, Expected]:
    """The cases and what is expected on them, read from the bundle `spec` was released in;
    ConfigError when the file is missing or malformed."""
    path = spec.released
    if path is None:
        raise ConfigError(f"assignment {spec.id} is not from a student bundle")
    try:
        return _read(path, path.stat().st_mtime_ns, spec.id)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the student bundle: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: a malformed student bundle ({exc!r})") from None
