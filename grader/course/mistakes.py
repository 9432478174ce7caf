"""The catalogue of known mistakes: small wrong variants of the reference, with words for them.

An assignment's catalogue is a Python file in `solutions/`. Each variant is a top-level
function decorated with the words for its mistake, all literals:

    @CATALOGUE.mistake("softmax_cols", "softmax_wrong_axis",
                       "normalises each row instead of each column",
                       hint="sum with axis=0", locate=r"axis\\s*=\\s*(1|-1)")
    def softmax_cols__softmax_wrong_axis(data_in): ...

A mistake found by what the code itself shows (`requires=`, a static hint) may carry its own
words for that finding: `static=` is a sentence with `{code}` standing for the code the hint
points at ("divides by the literal `{code}`, which is right only when D_q = 4"); `replaces=`
names another mistake of the target this one explains (discarding the scaling is why the
scaling is missing), which is then not named beside it. The grader adds only generic words.

The trusted process only *reads* the file (the words, the variants' names and sources); the
variants run in a sandboxed child after the solution notebook's cells, so they can call the
reference's own helpers and read its globals (`D`, `N`) exactly as a student's code would
(fingerprints.py). Variant names are `<target>__<mistake id>` by convention and must not
rebind a name of the solution.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.course.notebook import bound_names
from grader.course.parsing import parse_source
from grader.errors import ConfigError

# Static hints a mistake can require before it is named (see static.py).
STATIC_KINDS = ("discarded", "global", "literal_divisor", "truthiness")
_WORDS = ("target", "mistake_id", "message")
_OPTIONS = ("hint", "requires", "locate", "static", "replaces")


@dataclass(frozen=True)
class Mistake:
    """One catalogued mistake: its words, and the variant function that makes it."""

    id: str
    target: str
    message: str
    hint: str
    function: str  # the variant's name in the catalogue file
    source: str = ""  # the variant's `def`, as written (selftest pastes it into the solution)
    requires: str | None = None
    locate: str | None = None
    static: str | None = None  # the words for it when its static hint is found ({code})
    replaces: str | None = None  # a mistake id this one explains, not named beside it
    # a derived mistake made in a helper the target calls: the helper's name, and `locate`
    # for its own body (the mistake is placed there when the student's notebook has it)
    within: tuple[str, str | None] | None = None
    # the variant's `def` line in the catalogue file (0: not from one): selftest places a
    # variant's own error there, not in the solution it pasted the variant into
    line: int = field(default=0, compare=False)


@dataclass
class Catalogue:
    """The mistakes of one catalogue file, and the file's source (run only in a child)."""

    mistakes: list[Mistake] = field(default_factory=list)
    source: str = ""
    path: Path | None = None

    def for_target(self, target: str) -> list[Mistake]:
        """The mistakes of one target, in the file's order."""
        return [m for m in self.mistakes if m.target == target]

    def refuse_strays(self, graded: Collection[str]) -> None:
        """ConfigError for a mistake of a function no assignment using this catalogue grades
        (a typo: it would never be checked nor named) and for an id given twice to one
        target (selftest could not tell which variant it named)."""
        seen: dict[tuple[str, str], str] = {}
        for mistake in self.mistakes:
            label = f"mistake catalogue {self.path}: mistake {mistake.id} ({mistake.function})"
            if mistake.target not in graded:
                raise ConfigError(
                    f"{label} is of `{mistake.target}`, which no assignment using this "
                    f"catalogue grades (they grade {', '.join(sorted(graded))}): fix the "
                    "decorator's first word"
                )
            first = seen.setdefault((mistake.target, mistake.id), mistake.function)
            if first != mistake.function:
                raise ConfigError(
                    f"{label}: {first} has the id {mistake.id} of `{mistake.target}` too; "
                    "give each mistake its own id"
                )

    def refuse_unknown_replaces(self, built_in: Collection[str]) -> None:
        """ConfigError for a `replaces=` that names no other mistake of this catalogue nor
        one of the grader's own ids (`built_in`): a typo would never replace anything."""
        ids = {mistake.id for mistake in self.mistakes}
        for mistake in self.mistakes:
            named = mistake.replaces
            if named is None or (named != mistake.id and named in ids | set(built_in)):
                continue
            why = "itself" if named == mistake.id else "no mistake of this catalogue"
            same = sorted({m.id for m in self.for_target(mistake.target)} - {mistake.id})
            raise ConfigError(
                f"mistake catalogue {self.path}: mistake {mistake.id} ({mistake.function}): "
                f"replaces={named!r} names {why}; name another mistake's id (`"
                f"{mistake.target}` has {', '.join(same) or 'no other'}) or drop replaces="
            )

    def refuse_rebinding(self, solution: Collection[str]) -> None:
        """ConfigError for a top-level name of the catalogue that the solution defines too:
        run after the solution's cells, it would change the helper every variant calls,
        and the fingerprints would no longer be the solution's with one mistake."""
        for node in parse_source(self.source, str(self.path)).body:
            for name in bound_names(node):
                if name in solution:
                    raise ConfigError(
                        f"mistake catalogue {self.path}, line {node.lineno}: `{name}` is the "
                        "solution's own name: a variant may call it, never define it again; "
                        "rename this one"
                    )


