"""`--format junit`: one test case per target; GitLab reads the element text, Jenkins and
most viewers the `message`: the count of failing cases and the first finding.

Every string that may hold student text, attribute or element text, goes through one_line:
XML 1.0 forbids some characters (U+FFFE, most controls) even escaped, so they must not reach
the file, and a CI log that prints it must not see a student's line of its own.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.render.escape import one_line
from grader.render.verdict import verdict_lines
from grader.report import Report, TargetResult

_ELEMENT = {"failed": "failure", "missing": "failure", "error": "error", "timeout": "error"}


def _case(report: Report, target: TargetResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=one_line(report.assignment),
        name=one_line(target.name),
        file=one_line(report.submission),
        time="0",
    )
    if target.location is not None:
        case.set("line", str(target.location.file_line or target.location.line))
    element = _ELEMENT.get(target.status)
    if element:
        # The count alone says nothing a CI page can act on: the first finding joins it.
        summary = "; ".join(target.messages[:2]) or target.status
        detail = [*verdict_lines(target), *target.messages]  # `element`: it did not pass
        failure = ET.SubElement(case, element, message=one_line(summary), type=target.status)
        failure.text = "\n".join(map(one_line, detail))
    else:
        ET.SubElement(case, "system-out").text = verdict_lines(target)[0]
    return case


def render(report: Report) -> str:
    """The report as a JUnit XML file (well-formed whatever the student wrote)."""
    failures = sum(t.status in ("failed", "missing") for t in report.targets)
    errors = sum(t.status in ("error", "timeout") for t in report.targets)
    suites = ET.Element("testsuites", name="grader")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=one_line(report.assignment),
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
        problems = [*report.errors, *report.notes]
        ET.SubElement(suite, "system-err").text = "\n".join(map(one_line, problems))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")
