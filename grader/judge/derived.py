"""Fingerprints of derived mistakes — catalogued mistakes carried across targets
(transplant.py) and mutants of the reference (mutants.py) — run once in a sandboxed child,
kept only where distinct, and cached on disk by content hash.

The key hashes the solution notebook, the catalogue, the assignment's config (cases, sizes,
tolerances), the grader's version and the source of the operators (with the course layer's
modules they read notebooks and catalogues with), and NumPy's version: any
change means a new run. The cache holds numbers in the wire format and the mistakes' words as
JSON, never a pickle; a file that does not decode is ignored and replaced.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from grader.course import versions
from grader.course.blake import blake2b
from grader.course.cases import CaseSet
from grader.course.config import AssignmentSpec, Tolerance
from grader.course.mistakes import Catalogue, Mistake
from grader.judge.compare import compare
from grader.judge.course_code import added_cell, renamed, run_course_code
from grader.judge.fingerprints import Fingerprint, Origin
from grader.judge.lazy_prints import LazyPrints
from grader.judge.pair_store import Prints, with_pairs
from grader.judge.reference import Reference, load_solution
from grader.judge.run_cache import CACHE_ENV as CACHE_ENV  # where tests and docs find it
from grader.judge.run_cache import (
    cache_dir,
    content_digest,
    load_spans,
)
from grader.judge.static import find_function
from grader.run.wire import Other, Seq, Value, WireError, decode_frame, encode_frame
from grader.run.workers import Workers

# The modules that make the derived mistakes, and those of the judge they import (static.py's
# integer_globals, stubs.py's binds, flows.py under it): imported only when the mistakes are
# made (a cached course never imports the first eight), hashed into the cache key from their
# files. tests/test_derived_key_sources.py checks that every judge module they import is here.
_MAKERS = (
    "mutants",
    "mutant_operators",
    "mutant_alike",
    "mutant_pairs",
    "mutant_helpers",
    "mutant_inputs",
    "mutant_places",
    "transplant",
    "static",
    "stubs",
    "flows",
)
# The course layer's modules the makers import (a notebook's cells as the mutants read them,
# the catalogue's parsing): hashed as well, from the course package's folder.
_COURSE_MAKERS = ("mistakes", "notebook", "parsing", "ipython")
COURSE_SOURCES = Path(versions.__file__).parent  # grader/course/
_MISTAKE_FIELDS = (
    "id", "target", "message", "hint", "function", "source", "requires", "locate", "within",
)  # fmt: skip


def derived_mistakes(
    assignment: AssignmentSpec, catalogue: Catalogue
) -> list[tuple[Mistake, Origin]]:
    """Every derived mistake of the assignment's function targets, not yet run."""
    from grader.judge import mutant_helpers, mutant_inputs, mutants, transplant

    solution = load_solution(assignment)
    functions = [t.name for t in assignment.targets if not t.variable]
    carried = transplant.inherited_mistakes(solution, catalogue, functions)
    made = mutants.reference_mutants(solution, functions)
    made += [m for m, _ in mutant_helpers.helper_mutants(solution, functions)]
    for name in functions:
        if found := find_function(solution, name):
            made += mutant_inputs.input_mutants(found.node, name)
    variables = [t.name for t in assignment.targets if t.variable]
    made += mutants.variable_mutants(solution, variables)
    return [(m, "inherited") for m in carried] + [(m, "mutant") for m in made]


