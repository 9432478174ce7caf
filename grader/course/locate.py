"""Which course a command grades against: one named (an option, $GRADER_COURSE or
$GRADER_CONFIG), else the folder found as git finds `.git` (the working folder or the nearest
one above it holding a config.yaml), else the course beside the package in a checkout.

A course found by looking is never used for notebooks that lie inside its folder (a student's
clone holds its own config.yaml, and the grader would then run the student's "solution" and
grade against the student's targets), nor when it lies inside the folder graded (one student's
folder of the class): the command stops, and such a course has to be named.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from grader.course.bundle import BUNDLE_NAME
from grader.errors import ConfigError

CONFIG_ENV = "GRADER_CONFIG"  # a config file
COURSE_ENV = "GRADER_COURSE"  # a course folder (its config.yaml)
CONFIG_NAME = "config.yaml"

# How the course was chosen: named by the user, found from the working folder, or the one
# beside the package (a checkout of the grader's own repository; a wheel has none).
How = Literal["named", "found", "bundled"]


@dataclass(frozen=True)
class Course:
    """The config a command grades against, and how it was chosen."""

    config: Path
    how: How = "named"

    @property
    def named(self) -> bool:
        """Whether someone named this course (an option or the environment)."""
        return self.how == "named"


def bundled_config_path() -> Path:
    """The course beside the package: this repository's top level, in a checkout. An
    installed wheel has none (the package holds no course), so the path does not exist."""
    return Path(__file__).resolve().parents[2] / CONFIG_NAME


def course_file(folder: Path) -> Path:
    """What a course folder is graded against: the data file of a student bundle (`grader
    release`), else its config.yaml (also the one it lacks, for the error). The bundle
    first: `release` never writes one into a course folder, and a config.yaml beside one
    is the student's own (a Hydra or project config), which held every check up."""
    if (folder / BUNDLE_NAME).is_file():
        return folder / BUNDLE_NAME
    return folder / CONFIG_NAME


def is_bundle(config: Path) -> bool:
    """Whether this course file is a student bundle's: numbers only, no code to run."""
    return config.name == BUNDLE_NAME


def find_upward(start: Path | None = None) -> Path | None:
    """The config.yaml (or student bundle) of `start` (default: the working folder) or the
    nearest folder above it that has one, as git finds `.git`; None when there is none."""
    here = Path(os.path.abspath(start if start is not None else Path.cwd()))
    for folder in (here, *here.parents):
        if (found := course_file(folder)).is_file():
            return found
    return None


def _places(path: Path) -> tuple[Path, ...]:
    """Where a path lies: as given (made absolute) and with its links followed."""
    given = Path(os.path.abspath(path))
    try:
        return tuple(dict.fromkeys((given, path.resolve())))
    except RuntimeError:  # a link to itself, up to Python 3.12: read as given (fails to open)
        return (given,)


def _holds(config: Path, graded: Path) -> bool:
    """Whether `graded` lies in the folder of `config` or below it (either path, links
    followed or not)."""
    homes = {place.parent for place in _places(config)}
    return any(t.is_relative_to(home) for t in _places(graded) for home in homes)


def _within(config: Path, graded: Path) -> bool:
    """Whether the course of `config` lies inside the folder graded (run from one student's
    folder of the class, `grader grade ..`: their config.yaml would grade everyone)."""
    if not graded.is_dir():
        return False
    return any(
        place.parent.is_relative_to(folder)
        for place in _places(config)
        for folder in _places(graded)
    )


def named_course(given: Path | None = None) -> Course | None:
    """The course named by an option (`given`, a config file), $GRADER_COURSE (a folder) or
    $GRADER_CONFIG (a file); None when nobody named one."""
    if given is not None:  # a file, or a folder (a course's or a bundle's), as $GRADER_COURSE
        return Course(course_file(Path(given)) if Path(given).is_dir() else Path(given))
    folder, file = os.environ.get(COURSE_ENV), os.environ.get(CONFIG_ENV)
    if folder and file:
        raise ConfigError(f"${COURSE_ENV} and ${CONFIG_ENV} are both set: set one of them")
    if folder:
        return Course(course_file(Path(folder)))
    return Course(Path(file)) if file else None


