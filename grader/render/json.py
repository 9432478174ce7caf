"""`--format json`: the one-object contract of DESIGN.md."""

import json

from ..report import Report


def render(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