def derived_fingerprints(
    assignment: AssignmentSpec,
    case_set: CaseSet,
    catalogue: Catalogue,
    known: dict[str, list[Fingerprint]],
    references: dict[str, Reference],
    workers: Workers,
) -> Mapping[str, list[Fingerprint]]:
    """The distinct derived fingerprints of each target, from the cache (each target's
    decoded when first read) or one child run."""
    path = _cache_path(assignment, catalogue)
    cached = _index(path) if path else None
    if cached is not None and path is not None:
        return LazyPrints(
            [t.name for t in assignment.targets],
            functools.partial(_cached_target, path, cached),
        )
    found = _run(assignment, case_set, derived_mistakes(assignment, catalogue), workers)
    found = _helper_pairs(assignment, found)
    kept = {
        t.name: distinct(
            found[t.name], known[t.name], references[t.name].outputs, t.compare, t.tolerance
        )
        for t in assignment.targets
    }
    sources = {  # a single that is a catalogued mistake still pairs with another
        t.name: distinct(
            _catalogued_first(found[t.name], known[t.name]),
            [],
            references[t.name].outputs,
            t.compare,
            t.tolerance,
        )
        + silent(found[t.name], references[t.name].outputs, t.compare, t.tolerance)
        for t in assignment.targets
    }
    kept = _with_pairs(assignment, case_set, known, kept, sources, references, workers)
    if path:
        _save(path, kept)
    return {
        name: with_pairs([f for f in prints if not f.also], [f for f in prints if f.also])
        for name, prints in kept.items()
    }


def _helper_pairs(
    assignment: AssignmentSpec, found: dict[str, list[Fingerprint]]
) -> dict[str, list[Fingerprint]]:
    """A pair of mutations in a helper carries its second mistake, as a pair does."""
    from grader.judge import mutant_helpers

    functions = [t.name for t in assignment.targets if not t.variable]
    seconds = {
        m.function: second
        for m, second in mutant_helpers.helper_mutants(load_solution(assignment), functions)
        if second is not None
    }
    return {
        target: [
            replace(f, also=(seconds[f.mistake.function],)) if f.mistake.function in seconds else f
            for f in prints
        ]
        for target, prints in found.items()
    }


def _catalogued_first(found: list[Fingerprint], known: list[Fingerprint]) -> list[Fingerprint]:
    """Mutants whose id the catalogue knows first: of two with the same numbers (dividing by
    D, or by √D twice), the one told in the catalogue's terms is kept."""
    ids = {f.mistake.id for f in known if f.origin == "catalogue"}
    return sorted(found, key=lambda f: f.mistake.id not in ids)


def _original(assignment: AssignmentSpec, target: str, variable: bool) -> Any:
    """The function the target's mutants were made from (for a variable, its cell's)."""
    from grader.judge import mutants

    solution = load_solution(assignment)
    if variable:
        made = mutants.cell_function(solution, target)
        return made[0] if made else None
    found = find_function(solution, target)
    return found.node if found else None


def _with_pairs(
    assignment: AssignmentSpec,
    case_set: CaseSet,
    known: dict[str, list[Fingerprint]],
    kept: dict[str, list[Fingerprint]],
    sources: dict[str, list[Fingerprint]],
    references: dict[str, Reference],
    workers: Workers,
) -> dict[str, list[Fingerprint]]:
    """The distinct single fingerprints, followed by the distinct pairs of mutations (run
    in one more child, after the singles: only singles that differ from the reference and
    from each other are paired)."""
    from grader.judge import mutant_pairs

    made: list[tuple[Mistake, Origin]] = []
    second: dict[str, Mistake] = {}
    for target in assignment.targets:
        singles = [f.mistake for f in sources[target.name] if f.origin == "mutant"]
        original = _original(assignment, target.name, target.variable) if singles else None
        for pair in mutant_pairs.pair_mutants(original, singles) if original else []:
            made.append((pair.mistake, "mutant"))
            second[pair.mistake.function] = pair.second
    if not made:
        return kept
    ran = _run(assignment, case_set, made, workers)
    result = {}
    for t in assignment.targets:
        pairs = [
            # once run, a pair's long source is never needed again (nor cached)
            replace(f, mistake=replace(f.mistake, source=""), also=(second[f.mistake.function],))
            for f in distinct(
                ran[t.name],
                [*known[t.name], *kept[t.name]],
                references[t.name].outputs,
                t.compare,
                t.tolerance,
            )
        ]
        result[t.name] = [*kept[t.name], *pairs]
    return result


