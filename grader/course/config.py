"""Load and validate config.yaml into frozen specs: assignments, targets, sizes, limits."""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from grader.course import schema_memo, yaml_memo
from grader.course.bundle import BUNDLE_NAME, read_data
from grader.course.declared import ArgSpec
from grader.course.files import DataFile, course_files
from grader.course.input_checks import check_inputs, find_course_cases, target_args
from grader.course.inputs import CourseCases
from grader.course.locate import choose_course, course_file, ignored_configs, refuse_beside
from grader.course.schema import SCHEMA, TYPE_WORDS
from grader.course.service import ServeSettings, serve_settings
from grader.errors import ConfigError

if TYPE_CHECKING:  # imported where a course has a due date (most grading needs none)
    from datetime import tzinfo

    from grader.course.deadline import LatePolicy

# How a notebook is to be sandboxed: `sandbox:` in the config, `--sandbox` on the command line.
Mode = Literal["auto", "required", "none"]
MODES: tuple[Mode, ...] = ("auto", "required", "none")


@cache
def _loader() -> Any:
    """Safe YAML that also reads `1e-8` as a number (YAML 1.1 wants `1.0e-8`). libyaml's
    parser when PyYAML has it (ten times faster), else PyYAML's own; the same results.
    Imported on first use: a config parsed before is read from its memo (yaml_memo.py)."""
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        """The safe loader, with the float resolver below, refusing a key given twice in one
        mapping (YAML keeps the last silently: a second `points:` would win unseen)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            first: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag.endswith(":merge"):
                    continue
                if (key.tag, key.value) in first:
                    seen = first[key.tag, key.value]
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"`{key.value}` is given twice (line {seen} and here)",
                        key.start_mark,
                    )
                first[key.tag, key.value] = key.start_mark.line + 1
            return super().construct_mapping(node, deep)

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
        list("-+0123456789."),
    )
    return Loader


@dataclass(frozen=True)
class Tolerance:
    """How close an output must be to the expected one: numpy-style relative and absolute
    tolerances."""

    rtol: float = 1e-5
    atol: float = 1e-8


@dataclass(frozen=True)
class TimeLimit:
    """Seconds allowed for a whole submission, for one cell and for one call of a target."""

    submission: float = 20.0
    cell: float = 5.0
    call: float = 2.0


@dataclass(frozen=True)
class TargetSpec:
    """One graded function (or top-level variable): its inputs and how to judge its output."""

    name: str
    points: float
    inputs: str
    sizes: tuple[Mapping[str, int], ...]
    compare: str = "exact"
    tolerance: Tolerance = Tolerance()
    partial_credit: bool = True
    mutation: str = "fail"
    sums_to_one: str | None = None
    variable: bool = False
    public_cases: int | None = None  # how many cases check() in a student's notebook uses
    hidden_cases: int = 0  # cases left out of these sizes, graded only on submission
    args: tuple[ArgSpec, ...] = ()  # declared inputs (`args:`); else the builder `inputs`
    cases: CourseCases | None = None  # the course's cases.py, where `inputs` is registered


@dataclass(frozen=True)
class AssignmentSpec:
    """One assignment of a course, as the config states it: notebooks, seed, time limits, the
    targets graded, preloaded modules and data files."""

    id: str
    title: str
    solution: Path
    exercise: Path | None
    mistakes: Path | None
    seed: int
    time_limit: TimeLimit
    targets: tuple[TargetSpec, ...]
    # Modules a batch's workers import once, before forking, because notebooks of this
    # assignment import them (numpy always is). Each costs every fork a little: list only
    # what the notebooks use, e.g. matplotlib.pyplot for notebooks that plot.
    preload: tuple[str, ...] = ()
    # The course's data files the notebooks may read (`files:`), in their working folder.
    files: tuple[DataFile, ...] = ()
    late: LatePolicy | None = None  # `due:` and `late:`; None: nothing is late
    keep: Literal["latest", "best"] = "latest"  # of a student's several notebooks
    per_student_inputs: bool = False  # public cases drawn per student (per_student.py)
    # The seed of this student's public cases (derived from their id and the course secret);
    # None: the public cases use `seed`, like the hidden ones.
    public_seed: int | None = None
    # The student bundle's data file this assignment was read from (`grader release`): its
    # cases and expected outputs are the bundle's numbers; there is no solution to run.
    released: Path | None = None

    @property
    def hidden(self) -> bool:
        """Whether some cases are graded only on submission (`hidden_cases:`)."""
        return any(
            t.hidden_cases > 0 or (t.public_cases is not None and t.public_cases < len(t.sizes))
            for t in self.targets
        )

    def public(self) -> AssignmentSpec:
        """The assignment as a student's own check() sees it: only the public cases."""
        targets = tuple(
            replace(
                t,
                sizes=t.sizes[: t.public_cases],
                hidden_cases=t.hidden_cases + max(0, len(t.sizes) - t.public_cases),
            )
            if t.public_cases
            else t
            for t in self.targets
        )
        return replace(self, targets=targets)

    def target(self, name: str) -> TargetSpec:
        """The target named `name`; KeyError when the assignment has none."""
        for spec in self.targets:
            if spec.name == name:
                return spec
        raise KeyError(name)


