"""Parameters declared in another order than the exercise's, read from the `def` line.

The grader passes a target's arguments by position, in the order of the reference's
parameters. A student who wrote `def self_attention(X, omega_q, omega_k, omega_v, …)` where
the exercise has `(X, omega_v, omega_q, omega_k, …)` uses every name correctly in the body
and still computes with the wrong matrices: `omega_q` receives the values' weights. Said
when the leading positional parameters have exactly the reference's names, in another order;
a renamed parameter says nothing about order, so nothing is said then.
"""

from __future__ import annotations

from grader.judge.diagnosis_data import Evidence
from grader.report import Finding

MISTAKE = "parameter_order"


def parameter_order(ev: Evidence) -> Finding | None:
    """The finding for a `def` whose parameters are the reference's in another order."""
    function = ev.function
    expected = list(ev.reference.parameters)
    if function is None or ev.is_stub or len(expected) < 2:
        return None
    arguments = function.node.args
    own = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][: len(expected)]
    if own == expected or sorted(own) != sorted(expected):
        return None
    name = function.node.name
    first = next(i for i, (a, b) in enumerate(zip(own, expected, strict=True)) if a != b)
    text = (
        f"takes its parameters in another order than the exercise's: "
        f"`{name}({', '.join(own)})`, where the grader calls "
        f"`{name}({', '.join(expected)})` and passes the arguments by position, so "
        f"`{own[first]}` receives what the exercise calls `{expected[first]}`; "
        "put the parameters in the exercise's order"
    )
    return Finding("relation", text, location=function.location())
