"""A fast, isolated, diagnostic autograder for self-attention notebooks.

Public surface: `grade_path` (one notebook → Report), `load_config`, `Report`, `GraderError`.
"""

import os

# Grading multiplies tiny matrices: one BLAS thread is faster to fork and keeps fork safe.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from typing import TYPE_CHECKING, Any  # noqa: E402

from .config import load_config  # noqa: E402
from .engine import grade_path  # noqa: E402
from .errors import GraderError  # noqa: E402
from .report import Report  # noqa: E402

if TYPE_CHECKING:
    from .inline import check

__all__ = ["GraderError", "Report", "check", "grade_path", "load_config"]


def __getattr__(name: str) -> Any:
    # `check` pulls in Jinja for its HTML; the command line never needs it.
    if name == "check":
        from .inline import check

        return check
    raise AttributeError(f"module 'grader' has no attribute {name!r}")
