"""Neutralise IPython-only syntax (%magic, !shell, %%cell magics, `obj?`) in a code cell.

Lines are replaced, never removed, so that line numbers in messages still match what the
student sees. Valid Python is never touched: we only rewrite a cell that does not parse.
"""

from __future__ import annotations

import re
import shlex

from grader.course.parsing import fits, parse_cell

# Cell magics whose body is ordinary Python that should still run.
_RUN_BODY = {"time", "timeit", "capture", "prun", "debug"}
_ASSIGN_MAGIC = re.compile(r"^(\s*)([A-Za-z_][\w.]*)\s*=\s*[%!]")
_HELP = re.compile(r"^\s*[\w.]+\?\??\s*$")


def neutralise(source: str, analyse: bool = True) -> tuple[str, list[tuple[int, str]]]:
    """Return runnable source and (line, what was skipped) notes; line numbers are 1-based.

    With `analyse` False, or for a cell too large to parse (see parsing.py), only a cell
    magic is handled: telling a line magic from Python (`%` may continue an expression)
    needs a parse, and an unparsed cell is left as it is rather than risk changing Python.
    """
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].strip()[2:].split()[0] if lines[first].strip()[2:] else ""
        if magic in ("writefile", "file"):
            return _writefile(lines, first)
        if magic not in _RUN_BODY:
            note = f"`%%{magic}` cell magic: the whole cell is not Python and was skipped"
            return "", [(first + 1, note)]
        lines[first] = ""
        removed = (first + 1, f"`%%{magic}` cell magic removed; its body was run as Python")
        body, more = neutralise("\n".join(lines), analyse)
        return body, [removed, *more]
    if not analyse or not fits(source) or parse_cell(source) is not None:
        return source, []
    notes: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(("%", "!")):
            kind = "a shell command" if stripped.startswith("!") else "an IPython magic"
            lines[i] = f"{indent}pass"
            notes.append((i + 1, f"`{_short(stripped)}` is {kind}; the grader skipped it"))
        elif match := _ASSIGN_MAGIC.match(line):
            lines[i] = f"{match.group(1)}{match.group(2)} = None"
            notes.append((i + 1, f"`{_short(stripped)}` uses IPython syntax; set to None instead"))
        elif _HELP.match(line):
            lines[i] = f"{indent}pass"
            notes.append((i + 1, f"`{_short(stripped)}` is an IPython help request; skipped"))
    return "\n".join(lines), notes


def _writefile(lines: list[str], first: int) -> tuple[str, list[tuple[int, str]]]:
    """`%%writefile [-a] NAME`: Python that writes the cell's body to NAME (appends with -a),
    as IPython does, on the magic's own line; the body's lines stay, blank, so that line
    numbers still match. The body goes in as a string literal, never as code."""
    try:
        words = shlex.split(lines[first].strip())[1:]
    except ValueError:
        words = []
    append = bool(words) and words[0] in ("-a", "--append")
    names = words[1:] if append else words
    if len(names) != 1:
        note = f"`{_short(lines[first])}`: not a file name the grader understands; skipped"
        return "", [(first + 1, note)]
    body = "\n".join(lines[first + 1 :])
    mode = "a" if append else "w"
    write = (
        f"with open({names[0]!r}, {mode!r}, encoding='utf-8') as _grader_file: "
        f"_grader_file.write({body!r})"
    )
    out = [""] * len(lines)
    out[first] = write
    did = "appended to" if append else "wrote"
    return "\n".join(out), [(first + 1, f"`%%writefile` {did} {names[0]} in the working folder")]


def _short(text: str, limit: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
