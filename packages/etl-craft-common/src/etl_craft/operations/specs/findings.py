"""validate's findings on the CFG_ rows a spec stands for, told as the spec's file, key and line.

The user edits pipelines/<code>.yml, not CFG_ rows: a finding is placed at the key that wrote
the row (the shorthand or the parameters: entry of a task, a pipeline setting), and the CFG_
column it concerns is only a detail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from etl_craft.operations.validate.findings import Finding
from etl_craft.specs.model import PIPELINE_SETTINGS, RULES_TARGET, TASK_SHORTHANDS, PipelineSpec
from etl_craft.specs.positions import KeyPath, dotted, file_key_lines, line_of, shown

_SHORTHAND_OF = {column: key for key, column in TASK_SHORTHANDS.items()} | {RULES_TARGET: "target"}
CYCLE = "cycle"
_SETTING_OF = {column: key for key, column in PIPELINE_SETTINGS.items()}


def spec_refusal(specs: Iterable[PipelineSpec], failures: list[Finding]) -> str:
    told = [
        f"  {f.spec}: {f.check}: {f.message} (in CFG_ terms: {_cfg_place(f)})"
        if f.spec
        else f"  {_cfg_place(f)}: {f.check}: {f.message}"
        for f in placed(specs, failures)
    ]
    return (
        f"validate finds {len(failures)} failure(s) in the specs:\n"
        + "\n".join(told)
        + "\nfix each key named and run etl-craft plan again"
    )


def placed(specs: Iterable[PipelineSpec], findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """The findings, each on a pipeline a spec defines placed at its file, line and key."""
    by_code = {spec.code: spec for spec in specs}
    lines: dict[Path, Mapping[KeyPath, int]] = {}

    def place(finding: Finding) -> Finding:
        spec = by_code.get(finding.pipeline_code)
        if spec is None:
            return finding
        known = lines.setdefault(spec.source, file_key_lines(spec.source))
        path = _key_path(finding, known)
        return replace(finding, spec=f"{shown(spec.source)}:{line_of(known, path)} {dotted(path)}")

    return tuple(place(finding) for finding in findings)


def _key_path(finding: Finding, known: Mapping[KeyPath, int]) -> KeyPath:
    name = finding.parameter
    if finding.task_code is None:
        if name is None:
            # A finding on the whole pipeline (a cycle names its tasks) is about its tasks.
            return ("tasks",) if finding.check == CYCLE else ()
        setting = _SETTING_OF.get(name)
        return (setting,) if setting is not None else ("parameters", name)
    task: KeyPath = ("tasks", finding.task_code)
    if name is None:
        return task
    shorthand = _SHORTHAND_OF.get(name)
    if shorthand is not None and (*task, shorthand) in known:
        return (*task, shorthand)
    return (*task, "parameters", name)


def _cfg_place(finding: Finding) -> str:
    return (
        f"pipeline {finding.pipeline_code}"
        + (f", task {finding.task_code}" if finding.task_code else "")
        + (f", parameter {finding.parameter}" if finding.parameter else "")
    )
