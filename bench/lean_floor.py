"""The least any grader can spend per submission here, given a fresh process per student.

Usage: python bench/lean_floor.py CALLS.pickle   (written by bench/where_time_goes.py)
CALLS.pickle holds, per submission, its cells' sources and the arguments of every call the
grader makes. This process imports numpy and nothing of the grader; for every submission it
forks a child that runs the cells and makes the calls (no copies, no encoding, no sandbox,
no answers sent back) and exits. Prints the CPU seconds per submission of parent and
children together, as one number, for where_time_goes.py to print against the budget.
"""

from __future__ import annotations

import gc
import os
import pickle
import resource
import sys
import types
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the grader sets it
import numpy  # noqa: F401 - what every student process needs, imported before forking

Calls = list[tuple[str, list[tuple[Any, ...]]]]


def run_own_code(codes: list[types.CodeType], calls: Calls) -> None:
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for code in codes:
        try:  # noqa: SIM105 - a bare try costs nothing, suppress() would be measured
            exec(code, namespace)
        except Exception:
            pass
    for name, arguments in calls:
        function = namespace.get(name)
        if not callable(function):
            continue
        for args in arguments:
            try:  # noqa: SIM105
                function(*args)
            except Exception:
                pass


def compiled(sources: list[str]) -> list[types.CodeType]:
    codes = []
    for source in sources:
        try:  # a cell that does not compile does not run
            codes.append(compile(source, "<cell>", "exec"))
        except SyntaxError:
            continue
    return codes


def cpu() -> float:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    theirs = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def main() -> None:
    with open(sys.argv[1], "rb") as handle:
        data: list[tuple[list[str], Calls]] = pickle.load(handle)  # our own file, just written
    # The exercises' last cell calls `check()`; in a grader's child it does nothing.
    stub = types.ModuleType("grader")
    stub.check = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    sys.modules["grader"] = stub
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the whole process
    submissions = [(compiled(sources), calls) for sources, calls in data]
    run_own_code(*submissions[0])  # first-call costs paid here, once, as a warm-up would
    gc.collect()
    gc.freeze()
    before = cpu()
    for codes, calls in submissions:
        pid = os.fork()
        if pid == 0:
            run_own_code(codes, calls)
            os._exit(0)
        os.waitpid(pid, 0)
    print((cpu() - before) / len(submissions), file=sys.__stdout__)


if __name__ == "__main__":
    main()