@dataclass(frozen=True)
class Config:
    """A loaded course config: its file, its assignments by id, and the sandbox mode it asks for."""

    path: Path
    assignments: Mapping[str, AssignmentSpec]
    sandbox: Mode = "auto"  # `sandbox:`, what --sandbox overrides
    sandbox_named: bool = False  # whether config.yaml says `sandbox:` (else auto, unasked)
    secret_file: Path | None = None  # `secret_file:`, where per-student inputs' secret is
    serve: ServeSettings = field(default_factory=ServeSettings)  # `serve:`, grader serve's
    time_zone: str | None = None  # `time_zone:`, an IANA name (checked when loaded)

    def assignment(self, assignment_id: str) -> AssignmentSpec:
        """The assignment with this id; ConfigError listing the known ids when there is none."""
        try:
            return self.assignments[assignment_id]
        except KeyError:
            known = ", ".join(sorted(self.assignments))
            raise ConfigError(
                f"unknown assignment '{assignment_id}' in {self.path} (known: {known})"
            ) from None

    def zone(self) -> tzinfo | None:
        """The course's time zone (`time_zone:`), None when the config names none."""
        from zoneinfo import ZoneInfo  # only where a late policy reads local times

        return None if self.time_zone is None else ZoneInfo(self.time_zone)


def load_course(given: Path | None, graded: Path | None, hint: str) -> tuple[Config, list[str]]:
    """The course to grade `graded` against (see choose_course), refused when it could be the
    notebooks' own, with the notes on configs left out. `hint` says how to name a course."""
    course = choose_course(given, graded, hint)
    if graded is not None:
        refuse_beside(course, graded, hint)
    return load_config(course.config), ignored_configs(course, graded, hint)


def load_config(path: Path | None = None) -> Config:
    """Read, validate and resolve a config file; every problem is a ConfigError with a key path."""
    path = Path(path) if path is not None else choose_course().config
    if path.is_dir():  # a course folder or a student bundle named by its folder
        path = course_file(path)
    if path.name == BUNDLE_NAME:
        return load_bundle(path)
    try:
        with path.open("rb") as file:  # at most MOST_BYTES: /dev/zero never ends
            data = file.read(MOST_BYTES + 1)
        if len(data) > MOST_BYTES:
            raise ConfigError(f"{path}: over {MOST_BYTES // 1_000_000} MB: not a course's config")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    known, raw = yaml_memo.parsed(text)
    if not known:
        raw = _dates_as_text(parse_yaml(text, path))
        yaml_memo.note_parsed(text, raw)
    validate_raw(raw, path)
    return _build(raw, path)


def parse_yaml(text: str, path: Path) -> Any:
    """The config's text as plain data (a safe loader); ConfigError saying where it is not
    valid YAML."""
    import yaml

    try:
        raw = yaml.load(text, Loader=_loader())  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}: not valid YAML{at}: {problem}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested deeper than YAML can read") from None
    except (ValueError, OverflowError) as exc:  # a date that does not exist: 2026-02-30
        raise ConfigError(f"{path}: {_no_such_time(text, exc)}") from None
    _refuse_unbounded(raw, path)
    return raw