def choose_course(
    given: Path | None = None, graded: Path | None = None, hint: str = "--course DIR"
) -> Course:
    """The named course, else the one found from the working folder, else the bundled one
    (where none is found); a ConfigError (exit 2) when there is none, and when the course
    found holds the graded notebooks or lies inside the folder graded (it has to be named
    then)."""
    if (named := named_course(given)) is not None:
        return named
    found = find_upward()
    # A bundle may hold the student's notebooks: it runs nothing, and its numbers decide
    # only that student's own check.
    if found is not None:
        if graded is not None and _within(found, graded):
            raise ConfigError(
                f"{found} lies inside {graded}, the folder graded: a course found there may "
                f"be one student's own, and is never used for the class; name the course to "
                f"grade against ({hint})"
            )
        if graded is None or is_bundle(found) or not _holds(found, graded):
            return Course(found, "found")
        # Never the bundled course instead: the course found was the one meant (an
        # instructor's class kept inside their course folder), and a checkout's attention
        # course would grade it against other targets and points with exit 0 (r55).
        refuse_beside(Course(found, "found"), graded, hint)  # it holds them: this raises
        raise ConfigError(f"{found} holds {graded}: name the course to grade against ({hint})")
    bundled = bundled_config_path()
    if bundled.is_file():
        return Course(bundled, "bundled")
    raise ConfigError(
        f"no course found: no {CONFIG_NAME} or {BUNDLE_NAME} in {Path.cwd()} or any folder "
        f"above it; run in a course folder or name one ({hint}){_bundle_beside(graded)}"
    )


def _bundle_beside(graded: Path | None) -> str:
    """Where the graded notebook lies in a student bundle (checked from another folder), the
    words that name it: the way out is in the student's own folder."""
    found = find_upward(graded.parent) if graded is not None else None
    if found is None or not is_bundle(found):
        return ""
    return f"; {graded} lies in the student bundle {found.parent}: run there, or name that folder"


def _notebooks_folder(graded: Path) -> Path | None:
    """The folder that holds what is graded: a class folder itself, a notebook's folder. A
    .zip export's notebooks lie in no folder (the zip sits in the instructor's)."""
    if graded.is_dir():
        return graded
    return None if graded.suffix.lower() == ".zip" else graded.parent


def refuse_beside(course: Course, graded: Path, hint: str) -> None:
    """Refuse (ConfigError, exit 2) a course the graded notebooks' side could have supplied:
    a config in their very folder, named or not, or one nobody named whose folder holds them
    (a grader installed from a student's clone brings the student's config as its own)."""
    if not course.config.is_file() or is_bundle(course.config):
        return  # missing: load_config says so; a bundle: only numbers, nothing to refuse
    homes = {place.parent for place in _places(course.config)}
    for target in _places(graded):
        if _notebooks_folder(target) in homes:
            raise ConfigError(
                f"{course.config} lies beside {graded}: a notebook's own folder never supplies "
                f"its course; keep the course in a folder of its own and name it ({hint})"
            )
    if not course.named and _holds(course.config, graded):
        raise ConfigError(
            f"{graded} lies inside the folder of {course.config}, which was not named: it "
            f"may be a student's own course; name the course to grade against ({hint})"
        )


def ignored_configs(course: Course, graded: Path | None, hint: str) -> list[str]:
    """A note for each config.yaml found from the working folder, in it, or in the graded
    notebooks' folder that is not the course, so an author sees why it did not count."""
    candidates = [find_upward(), Path.cwd() / CONFIG_NAME]
    if graded is not None and (home := _notebooks_folder(_places(graded)[0])) is not None:
        candidates.append(home / CONFIG_NAME)
    used = course.config.resolve()
    found = dict.fromkeys(path.resolve() for path in candidates if path is not None)
    source = {"named": "named", "found": "found here", "bundled": "the bundled course"}
    return [
        f"ignored {path}: grading against {course.config} ({source[course.how]}); a "
        f"config.yaml where the grader runs or a notebook lies counts only for notebooks "
        f"outside its folder, or when named with {hint}"
        for path in found
        # a config.yaml beside the bundle graded against is the student's own: never a course
        if path.is_file() and path != used and not (is_bundle(used) and path.parent == used.parent)
    ]
