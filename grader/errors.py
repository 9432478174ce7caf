"""Grader faults. A wrong student answer is data, never one of these."""


class GraderError(Exception):
    """Base of every fault the grader itself raises; the CLI maps it to an exit code."""

    exit_code = 3


class ConfigError(GraderError):
    """config.yaml is missing, malformed or inconsistent (exit 2)."""

    exit_code = 2


class SubmissionError(GraderError):
    """A submission cannot be read at all: missing, not JSON, not UTF-8 (exit 2)."""

    exit_code = 2


class UsageError(GraderError):
    """The command line asks for something impossible, e.g. an unknown assignment (exit 2)."""

    exit_code = 2


class NothingGraded(GraderError):
    """A class of which no submission could be graded (exit 1, as for some; exit 2 when the
    folder held no submission at all)."""

    exit_code = 1