def _no_such_time(text: str, error: Exception) -> str:
    """Which unquoted date or time of the text YAML could not make (`2026-02-30`, an hour
    of 25), and where; the error's own words when none is found."""
    import yaml

    loader = _loader()(text)
    try:
        todo = [loader.get_single_node()]
        while todo:
            node = todo.pop(0)
            if isinstance(node, yaml.ScalarNode) and node.tag.endswith(":timestamp"):
                try:
                    loader.construct_yaml_timestamp(node)
                except (ValueError, OverflowError) as exc:
                    line = node.start_mark.line + 1
                    return f"line {line}: {node.value} is not a date and time that exists ({exc})"
            elif isinstance(node, yaml.SequenceNode):
                todo.extend(node.value)
            elif isinstance(node, yaml.MappingNode):
                todo.extend(n for pair in node.value for n in pair)
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return f"a value YAML cannot read ({error})"


# A course's config is a few kilobytes and a few thousand values at most; aliases (*name)
# that repeat a list of lists of … expand past any memory, and one inside the list it names
# never ends.
MOST_BYTES = 2_000_000
MOST_VALUES = 200_000
DEEPEST = 64


def _refuse_unbounded(raw: Any, path: Path) -> None:
    """ConfigError when the YAML, with its aliases written out, holds more than MOST_VALUES
    values, nests more than DEEPEST levels, or holds itself (an alias inside its anchor)."""
    counted: dict[int, int] = {}
    open_: set[int] = set()

    def values(node: Any, depth: int) -> int:
        if not isinstance(node, dict | list):
            return 1
        if depth > DEEPEST:
            raise ConfigError(f"{path}: nested more than {DEEPEST} levels deep")
        if id(node) in open_:
            raise ConfigError(f"{path}: an alias (*name) is used inside the anchor it names")
        if id(node) not in counted:
            open_.add(id(node))
            children = node.values() if isinstance(node, dict) else node
            counted[id(node)] = 1 + sum(values(child, depth + 1) for child in children)
            open_.discard(id(node))
        if counted[id(node)] > MOST_VALUES:
            raise ConfigError(
                f"{path}: holds more than {MOST_VALUES:,} values once its aliases (*name) "
                "are written out: a course's config needs far fewer"
            )
        return counted[id(node)]

    values(raw, 0)