def _run(
    assignment: AssignmentSpec,
    case_set: CaseSet,
    mistakes: Sequence[tuple[Mistake, Origin]],
    workers: Workers,
) -> dict[str, list[Fingerprint]]:
    result: dict[str, list[Fingerprint]] = {t.name: [] for t in assignment.targets}
    if not mistakes:
        return result
    solution = load_solution(assignment)
    cells = (*solution.cells, added_cell(0, "\n\n".join(m.source for m, _ in mistakes)))
    # A variable's mutant is a function of no arguments that returns it: called, not read.
    plan = [
        (
            m.function,
            tuple(
                replace(c, variable=False) for c in renamed(case_set.cases[m.target], m.function)
            ),
        )
        for m, _ in mistakes
    ]
    outputs = run_course_code(cells, plan, assignment, workers, "the derived mistakes")
    for mistake, origin in mistakes:
        values = tuple(
            outputs.get(mistake.function, c.index) for c in case_set.cases[mistake.target]
        )
        result[mistake.target].append(Fingerprint(mistake, values, None, origin))
    return result


def _same(
    a: Sequence[Value | Exception], b: Sequence[Value | Exception], mode: str, tol: Tolerance
) -> bool:
    """Whether two runs answered every case alike (a failed call is like no other)."""
    return all(
        not isinstance(x, Exception)
        and not isinstance(y, Exception)
        and compare(x, y, mode, tol).ok
        for x, y in zip(a, b, strict=True)
    )


def _answered(value: Value | Exception) -> bool:
    """Numbers all the way down (no failure, no `Other`), so it can match and be cached."""
    if isinstance(value, Seq):
        return all(_answered(v) for v in value.items)
    return not isinstance(value, Exception | Other)


def distinct(
    found: Sequence[Fingerprint],
    known: Sequence[Fingerprint],
    reference: Sequence[Value],
    mode: str,
    tol: Tolerance,
) -> list[Fingerprint]:
    """Derived fingerprints that answered every case with numbers and differ from the
    reference, from the catalogue's (`known`) and from every one kept before them."""
    seen = {_key(f.outputs) for f in known if f.via is None}
    # what the diagnosis reads as a known mistake (or the reference) returned transposed
    shadowed = {_key(f.outputs) for f in known if f.via is None} | {_key(reference)}
    kept: list[Fingerprint] = []
    for fingerprint in found:
        key = _key(fingerprint.outputs)
        if (
            key in seen
            or _key(_transposed(fingerprint.outputs)) in shadowed
            or not all(_answered(o) for o in fingerprint.outputs)
            or _same(fingerprint.outputs, reference, mode, tol)
        ):
            continue
        seen.add(key)
        kept.append(fingerprint)
    return kept


MAX_SILENT = 8  # singles per target that change nothing on the cases, taken into pairs


def silent(
    found: Sequence[Fingerprint], reference: Sequence[Value], mode: str, tol: Tolerance
) -> list[Fingerprint]:
    """Singles that answer every case as the reference does (a softmax without its max
    shift: the same on ordinary scores), the first MAX_SILENT: never told alone, but paired
    after the distinct singles, as a student who also left out the shift (`exp(x) / sum(x)`
    is not `exp(x - max) / sum(x)`) is only named by the pair."""
    return [
        f
        for f in found
        if f.origin == "mutant"
        and all(_answered(o) for o in f.outputs)
        and _same(f.outputs, reference, mode, tol)
    ][:MAX_SILENT]


def _transposed(outputs: Sequence[Value | Exception]) -> list[Value | Exception]:
    """Each 2-D output transposed (what the diagnosis tries as `output_transposed`)."""
    return [o.T if isinstance(o, np.ndarray) and o.ndim == 2 else o for o in outputs]


