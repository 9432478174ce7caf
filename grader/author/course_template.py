"""The files `grader init` writes: a small working course whose config explains every key it
uses, an example assignment (`standardize`) with one catalogued mistake, an example case
builder (commented out) and a README for the author."""

from __future__ import annotations

import json

CONFIG = """\
# The course's config: what is graded and how. Every key is described in the grader's
# docs/config-reference.md; docs/course-author.md walks from this file to a graded class.
version: 1
# sandbox: required   # students' notebooks run only in the bubblewrap sandbox, else
#                     # exit 2; the default, auto, falls back to process limits with a
#                     # note (docs/sandbox.md)
# time_zone: Europe/Berlin   # the zone of local times an LMS writes without one, and of
#                            # the calendar days of `late: {per: day}`

defaults:
  tolerance: {rtol: 1.0e-5, atol: 1.0e-8}          # as numpy.allclose
  time_limit: {submission: 20, cell: 5, call: 2}   # seconds
  partial_credit: true     # points × share of cases passed

# Add an assignment with:  grader new-assignment NAME --function "f(x, y)" --course .
# (it is appended at the end of this file, under `assignments:`; keep that section last).
assignments:
  # An example to copy from; delete it when you no longer need it (and its three files).
  example:
    title: Standardize the columns of a matrix
    solution: solutions/standardize.ipynb        # the reference; BEGIN/END SOLUTION marks
    exercise: exercises/standardize.ipynb        #   what students write (grader assign)
    mistakes: solutions/standardize_mistakes.py  # known wrong variants, with words for them
    seed: 12345                                  # the same cases for every student
    # due: 2026-03-01T23:59:00+01:00             # with a zone; without `due`, nothing is late
    # late: {grace: 15, percent: 10, per: day, cap: 50, cutoff: 2026-03-08T23:59:00+01:00}
    #                                            # minutes free, then % off per started day
    # keep: latest                               # or best: which of a student's notebooks counts
    sizes: [{N: 4, D: 3}, {N: 6, D: 2}, {N: 3, D: 5}]   # each entry is one case
    targets:
      standardize:             # the function students write, called once per size
        points: 2
        args:                  # its arguments, declared: drawn from `seed`
          - {name: x, shape: [N, D], std: 3.0, mean: 1.0}
"""

README = """\
# This course

A course folder for the grader. What is here:

- `config.yaml` — the assignments, their graded functions, how their inputs are drawn
  (`args:`), points, tolerances and limits.
- `solutions/` — one solution notebook per assignment (code between `# BEGIN SOLUTION` and
  `# END SOLUTION` is what students write) and its mistake catalogue `<name>_mistakes.py`.
  Never give this folder to students.
- `exercises/` — the student notebooks, written by `grader assign --course .`.
- `cases.py` — optional Python case builders, for inputs `args:` cannot declare.

The loop, from this folder:

    grader new-assignment layer_norm --function "layer_norm(x, gamma, beta, eps)" --course .
    # edit solutions/layer_norm.ipynb, the args in config.yaml, solutions/layer_norm_mistakes.py
    grader assign --course .                  # writes exercises/
    grader selftest --course .                # the solution passes, each mistake is caught
    grader grade submissions/ --course . --out results/

See the grader's docs/course-author.md for every step.
"""

MISTAKES = """\
# Known mistakes of the `example` assignment: one wrong variant per mistake, written as a
# student would write it. The grader reads the decorator's words without running this file;
# the variants run only in the sandbox, after the solution notebook (`np` and the solution's
# functions are in scope). Name each variant <function>__<mistake id>.


@CATALOGUE.mistake(
    "standardize", "divides_by_variance",
    "divides by the variance instead of the standard deviation",
    hint="divide by `x.std(axis=0)`, the square root of the variance",
    locate=r"\\.var\\(",
)
def standardize__divides_by_variance(x):
    return (x - x.mean(axis=0)) / x.var(axis=0)
"""

CASES = '''\
"""Case builders, for inputs config.yaml's `args:` cannot declare (arguments derived from one
another, containers that change from case to case). A target uses one with `inputs: NAME`
instead of `args:`. This file runs in the grader's own process, never in a student's sandbox.
"""

# from grader.course.inputs import builder
#
#
# @builder(needs=["N"])          # every size key it reads: checked when the config loads
# def correlated_pair(rng, sizes, index):
#     a = rng.standard_normal(sizes["N"])
#     return (a, 0.5 * a + rng.standard_normal(sizes["N"]))
'''

SOLUTION_CODE = """\
def standardize(x):
    \"\"\"Each column of x moved to mean 0 and scaled to standard deviation 1.\"\"\"
    # BEGIN SOLUTION: subtract each column's mean and divide by its standard deviation
    return (x - x.mean(axis=0)) / x.std(axis=0)
    # END SOLUTION"""


def notebook_text(cells: list[tuple[str, str]], prefix: str) -> str:
    """A notebook (nbformat 4.5) of (kind, source) cells, kind `markdown` or `code`, as text."""
    made = []
    for index, (kind, source) in enumerate(cells):
        cell: dict[str, object] = {
            "cell_type": kind,
            "id": f"{prefix}-{index}",
            "metadata": {},
            "source": source,
        }
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        made.append(cell)
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook = {
        "cells": made,
        "metadata": {"kernelspec": kernel, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def solution_notebook() -> str:
    """The example's solution notebook, as text."""
    title = (
        "# Standardize\n\nWrite `standardize(x)`: each column of the N×D matrix `x` moved "
        "to mean 0 and scaled to standard deviation 1."
    )
    cells = [("markdown", title), ("code", "import numpy as np"), ("code", SOLUTION_CODE)]
    return notebook_text(cells, "standardize")


def files() -> dict[str, str]:
    """Every file of a new course, by its path in the course folder."""
    return {
        "config.yaml": CONFIG,
        "README.md": README,
        "cases.py": CASES,
        "solutions/standardize.ipynb": solution_notebook(),
        "solutions/standardize_mistakes.py": MISTAKES,
    }
