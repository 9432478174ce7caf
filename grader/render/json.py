"""`--format json`: the one-object contract of DESIGN.md."""

import json

from grader.render.escape import json_text
from grader.report import Report


def render(report: Report) -> str:
    """The report as JSON; strings keep their data, controls in them are \\u escapes."""
    return json_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
