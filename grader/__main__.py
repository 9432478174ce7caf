"""`python -m grader` and the `grader` command: the command line of grader/cli/, after
giving `grader check` its worker's head start, and its notebook's run on it
(grader/run/head_start.py), and after remembering dataclasses' compiled methods
(grader/course/dataclass_memo.py), with the garbage collector rarely collecting while it
starts (grader/run/collector.py); at exit, the cache folder is pruned when it is due
(grader/course/cache_prune.py)."""

import atexit
import os
import sys
import threading


def entry() -> None:
    """Start the worker the command will need (when it is known), then run the command."""
    try:
        _start()
    except KeyboardInterrupt:  # Ctrl-C while it starts, before the command's own handler
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    from grader.cli import main

    atexit.register(_prune_cache)
    try:
        main()
    except SystemExit as done:
        leave(done)
        raise


def _start() -> None:
    """The work before the command: the head start, the compiled-method memo, the imports."""
    from grader.run import collector

    collector.pause_start_up()  # start-up makes objects, not garbage (grader/run/collector.py)
    from grader.run import head_start

    head_start.start(sys.argv[1:])  # first: the workers' interpreters start beside ours
    from grader.course import dataclass_memo

    dataclass_memo.install(sys.argv[1] if len(sys.argv) > 1 else "")  # before its classes
    head_start.send_job(sys.argv[1:])  # grader check: the notebook runs once they are ready
    import grader.cli  # noqa: F401  (the command line's imports, interruptible here)


def _prune_cache() -> None:
    """At exit, after the command's output: start pruning the cache folder when a day has
    passed since it was last pruned (grader/course/cache_prune.py)."""
    from grader.course.cache_home import prune_due

    if (folder := prune_due()) is not None:
        from grader.course import cache_prune

        cache_prune.after_command(folder)


def leave(done: SystemExit) -> None:
    """End the process with the command's exit status, without the interpreter's teardown
    of every module it imported (about 45 ms of a grade's wall time, after its last byte is
    written): the exit handlers run and the streams are flushed as at any exit. Returns,
    for the usual exit, while another (non-daemon) thread runs, for a status that is not a
    number, or when a stream cannot be flushed."""
    code = 0 if done.code is None else done.code
    if not isinstance(code, int):
        return
    if any(not t.daemon and t is not threading.main_thread() for t in threading.enumerate()):
        return
    if not _flushed():
        return
    atexit._run_exitfuncs()
    if _flushed():
        os._exit(code)


def _flushed() -> bool:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe: the usual exit reports it as it always did
        return False
    return True


if __name__ == "__main__":
    entry()