def _key(outputs: Sequence[Value | Exception]) -> str:
    """Outputs rounded to 7 significant digits, as one digest: equal keys, equal outputs (at
    a rounding boundary a duplicate is merely kept)."""
    hasher = blake2b(digest_size=16)
    for value in outputs:
        _feed(hasher, value)
        hasher.update(b"|")
    return hasher.hexdigest()


def _feed(hasher: Any, value: Value | Exception) -> None:
    if isinstance(value, Seq):
        hasher.update(f"{value.kind}[".encode())
        for item in value.items:
            _feed(hasher, item)
        hasher.update(b"]")
    elif isinstance(value, np.ndarray):
        with np.errstate(all="ignore"):
            scale = 10.0 ** (np.floor(np.log10(np.abs(value) + 1e-300)) - 6)
            rounded = np.round(value / scale) * scale + 0.0
        hasher.update(repr(value.shape).encode() + rounded.tobytes())
    else:
        hasher.update(repr(value).encode())


# ---------------------------------------------------------------- the cache on disk


def cache_key(assignment: AssignmentSpec, catalogue: Catalogue) -> str:
    """The content hash the derived fingerprints are cached under."""
    parts = [
        repr(assignment).encode(),
        catalogue.source.encode(),
        versions.version("attention-grader").encode(),
        np.__version__.encode(),
    ]
    here = Path(__file__)
    makers = (here.with_name(f"{m}.py") for m in _MAKERS)
    course = (COURSE_SOURCES / f"{m}.py" for m in _COURSE_MAKERS)
    files = (assignment.solution, *makers, *course, here)
    return content_digest(parts, files)


def _cache_path(assignment: AssignmentSpec, catalogue: Catalogue) -> Path | None:
    folder = cache_dir()
    return (
        folder / f"derived-{assignment.id}-{cache_key(assignment, catalogue)}.bin"
        if folder
        else None
    )


def _plain(value: Value) -> Any:
    """A decoded value as the encoder takes it (arrays, lists, tuples, None)."""
    if isinstance(value, Seq):
        items = [_plain(v) for v in value.items]
        return tuple(items) if value.kind == "tuple" else items
    return value


_PER_FRAME = 50  # fingerprints in one frame of the cache (a frame's header is bounded)


def _frame(target: str, prints: list[Fingerprint]) -> bytes | None:
    """One frame of the cache: some of a target's fingerprints, their words and numbers."""
    header = {
        "target": target,
        "prints": [
            {
                **{k: getattr(f.mistake, k) for k in _MISTAKE_FIELDS},
                "origin": f.origin,
                "also": [{k: getattr(m, k) for k in _MISTAKE_FIELDS} for m in f.also],
            }
            for f in prints
        ],
    }
    values = {str(i): [_plain(v) for v in f.outputs] for i, f in enumerate(prints)}  # type: ignore[arg-type]
    try:
        return encode_frame(header, values)
    except ValueError:
        return None


def _pairs_path(path: Path, target: str) -> Path:
    """Where a target's pairs of mutations are cached, beside the singles."""
    return path.with_name(f"{path.stem}-pairs-{target}.bin")


def _load_pairs(path: Path, target: str) -> list[Fingerprint]:
    """A target's cached pairs of mutations; none when the file is missing or damaged."""
    found = _load(_pairs_path(path, target))
    return found.get(target, []) if found else []


def _save(path: Path, kept: dict[str, list[Fingerprint]]) -> None:
    """Write the cache atomically, each target's pairs of mutations in a file of their own
    (written first: a cache with its singles has its pairs); a folder that cannot be
    written just means no cache."""
    for target, every in kept.items():
        pairs = [f for f in every if f.also]
        if not _write(_pairs_path(path, target), {target: pairs}):
            return
    _write(path, {target: [f for f in every if not f.also] for target, every in kept.items()})


