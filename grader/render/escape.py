"""Neutralise text that may come from a student before it goes where it could do harm.

The one place for these rules: every output format (text, JUnit, GitHub, Gradescope,
Markdown, HTML, the terminal table and progress bar, the CSV files) takes student text
(exception messages, printed output, file and folder names) through one of these.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable

# The patterns are compiled on first use (re's own cache): a `grader check --format json`
# compiles one of them, not all eight at import.
# Controls that move a terminal's cursor, ring it or start an escape sequence (C0 but tab and
# line breaks, DEL, C1), lone surrogates (not encodable), and U+FFFE/U+FFFF: none is allowed
# in XML 1.0 either. Each becomes a visible "?", so the reader sees that something was there.
_CONTROL = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]"
# Bidi controls reorder what a reader sees (a name that reads "exe.txt" but is "txt.exe");
# invisible, and no loss to right-to-left names, so they are dropped.
_BIDI = "[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
# In JSON these are written as escapes instead (the data must stay the student's own).
_JSON_UNSAFE = f"{_CONTROL}|{_BIDI}|[\u2028\u2029]"
# The line breaks printable leaves (the other ones str.splitlines() knows, \v \f \x1c-\x1e
# and NEL, are controls and already gone).
_LINE_BREAK = "\r\n|[\n\r\u2028\u2029]"
# A GitHub Actions runner takes a line for a workflow command when it starts with `::` after
# white space, or when it holds the legacy `##[` anywhere.
_COMMAND_START = r"^(\s*)::"
_LEGACY_COMMAND = "##["
# What Markdown reads as a link, an image, a code span, a table cell's end, or an escape
# (emphasis, `*` and `_`, is harmless and left alone: identifiers stay readable in the source).
_MARKDOWN_PUNCTUATION = r"([\\`\[\]()!|])"
# GitHub turns bare web addresses (http://…, www.…) into links; an escaped `:` or `.` is not
# the plain character its matcher looks for. Visible addresses, not hidden ones: belt and braces.
_WWW = r"(?i)\b(www)\."
# A spreadsheet takes a cell starting with one of these for a formula (OWASP CSV injection);
# the full-width forms too, which Excel reads as their ASCII twins.
_FORMULA_START = tuple("=+-@\t\r＝＋－＠")
_NUMBER = r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?"


def printable(text: str) -> str:
    """No control, bidi or non-XML character; tabs and line breaks stay (for multi-line
    fields: a traceback, an HTML page). Safe for XML 1.0 text and attributes."""
    # Most text (a name, a message) is all printable: no control, bidi or non-XML character
    # is (they are of Unicode's categories Cc, Cf, Cs and Cn), so it is the text itself,
    # without two regular expressions run over it (a feedback page holds dozens of fields).
    if text.isprintable():
        return text
    return re.sub(_BIDI, "", re.sub(_CONTROL, "?", text))


def one_line(text: str) -> str:
    """For a terminal or a CI log: printable and on one line, so that a file name or an
    exception message cannot start a line of its own (a forged `::error::` or `::add-mask::`
    workflow command) or move the cursor; a leading `::` and any `##[` are escaped too,
    as the text may begin a line."""
    flat = re.sub(_LINE_BREAK, "?", printable(text))
    return re.sub(_COMMAND_START, r"\1\\::", flat, count=1).replace(_LEGACY_COMMAND, "#\\#[")


def safe_lines(text: str) -> str:
    """Multi-line text that a student may have put words into (a traceback) for a terminal:
    its own line breaks stay, but each line is made safe as one_line makes it."""
    return "\n".join(one_line(line) for line in re.split(_LINE_BREAK, text))


def json_text(dumped: str) -> str:
    """JSON text (from json.dumps with ensure_ascii=False) with each character that printable
    would take out written as a `\\u` escape: a parser reads back the same data, and nothing
    raw reaches a terminal that prints it (JSON's own syntax is ASCII, so only strings change)."""
    return re.sub(_JSON_UNSAFE, lambda match: f"\\u{ord(match[0]):04x}", dumped)


def workflow_data(text: str) -> str:
    """The message part of a GitHub workflow command: one line, `%` escaped first."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A property value (file=, title=) of a GitHub workflow command."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def markdown_text(text: str) -> str:
    """Text for a Markdown paragraph or list item: one line, no raw HTML, and inert: no
    link, image, code span or autolink can be made of it (those characters are escaped)."""
    escaped = re.sub(_MARKDOWN_PUNCTUATION, r"\\\1", one_line(text))
    unlinked = re.sub(_WWW, r"\1\\.", escaped.replace("://", "\\://"))
    # html.escape(quote=False), without importing html's table of entities
    return unlinked.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_cell(text: str) -> str:
    """Text for a Markdown table cell: as markdown_text (which escapes `|` too)."""
    return markdown_text(text)


def markdown_code(text: str) -> str:
    """`text` as a Markdown code span, safe in a table cell: a fence longer than any run of
    backticks in it, so that it cannot close the span early (CommonMark's rule)."""
    flat = one_line(text).replace("|", "\\|")  # GitHub ends a table cell even in a code span
    fence = "`" * (max(map(len, re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def spreadsheet_cell(value: object) -> object:
    """A CSV cell that a spreadsheet cannot run: text on one line, and a `'` before text
    that it would read as a formula (`=`, `+`, `-`, `@`…); numbers stay numbers."""
    if not isinstance(value, str):
        return value
    text = one_line(value)
    if text.startswith(_FORMULA_START) and not re.fullmatch(_NUMBER, text):
        return "'" + text
    return text


def spreadsheet_row(values: Iterable[object]) -> list[object]:
    """A CSV row with each cell made safe by spreadsheet_cell."""
    return [spreadsheet_cell(value) for value in values]


MAX_READABLE = 100


# Names Windows keeps for devices, with any extension (`CON`, `nul.txt`): no file may have
# one, so an instructor who copies OUT to Windows would lose that student's page.
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789\u00b9\u00b2\u00b3"]
)


def folded(text: str) -> str:
    """`text` for comparing: case folded, in one Unicode form (a file name from macOS or a
    zip may spell `é` as `e` and an accent, the roster as one character). What a disk that
    ignores case and form (macOS, Windows) sees of a name: `Ada` and `ada` are one file."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def twins(students: Iterable[str]) -> frozenset[str]:
    """The folded names (see `folded`) that two or more of `students` share: the students
    whose feedback pages or folders would be one file on such a disk."""
    counts = Counter(folded(name) for name in set(students))
    return frozenset(name for name, count in counts.items() if count > 1)


def safe_name(student: str, clashing: Collection[str] = frozenset()) -> str:
    """A file name for a student's feedback page, never the same for two students: the name
    itself when it is a file name already (letters of any script, digits, `.`, `_`, `-`),
    else what is left of it once every other character is `_`, plus a short hash of the
    whole name (`Kim Park` → `Kim_Park-…`, so that `Kim_Park` keeps a page of its own).
    A name Windows keeps for a device is not a file name there: `CON` → `CON_-…`.
    `clashing`: the class's `twins`; a name among them gets the hash too (`Ada` and `ada`
    → `Ada-…` and `ada-…`, two files on any disk)."""
    kept = "".join(c if c.isalnum() or c in "._-" else "_" for c in student)
    readable = kept.strip("._")[:MAX_READABLE]
    stem, dot, rest = readable.partition(".")
    if stem.upper() in _WINDOWS_DEVICES:
        readable = f"{stem}_{dot}{rest}"
    elif readable and readable == student and folded(student) not in clashing:
        return readable
    import hashlib  # here: OpenSSL's _hashlib is milliseconds of every start that escapes text

    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{readable or 'student'}-{digest}"
