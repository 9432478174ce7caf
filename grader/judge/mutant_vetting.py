"""A mutant whose numbers match the student's, checked against the student's code: its
words are said only where the code does not contradict them (diagnose.py asks).

A term said to be dropped that the code subtracts in a form that changes nothing; a global
said to be read where the code reads none (a literal of theirs gives the same numbers); a
loop said to leave out an item where no loop of theirs does; a call of another function
where their code calls none. Reads the mistake's words and
the student's source text; runs nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from grader.course.mistakes import Mistake
from grader.judge.diagnosis_data import Evidence
from grader.judge.shown import KIND_WORDS
from grader.judge.static import calls_in_order


def contradicted(ev: Evidence, mistake: Mistake) -> bool:
    """Whether the student's code shows that a matched mutant's mistake is not theirs."""
    return _term_kept(ev, mistake) or _no_global(ev, mistake) or never_called(ev, mistake)


_SWAPPED = re.compile(r"^calls `(\w+)` where `\w+` is meant")  # mutant_operators' words


def never_called(ev: Evidence, mistake: Mistake) -> bool:
    """A mutant's call of another of the notebook's functions (`softmax` for `softmax_cols`)
    where the student's code calls no such function: the same numbers come from the meant
    one, broken in their notebook (a `softmax_cols` that sums the whole matrix). Such a
    mutant is passed over (diagnose.py), not named beside its pair."""
    found = _SWAPPED.match(mistake.message)
    if mistake.id != "wrong_function" or found is None or ev.function is None:
        return False
    return found[1] not in calls_in_order(ev.function)


# Mutants of one scaling that give the same numbers: x / √d / √d is x / d; where each is
# looked for in the student's code (placement.locate), as the course's catalogue does.
_SAME_SCALING = ("scale_duplicated", "scale_by_d")
_SCALING_LINE = {"scale_duplicated": r"sqrt|\*\*\s*0?\.5", "scale_by_d": r"/"}


def _is_root(node: ast.AST) -> bool:
    """A call of `sqrt` (np.sqrt, math.sqrt, a bare sqrt), as mutant_operators.is_root
    (not imported here: `grader check` loads no mutant maker)."""
    if not isinstance(node, ast.Call):
        return False
    callee = node.func
    name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
    return name == "sqrt"


def as_in_code(ev: Evidence, mistake: Mistake) -> Mistake:
    """A matched mutant's mistake as the student's code makes it, where two mutants give the
    same numbers: scaling twice by a square root where the function takes two roots, else
    dividing by a size instead of its root (r44: "scales twice: `q @ k.T /
    np.sqrt(q.shape[-1])` again", code the student never wrote, of `q @ k.T / d_k`). The
    other's words are its kind's, which quote no code."""
    if mistake.id not in _SAME_SCALING or ev.function is None:
        return mistake
    roots = sum(
        bool(
            _is_root(node)
            or (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Pow)
                and isinstance(node.right, ast.Constant)
                and node.right.value == 0.5
            )
        )
        for node in ev.function.nodes
    )
    made = _SAME_SCALING[0] if roots >= 2 else _SAME_SCALING[1]
    if made == mistake.id:
        return mistake
    # the other's fix goes too: "use `np.sqrt(d)`, not `d`" to code with two roots and no `d`
    return replace(
        mistake,
        id=made,
        message=KIND_WORDS[made],
        hint="",
        locate=_SCALING_LINE[made],
        static=None,
    )


def _no_global(ev: Evidence, mistake: Mistake) -> bool:
    """A mutant's read of a notebook global (`np.sqrt(D)`) where the student's code reads
    none: the same numbers come from a literal of theirs (`/ 2`), told by its own hint."""
    reads = any(h.kind == "global" for h in ev.hints)
    return mistake.id == "uses_global" and ev.function is not None and not reads


# mutant_operators.loop_items_dropped's words
_LOOP = re.compile(r"\bthe loop over `[^`]*` leaves out its (?:last|first) item\b")


def loop_dropped(mistake: Mistake) -> bool:
    """A mutant whose loop leaves out an item: said only where a loop of the student's does
    (loop_bounds), and placed there."""
    return mistake.id == "off_by_one" and _LOOP.search(mistake.message) is not None


# mutant_operators' words, after mutant_helpers' `in `softmax_cols`, which it calls: `
_DROPPED = re.compile(r"^(?:in `\w+`, which [^:]*: )?leaves out `([-+])\s*([^`]*)`")


def _term_kept(ev: Evidence, mistake: Mistake) -> bool:
    """Whether a pair's `term_dropped` is contradicted by the student's code: the function it
    calls in the dropped term (`- np.max(scores)`) is subtracted (added) in their code too, in
    a form that happens to change nothing (a maximum over the whole array, where the pair's
    other mistake normalises over the whole array): naming it would tell them to add what is
    there."""
    found = _DROPPED.match(mistake.message)
    if mistake.id != "term_dropped" or found is None or ev.function is None:
        return False
    calls = re.findall(r"([A-Za-z_]\w*)\s*\(", found[2])
    if not calls:
        return False
    # inside the arguments of a call on the same line (`np.exp(x - np.max(x))`), in code: a
    # shift computed under a name and never used, or a comment, keeps nothing
    done = re.compile(rf"\w\s*\([^#]*{re.escape(found[1])}\s*[\w.]*\b{re.escape(calls[0])}\s*\(")
    # their own body, or a function of theirs it calls (the 1-D `softmax` they call where
    # `softmax_cols` is meant subtracts the maximum of the whole array)
    # and the helper a helper's mutant changed (`softmax_cols`, which `one_head` calls)
    inside = _IN_HELPER.match(mistake.message)
    names = [*calls_in_order(ev.function), *([inside[1]] if inside else [])]
    called = (ev.functions(name) for name in names)
    return any(
        source.first_line(lambda line: done.search(line.split("#")[0])) is not None
        for source in (ev.function, *(f for f in called if f is not None))
    )


_IN_HELPER = re.compile(r"^in `(\w+)`, which ")  # mutant_helpers.py's words
