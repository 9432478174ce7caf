"""`grader assign`: the student notebook, generated from the solution notebook.

The first code cell calls `keep_going()` and the last `check()`, so "Run All" reaches the
check. In solution code cells, the lines between `# BEGIN SOLUTION: <what to do>` and
`# END SOLUTION` are replaced by a TODO with that text and `raise NotImplementedError`.
Cells tagged `solution-only` are dropped. Outputs are cleared, ids are stable, and the
notebook's metadata names the assignment so `grader check` needs no flag, and holds the hash
of the solution it was written from, so that `grader release` refuses a stale exercise.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
import tokenize
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat

from grader.course.config import AssignmentSpec, Config
from grader.course.notebook import load_submission
from grader.errors import ConfigError, SubmissionError

BEGIN = re.compile(r"^(\s*)# BEGIN SOLUTION(?::\s*(.*))?$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
# A marker in a markdown or raw cell (nbgrader writes them so) is never stripped.
MARKED = re.compile(r"(BEGIN|END) SOLUTION")
SOLUTION_ONLY = "solution-only"
# The exercise's metadata key for the hash of the solution it was written from (release
# refuses an exercise whose solution has changed since).
WRITTEN_FROM = "grader_written_from"
# The first code cell: "Run All" then goes on past unfinished functions to the check() cell.
KEEP_GOING_CELL = (
    "# Run All goes on past the functions you have not finished yet: check() at the end\n"
    "# says what is left.\n"
    "from grader import keep_going\n"
    "keep_going()"
)


def check_cell(assignment: AssignmentSpec) -> str:
    """The last cell of an exercise: check() on the whole notebook, with a comment naming one
    of this assignment's own functions as the way to check one function only."""
    first = assignment.targets[0].name if assignment.targets else "my_function"
    return (
        "# Check your work: this grades the last *saved* version of this notebook (save first).\n"
        f"# check({first!r}) checks one function only.\n"
        "from grader import check\n"
        "check()"
    )


