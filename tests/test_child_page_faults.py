"""What a worker's child does before student code copies as few of the worker's pages as it
can: the C functions it calls are looked up in the worker, before any fork."""

from __future__ import annotations

from pathlib import Path

from grader.run import isolation


def test_the_c_functions_a_child_calls_are_looked_up_before_the_fork() -> None:
    # ctypes keeps a function on its library object the first time it is looked up; one
    # missing here would be looked up again in every child, copying the worker's pages.
    looked_up = vars(isolation._libc)
    assert [name for name in isolation.CHILD_CALLS if name not in looked_up] == []


def test_every_c_function_the_child_calls_is_among_those_looked_up() -> None:
    source = Path(isolation.__file__).read_text()
    called = {part.split('"')[1] for part in source.split("_call(")[1:] if part.startswith('"')} | {
        part.split("(")[0] for part in source.split("_libc.")[1:] if part[0].isalpha()
    }
    assert called <= set(isolation.CHILD_CALLS)
