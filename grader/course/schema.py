"""JSON Schema of config.yaml; config.py turns its violations into key-path messages.

The parts used in several places are written once, under `$defs`, and referred to: the
schema stays readable, and the validator fastjsonschema generates from it half as long.
Every key carries a `description`: docs/config-reference.md is generated from them
(`make docs`), and tests/test_docs.py fails when one is missing or the page is stale.
"""

from typing import Any


def _ref(name: str, description: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}", "description": description}


# The values of `sandbox:` (config.MODES, which imports this schema; the test compares them).
SANDBOX_MODES = ("auto", "required", "none")

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}

_TOLERANCE = {
    "type": "object",
    "additionalProperties": False,
    "description": "How close an output must be to the reference, as in numpy.allclose: "
    "`|got - expected| <= atol + rtol * |expected|`. A key left out keeps the value of the "
    "level above (built-in default, then `defaults`, then the assignment, then the target).",
    "properties": {
        "rtol": {
            "type": "number",
            "minimum": 0,
            "description": "Relative tolerance (built-in default 1e-5).",
        },
        "atol": {
            "type": "number",
            "minimum": 0,
            "description": "Absolute tolerance, what matters near zero (built-in default 1e-8).",
        },
    },
}
_TIME_LIMIT = {
    "type": "object",
    "additionalProperties": False,
    "description": "Limits on the student's process, in seconds of the clock; what has not "
    "answered when one runs out is a timeout. The time the process waited for a CPU behind "
    "other processes (a loaded machine) is not counted, up to 3 times the limit on the "
    "clock. A key left out keeps the value of the level above (built-in default, then "
    "`defaults`, then the assignment).",
    "properties": {
        "submission": {
            **_POSITIVE,
            "description": "The whole notebook: every cell and every call (built-in default "
            "20). The cells together may take 3/4 of it (at least one `cell` limit); a cell "
            "after that share is spent is not run (its line says so) and the functions are "
            "called in what is left.",
        },
        "cell": {**_POSITIVE, "description": "One code cell (built-in default 5)."},
        "call": {
            **_POSITIVE,
            "description": "One call of a target on one case (built-in default 2).",
        },
    },
}
_SIZES = {
    "type": "array",
    "minItems": 1,
    "description": "The sizes the seeded cases are built at: a list of mappings from a "
    "dimension name to a whole number ≥ 1, such as `[{D: 4, N: 3}, {D: 5, N: 7}]`. Each "
    "mapping is one case and the input builder reads the names it needs. Several sizes show "
    "code that is right only at the example's size, or that reads a notebook global.",
    "items": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {"type": "integer", "minimum": 1},
    },
}
_DIM = {
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "integer", "minimum": 1},
    ],
}
_ARG = {
    "type": "object",
    "additionalProperties": False,
    "description": "One argument of the call, drawn in the order the list gives. A size key "
    "(a name of `sizes`, such as `N`) may stand wherever a dimension or a count goes; every "
    "`sizes` entry of the target must then hold it (checked when the config loads).",
    "properties": {
        "name": {
            "type": "string",
            "description": "The argument's name, for the author's eyes (default arg0, arg1, …).",
        },
        "shape": {
            "type": "array",
            "items": _DIM,
            "description": "The array's shape in size keys and numbers, such as `[N, D]` or "
            "`[D, 1]`. Without it the argument is one number (a Python float, int or bool).",
        },
        "distribution": {
            "enum": ["normal", "uniform", "integers", "positive"],
            "description": "normal (the default): mean + std × a standard normal draw; "
            "uniform: between low and high; integers: whole numbers from low up to, not "
            "including, high (either may be a size key); positive: std × |a standard normal "
            "draw| + low (low defaults to 0.1), for variances and scales.",
        },
        "mean": {"type": "number", "description": "normal: the mean (default 0)."},
        "std": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "normal and positive: the spread (default 1).",
        },
        "fan_in": {
            **_DIM,
            "description": "normal: divide the draw by √fan_in (a size key or a number), "
            "as weights are initialised, so products of them stay of order one.",
        },
        "low": {
            "anyOf": [{"type": "number"}, {"type": "string", "minLength": 1}],
            "description": "uniform and integers: the lowest value (default 0); positive: "
            "the smallest value (default 0.1).",
        },
        "high": {
            "anyOf": [{"type": "number"}, {"type": "string", "minLength": 1}],
            "description": "uniform: the highest value (default 1); integers: one past the "
            "highest (a size key such as `L` draws an index below L).",
        },
        "dtype": {
            "enum": ["float64", "float32", "int64", "bool"],
            "description": "The array's element type (default float64).",
        },
        "special": {
            "enum": ["overflow", "masked"],
            "description": "Special values laid over the draw. overflow: every entry is "
            "raised by 1000, so scores overflow a softmax that does not subtract the maximum "
            "first; masked: entries above the first superdiagonal of a matrix are -inf, as "
            "a mask leaves them.",
        },
        "size": {
            **_DIM,
            "description": "A value derived from the sizes: the size itself as an int "
            "(`size: L` passes L). Given alone.",
        },
        "causal_mask": {
            **_DIM,
            "description": "A value derived from the sizes: the L×L causal mask, 0 on and "
            "below the diagonal and -inf above it (`causal_mask: L`). Given alone.",
        },
        "value": {
            "type": ["number", "boolean"],
            "description": "A constant passed as it is, such as `eps: 1.0e-5`. Given alone.",
        },
        "list": {
            **_DIM,
            "description": "A container: a Python list of this many independent draws "
            "(`list: N` with `shape: [D, 1]` is a list of N columns).",
        },
    },
}
_TARGET = {
    "type": "object",
    "additionalProperties": False,
    "required": ["points"],
    "description": "One graded function (or, with `variable: true`, one top-level variable), "
    "keyed by its name in the notebook.",
    "properties": {
        "points": {
            "type": "number",
            "minimum": 0,
            "description": "What the target is worth when every case passes.",
        },
        "inputs": {
            "type": "string",
            "description": "The name of a case builder in the course's cases.py (registered "
            "with `@builder(needs=[...])`) that makes the target's arguments, for inputs "
            "`args` cannot declare. A target has `inputs` or `args`, except for a variable.",
        },
        "args": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/arg"},
            "description": "The target's arguments, declared: one entry per positional "
            "argument, drawn in order from the case's seed.",
        },
        "variable": {
            "type": "boolean",
            "description": "true: the target is a top-level variable, compared after the "
            "notebook has run with the value the solution notebook leaves; it takes no "
            "`inputs`. Default false.",
        },
        "compare": {
            "enum": ["exact", "squeeze"],
            "description": "exact (the default): the output's shape must be the reference's; "
            "squeeze: shapes that differ only by size-1 dimensions are accepted, so a "
            "softmax returned as `(N,)`, `(N, 1)` or `(N, 1, 1)` passes.",
        },
        "tolerance": _ref("tolerance", "This target's tolerance, over the assignment's."),
        "partial_credit": {
            "type": "boolean",
            "description": "true: points in proportion to the cases passed; false: all or "
            "nothing. Default: the value under `defaults`, else true.",
        },
        "mutation": {
            "enum": ["fail", "warn"],
            "description": "A call that returns the right result but changes its arguments "
            "in place: fail fails the case, warn passes it and says so. Default: the value "
            "under `defaults`, else fail.",
        },
        "sizes": _ref("sizes", "This target's case sizes, instead of the assignment's."),
        "sums_to_one": {
            "enum": ["columns", "rows", "all"],
            "description": "Where a right output sums to one (columns, rows or all of it), "
            "so that a wrong output that does not can be diagnosed as such.",
        },
        "public_cases": {
            "type": "integer",
            "minimum": 1,
            "description": "check() in a student's notebook uses only the first N cases; "
            "`grader grade` uses them all. Default: every case everywhere.",
        },
    },
}
_LATE = {
    "type": "object",
    "additionalProperties": False,
    "description": "The late policy. Lateness counts from `due` plus the student's "
    "extension (the roster's `extension_hours` column, or `extensions.csv` beside "
    "roster.csv: student,hours); within `grace` it costs nothing; after it each started "
    "`per` costs `percent` of the points, up to `cap`; after `cutoff` the score is 0.",
    "properties": {
        "grace": {
            "type": "number",
            "minimum": 0,
            "description": "Minutes after `due` that cost nothing (default 0).",
        },
        "percent": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "description": "Percent of the points taken off per started `per` late (default 0).",
        },
        "per": {
            "enum": ["hour", "day"],
            "description": (
                "The period `percent` is charged for: hour (of real time) or day (a calendar "
                "day in the course's `time_zone:`, so a 23- or 25-hour day is one; default day)."
            ),
        },
        "cap": {
            "type": "number",
            "minimum": 0,
            "maximum": 100,
            "description": "The most the periods may take off, in percent (default 100).",
        },
        "cutoff": {
            "type": "string",
            "description": "After this time (ISO 8601 with a time zone, moved by the "
            "student's extension) the score is 0. Default: none.",
        },
    },
}
_ASSIGNMENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["solution", "seed", "sizes", "targets"],
    "description": "One assignment, keyed by its id (what `--assignment` takes and what "
    "`grader assign` writes into the exercise's metadata).",
    "properties": {
        "title": {
            "type": "string",
            "description": "A human name for the assignment. Default: its id.",
        },
        "solution": {
            "type": "string",
            "description": "The solution notebook, relative to the course folder; its "
            "`# BEGIN SOLUTION` … `# END SOLUTION` regions are what students write. It runs "
            "only in the sandboxed child, which sends back the reference outputs.",
        },
        "exercise": {
            "type": "string",
            "description": "Where `grader assign` writes the student notebook. `grader "
            "selftest` checks that it scores 0, and a batch knows an unchanged copy of it.",
        },
        "mistakes": {
            "type": "string",
            "description": "The mistake catalogue (a Python file of wrong variants), relative "
            "to the course folder. It is read without being run, and runs only in the "
            "sandboxed child after the solution.",
        },
        "seed": {
            "type": "integer",
            "minimum": 0,
            "description": "Seed of the case inputs: every student gets the same cases.",
        },
        "sizes": _ref("sizes", "The case sizes of every target that names none of its own."),
        "time_limit": _ref("time_limit", "This assignment's limits, over `defaults`."),
        "tolerance": _ref("tolerance", "This assignment's tolerance, over `defaults`."),
        "preload": {
            "type": "array",
            "items": {"type": "string", "pattern": r"^[A-Za-z_][\w.]*$"},
            "description": "Modules the batch workers import once before forking, for "
            "notebooks that import them (numpy always is), such as matplotlib.pyplot. Each "
            "makes every fork dearer: list only what the notebooks use. In the sandbox this "
            "is also what a notebook may import beyond the standard library and numpy.",
        },
        "files": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "Course data files the student's notebook may read (paths relative "
            "to the course folder, e.g. data/x.npy): each appears read-only under the same "
            "relative path in the notebook's working folder, and nothing else of the course "
            "does. Each must exist inside the course folder, and be neither a solution, a "
            "mistake catalogue, in the solutions' folder, the roster, extensions.csv nor the "
            "`secret_file`.",
        },
        "due": {
            "type": "string",
            "description": "When the assignment is due: ISO 8601 with a time zone, such as "
            "`2026-03-01T23:59:00+01:00` (a time without a zone is refused). Without it, "
            "nothing is late.",
        },
        "late": _ref("late", "What handing in after `due` costs; without it, nothing."),
        "keep": {
            "enum": ["latest", "best"],
            "description": "When a student hands in several notebooks, each is graded and "
            "one is kept: latest (the default: the last in the export's order, a Canvas "
            "submission id or a Blackboard attempt date, else the last by file name; never "
            "by a file's modification time, which a copy changes) or best (the highest "
            "score after any late penalty; ties: the latest).",
        },
        "per_student_inputs": {
            "type": "boolean",
            "description": "true: each student's public cases (a target's first "
            "`public_cases`, or all of them) are drawn from a seed derived by HMAC-SHA256 from "
            "the student's id and the course secret ($GRADER_COURSE_SECRET, else "
            "`secret_file`), so no two students see the same values; the hidden cases keep "
            "`seed`. Grading needs the secret (without it: exit 2) and the student's id "
            "(`grader check --student ID`). Default false.",
        },
        "targets": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"$ref": "#/$defs/target"},
            "description": "What is graded, by function (or variable) name; at least one.",
        },
    },
}

