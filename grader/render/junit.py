"""`--format junit`: one test case per target; GitLab reads the element text, not `message`."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..report import Report, TargetResult
from .escape import printable

_ELEMENT = {"failed": "failure", "missing": "failure", "error": "error", "timeout": "error"}


def _case(report: Report, target: TargetResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=report.assignment,
        name=target.name,
        file=report.submission,
        time="0",
    )
    if target.location is not None:
        case.set("line", str(target.location.file_line or target.location.line))
    element = _ELEMENT.get(target.status)
    if element:
        summary = target.messages[0] if target.messages else target.status
        detail = [f"{target.status}: {target.score:g} / {target.max_score:g} points"]
        if target.location:
            detail.append(f"at {target.location.describe()}")
        if target.mistakes:
            detail.append(f"mistakes: {', '.join(target.mistakes)}")
        detail.extend(target.messages)
        failure = ET.SubElement(case, element, message=printable(summary), type=target.status)
        failure.text = printable("\n".join(detail))
    else:
        ET.SubElement(case, "system-out").text = printable(
            f"passed: {target.score:g} / {target.max_score:g} points"
        )
    return case


def render(report: Report) -> str:
    failures = sum(t.status in ("failed", "missing") for t in report.targets)
    errors = sum(t.status in ("error", "timeout") for t in report.targets)
    suites = ET.Element("testsuites", name="grader")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=report.assignment,
        tests=str(len(report.targets)),
        failures=str(failures),
        errors=str(errors),
        time=f"{report.seconds:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("score", report.score), ("max_score", report.max_score)):
        ET.SubElement(properties, "property", name=name, value=f"{value:g}")
    for target in report.targets:
        suite.append(_case(report, target))
    if report.errors or report.notes:
        ET.SubElement(suite, "system-err").text = printable(
            "\n".join([*report.errors, *report.notes])
        )
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
