"""Reference outputs: the solution notebook run in a sandboxed child on the seeded cases (and
the probes), like any notebook; this process receives only the numbers."""

from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass, field

import numpy as np

from grader.course.cases import Case, CaseSet
from grader.course.config import AssignmentSpec
from grader.course.notebook import Submission, load_submission
from grader.course.parsing import compile_tree
from grader.errors import ConfigError
from grader.judge.compare import Flat, flatten
from grader.judge.course_code import CallFailed, CourseOutputs, renamed, run_course_code
from grader.judge.identity import tokens
from grader.judge.static import find_function
from grader.run.wire import Value, decode_frame, encode_frame, sendable
from grader.run.workers import Workers


def normalise(obj: object) -> Value:
    """Pass a value through the wire format, so references and answers are shaped alike. A
    float64 array the wire carries whole comes back as its own C-ordered copy, as from the
    wire (the same numbers, bit for bit), without encoding it."""
    if type(obj) is np.ndarray and obj.dtype == np.float64 and sendable(obj, 0):
        return np.array(obj, dtype=np.float64, order="C", copy=True)
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
    # The outputs of some cases as one array, by their indices (see `flat_outputs`).
    _flat: dict[tuple[int, ...], Flat | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _tokens: dict[int, list[object]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def input_tokens(self, index: int) -> list[object]:
        """The inputs of one case as `score.tokens` gives them, made once: every answer's
        arguments are checked against them for changes."""
        if index not in self._tokens:
            self._tokens[index] = tokens(self.inputs[index])
        return self._tokens[index]

    def flat_outputs(self, indices: tuple[int, ...]) -> Flat | None:
        """The outputs of these cases flattened into one array (see compare.flatten), made
        once: every submission's answers on them are compared with it."""
        if indices not in self._flat:
            self._flat[indices] = flatten([self.outputs[i] for i in indices])
        return self._flat[indices]


_SOLUTIONS: dict[tuple[str, int, int, int, int], Submission] = {}


def load_solution(assignment: AssignmentSpec) -> Submission:
    """The solution notebook, read and parsed (never run here); ConfigError when missing.
    Read once per process while the file's device, inode, size and modification time stay
    the same (references, fingerprints and derived mistakes each need it)."""
    path = assignment.solution
    try:
        info = os.stat(path)
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"assignment {assignment.id}: solution notebook not found: {path}")
    stamp = (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if stamp not in _SOLUTIONS:
        if len(_SOLUTIONS) > 64:
            _SOLUTIONS.clear()
        _SOLUTIONS[stamp] = load_submission(path)
    return _SOLUTIONS[stamp]


def parameters(solution: Submission, name: str) -> tuple[str, ...]:
    """The parameter names of the solution's `name`, as its `def` line gives them."""
    found = find_function(solution, name)
    if found is None:
        return ()
    args = found.node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    names += [args.vararg.arg] if args.vararg else []
    names += [a.arg for a in args.kwonlyargs]
    names += [args.kwarg.arg] if args.kwarg else []
    return tuple(names)


def called_globals(solution: Submission, name: str) -> set[str]:
    """The global names the solution's `name` reads (what its compiled code looks up)."""
    found = find_function(solution, name)
    if found is None:
        return set()
    module = compile_tree(ast.Module([found.node], []), "<solution>")  # compiled, not run
    code = next(c for c in module.co_consts if hasattr(c, "co_names"))
    return set(code.co_names)


def compute_references(
    assignment: AssignmentSpec, case_set: CaseSet, workers: Workers
) -> tuple[dict[str, Reference], dict[str, Reference]]:
    """The references on the cases, and on the probes, from one sandboxed run."""
    solution = load_solution(assignment)
    plan = [
        (t.name, case_set.cases[t.name] + renamed(case_set.probes[t.name], t.name))
        for t in assignment.targets
    ]
    outputs = run_course_code(
        solution.cells, plan, assignment, workers, f"the solution notebook {solution.path}"
    )
    outputs.refuse_failed_cells(
        lambda cell, error: (
            f"assignment {assignment.id}: the solution notebook "
            f"{solution.path} fails to run: cell {cell}: {error}"
        )
    )
    references, probes = {}, {}
    for target in assignment.targets:
        if target.name in outputs.missing:
            verb = "set" if target.variable else "define"
            raise ConfigError(
                f"assignment {assignment.id}: the solution does not {verb} `{target.name}`"
            )
        params = () if target.variable else parameters(solution, target.name)
        references[target.name] = _reference(
            assignment, outputs, target.name, case_set.cases[target.name], params
        )
        probes[target.name] = _reference(
            assignment, outputs, target.name, case_set.probes[target.name], params
        )
    return references, probes


def _reference(
    assignment: AssignmentSpec,
    outputs: CourseOutputs,
    name: str,
    cases: tuple[Case, ...],
    params: tuple[str, ...],
) -> Reference:
    values = []
    for case in cases:
        value = outputs.get(name, case.index)
        if isinstance(value, CallFailed):
            raise ConfigError(
                f"assignment {assignment.id}: the solution's `{name}` fails on case "
                f"{case.index} ({case.describe()}): {value}"
            )
        values.append(value)
    inputs = tuple(tuple(normalise(a) for a in case.args) for case in cases)
    return Reference(tuple(values), inputs, params)
