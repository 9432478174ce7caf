"""Neutralise text that may come from a student before it goes where it could do harm."""

from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def printable(text: str) -> str:
    """No control characters (they are invalid in XML and can rewrite a terminal)."""
    return _CONTROL.sub("?", text)


def one_line(text: str) -> str:
    """For a terminal or a CI log: printable and on one line, so that a file name cannot start
    a line of its own (a forged `::error::` workflow command) or move the cursor."""
    return printable(text).replace("\r", "?").replace("\n", "?")


def workflow_data(text: str) -> str:
    """The message part of a GitHub workflow command: one line, `%` escaped first."""
    return printable(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A property value (file=, title=) of a GitHub workflow command."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def markdown_text(text: str) -> str:
    """Text for a Markdown paragraph or list item: no raw HTML, no new lines."""
    escaped = html.escape(printable(text), quote=False)
    return escaped.replace("\r", " ").replace("\n", "<br>")


def markdown_cell(text: str) -> str:
    """Text for a Markdown table cell: as markdown_text, and no `|` that would end the cell."""
    return markdown_text(text).replace("|", "\\|")
