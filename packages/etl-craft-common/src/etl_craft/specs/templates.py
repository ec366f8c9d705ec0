"""The pipelines one spec document describes: itself, or one per instance of a template.

A document with ``instances:`` is a template: the rest of it is one pipeline definition, and
each instance (its key is the pipeline's code) gives that pipeline its parameter values, and
may set its own pipeline settings or task keys. Every instance reads the same SQL files; its
SQL tells the pipelines apart with ``$$pipeline_code`` and ``$$param.NAME`` (see
warehouse.substitution). A parameter the template gives no value must get one from every instance,
and every value must read as its PARAMETER_TYPE.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etl_craft.specs.model import Document, PipelineSpec, SpecError, pipeline_spec, scalar_text
from etl_craft.warehouse.literals import EXPECTED, parameter_kind, value_problem

INSTANCES = "instances"
# Task keys whose mappings an instance merges into the template's, key by key.
MERGED_TASK_KEYS = ("parameters", "input_params", "slice")


def pipelines_of(document: Document, source: Path) -> tuple[PipelineSpec, ...]:
    if INSTANCES not in document:
        _values(document.get("parameters") or {}, None, source)
        return (pipeline_spec(source.stem, document, source),)
    template = {key: value for key, value in document.items() if key != INSTANCES}
    return tuple(
        pipeline_spec(code, _instance(template, code, instance, source), source)
        for code, instance in document[INSTANCES].items()
    )


@dataclass(frozen=True)
class _Declared:
    type: str
    value: object
    has_value: bool


def _declared(declaration: object) -> _Declared:
    if isinstance(declaration, Mapping):
        kind = str(declaration.get("type", "STRING"))
        return _Declared(kind, declaration.get("value"), "value" in declaration)
    return _Declared("STRING", declaration, True)


def _instance(template: Document, code: str, instance: Document, source: Path) -> Document:
    """The template with the instance's parameter values, settings and task keys."""
    where = f"/{INSTANCES}/{code}"
    settings = {k: v for k, v in instance.items() if k not in ("parameters", "tasks")}
    return {
        **template,
        **settings,
        "parameters": _values(template.get("parameters") or {}, (code, instance), source),
        "tasks": _tasks(template.get("tasks") or {}, instance.get("tasks") or {}, source, where),
    }


def _values(
    declared: Mapping[str, object], instance: tuple[str, Document] | None, source: Path
) -> dict[str, dict[str, object]]:
    """Each parameter's value and type; refused when a value is missing or not of its type."""
    code, body = instance or ("", {})
    where = f"/{INSTANCES}/{code}" if instance else ""
    given = body.get("parameters") or {}
    undeclared = sorted(set(given) - set(declared))
    if undeclared:
        raise SpecError(
            source,
            f"{where}/parameters/{undeclared[0]}",
            f"parameter {undeclared[0]}, which the template doesn't declare",
            f"only the template's parameters ({', '.join(sorted(declared)) or 'none'})",
            f"declare {undeclared[0]} under parameters: of the template, or fix its name",
        )
    values = {}
    for name, declaration in declared.items():
        found = _declared(declaration)
        if instance and name not in given and not found.has_value:
            raise SpecError(
                source,
                f"{where}/parameters",
                f"no value for parameter {name}, which the template gives none",
                f"a value of type {found.type} for every such parameter",
                f"give {name} under parameters: of instance {code}",
            )
        value, place = (given[name], where) if name in given else (found.value, "")
        _check(source, f"{place}/parameters/{name}", name, found.type, value)
        values[name] = {"value": value, "type": found.type}
    return values


def _check(source: Path, place: str, name: str, type_name: str, value: object) -> None:
    kind = parameter_kind(type_name)
    text = scalar_text(value)
    if value_problem(kind, text) is not None:
        raise SpecError(
            source,
            place,
            f"{text!r} for parameter {name} of type {kind}",
            EXPECTED[kind],
            f"fix the value, or the type of {name} under the template's parameters:",
        )


def _tasks(
    tasks: Mapping[str, Document], changes: Mapping[str, Document], source: Path, where: str
) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(tasks))
    if unknown:
        raise SpecError(
            source,
            f"{where}/tasks/{unknown[0]}",
            f"task {unknown[0]}, which the template doesn't have",
            f"one of the template's tasks ({', '.join(tasks)})",
            f"add {unknown[0]} to the template's tasks:, or fix its code",
        )
    return {code: _task(body, changes.get(code) or {}) for code, body in tasks.items()}


def _task(body: Document, change: Document) -> dict[str, Any]:
    merged = {**body, **change}
    for key in MERGED_TASK_KEYS:
        if key in body and key in change:
            merged[key] = {**body[key], **change[key]}
    return merged
