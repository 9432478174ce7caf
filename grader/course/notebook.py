"""Load a submission (.ipynb of any nbformat 3/4, or a .py script) into numbered code cells."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from grader.course.parsing import ParseBudget, parse_cell
from grader.errors import SubmissionError

if TYPE_CHECKING:  # a worker holds code cells without the report's types (4-8 ms of its start)
    from pathlib import Path  # nor pathlib's (with urllib.parse), nor the magics' rewriting

    from grader.report import Location

MAX_BYTES = 50 * 1024 * 1024
_DEF_LINE = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_PY_CELL = re.compile(r"^# (%%|In\[[ \d]*\]:)")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: a JSON escape such as "\\ud800"
    in a notebook, or a byte of a file name that is not UTF-8, would otherwise make every
    later write of the text (a feedback page, the gradebook, the terminal) fail."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def has_invalid_text(text: str) -> bool:
    """True when `text` holds a lone surrogate, which `valid_text` would replace."""
    return _LONE_SURROGATE.search(text) is not None


@dataclass(frozen=True)
class CodeCell:
    """A code cell: `index` is its 1-based position among all the notebook's cells."""

    index: int
    source: str
    original: str
    execution_count: int | None = None
    file_line: int | None = None  # line of the submission file holding the cell's first line
    one_line_source: bool = False  # the file stores the source as one JSON string
    analysed: bool = True  # False: too large for static analysis (parsing.py), never parsed

    def lines(self) -> list[str]:
        """The cell's original source, split into lines."""
        return self.original.split("\n")


@dataclass(frozen=True)
class Submission:
    """A student's notebook as the grader reads it: its code cells, the assignment it names (if any)
    and notes made while reading it."""

    path: Path
    name: str
    cells: tuple[CodeCell, ...]
    assignment_hint: str | None
    notes: tuple[str, ...]

    def __getstate__(self) -> dict[str, object]:
        # Parsed trees are a cache: cheaper to rebuild than to pickle across processes.
        return {k: v for k, v in self.__dict__.items() if k != "_trees"}

    @cached_property
    def _trees(self) -> dict[int, ast.Module | None]:
        # The submission's own trees, gone with it: no student's tree is kept for the next.
        return {cell.index: parse_cell(cell.source) for cell in self.cells if cell.analysed}

    def forget_trees(self) -> None:
        """Drop the parsed trees (parsed again if asked for): judging calls this when done,
        so that a submission its caller keeps holds no trees for the collector to walk."""
        self.__dict__.pop("_trees", None)

    def tree(self, index: int) -> ast.Module | None:
        """The parsed cell, or None when it does not parse or is not analysed (too large)."""
        return self._trees.get(index)

    def definitions(self) -> dict[str, Location]:
        """Where each top-level function or variable is last defined (static, never run)."""
        from grader.report import Location

        found: dict[str, Location] = {}
        for cell in self.cells:
            tree = self.tree(cell.index)
            if tree is None:
                # A cell that does not parse still shows where a function was meant to be.
                for number, line in enumerate(cell.source.split("\n"), start=1):
                    if match := _DEF_LINE.match(line):
                        found[match.group(1)] = Location(cell.index, number)
                continue
            for node in tree.body:
                for name in bound_names(node):
                    found[name] = Location(cell.index, node.lineno)
        return found

    def cell(self, index: int) -> CodeCell | None:
        """The code cell at this 1-based notebook position, or None when that cell is not a code
        cell."""
        return next((c for c in self.cells if c.index == index), None)

    def locate(self, where: Location | None) -> Location | None:
        """The same location, with the line of the submission file filled in where known."""
        from grader.report import Location

        cell = self.cell(where.cell) if where else None
        if where is None or cell is None or cell.file_line is None:
            return where
        offset = 0 if cell.one_line_source else max(where.line - 1, 0)
        return Location(where.cell, where.line, cell.file_line + offset)


def bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds by a `def`, `class` or assignment."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def load_submission(path: Path, data: bytes | None = None) -> Submission:
    """Read a notebook or script (or parse `data`, its bytes read already, e.g. by a batch's
    parent); a file that cannot be read at all is a SubmissionError."""
    from pathlib import Path

    path = Path(path)
    return _parsed(path, _decode(path, _read_bytes(path) if data is None else data))


# The notebook reread last, and its bytes: `grader check` reads its notebook three times (the
# head start's early job, the early run, the engine) and parses it once while the bytes stay
# the same. One only, and only for those: a batch passes each notebook's bytes to
# load_submission, and two loads of one file otherwise give two submissions.
_LAST_REREAD: list[tuple[Path, bytes, Submission]] = []