def _dates_as_text(raw: Any) -> Any:
    """YAML reads an unquoted `2026-03-01T23:59:00+01:00` as a datetime: written back as
    ISO text, so that `due:` reads the same quoted or not (a zone left out stays left out)."""
    if isinstance(raw, dict):
        return {key: _dates_as_text(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return [_dates_as_text(value) for value in raw]
    if isinstance(raw, date):
        return raw.isoformat()
    return raw


def validate_raw(raw: Any, path: Path) -> None:
    """Check the parsed YAML against the schema and the case builders that exist."""
    _refuse_non_text_keys(raw, path, "")
    if not _passes(raw):
        _explain(raw, path)
    _refuse_non_finite(raw, path, "")
    for aid, assignment in raw["assignments"].items():
        _check_deadline(assignment, f"{path}: assignments.{aid}")
    check_inputs(raw, path, find_course_cases(raw, path))


# What YAML makes of an unquoted key that is not text, in the words of a YAML file.
_KEY_KINDS = {"int": "a number", "float": "a number", "bool": "true or false", "NoneType": "null"}


def _refuse_non_text_keys(raw: Any, path: Path, where: str) -> None:
    """YAML reads an unquoted key `12:`, `null:` or `yes:` as a number, None or a boolean:
    every key the grader reads is a name, and such a key crashed it (exit 3)."""
    if isinstance(raw, dict):
        for key, value in raw.items():
            if not isinstance(key, str):
                read = _KEY_KINDS.get(type(key).__name__, "a date")
                raise ConfigError(
                    f"{path} is not a valid grader config: {where or '(top level)'}: the key "
                    f"{key!r} must be a name, not {read} as YAML reads it unquoted"
                )
            _refuse_non_text_keys(value, path, f"{where}.{key}" if where else key)
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            _refuse_non_text_keys(value, path, f"{where}.{index}")


def _refuse_non_finite(raw: Any, path: Path, where: str) -> None:
    """YAML's `.nan` passes every bound of the schema (no comparison with NaN is false), so
    it is refused here, with its key path: a NaN percent or point makes every total NaN. So is
    `.inf` (or 1e400), which passes every bound but a maximum: points of inf make 0 × inf, a
    NaN total, for a student who passes nothing."""
    if isinstance(raw, dict):
        for key, value in raw.items():
            _refuse_non_finite(value, path, f"{where}.{key}" if where else str(key))
    elif isinstance(raw, list):
        for index, value in enumerate(raw):
            _refuse_non_finite(value, path, f"{where}.{index}")
    elif isinstance(raw, float) and not math.isfinite(raw):
        said = "a number, not nan" if raw != raw else f"a finite number, not {raw}"
        raise ConfigError(f"{path} is not a valid grader config: {where}: must be {said}")


def _check_deadline(assignment: Mapping[str, Any], where: str) -> None:
    """`due` and `late.cutoff` are times with a zone, the cut-off after the due date, and a
    late policy has a due date to count from."""
    late = assignment.get("late", {})
    if "due" not in assignment:
        if late:
            raise ConfigError(f"{where}.late: a late policy needs `due` (when it is due)")
        return
    from grader.course.deadline import parse_time

    times = {}
    for key, text in (("due", assignment["due"]), ("late.cutoff", late.get("cutoff"))):
        if text is None:
            continue
        try:
            times[key] = parse_time(text)
        except ValueError as exc:
            raise ConfigError(f"{where}.{key}: not an ISO 8601 time with a zone: {exc}") from None
    if "late.cutoff" in times and times["late.cutoff"] < times["due"]:
        raise ConfigError(f"{where}.late.cutoff: before `due` ({assignment['due']})")


def late_policy(assignment: Mapping[str, Any], time_zone: str | None = None) -> LatePolicy | None:
    """The assignment's `due:` and `late:` (already checked), or None without a due date;
    its days are calendar days in `time_zone` (the course's, checked), else the due date's."""
    if "due" not in assignment:
        return None
    from grader.course.deadline import LatePolicy, parse_time

    zone = None
    if time_zone is not None:
        from zoneinfo import ZoneInfo

        zone = ZoneInfo(time_zone)

    late = assignment.get("late", {})
    return LatePolicy(
        due=parse_time(assignment["due"]),
        grace_minutes=float(late.get("grace", 0)),
        percent=float(late.get("percent", 0)),
        per=late.get("per", "day"),
        cap=float(late.get("cap", 100)),
        cutoff=parse_time(late["cutoff"]) if "cutoff" in late else None,
        zone=zone,
    )


@cache
def _fast_validator() -> Callable[[Any], Any]:
    import fastjsonschema

    return fastjsonschema.compile(SCHEMA)


def _passes(raw: Any) -> bool:
    """The quick verdict: fastjsonschema compiles the schema to Python in a few ms, where
    importing jsonschema alone costs about 50 ms of every command. A config it accepts,
    jsonschema accepts too (tests/test_config.py checks the two agree on many broken ones).
    A config accepted before is not compiled for again (schema_memo.py)."""
    if schema_memo.known_valid(raw):
        return True
    import fastjsonschema

    try:
        _fast_validator()(raw)
    except fastjsonschema.JsonSchemaException:
        return False
    schema_memo.note_valid(raw)
    return True


def _explain(raw: Any, path: Path) -> None:
    """After a refusal: jsonschema lists every violation with its key path (and has the last
    word: a config it accepts goes on)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(map(str, e.absolute_path)))
    if len(errors) == 1:  # one line, as every other refusal of the config
        raise ConfigError(f"{path} is not a valid grader config: {_describe(errors[0])}")
    if errors:
        lines = [_describe(err) for err in errors[:10]]
        more = f"\n  … and {len(errors) - 10} more" if len(errors) > 10 else ""
        raise ConfigError(f"{path} is not a valid grader config:\n  " + "\n  ".join(lines) + more)


def _shown(value: object, most: int = 80) -> str:
    """A value as an error quotes it, cut short: a CSV passed as the config is one long
    string, which would otherwise fill the terminal (r55 #8)."""
    text = repr(value)
    return text if len(text) <= most else f"{text[: most - 1]}… ({len(text)} characters)"


def _describe(err: Any) -> str:
    """One violation (a jsonschema.ValidationError) as a key path and a plain sentence."""
    where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    kind = err.validator
    if kind == "type":
        expected = err.validator_value
        kinds = list(expected) if isinstance(expected, list) else [expected]
        words = [TYPE_WORDS.get(str(t), str(t)) for t in kinds]
        return f"{where}: must be {' or '.join(words)}, not {_shown(err.instance)}"
    if kind == "required":
        missing = str(err.message).split("'")[1] if "'" in err.message else err.message
        return f"{where}: missing required key '{missing}'"
    if kind == "additionalProperties":
        schema = err.schema if isinstance(err.schema, dict) else {}
        given = err.instance if isinstance(err.instance, dict) else {}
        extra = sorted(set(given) - set(schema.get("properties", {})))
        return f"{where}: unknown key {', '.join(repr(e) for e in extra)}"
    if kind in ("enum", "const"):
        value = err.validator_value
        allowed = list(value) if kind == "enum" and isinstance(value, list) else [value]
        listed = ", ".join(map(repr, allowed))
        return f"{where}: must be one of {listed}, not {_shown(err.instance)}"
    if kind in ("minimum", "exclusiveMinimum", "maximum"):
        op = {"minimum": "≥", "exclusiveMinimum": ">", "maximum": "≤"}[kind]
        return f"{where}: must be {op} {err.validator_value}, not {_shown(err.instance)}"
    if kind in ("minItems", "minProperties"):
        return f"{where}: must not be empty"
    return f"{where}: {err.message}"


def _refuse_cases_as_data(
    files: Mapping[str, tuple[DataFile, ...]], cases: CourseCases | None, path: Path
) -> None:
    """The case builders (wherever `cases:` puts them) say how hidden cases are made."""
    for aid, listed in files.items():
        for data in listed:
            if cases is not None and data.source == cases.path.resolve():
                raise ConfigError(
                    f"{path}: assignments.{aid}.files: {data.name!r} is the course's case "
                    "builders: students' notebooks must never see it"
                )


def _refuse_non_names(targets: Mapping[str, Any], where: str) -> None:
    """A target is a name the notebook defines: one that is not a Python name (`layer-norm`,
    `class`) could never be found, and was refused later as missing from the solution."""
    for name in targets:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ConfigError(
                f"{where}.{name}: not a Python name; a target is the function (or variable) "
                "the notebook defines, such as layer_norm"
            )


def _build(raw: Mapping[str, Any], path: Path) -> Config:
    base = path.resolve().parent
    defaults = raw.get("defaults", {})
    default_tol = Tolerance(**defaults.get("tolerance", {}))
    default_limit = TimeLimit(**defaults.get("time_limit", {}))
    assignments: dict[str, AssignmentSpec] = {}
    secret = base / raw["secret_file"] if "secret_file" in raw else None
    files = course_files(raw["assignments"], path, secret)
    cases = find_course_cases(raw, path)
    _refuse_cases_as_data(files, cases, path)
    time_zone = _time_zone(raw)
    for aid, spec in raw["assignments"].items():
        _refuse_non_names(spec["targets"], f"{path}: assignments.{aid}.targets")
        tol = Tolerance(**{**vars(default_tol), **spec.get("tolerance", {})})
        sizes = tuple(spec["sizes"])
        targets = tuple(
            TargetSpec(
                name=name,
                points=float(t["points"]),
                inputs=t.get("inputs", ""),
                variable=t.get("variable", False),
                sizes=tuple(t.get("sizes", sizes)),
                compare=t.get("compare", "exact"),
                tolerance=Tolerance(**{**vars(tol), **t.get("tolerance", {})}),
                partial_credit=t.get("partial_credit", defaults.get("partial_credit", True)),
                mutation=t.get("mutation", defaults.get("mutation", "fail")),
                sums_to_one=t.get("sums_to_one"),
                public_cases=t.get("public_cases"),
                args=target_args(t, f"{path}: assignments.{aid}.targets.{name}"),
                cases=cases if "inputs" in t else None,
            )
            for name, t in spec["targets"].items()
        )
        for t in targets:  # more than it has: every case public, which was not meant (r50)
            if t.public_cases is not None and t.public_cases > len(t.sizes):
                raise ConfigError(
                    f"{path}: assignments.{aid}.targets.{t.name}.public_cases: "
                    f"{t.public_cases}, but the target has {len(t.sizes)} sizes (cases): give "
                    f"at most {len(t.sizes)}, or leave it out to make every case public"
                )
        assignments[aid] = AssignmentSpec(
            id=aid,
            title=spec.get("title", aid),
            solution=base / spec["solution"],
            exercise=base / spec["exercise"] if "exercise" in spec else None,
            mistakes=base / spec["mistakes"] if "mistakes" in spec else None,
            seed=int(spec["seed"]),
            time_limit=TimeLimit(**{**vars(default_limit), **spec.get("time_limit", {})}),
            targets=targets,
            preload=tuple(spec.get("preload", ())),
            files=files[aid],
            late=late_policy(spec, time_zone),
            keep=spec.get("keep", "latest"),
            per_student_inputs=spec.get("per_student_inputs", False),
        )
    return Config(
        path=path,
        assignments=assignments,
        sandbox=raw.get("sandbox", "auto"),
        sandbox_named="sandbox" in raw,
        secret_file=secret,
        serve=serve_settings(raw, base),
        time_zone=time_zone,
    )


def _time_zone(raw: Mapping[str, Any]) -> str | None:
    """`time_zone:`, an IANA name this machine knows; ConfigError for any other."""
    name = raw.get("time_zone")
    if name is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError, OSError):  # OSError: `America`, a folder
        raise ConfigError(
            f"time_zone: {name!r} is no time zone this machine knows (an IANA name such as "
            "Europe/Berlin or America/New_York)"
        ) from None
    return str(name)


def _released_target(entry: Mapping[str, Any]) -> TargetSpec:
    sizes = tuple(dict(s) for s in entry["sizes"])
    return TargetSpec(
        name=str(entry["name"]),
        points=float(entry["points"]),
        inputs="",
        sizes=sizes,
        compare=str(entry["compare"]),
        tolerance=Tolerance(**entry["tolerance"]),
        partial_credit=bool(entry["partial_credit"]),
        mutation=str(entry["mutation"]),
        sums_to_one=entry["sums_to_one"],
        variable=bool(entry["variable"]),
        public_cases=len(sizes) if entry["hidden_cases"] else None,
        hidden_cases=int(entry["hidden_cases"]),
    )


def load_bundle(path: Path) -> Config:
    """A student bundle as a course Config: its assignments' public cases only, each marked
    as released (grading reads the numbers from `path` and runs no course code)."""
    manifest, _ = read_data(path)  # the numbers are judge/released.py's
    base = path.resolve().parent
    assignments = {}
    try:
        for entry in manifest["assignments"]:
            exercise = entry["exercise"]
            assignments[entry["id"]] = AssignmentSpec(
                id=str(entry["id"]),
                title=str(entry["title"]),
                solution=path,  # there is none: grading reads the bundle's numbers
                exercise=base / exercise if exercise else None,
                mistakes=None,
                seed=int(entry["seed"]),
                time_limit=TimeLimit(**entry["time_limit"]),
                targets=tuple(_released_target(t) for t in entry["targets"]),
                preload=tuple(entry["preload"]),
                files=tuple(DataFile(name, (base / name).resolve()) for name in entry["files"]),
                keep=entry["keep"],
                released=path,
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: a malformed student bundle ({exc!r})") from None
    return Config(path=path, assignments=assignments, sandbox=manifest.get("sandbox", "auto"))
