"""Which assignment a notebook is: the one asked for, its metadata, or the names it defines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from grader.course.config import AssignmentSpec, Config
from grader.course.notebook import Submission
from grader.errors import UsageError


def choose_assignment(
    config: Config, submission: Submission, requested: str | None
) -> tuple[AssignmentSpec, str]:
    """The assignment asked for, else the notebook's metadata, else the best match of names;
    with how it was chosen, for a note: "" for the one asked for, unless the notebook's
    metadata names another of the course's (the note says so, in `grader check` as in a
    batch's feedback page)."""
    hint = submission.assignment_hint
    if requested:
        spec = config.assignment(requested)
        if hint and hint != requested and hint in config.assignments:
            return spec, f"assignment '{requested}' (as asked), though its metadata names '{hint}'"
        return spec, ""
    if hint and hint in config.assignments:
        return config.assignments[hint], f"assignment '{hint}' (from the notebook's metadata)"
    defined = set(submission.definitions())

    def fit(a: AssignmentSpec) -> tuple[float, int, int]:
        # Share of its targets the notebook defines, then how many of them are functions.
        names = {t.name for t in a.targets}
        functions = {t.name for t in a.targets if not t.variable}
        share = len(defined & names) / len(names)
        return (share, len(defined & functions), len(defined & names))

    scored = sorted(((fit(a), a.id) for a in config.assignments.values()), reverse=True)
    best, best_id = scored[0]
    tied = [aid for score, aid in scored if score == best]
    # Names that another assignment has all of too (a lone `softmax`) single out the one
    # with fewer targets only when they are all of its targets.
    matched = defined & {t.name for t in config.assignments[best_id].targets}
    alike = [
        a.id
        for a in config.assignments.values()
        if a.id != best_id and matched <= {t.name for t in a.targets}
    ]
    if best[2] == 0 or len(tied) > 1 or (alike and best[0] < 1):
        candidates = ", ".join(sorted(config.assignments))
        metadata = (
            f"its metadata names {hint!a}, which this course does not have"
            if hint
            else "no metadata"
        )
        why = "the names it defines do not single one out"
        if best[2] and not len(tied) > 1:  # one tied only in the names it has
            where = ", ".join(sorted([best_id, *alike])[:-1]) + f" and {max([best_id, *alike])}"
            names = ", ".join(f"`{n}`" for n in sorted(matched))
            why = (
                f"the one name it defines that an assignment grades, {names}, is in {where} alike"
                if len(matched) == 1
                else f"the names it defines that an assignment grades ({names}) are all in "
                f"{where} alike"
            )
        raise UsageError(
            f"{submission.path}: cannot tell which assignment this is ({metadata}, and {why}); "
            f"{PASS_ASSIGNMENT}, one of: {candidates}"
        )
    return config.assignments[best_id], f"assignment '{best_id}' (from the names it defines)"


# How the "cannot tell which assignment" problem ends, for the command line; a front end
# without that option says its own way (`asked_otherwise`).
PASS_ASSIGNMENT = "pass --assignment"


def asked_otherwise(problem: str, how: str) -> str:
    """The "cannot tell which assignment" problem told with `how` (what to do where there
    is no --assignment to pass: a web upload, check() in Jupyter) instead; any other
    problem as it is."""
    tail = f"; {PASS_ASSIGNMENT}, one of: "
    return (
        problem.replace(tail, f"; {how}: ", 1)
        if "cannot tell which assignment" in problem
        else problem
    )


def settle_assignment(config: Config, recognised: Sequence[str | None], where: str) -> str | None:
    """The one assignment a batch without --assignment grades every notebook as: the one
    most of its notebooks are recognised as (`recognised`: each one's, None where none);
    None when no notebook is recognised. A UsageError when two or more tie for most: no
    notebook's own choice may decide it."""
    counts = Counter(aid for aid in recognised if aid is not None and aid in config.assignments)
    if not counts:
        return None
    most = max(counts.values())
    tied = sorted(aid for aid, count in counts.items() if count == most)
    if len(tied) > 1:
        seen = ", ".join(f"{aid} ({counts[aid]})" for aid in sorted(counts))
        raise UsageError(
            f"{where}: the notebooks look like several assignments, none for most of them "
            f"({seen}); pass --assignment"
        )
    return tied[0]


# In the note of a notebook a batch graded as its class's assignment, not the one it looks like.
THE_CLASS_S = "the class's (most of its notebooks are)"


def graded_as_the_class(note: str) -> bool:
    """Whether a report's note says its notebook was graded as the batch's settled
    assignment although it looked like another (choose_for_batch)."""
    return note.startswith("graded as ") and f", {THE_CLASS_S}, though " in note


def choose_for_batch(
    config: Config, submission: Submission, requested: str | None, settled: str | None
) -> tuple[AssignmentSpec, str]:
    """A batch's notebook: graded as the assignment asked for, else as the batch's
    `settled` one (settle_assignment), never as another its metadata or names point to;
    the note says so when they do (as choose_assignment without a batch). One that alone
    could not be told (no metadata, names that single out none: a blank notebook) is graded
    as `settled` too, as `--assignment` would grade it, not left a problem."""
    try:
        spec, chosen = choose_assignment(config, submission, requested)
    except UsageError:
        if requested or settled is None:
            raise
        return config.assignment(settled), (
            f"assignment '{settled}', {THE_CLASS_S}; this notebook alone could not be told"
        )
    if requested or settled is None or spec.id == settled:
        return spec, chosen
    looks = chosen.removeprefix("assignment ")
    return config.assignment(settled), (
        f"assignment '{settled}', {THE_CLASS_S}, though this notebook looks like {looks}"
    )
