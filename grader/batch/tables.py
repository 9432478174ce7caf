"""The instructor's CSV files (roster, extensions, overrides, submission times), read one way:
UTF-8 with or without a spreadsheet's byte-order mark, and a file that cannot be read is one
line naming it."""

from __future__ import annotations

import csv
from pathlib import Path

from grader.errors import GraderError


def csv_rows(path: Path, error: type[GraderError], what: str = "it") -> csv.DictReader[str]:
    """A reader over `path`'s rows by header; `error` (ConfigError for course files,
    UsageError for files named on the command line) when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's BOM is not a column name
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {what} ({exc})") from None
    return csv.DictReader(text.splitlines())