def _comment_lines(source: str) -> set[int] | None:
    """The numbers of the lines a comment starts on; None when the cell does not tokenize
    (IPython syntax): its markers are then taken as written."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    except (tokenize.TokenError, SyntaxError):
        return None


def strip_solutions(source: str, where: str) -> str:
    """`source` with each BEGIN/END SOLUTION block replaced by a TODO comment and a `raise
    NotImplementedError`; ConfigError, naming `where` and the line, when the markers do not pair,
    one lies inside a string, or a comment is almost one (each would hand out a solution)."""
    out: list[str] = []
    inside = False
    comments = _comment_lines(source)
    for number, line in enumerate(source.split("\n"), start=1):
        begin = BEGIN.match(line)
        marker = begin or END.match(line)
        in_comment = comments is None or number in comments
        if marker and not in_comment:
            raise ConfigError(
                f"{where}, line {number}: a SOLUTION marker inside a string; a marker must be a "
                "comment line of its own"
            )
        if not marker and in_comment and MARKED.search(line):  # `### BEGIN SOLUTION` (nbgrader)
            raise ConfigError(
                f"{where}, line {number}: {line.strip()!r} is not a marker, so what it marks "
                "would be handed out: write `# BEGIN SOLUTION` (or `# BEGIN SOLUTION: what to "
                "do`) and `# END SOLUTION`, each alone on its line"
            )
        if begin:
            if inside:
                raise ConfigError(f"{where}, line {number}: BEGIN SOLUTION inside another")
            inside = True
            indent, task = begin.group(1), begin.group(2) or "write this part"
            out.append(f"{indent}# TODO: {task}")
            out.append(f'{indent}raise NotImplementedError("{task}")')
        elif END.match(line):
            if not inside:
                raise ConfigError(f"{where}, line {number}: END SOLUTION without BEGIN")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ConfigError(f"{where}: BEGIN SOLUTION is never closed")
    return "\n".join(out)


def readable_solution(path: Path) -> None:
    """ConfigError in one line, in the grader's own words, when the solution notebook at
    `path` is no notebook at all (missing, not UTF-8, not JSON)."""
    try:
        load_submission(path)
    except SubmissionError as exc:
        raise ConfigError(f"solution notebook {exc}") from None


def _read_notebook(path: Path) -> Any:
    """The solution notebook as nbformat 4 (what the exercise is written from); ConfigError in
    one line for what cannot be read so (nbformat's own errors run over many lines)."""
    readable_solution(path)
    try:
        with warnings.catch_warnings():  # a missing cell id is made up, as Jupyter does
            warnings.simplefilter("ignore")
            notebook = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigError(f"solution notebook {path}: cannot be read: {exc}") from None
    except nbformat.ValidationError as exc:
        said = str(exc.message).split("\n")[0]
        raise ConfigError(f"solution notebook {path}: not a valid notebook: {said}") from None
    return notebook


def exercise_notebook(assignment: AssignmentSpec) -> Any:
    """The student notebook made from the assignment's solution: solution-only cells dropped,
    solutions stripped, a check() cell appended, and the assignment id in its metadata. A
    markdown (or raw) cell keeps its attachments (images pasted into it)."""
    solution = _read_notebook(assignment.solution)
    cells: list[Any] = []
    for index, cell in enumerate(solution.cells, start=1):
        where = f"{assignment.solution.name}, cell {index}"
        tags = cell.get("metadata", {}).get("tags", [])
        if not isinstance(tags, list):
            raise ConfigError(f"{where}: its metadata's tags are not a list, but {tags!r}")
        if SOLUTION_ONLY in tags:
            continue
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(strip_solutions(cell.source, where))
        elif MARKED.search(cell.source):
            raise ConfigError(
                f"{where}: a {cell.cell_type} cell holds a SOLUTION marker, but only code cells "
                f"are stripped: students would read it; tag the cell {SOLUTION_ONLY!r} to drop it"
            )
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source)
        else:
            new = nbformat.v4.new_raw_cell(cell.source)
        if cell.cell_type != "code" and cell.get("attachments"):
            # images pasted into the cell (`![](attachment:name.png)`): the student sees them too
            new["attachments"] = copy.deepcopy(cell["attachments"])
        new["id"] = f"{assignment.id}-{len(cells) + 1:02d}"
        cells.append(new)
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    setup = nbformat.v4.new_code_cell(KEEP_GOING_CELL)
    setup["id"] = f"{assignment.id}-setup"
    cells.insert(first_code, setup)
    checker = nbformat.v4.new_code_cell(check_cell(assignment))
    checker["id"] = f"{assignment.id}-check"
    cells.append(checker)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "grader": {"assignment": assignment.id},
        WRITTEN_FROM: {"sha256": _digest(solution)},
    }
    return notebook


def _digest(solution: Any) -> str:
    """The hash of what an exercise is made from: each cell's type, source, tags and any
    attachments (not its outputs, which Jupyter changes on every run). A solution without
    attachments hashes as it did before they were kept."""
    cells = [
        [c.cell_type, c.source, c.get("metadata", {}).get("tags", [])]
        + ([c["attachments"]] if c.cell_type != "code" and c.get("attachments") else [])
        for c in solution.cells
    ]
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode("utf-8")).hexdigest()


def stale_exercise(assignment: AssignmentSpec) -> bool:
    """True when the exercise says which solution it was written from (WRITTEN_FROM) and the
    solution has changed since; False for one without the record (written by hand)."""
    if assignment.exercise is None:
        return False
    try:
        metadata = json.loads(assignment.exercise.read_text(encoding="utf-8"))["metadata"]
        recorded = metadata[WRITTEN_FROM]["sha256"]
    except (OSError, ValueError, TypeError, KeyError):
        return False
    return bool(recorded != _digest(_read_notebook(assignment.solution)))


def refuse_unmarked(assignment: AssignmentSpec) -> None:
    """ConfigError, naming the solution, when it withholds nothing from its exercise: no
    code cell marks a solution and no cell is tagged solution-only. The exercise would be the
    whole solution, which an author may then hand out by hand (release refuses it later)."""
    for cell in _read_notebook(assignment.solution).cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if isinstance(tags, list) and SOLUTION_ONLY in tags:
            return
        if cell.cell_type == "code" and any(map(BEGIN.match, cell.source.split("\n"))):
            return
    raise ConfigError(
        f"solution notebook {assignment.solution}: no code cell marks what students write, "
        "so the exercise would be the whole solution: put `# BEGIN SOLUTION: what to do` and "
        "`# END SOLUTION` around each graded function's body (nothing was written)"
    )