_URL = {"type": "string", "pattern": "^https?://"}
_LTI = {
    "type": "object",
    "additionalProperties": False,
    "required": ["issuer", "client_id", "deployment_ids", "auth_login_url", "launch_url"],
    "description": "Students sign in by an LTI 1.3 launch from the course's page in Canvas or "
    "Moodle (the tool registered there with these values). Each launch is matched to a "
    "roster student (roster.csv in the course folder) who has a token already.",
    "properties": {
        "issuer": {"type": "string", "description": "The platform's issuer (`iss`)."},
        "client_id": {"type": "string", "description": "The tool's client id there."},
        "deployment_ids": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string"},
            "description": "The deployment ids a launch may come from.",
        },
        "auth_login_url": {**_URL, "description": "The platform's OIDC authorisation URL."},
        "auth_token_url": {**_URL, "description": "The platform's token URL (unused yet)."},
        "jwks_url": {**_URL, "description": "The platform's public keys (JWKS) URL."},
        "jwks_file": {
            "type": "string",
            "description": "The platform's public keys as a JWKS file, relative to the course "
            "folder, instead of `jwks_url`.",
        },
        "launch_url": {
            **_URL,
            "description": "This service's launch URL as registered: https://HOST/lti/launch.",
        },
        "match": {
            "enum": ["email", "lms_id"],
            "description": "How a launch finds its roster student: by the `email` claim "
            "(the default) or by `lms_id` (the launch's `sub` or LIS person id).",
        },
    },
}
_SERVE = {
    "type": "object",
    "additionalProperties": False,
    "description": "What `grader serve` allows; its command-line options override these.",
    "properties": {
        "max_kb": {
            "type": "integer",
            "minimum": 1,
            "description": "The largest upload, in KB (default 2048).",
        },
        "max_attempts": {
            "type": "integer",
            "minimum": 1,
            "description": "Uploads per student, all assignments together (default 100).",
        },
        "min_interval": {
            "type": "number",
            "minimum": 0,
            "description": "Seconds between two uploads of one student (default 10).",
        },
        "release_hidden": {
            "type": "boolean",
            "description": "true: students see their hidden cases' feedback on the service; "
            "false (the default): only the public cases', with a line saying the hidden ones "
            "are graded later. An instructor can also release them from the class page.",
        },
        "lti": _LTI,
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "assignments"],
    "description": "A course's config.yaml.",
    "properties": {
        "version": {"const": 1, "description": "The format of this file: always 1."},
        "sandbox": {
            "enum": list(SANDBOX_MODES),
            "description": "Where students' notebooks run. auto (the default): in the "
            "bubblewrap sandbox where one can be made, else with process limits alone and a "
            "note saying so; required: no sandbox is an error (exit 2); none: never try. "
            "`grader check|grade --sandbox` overrides it.",
        },
        "cases": {
            "type": "string",
            "description": "The course's case builders (a Python file, relative to the "
            "course folder; default cases.py when there is one). It runs in the grader's own "
            "process, never in a student's sandbox.",
        },
        "time_zone": {
            "type": "string",
            "description": "The course's time zone, an IANA name such as `Europe/Berlin`: "
            "the zone of the local times an LMS writes without one (Blackboard's attempt "
            "times in its file names), each read with the offset of its own day, so that a "
            "daylight-saving change between the due date and a submission counts. Without "
            "it, such a time takes the due date's offset. The zones are the `tzdata` "
            "package's (installed with the grader) where the system has none.",
        },
        "secret_file": {
            "type": "string",
            "description": "A file (relative to the course folder) holding the course secret "
            "that per-student inputs derive seeds from, used when $GRADER_COURSE_SECRET is "
            "unset. Keep it out of anything students get; it is never written to an output.",
        },
        "defaults": {
            "type": "object",
            "additionalProperties": False,
            "description": "Values every assignment and target starts from.",
            "properties": {
                "tolerance": _ref("tolerance", "The course-wide tolerance."),
                "time_limit": _ref("time_limit", "The course-wide time limits."),
                "partial_credit": {
                    "type": "boolean",
                    "description": "Every target's `partial_credit` unless it sets its own "
                    "(default true).",
                },
                "mutation": {
                    "enum": ["fail", "warn"],
                    "description": "Every target's `mutation` unless it sets its own "
                    "(default fail).",
                },
            },
        },
        "serve": _SERVE,
        "assignments": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"$ref": "#/$defs/assignment"},
            "description": "The course's assignments, by id; at least one.",
        },
    },
    "$defs": {
        "tolerance": _TOLERANCE,
        "time_limit": _TIME_LIMIT,
        "sizes": _SIZES,
        "target": _TARGET,
        "arg": _ARG,
        "assignment": _ASSIGNMENT,
        "late": _LATE,
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
