"""`python -m grader`: the same command line as `grader`."""

from grader.cli import main

main()
