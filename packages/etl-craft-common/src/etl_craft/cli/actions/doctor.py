"""etl-craft doctor: every check of the installation, each reported; exit 1 on any FAIL."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import context_request
from etl_craft.cli.output import emit
from etl_craft.operations.doctor.checks import Check, CheckStatus
from etl_craft.operations.doctor.report import DoctorReport, doctor

INDENT = " " * 26


def handle(args: argparse.Namespace) -> int:
    report = doctor(context_request(args), worker=args.worker)
    emit(report, args.format, render(report))
    return 0 if report.healthy else 1


def render(report: DoctorReport) -> str:
    lines = [line for check in report.checks for line in _check(check)]
    failed, warned = report.count(CheckStatus.FAIL), report.count(CheckStatus.WARN)
    verdict = "ready" if report.healthy else "not ready"
    lines.append(f"{failed} failed, {warned} warning(s): etl-craft is {verdict}")
    return "\n".join(lines)


def _check(check: Check) -> list[str]:
    first, *rest = check.detail.splitlines() or [""]
    lines = [f"{check.status.value:<5} {check.name:<19} {first}"]
    lines.extend(f"{INDENT}{line.strip()}" for line in rest)
    if check.remedy and check.status in (CheckStatus.FAIL, CheckStatus.WARN):
        lines.append(f"{INDENT}remedy: {check.remedy}")
    return lines
