"""The metadata editor's forms: their fields as metadata edits, and edits' rows as a diff.

A form names the kind of object (``kind``), what is done to it (``mode``: add, change or
remove), its codes (``key_<name>``) and its fields (``field_<COLUMN>``). A new task may bring
its parameters as ``NAME=VALUE`` lines and the tasks it depends on, so that it is valid alone.
A change is measured against the rows as they are when the form is submitted, so the preview
and the apply of one form make the same file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from etl_craft.core.enums import EditKind
from etl_craft.core.errors import NotFoundError, UsageError
from etl_craft.core.redaction import MASK
from etl_craft.operations.audit import MetadataChangeEntry
from etl_craft.operations.context import OperationContext
from etl_craft.operations.metadata.edit_kinds import FieldSpec, FieldValue, spec_of
from etl_craft.operations.metadata.edits import MetadataEdit
from etl_craft.operations.metadata.objects import pipeline_metadata

MODES = ("add", "change", "remove")
# Who changed a row and when is the audit trail's business, not the edit's.
STAMPS = frozenset({"created_by", "create_date", "updated_by", "update_date"})


def kind_of(value: str | None) -> EditKind:
    try:
        return EditKind(value or "")
    except ValueError:
        known = ", ".join(kind.value for kind in EditKind)
        message = f"kind {value!r} is not an object the editor knows; expected {known}"
        raise UsageError(message) from None


def edits_of(ctx: OperationContext, form: Mapping[str, str]) -> tuple[MetadataEdit, ...]:
    """The edits a submitted form asks for; UsageError naming the field that is wrong."""
    kind = kind_of(form.get("kind"))
    spec = spec_of(kind)
    mode = form.get("mode", "add")
    if mode not in MODES:
        raise UsageError(f"mode {mode!r} is not known; expected one of {', '.join(MODES)}")
    key = {name: form.get(f"key_{name}", "").strip() for name in spec.key_names}
    if mode == "add":
        after = {f.column: _value(f, form) for f in spec.fields}
        new = MetadataEdit(kind, key, after={c: v for c, v in after.items() if v is not None})
        if kind is not EditKind.TASK:
            return (new,)
        parameters = _parameters_of_new_task(new, form.get("parameters", ""))
        return (new, *parameters, *_upstream_of_new_task(new, form.get("upstream", "")))
    current = pipeline_metadata(ctx, key["pipeline"]).find(kind, key)
    if current is None:
        raise NotFoundError(
            f"the {spec.label} ({', '.join(f'{n} {v}' for n, v in key.items())}) is not an "
            "active one of this project; reload the editor"
        )
    if mode == "remove":
        return (MetadataEdit(kind, key, before=current.fields),)
    after = {f.column: _value(f, form) for f in spec.fields}
    return (MetadataEdit(kind, key, before=current.fields, after=after),)


def _value(spec: FieldSpec, form: Mapping[str, str]) -> FieldValue:
    # Browsers send a text area's line breaks as CRLF: an unchanged value must stay unchanged.
    text = form.get(f"field_{spec.column}", "").replace("\r\n", "\n")
    if not spec.long_text:
        text = text.strip()
    if text == "":
        return None
    if text == MASK:
        raise UsageError(
            f"{spec.column} is {MASK}, which is how the editor masks a secret; type the value "
            "itself to change it, or leave the field as it was in another edit"
        )
    if not spec.integer:
        return text
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{spec.column} is {text!r}; expected a whole number") from None


def _parameters_of_new_task(task: MetadataEdit, lines: str) -> list[MetadataEdit]:
    """A new task's parameters, one ``NAME=VALUE`` a line, as task parameter edits."""
    edits: list[MetadataEdit] = []
    for number, line in enumerate(lines.splitlines(), start=1):
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        if not equals:
            raise UsageError(
                f"parameters line {number} {line[:60]!r} has no '='; expected NAME=VALUE"
            )
        key = {**task.key, "parameter": name.strip()}
        edits.append(
            MetadataEdit(EditKind.TASK_PARAMETER, key, after={"PARAMETER_VALUE": value.strip()})
        )
    return edits


def _upstream_of_new_task(task: MetadataEdit, codes: str) -> list[MetadataEdit]:
    """A new task's SUCCESS dependencies on tasks of its pipeline, named comma-separated."""
    pipeline = task.key["pipeline"]
    return [
        MetadataEdit(
            EditKind.TASK_DEPENDENCY,
            {**task.key, "upstream_pipeline": pipeline, "upstream_task": code.strip()},
            after={"DEPENDENCY_TYPE": "SUCCESS"},
        )
        for code in codes.split(",")
        if code.strip()
    ]


@dataclass(frozen=True)
class DiffCell:
    column: str
    before: object
    after: object
    changed: bool


@dataclass(frozen=True)
class DiffRow:
    table: str
    operation: str
    row_key: str
    cells: tuple[DiffCell, ...]


def diff_rows(changes: tuple[MetadataChangeEntry, ...]) -> tuple[DiffRow, ...]:
    """Each changed row with its columns before and after (stamps left out)."""
    return tuple(_diff_row(change) for change in changes)


def _diff_row(change: MetadataChangeEntry) -> DiffRow:
    before, after = change.before or {}, change.after or {}
    columns = [c for c in {**before, **after} if c not in STAMPS]
    cells = tuple(
        DiffCell(
            column.upper(),
            before.get(column) if change.before is not None else None,
            after.get(column) if change.after is not None else None,
            change.before is None
            or change.after is None
            or before.get(column) != after.get(column),
        )
        for column in columns
    )
    return DiffRow(change.table_name, change.operation, change.row_key, cells)
