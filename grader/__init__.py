"""A fast, isolated, diagnostic autograder for self-attention notebooks.

Public surface: `grade_path` (one notebook → Report), `load_config`, `Report`, `GraderError`.
"""

import os

# Grading multiplies tiny matrices: one BLAS thread is faster to fork and keeps fork safe.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:
    from grader.course.config import load_config
    from grader.engine import grade_path
    from grader.errors import GraderError
    from grader.inline import check
    from grader.report import Report
    from grader.run.session import keep_going

__all__ = ["GraderError", "Report", "check", "grade_path", "keep_going", "load_config"]
# Imported on first use: the sandboxed worker imports `grader.run.worker` and must not pull in
# the judging side (nor `check`'s Jinja) through this package's own import.
_LAZY = {
    "GraderError": "errors",
    "Report": "report",
    "check": "inline",
    "grade_path": "engine",
    "keep_going": "run.session",
    "load_config": "course.config",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'grader' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