def reread(path: Path) -> Submission:
    """load_submission of the file at `path`: the same Submission as the last reread when
    the file's bytes are the very same, else read and parsed afresh."""
    from pathlib import Path

    path = Path(path)
    data = _read_bytes(path)
    last = _LAST_REREAD[0] if _LAST_REREAD else None  # one entry, read once (threads replace it)
    if last is not None and last[0] == path and last[1] == data:
        return last[2]
    submission = load_submission(path, data)
    _LAST_REREAD[:] = [(path, data, submission)]
    return submission


def _parsed(path: Path, text: str) -> Submission:
    if path.suffix == ".py":
        raw_cells: list[tuple[int, str, int | None]] = [
            (i + 1, src, None) for i, src in enumerate(_split_script(text))
        ]
        hint, notes = None, list[str]()
        starts = _script_starts(text, [src for _, src, _ in raw_cells])
    else:
        raw_cells, hint, notes = _notebook_cells(text, path)
        starts = _source_lines(text)
    budget = ParseBudget()
    trees: dict[int, ast.Module | None] = {}
    cells = [
        _code_cell(index, source, count, starts.get(index, (None, False)), budget, notes, trees)
        for index, source, count in raw_cells
    ]
    submission = Submission(path, path.stem, tuple(cells), hint, tuple(notes))
    # Each cell was parsed to tell Python from IPython syntax: those trees are the ones
    # judging asks for (`_trees`, the same parse of the same source), kept rather than
    # parsed a second time. They go with the submission (`forget_trees`) as before.
    submission.__dict__["_trees"] = trees
    return submission


def _code_cell(
    index: int,
    raw_source: str,
    count: int | None,
    start: tuple[int | None, bool],
    budget: ParseBudget,
    notes: list[str],
    trees: dict[int, ast.Module | None],
) -> CodeCell:
    """One code cell, made runnable; what was changed, or not analysed, goes into `notes`;
    its syntax tree, when it is analysed, into `trees` (as `Submission.tree` gives it)."""
    source = valid_text(raw_source)
    if source != raw_source:
        notes.append(
            f"cell {index}: characters that are not valid Unicode (lone surrogates, e.g. "
            "from a broken copy and paste) were replaced by \ufffd; Python could not "
            "have run the cell with them"
        )
    refusal = budget.refusal(index, source)
    if refusal:
        notes.append(refusal)
    tree = parse_cell(source) if refusal is None else None
    if tree is not None:  # Python as it is: `neutralise` would leave it unchanged
        runnable, skipped = source, list[tuple[int, str]]()
    else:
        from grader.course.ipython import neutralise

        runnable, skipped = neutralise(source, analyse=refusal is None)
    if refusal is None:
        trees[index] = tree if runnable == source else parse_cell(runnable)
    notes.extend(f"cell {index}, line {line}: {what}" for line, what in skipped)
    first, one_line = start
    return CodeCell(index, runnable, source, count, first, one_line, refusal is None)


def _read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise SubmissionError(f"{path}: no such file")
    if not path.is_file():
        raise SubmissionError(f"{path}: not a file")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise SubmissionError(_too_large(path, size))
    try:
        return path.read_bytes()
    except OSError as exc:  # no read permission for this user, an I/O error
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror})") from None


def _too_large(path: Path, size: int) -> str:
    """Over the size limit: most often the cells' outputs (plots, long prints), which the
    grader does not need."""
    return (
        f"{path}: {size / 2**20:.0f} MB is larger than the 50 MB limit; clear its outputs "
        "(in Jupyter: Edit ▸ Clear Outputs of All Cells), save and check again"
    )


def _decode(path: Path, data: bytes) -> str:
    if len(data) > MAX_BYTES:
        raise SubmissionError(_too_large(path, len(data)))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        how = (
            "save it as UTF-8 (your editor's encoding setting)"
            if path.suffix.lower() == ".py"
            else "save the notebook from Jupyter, which writes UTF-8"
        )
        raise SubmissionError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); {how}"
        ) from None


