"""The instructor's CSV files (roster, extensions, overrides, submission times), read one way:
UTF-8 with or without a spreadsheet's byte-order mark, and a file that cannot be read, or a row
that is not CSV (a quote never closed included), is one line naming it."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from grader.errors import GraderError


class _Rows(csv.DictReader):  # type: ignore[type-arg]  # not generic at run time (3.11)
    """csv.DictReader whose malformed row (a cell over the csv module's size limit) is the
    caller's one-line error naming the file and line, not a traceback."""

    def __init__(self, text: str, path: Path, error: type[GraderError]) -> None:
        # newline="": a record ends only at a line break, never at a U+2028 or U+0085 inside
        # a cell (where str.splitlines would cut it into two rows, one a phantom student)
        # A quote opened and never closed is an error, not the rest of the file read as one
        # cell (every row after it silently lost: a roster's students, every extension).
        unclosed = unclosed_quote(text)
        if unclosed is not None:
            opened, end = unclosed
            raise error(f"{path} line {end}: a quote opened on line {opened} is never closed")
        super().__init__(io.StringIO(text, newline=""))
        self.path, self.error = path, error
        try:
            self.fieldnames  # noqa: B018  # the header, read here: its error is one line too
        except csv.Error as exc:
            raise error(f"{path} line {self.reader.line_num}: {exc}") from None

    def columns(self, required: tuple[str, ...], needs: str) -> None:
        """Read the header as `Student`, ` student ` and `student` alike (a spreadsheet
        capitalises and pads it); without one of `required` the error is `line 1: needs`,
        with a hint when the cells are separated by `;` (a spreadsheet set to a language
        that writes decimal commas saves its CSV so)."""
        header = [(name or "").strip().lower() for name in self.fieldnames or []]
        if not set(required) <= set(header):
            raise self.error(f"{self.path} line 1: {needs}{semicolon_hint(header)}")
        self.fieldnames = header

    def __next__(self) -> dict[Any, Any]:
        # A row of empty cells only (`,,,,`, which a spreadsheet saves for rows it once
        # formatted) is a blank line, as csv skips a line with no cell at all.
        while True:
            try:
                row = super().__next__()
            except csv.Error as exc:
                raise self.error(f"{self.path} line {self.reader.line_num}: {exc}") from None
            if any(_filled(value) for value in row.values()):
                return row


def semicolon_hint(header: list[str]) -> str:
    """What to say after a missing column when the header is one cell holding `;`."""
    if len(header) == 1 and ";" in header[0]:
        return "; its cells are separated by ';': save it as comma-separated CSV"
    return ""


def unclosed_quote(text: str) -> tuple[int, int] | None:
    """The line where a quote opens that no later quote closes, and the file's last line;
    None when there is none. Read as csv's strict mode reads, only for that: its other
    complaints (text after a closing quote, `"Ada" ,` in a file aligned by hand) are read
    leniently, as ever, by the reader itself."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    while True:
        opened = reader.line_num + 1  # blank lines come back as rows: this is the record's
        try:
            next(reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            if str(exc) == "unexpected end of data":
                return opened, reader.line_num


def _filled(cell: object) -> bool:
    """Whether a cell (or the list csv.DictReader keeps a row's extra cells in) holds text."""
    if isinstance(cell, list):
        return any(map(_filled, cell))
    return isinstance(cell, str) and bool(cell.strip())


def csv_rows(path: Path, error: type[GraderError], what: str = "it") -> _Rows:
    """A reader over `path`'s rows by header; `error` (ConfigError for course files,
    UsageError for files named on the command line) when it cannot be read or a row is
    malformed."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")  # a spreadsheet's BOM is not a column name
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:  # Excel's "CSV" is Windows-1252, not UTF-8
        line = data[: exc.start].count(b"\n") + 1
        raise error(
            f"{path} line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as "
            '"CSV UTF-8" (Excel) or in the UTF-8 encoding, and run again'
        ) from None
    return _Rows(text, path, error)
