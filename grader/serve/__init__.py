"""`grader serve`: students upload a notebook in a browser and read their feedback seconds
later; instructors watch the class live. Starlette pages over a SQLite store in the output
folder, grading on the batch's warm sandboxed workers."""