def _is_mistake_decorator(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "mistake"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "CATALOGUE"
    )


def _words(call: ast.Call, where: str) -> dict[str, Any]:
    """The decorator's arguments; each must be a literal (the file is never run here)."""
    if len(call.args) != len(_WORDS) or any(k.arg not in _OPTIONS for k in call.keywords):
        raise ConfigError(
            f"{where}: CATALOGUE.mistake takes (target, mistake id, message) and the "
            f"keywords {', '.join(_OPTIONS)}"
        )
    try:
        words = dict(zip(_WORDS, (ast.literal_eval(a) for a in call.args), strict=True))
        words.update({str(k.arg): ast.literal_eval(k.value) for k in call.keywords})
    except ValueError:
        raise ConfigError(f"{where}: the words of a mistake must be literal strings") from None
    if not all(isinstance(v, str) for v in words.values() if v is not None):
        raise ConfigError(f"{where}: the words of a mistake must be strings")
    if "hint" not in words:
        raise ConfigError(f"{where}: a mistake needs a hint=")
    if words.get("requires") is not None and words["requires"] not in STATIC_KINDS:
        raise ConfigError(f"{where}: requires must be one of {STATIC_KINDS}")
    if words.get("static") is not None and words.get("requires") is None:
        raise ConfigError(f"{where}: static= words need requires= (the hint they describe)")
    if words.get("static") is not None:
        try:
            words["static"].format(code="")
        except (KeyError, IndexError, ValueError):
            raise ConfigError(
                f"{where}: static= may hold only {{code}} in braces (double other braces)"
            ) from None
    return words


def parse_catalogue(source: str, path: Path) -> Catalogue:
    """Read a catalogue's mistakes from its source without running it."""
    try:
        tree = parse_source(source, str(path))
    except SyntaxError as exc:
        where = f"mistake catalogue {path}, line {exc.lineno}"
        raise ConfigError(f"{where}: does not parse: {exc.msg}") from None
    catalogue = Catalogue(source=source, path=path)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call) or not _is_mistake_decorator(decorator):
                continue
            words = _words(decorator, f"mistake catalogue {path}, line {node.lineno}")
            lines = source.split("\n")[node.lineno - 1 : node.end_lineno]
            catalogue.mistakes.append(
                Mistake(
                    words["mistake_id"],
                    words["target"],
                    words["message"],
                    words["hint"],
                    node.name,
                    "\n".join(lines),
                    words.get("requires"),
                    words.get("locate"),
                    words.get("static"),
                    words.get("replaces"),
                    line=node.lineno,
                )
            )
    return catalogue


def load_catalogue(path: Path) -> Catalogue:
    """Read and parse a catalogue file (never executed in this process)."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read mistake catalogue {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"mistake catalogue {path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
            f"offset {exc.start}); save it as UTF-8"
        ) from None
    return parse_catalogue(source, path)
