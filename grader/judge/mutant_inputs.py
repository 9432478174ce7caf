"""Mutants that read an argument another way: the reference run on one argument transposed
or in reverse order. A student output that matches one is right for inputs read the wrong
way round (rows for columns, the last word first). Nothing here runs code.
"""

from __future__ import annotations

import ast
import copy

from grader.course.mistakes import Mistake
from grader.judge.mutants import PREFIX

# (mistake id, how the argument is read, words): `{p}` is the argument's name.
_READINGS = (
    (
        "input_transposed",
        "{p}.T",
        "gives what a correct version gives for `{p}` transposed: it "
        "reads `{p}` the wrong way round (rows for columns)",
    ),
    (
        "input_reversed",
        "{p}[::-1]",
        "gives what a correct version gives for `{p}` in reverse "
        "order: it reads `{p}` (its items or rows) from the end",
    ),
)


def input_mutants(function: ast.FunctionDef, target: str) -> list[Mistake]:
    """For each argument, the reference that first reads it transposed, then reversed."""
    made: list[Mistake] = []
    args = function.args
    for arg in (*args.posonlyargs, *args.args):
        for mistake_id, reading, words in _READINGS:
            clone = copy.deepcopy(function)
            read = ast.parse(f"{arg.arg} = {reading.format(p=arg.arg)}").body[0]
            clone.body = [read, *clone.body]
            clone.name = f"{PREFIX}{target}_read_{len(made)}"
            clone.decorator_list = []
            source = ast.unparse(ast.fix_missing_locations(clone))
            message = words.format(p=arg.arg)
            made.append(Mistake(mistake_id, target, message, "", clone.name, source))
    return made