def _source_lines(text: str) -> dict[int, tuple[int, bool]]:
    """For the k-th cell of a notebook file: the file line of its first source line.

    nbformat writes each cell's `"source"` key on a line of its own, followed by one line per
    source line (or the whole source as one string); a hand-made file may not, and then the
    cells simply get no file line.
    """
    found: dict[int, tuple[int, bool]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if stripped.startswith('"source":'):
            rest = stripped[len('"source":') :].strip()
            as_list = rest.startswith("[") and not rest.startswith("[]")
            found[len(found) + 1] = (number + 1, False) if as_list else (number, True)
    return found


def _script_starts(text: str, sources: list[str]) -> dict[int, tuple[int, bool]]:
    starts: dict[int, tuple[int, bool]] = {}
    position = 0
    for index, source in enumerate(sources, start=1):
        at = text.find(source, position)
        if at < 0:
            break
        starts[index] = (text.count("\n", 0, at) + 1, False)
        position = at + len(source)
    return starts


def _split_script(text: str) -> list[str]:
    """`# %%` (percent format) or `# In[ ]:` (nbconvert export) markers start a new cell."""
    cells: list[list[str]] = [[]]
    for line in text.split("\n"):
        if _PY_CELL.match(line):
            cells.append([])
        cells[-1].append(line)
    return ["\n".join(c) for c in cells if any(line.strip() for line in c)]


def _notebook_cells(
    text: str, path: Path
) -> tuple[list[tuple[int, str, int | None]], str | None, list[str]]:
    if not text.strip():  # a save that never happened (a full disk, a copy cut at once)
        raise SubmissionError(
            f"{path}: the file is empty{' (only blank space)' * bool(text)}: save the "
            "notebook again from Jupyter, or take your last good copy"
        )
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        begins = text.lstrip()[:1]
        if begins != "{":  # no notebook at all: not one cut off or saved half-way
            first = text.lstrip().split("\n", 1)[0][:40]
            raise SubmissionError(
                f"{path}: not a Jupyter notebook: a notebook is JSON that begins with `{{`, "
                f"and this file begins with {first!r}; hand in the .ipynb file Jupyter saves"
            ) from None
        raise SubmissionError(
            f"{path}: not a Jupyter notebook: invalid JSON at line {exc.lineno}, "
            f"column {exc.colno} ({exc.msg}); was it saved while being written, cut off in a "
            "copy, or edited by hand? Save it again from Jupyter, or take your last good copy"
        ) from None
    except RecursionError:
        raise SubmissionError(
            f"{path}: not a Jupyter notebook: its JSON is nested too deeply to read"
        ) from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300)
        raise SubmissionError(
            f"{path}: not a Jupyter notebook: its JSON holds a number that cannot be read "
            f"({exc}); save it again from Jupyter, or take your last good copy"
        ) from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise SubmissionError(f"{path}: not a Jupyter notebook (no 'nbformat' field)")
    major = raw.get("nbformat")
    notes = []
    if major == 3:
        notes.append(f"{path.name} is in the old nbformat 3; it was upgraded to 4 for grading")
    elif major != 4:
        raise SubmissionError(
            f"{path}: nbformat {major!r} is not supported (only 3 and 4); "
            "open and save it in a current Jupyter"
        )
    try:
        nb = _upgraded(text) if major == 3 else raw
        problem = _structure_problem(nb)
        if problem is None:
            cells = [
                (i + 1, _source(c), c.get("execution_count")) for i, c in enumerate(nb["cells"])
            ]
    except Exception as exc:  # nbformat raises many types for malformed structure
        problem = str(exc)
    if problem is not None:
        raise SubmissionError(f"{path}: malformed notebook structure: {problem}") from None
    code = [(i, src, n) for (i, src, n), c in zip(cells, nb["cells"], strict=True) if _is_code(c)]
    if (language := kernel_language(nb)) is not None:
        notes.append(
            f"{path.name} is set to a {language[:40]} kernel, but its code cells are run as "
            "Python: switch the notebook to a Python 3 kernel (Kernel ▸ Change kernel) and "
            "write Python"
        )
    return code, assignment_hint(nb), notes


def kernel_language(notebook: Any) -> str | None:
    """The language the notebook's metadata names for its kernel when it is not Python
    (an R or Julia notebook handed in by mistake), else None."""
    metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
    if not isinstance(metadata, dict):
        return None
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        entry = metadata.get(key)
        language = entry.get(field) if isinstance(entry, dict) else None
        if isinstance(language, str) and language.strip():
            return None if language.strip().lower().startswith("python") else language.strip()
    return None


def assignment_hint(notebook: Any) -> str | None:
    """The assignment a notebook names in its metadata (`grader.assignment`), if any."""
    metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
    grader = metadata.get("grader") if isinstance(metadata, dict) else None
    hint = grader.get("assignment") if isinstance(grader, dict) else None
    return hint if isinstance(hint, str) else None


def _upgraded(text: str) -> Any:
    import nbformat  # only for the old format: a current notebook is read as plain JSON

    return nbformat.reads(text, as_version=4, capture_validation_error={})


def _structure_problem(nb: Any) -> str | None:
    """What grading needs of a notebook's structure (nbformat's full validation is slower and
    refuses notebooks that Jupyter itself opens)."""
    if not isinstance(nb.get("metadata", {}), dict):
        return "'metadata' is not a mapping"
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return f"'cells' is {type(cells).__name__}, not a list"
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            return f"cell {number} is not a cell (no 'cell_type')"
        source = cell.get("source", "")
        if not isinstance(source, str) and not (
            isinstance(source, list) and all(isinstance(s, str) for s in source)
        ):
            return f"cell {number}: 'source' is neither text nor a list of lines"
    return None


def _is_code(cell: Any) -> bool:
    return bool(cell.get("cell_type") == "code")


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(str(s) for s in source)
    if not isinstance(source, str):
        raise SubmissionError(f"cell source is {type(source).__name__}, not text")
    return source
