"""A metadata edit of a pipeline that a spec file defines, made to the spec's text.

Each changed field is set at the spec key that holds it (``specs.yaml_edit`` keeps the file's
comments and layout), and the edited file is read back: the edit is made only when the spec's
rows then differ from before by exactly the edit, so the next ``plan`` never undoes it. An
object added or removed, a dependency, or a value the text can't take in place is left to the
person, with the file to edit.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import yaml

from etl_craft.core.enums import EditKind, Handler
from etl_craft.core.errors import MetadataError
from etl_craft.operations.metadata.edit_checks import MetadataEdit
from etl_craft.operations.metadata.edit_kinds import FieldValue
from etl_craft.specs.loader import load_spec_file
from etl_craft.specs.model import (
    PIPELINE_SETTINGS,
    RULES_TARGET,
    TASK_SHORTHANDS,
    PipelineSpec,
    SpecError,
)
from etl_craft.specs.rows import spec_rows
from etl_craft.specs.templates import INSTANCES
from etl_craft.specs.yaml_edit import KeyPath, YamlValue, set_value

_SETTING_KEYS = {column: key for key, column in PIPELINE_SETTINGS.items()}
_SHORTHAND_KEYS = {name: key for key, name in TASK_SHORTHANDS.items()}
_TASK_KEYS = {
    "DESCRIPTION": "description",
    "HANDLER": "handler",
    "RUN_CONDITION": "run_condition",
    "REQUIRED_COUNT": "required_count",
    "ACTIVE_FLAG": "active",
}
_RULE_KEYS = {
    "RULE_TYPE": "type",
    "TARGET_TABLE": "target",
    "KEY_COLUMNS": "keys",
    "RULE_SQL": "sql",
    "WAVE": "wave",
    "DESCRIPTION": "description",
    "ACTIVE_FLAG": "active",
}
_FLAGS = ("ACTIVE_FLAG", "CATCHUP")  # true or false in a spec, Y or N in the rows


class NotInPlace(MetadataError):  # noqa: N818 - it names the condition, as SpecError does
    """Why the spec's text can't take the edit in place."""


def edited_text(spec: PipelineSpec, original: str, edits: tuple[MetadataEdit, ...]) -> str:
    """The spec file's ``original`` text with ``edits`` made; NotInPlace when it can't be done
    safely."""
    text = original
    # A template's instance sets its own values under instances/<code>; the template's are
    # every instance's, which an edit of one pipeline must not change.
    prefix: KeyPath = (INSTANCES, spec.code) if INSTANCES in yaml.safe_load(text) else ()
    for edit in edits:
        if edit.verb != "change" or edit.kind in (
            EditKind.PIPELINE_DEPENDENCY,
            EditKind.TASK_DEPENDENCY,
        ):
            raise NotInPlace(f"the editor changes a spec's values only, not: {edit.describe()}")
        for column, value in edit.changed.items():
            paths = tuple((*prefix, *path) for path in _paths(spec, edit, column))
            changed = set_value(text, paths, _yaml_value(edit, column, value))
            if changed is None:
                raise NotInPlace(f"{'/'.join(paths[0])} can't be set to {value!r} in place")
            text = changed
    _check(spec, original, text, edits)
    return text


def spec_diff(relative: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), relative, relative
    )
    return "".join(lines)


def load_edited(spec: PipelineSpec, text: str) -> tuple[PipelineSpec, ...]:
    """The pipelines ``text`` describes, read as if it were the spec's file."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / spec.source.name
        copy.write_text(text, encoding="utf-8")
        try:
            loaded = load_spec_file(copy)
        except SpecError as error:
            raise NotInPlace(
                f"the edited spec is refused: at {error.path} found {error.found}; expected "
                f"{error.expected}"
            ) from None
    return tuple(replace(pipeline, source=spec.source) for pipeline in loaded)


def _paths(spec: PipelineSpec, edit: MetadataEdit, column: str) -> tuple[KeyPath, ...]:
    key = edit.key
    if edit.kind is EditKind.PIPELINE:
        return ((_SETTING_KEYS[column],),)
    if edit.kind is EditKind.PIPELINE_PARAMETER:
        name = key["parameter"]
        if column == "PARAMETER_TYPE":
            return (("parameters", name, "type"),)
        return (("parameters", name, "value"), ("parameters", name))
    task: KeyPath = ("tasks", key["task"])
    if edit.kind is EditKind.TASK:
        return ((*task, _TASK_KEYS[column]),)
    if edit.kind is EditKind.BUSINESS_RULE:
        return ((*task, "rules", key["rule"], _RULE_KEYS[column]),)
    name = key["parameter"]
    shorthand = _SHORTHAND_KEYS.get(name)
    found = spec.task(key["task"])
    if name == RULES_TARGET and found is not None and found.handler is Handler.BUSINESS_RULES:
        shorthand = "target"
    named = (*task, "parameters", name)
    return (named,) if shorthand is None else ((*task, shorthand), named)


def _yaml_value(edit: MetadataEdit, column: str, value: FieldValue) -> YamlValue:
    if column in _FLAGS:
        return value == "Y"
    if edit.kind is EditKind.TASK_PARAMETER and edit.key["parameter"] == "INPUT_PARAMS":
        try:
            parsed = json.loads(str(value))
        except ValueError:
            return value
        return parsed if isinstance(parsed, Mapping) else value
    return value


def _check(spec: PipelineSpec, original: str, text: str, edits: tuple[MetadataEdit, ...]) -> None:
    """Refuse a text whose rows are not the spec's rows with exactly ``edits`` made."""
    wanted = _rows(load_edited(spec, original))
    for edit in edits:
        identity = (edit.kind.value, tuple((n, edit.key[n]) for n in edit.spec.key_names))
        if identity not in wanted:
            raise NotInPlace(f"the spec doesn't describe the {edit.spec.label} ({edit.where()})")
        wanted[identity] = {**wanted[identity], **_texts(edit.changed)}
    found = _rows(load_edited(spec, text))
    if found != wanted:
        moved = sorted({i for i in {*found, *wanted} if found.get(i) != wanted.get(i)})
        names = ", ".join(f"{kind} ({', '.join(v for _, v in key)})" for kind, key in moved)
        raise NotInPlace(f"the edited spec changes other rows than the edit's: {names}")


Identity = tuple[str, tuple[tuple[str, str], ...]]


def _rows(specs: Iterable[PipelineSpec]) -> dict[Identity, dict[str, str | None]]:
    return {row.identity: _texts(row.fields) for s in specs for row in spec_rows(s)}


def _texts(fields: Mapping[str, FieldValue]) -> dict[str, str | None]:
    # The Engine DB and a spec may hold one number as an int or as its text.
    return {c: None if v is None else str(v) for c, v in fields.items()}
