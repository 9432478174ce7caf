"""Grading a class: finding submissions, the worker pool, the gradebook and roster, progress, grades
and the class report."""