def course_sources(config: Config) -> dict[Path, str]:
    """The files an exercise must never be written over, resolved, with the words for each:
    the config, the case builders, and every assignment's solution, catalogue and data files."""
    base = config.path.resolve().parent
    kept = {config.path.resolve(): "the config", (base / "cases.py").resolve(): "cases.py"}
    for spec in config.assignments.values():
        kept[spec.solution.resolve()] = f"assignments.{spec.id}.solution"
        if spec.mistakes is not None:
            kept[spec.mistakes.resolve()] = f"assignments.{spec.id}.mistakes"
        for data in spec.files:
            kept[data.source] = f"a data file of assignments.{spec.id}.files"
        for target in spec.targets:
            if target.cases is not None:
                kept[target.cases.path.resolve()] = "the course's case builders"
    return kept


def refuse_exercise_paths(config: Config) -> None:
    """Each `exercise:` lies inside the course folder and is no other assignment's exercise:
    `grader assign` writes there (ConfigError naming the key otherwise)."""
    base = config.path.resolve().parent
    for aid, spec in sorted(config.assignments.items()):
        if spec.exercise is not None and not spec.exercise.resolve().is_relative_to(base):
            raise ConfigError(
                f"{config.path}: assignments.{aid}.exercise: {spec.exercise} is outside the "
                f"course folder {base}; grader assign writes only inside it (write elsewhere "
                "with --out)"
            )
    refuse_shared_exercises(config)


def refuse_shared_exercises(config: Config) -> None:
    """No two assignments name one exercise notebook (one would be written, or handed out,
    for both): ConfigError naming the key."""
    seen: dict[Path, str] = {}
    for aid, spec in sorted(config.assignments.items()):
        if spec.exercise is None:
            continue
        path = spec.exercise.resolve()
        if path in seen:
            raise ConfigError(
                f"{config.path}: assignments.{aid}.exercise: {spec.exercise} is "
                f"assignments.{seen[path]}.exercise as well; give each assignment its own "
                "exercise notebook"
            )
        seen[path] = aid


def exercise_target(
    assignment: AssignmentSpec, out: Path | None = None, keep: Mapping[Path, str] | None = None
) -> Path:
    """Where `write_exercise` writes: `out` (a folder gets the solution's file name), else the
    assignment's `exercise` path. Never a file of `keep` (`course_sources`) nor the solution
    itself: ConfigError naming the key."""
    target = out or assignment.exercise
    if target is None:
        raise ConfigError(f"assignment {assignment.id} has no `exercise` path; pass --out")
    if target.is_dir():
        target = target / assignment.solution.name
    kept = {assignment.solution.resolve(): f"assignments.{assignment.id}.solution", **(keep or {})}
    if target.resolve() in kept:
        key = _where_written(assignment, out)
        raise ConfigError(
            f"{key}: {target} is {kept[target.resolve()]}; grader assign would write the "
            "student notebook over it: name another file"
        )
    return target


def _where_written(assignment: AssignmentSpec, out: Path | None) -> str:
    """What named the file an exercise is written to, for a message: --out or the key."""
    return "--out" if out is not None else f"assignments.{assignment.id}.exercise"


def exercise_text(assignment: AssignmentSpec) -> str:
    """The student notebook's file, as text; ConfigError for a solution that marks nothing
    (`refuse_unmarked`), after the notebook's own refusals, which say more."""
    text: str = nbformat.writes(exercise_notebook(assignment)) + "\n"
    refuse_unmarked(assignment)
    return text


def write_exercise(
    assignment: AssignmentSpec, out: Path | None = None, keep: Mapping[Path, str] | None = None
) -> Path:
    """Write the student notebook where `exercise_target` says, and return where it went;
    ConfigError, nothing written, for a solution that marks nothing (`refuse_unmarked`)."""
    target = exercise_target(assignment, out, keep)
    text = exercise_text(assignment)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:  # a folder in the way is a file, a disk full: one line
        key = _where_written(assignment, out)
        raise ConfigError(
            f"{key}: cannot write {target}: {exc.strerror} ({exc.filename})"
        ) from None
    return target
