"""Dependencies inferred from lineage: the last writer, and what stated edges already cover."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from etl_craft.specs.inference import (
    EdgeOutcome,
    TableUse,
    infer_edges,
    written_edges,
)
from etl_craft.specs.model import TaskDependencySpec
from etl_craft.specs.templates import pipelines_of

SPEC = {
    "tasks": {
        "setup": {"action": "SETUP_TABLE", "target": "dm.t"},
        "fill": {"action": "APPEND_TABLE", "target": "dm.t", "depends_on": ["setup"]},
        "check": {"handler": "BUSINESS_RULES", "target": "dm.t"},
        "publish": {"action": "CREATE_TABLE", "target": "pub.t", "depends_on": ["check"]},
        "count": {"action": "CREATE_TABLE", "target": "dm.n", "depends_on": ["fill"]},
    }
}
USES = {
    "setup": TableUse((), "dm.t"),
    "fill": TableUse(("lnd.t",), "dm.t"),
    "check": TableUse(("dm.t",), None),
    "publish": TableUse(("dm.t",), "pub.t"),
    "count": TableUse(("dm.t",), "dm.n"),
}


def outcomes(spec: Mapping[str, Any], uses: dict[str, TableUse]) -> dict[tuple[str, str], str]:
    (pipeline,) = pipelines_of(spec, Path("p.yml"))
    return {(e.task, e.upstream_task): e.outcome.value for e in infer_edges(pipeline, uses)}


def test_a_reader_depends_on_the_last_writer_and_covered_edges_are_not_written() -> None:
    assert outcomes(SPEC, USES) == {
        ("check", "fill"): EdgeOutcome.WRITTEN.value,  # fill comes after setup
        ("publish", "fill"): EdgeOutcome.IMPLIED.value,  # through check
        ("count", "fill"): EdgeOutcome.STATED.value,
    }


def test_only_written_edges_become_dependencies() -> None:
    (pipeline,) = pipelines_of(SPEC, Path("p.yml"))
    assert written_edges(infer_edges(pipeline, USES)) == {
        "check": (TaskDependencySpec("fill", "p"),)
    }


def test_a_writer_that_depends_on_its_reader_is_a_cycle_not_an_edge() -> None:
    spec = {"tasks": {"a": {"target": "x.a", "depends_on": ["b"]}, "b": {"target": "x.b"}}}
    uses = {"a": TableUse((), "x.a"), "b": TableUse(("x.a",), "x.b")}
    assert outcomes(spec, uses) == {("b", "a"): EdgeOutcome.CYCLE.value}


def test_two_writers_neither_before_the_other_are_both_upstream() -> None:
    spec = {"tasks": {"a": {"target": "x.t"}, "b": {"target": "x.t"}, "c": {"target": "x.c"}}}
    uses = {"a": TableUse((), "x.t"), "b": TableUse((), "x.t"), "c": TableUse(("x.t",), "x.c")}
    assert outcomes(spec, uses) == {("c", "a"): "written", ("c", "b"): "written"}
