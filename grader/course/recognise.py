"""Which assignment a notebook is: the one asked for, its metadata, or the names it defines."""

from __future__ import annotations

from grader.course.config import AssignmentSpec, Config
from grader.course.notebook import Submission
from grader.errors import UsageError


def choose_assignment(
    config: Config, submission: Submission, requested: str | None
) -> tuple[AssignmentSpec, str]:
    """The assignment asked for, else the notebook's metadata, else the best match of names."""
    if requested:
        return config.assignment(requested), ""
    hint = submission.assignment_hint
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
    if best[2] == 0 or len(tied) > 1:
        candidates = ", ".join(sorted(config.assignments))
        raise UsageError(
            f"{submission.path}: cannot tell which assignment this is "
            f"(no metadata, and the names it defines do not single one out); "
            f"pass --assignment, one of: {candidates}"
        )
    return config.assignments[best_id], f"assignment '{best_id}' (from the names it defines)"
