"""`python -m grader` and the `grader` command: the command line of grader/cli/, after
giving `grader check` its worker's head start (grader/run/head_start.py)."""

import sys


def entry() -> None:
    """Start the worker the command will need (when it is known), then run the command."""
    from grader.run import head_start

    head_start.start(sys.argv[1:])
    from grader.cli import main

    main()


if __name__ == "__main__":
    entry()
