"""JSON Schema of config.yaml; config.py turns its violations into key-path messages.

The parts used in several places are written once, under `$defs`, and referred to: the
schema stays readable, and the validator fastjsonschema generates from it half as long.
"""

from typing import Any


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


# The values of `sandbox:` (config.MODES, which imports this schema; the test compares them).
SANDBOX_MODES = ("auto", "required", "none")

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}

_TOLERANCE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "rtol": {"type": "number", "minimum": 0},
        "atol": {"type": "number", "minimum": 0},
    },
}
_TIME_LIMIT = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"submission": _POSITIVE, "cell": _POSITIVE, "call": _POSITIVE},
}
_SIZES = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "integer", "minimum": 1},
    },
}
_TARGET = {
    "type": "object",
    "additionalProperties": False,
    "required": ["points"],
    "properties": {
        "points": {"type": "number", "minimum": 0},
        "inputs": {"type": "string"},
        "variable": {"type": "boolean"},
        "compare": {"enum": ["exact", "squeeze"]},
        "tolerance": _ref("tolerance"),
        "partial_credit": {"type": "boolean"},
        "mutation": {"enum": ["fail", "warn"]},
        "sizes": _ref("sizes"),
        "sums_to_one": {"enum": ["columns", "rows", "all"]},
        "public_cases": {"type": "integer", "minimum": 1},
    },
}
_ASSIGNMENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["solution", "seed", "sizes", "targets"],
    "properties": {
        "title": {"type": "string"},
        "solution": {"type": "string"},
        "exercise": {"type": "string"},
        "mistakes": {"type": "string"},
        "seed": {"type": "integer", "minimum": 0},
        "sizes": _ref("sizes"),
        "time_limit": _ref("time_limit"),
        "tolerance": _ref("tolerance"),
        "preload": {"type": "array", "items": {"type": "string", "pattern": r"^[A-Za-z_][\w.]*$"}},
        "files": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "Course data files the student's notebook may read (paths relative "
            "to the course folder, e.g. data/x.npy): each appears read-only under the same "
            "relative path in the notebook's working folder, and nothing else of the course "
            "does. Each must exist inside the course folder, and be neither a solution, a "
            "mistake catalogue nor in the solutions' folder.",
        },
        "targets": {"type": "object", "minProperties": 1, "additionalProperties": _ref("target")},
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "assignments"],
    "properties": {
        "version": {"const": 1},
        "sandbox": {
            "enum": list(SANDBOX_MODES),
            "description": "Where students' notebooks run. auto (the default): in the "
            "bubblewrap sandbox where one can be made, else with process limits alone and a "
            "note saying so; required: no sandbox is an error (exit 2); none: never try. "
            "`grader check|grade --sandbox` overrides it.",
        },
        "defaults": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "tolerance": _ref("tolerance"),
                "time_limit": _ref("time_limit"),
                "partial_credit": {"type": "boolean"},
                "mutation": {"enum": ["fail", "warn"]},
            },
        },
        "assignments": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": _ref("assignment"),
        },
    },
    "$defs": {
        "tolerance": _TOLERANCE,
        "time_limit": _TIME_LIMIT,
        "sizes": _SIZES,
        "target": _TARGET,
        "assignment": _ASSIGNMENT,
    },
}

# Messages by JSON Schema keyword, phrased for an instructor editing YAML.
TYPE_WORDS = {
    "number": "a number",
    "integer": "a whole number",
    "string": "a string",
    "boolean": "true or false",
    "object": "a mapping (key: value lines)",
    "array": "a list",
}