def _write(path: Path, kept: dict[str, list[Fingerprint]]) -> bool:
    """Write one cache file atomically; False when it cannot be written."""
    frames = []
    for target, every in kept.items():
        for start in range(0, max(len(every), 1), _PER_FRAME):
            frame = _frame(target, every[start : start + _PER_FRAME])
            if frame is None:  # too big for one frame: no cache, never a failure
                return False
            frames.append(frame)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(b"".join(frames))
        partial.replace(path)
    except (OSError, ValueError):
        return False
    return True


def _load(path: Path) -> dict[str, list[Fingerprint]] | None:
    """The cached fingerprints, or None when there is no readable, well-formed file."""
    spans = load_spans(path)
    if spans is None:
        return None
    found: dict[str, list[Fingerprint]] = {}
    for head, body in spans:
        decoded = _decoded(head, body)
        if decoded is None:
            return None
        found.setdefault(decoded[0], []).extend(decoded[1])
    return found


def _decoded(head: bytes, body: bytes) -> tuple[str, list[Fingerprint]] | None:
    """One frame of the cache: its target and fingerprints; None when it is malformed."""
    try:
        return _fingerprints(*decode_frame(head, body))
    except (WireError, KeyError, TypeError, ValueError):
        return None


def _index(path: Path) -> dict[str, list[tuple[bytes, bytes]]] | None:
    """The cache's frames by target, not yet decoded (only their headers are read); None
    when there is no readable file of whole frames."""
    spans = load_spans(path)
    if spans is None:
        return None
    index: dict[str, list[tuple[bytes, bytes]]] = {}
    for head, body in spans:
        target = _target_of(head)
        if target is None:
            return None
        index.setdefault(target, []).append((head, body))
    return index


_TARGET_FIRST = b'{"target": '  # how _frame's header begins (json.dumps keeps the order)


def _target_of(head: bytes) -> str | None:
    """The target a frame's header names, read from its start when it begins as _frame
    writes it (the rest, large, is parsed only when the frame is decoded); None when it
    names none."""
    try:
        if head.startswith(_TARGET_FIRST):
            text = head.decode("utf-8")
            target = json.JSONDecoder().raw_decode(text, len(_TARGET_FIRST))[0]
        else:
            target = json.loads(head)["target"]
    except (ValueError, KeyError, TypeError):  # UnicodeDecodeError is a ValueError
        return None
    return target if isinstance(target, str) else None


def _cached_target(
    path: Path, index: dict[str, list[tuple[bytes, bytes]]], target: str
) -> list[Fingerprint]:
    """A target's cached fingerprints, decoded now, its pairs read when first asked for; a
    frame found damaged only now counts as none (as a damaged file of pairs does)."""
    prints: list[Fingerprint] = []
    for head, body in index.get(target, []):
        decoded = _decoded(head, body)
        prints += decoded[1] if decoded is not None else []
    return Prints(prints, functools.partial(_load_pairs, path, target))


def _fingerprints(
    header: dict[str, Any], values: dict[str, Value]
) -> tuple[str, list[Fingerprint]]:
    prints = []
    for i, entry in enumerate(header["prints"]):
        outputs = values[str(i)]
        if not isinstance(outputs, Seq) or entry["origin"] not in ("inherited", "mutant"):
            raise ValueError("malformed cache entry")
        mistake = _mistake(entry)
        also = tuple(_mistake(m) for m in entry["also"])
        prints.append(Fingerprint(mistake, outputs.items, None, entry["origin"], also))
    return str(header["target"]), prints


def _mistake(entry: dict[str, Any]) -> Mistake:
    """A cached mistake (JSON holds `within`'s pair as a list)."""
    fields = {k: entry[k] for k in _MISTAKE_FIELDS}
    within = fields["within"]
    if within is not None:
        if not (isinstance(within, list) and len(within) == 2 and isinstance(within[0], str)):
            raise ValueError("malformed cache entry")
        if within[1] is not None and not isinstance(within[1], str):
            raise ValueError("malformed cache entry")
        fields["within"] = (within[0], within[1])
    return Mistake(**fields)
