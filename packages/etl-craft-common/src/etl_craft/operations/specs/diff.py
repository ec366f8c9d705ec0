"""What the Engine DB must change to hold a spec's rows, as metadata edits.

Only the pipelines a spec describes are compared, so that specs and hand-written migrations can
live side by side. Inside such a pipeline, an active object the spec doesn't describe is
removed: switched off (ACTIVE_FLAG N), or deleted for parameters, which have no flag. The
objects of a task that is switched off go with it and are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from etl_craft.core.enums import EditKind
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.metadata_edits import read_editable_rows
from etl_craft.operations.metadata.edit_checks import MetadataEdit
from etl_craft.operations.metadata.edit_kinds import SPECS, FieldValue, spec_of
from etl_craft.specs.rows import KIND_ORDER, SpecRow

Identity = tuple[str, tuple[tuple[str, str], ...]]
SWITCHED_OFF: Mapping[str, FieldValue] = {"ACTIVE_FLAG": "N"}


@dataclass(frozen=True)
class PipelineRows:
    """A pipeline's rows as the spec wants them, and as the Engine DB holds them."""

    pipeline: str
    wanted: tuple[SpecRow, ...]
    current: tuple[SpecRow, ...]


def current_rows(conn: EngineConnection, project_code: str, pipeline: str) -> tuple[SpecRow, ...]:
    """The pipeline's active objects in the Engine DB, as SpecRows."""
    found = read_editable_rows(conn, project_code, pipeline)
    return tuple(_current(spec.kind, row) for spec in SPECS for row in found[spec.kind.value])


def _current(kind: EditKind, row: Mapping[str, Any]) -> SpecRow:
    spec = spec_of(kind)
    key = {name: str(row[name]) for name in spec.key_names}
    return SpecRow(kind.value, key, {f.column: row[f.column.lower()] for f in spec.fields})


def edits_of(rows: Iterable[PipelineRows]) -> tuple[MetadataEdit, ...]:
    """Removals (children first), then changes, then additions (parents first)."""
    removed: list[MetadataEdit] = []
    changed: list[MetadataEdit] = []
    added: list[MetadataEdit] = []
    for pipeline in rows:
        wanted = {row.identity: row for row in pipeline.wanted}
        current = {row.identity: row for row in pipeline.current}
        if not _active(wanted, pipeline.pipeline):
            current = {i: r for i, r in current.items() if r.kind == EditKind.PIPELINE.value}
        gone = {i for i in current if i not in wanted}
        for identity, row in current.items():
            if identity in gone and not _goes_with_parent(row, gone):
                removed.append(_removal(row))
            elif identity in wanted:
                edit = _change(row, wanted[identity])
                if edit is not None:
                    changed.append(edit)
        added += [_addition(row) for i, row in wanted.items() if i not in current and _live(row)]
    return (*_ordered(removed, reverse=True), *_ordered(changed), *_ordered(added))


def _active(wanted: Mapping[Identity, SpecRow], pipeline: str) -> bool:
    row = wanted[(EditKind.PIPELINE.value, (("pipeline", pipeline),))]
    return row.fields["ACTIVE_FLAG"] == "Y"


def _live(row: SpecRow) -> bool:
    # An inactive pipeline that the Engine DB doesn't hold is not added switched off.
    return row.fields.get("ACTIVE_FLAG", "Y") == "Y"


def _goes_with_parent(row: SpecRow, gone: set[Identity]) -> bool:
    """Whether the row belongs to a task that is removed as well."""
    if row.kind in (EditKind.TASK.value, EditKind.PIPELINE.value) or "task" not in row.key:
        return False
    task = (EditKind.TASK.value, (("pipeline", row.key["pipeline"]), ("task", row.key["task"])))
    return task in gone


def _removal(row: SpecRow) -> MetadataEdit:
    kind = EditKind(row.kind)
    if spec_of(kind).removable:
        return MetadataEdit(kind, row.key, before=dict(row.fields), after=None)
    # Switched off, not deleted: its history stays, and before holds the row as it is.
    return MetadataEdit(kind, row.key, before=dict(row.fields), after=SWITCHED_OFF)


def _change(current: SpecRow, wanted: SpecRow) -> MetadataEdit | None:
    before = {c: v for c, v in current.fields.items() if not _same(v, wanted.fields.get(c))}
    if not before:
        return None
    after = {column: wanted.fields.get(column) for column in before}
    return MetadataEdit(EditKind(current.kind), current.key, before=before, after=after)


def _addition(row: SpecRow) -> MetadataEdit:
    return MetadataEdit(EditKind(row.kind), row.key, before=None, after=row.non_default())


def _same(found: FieldValue, wanted: FieldValue) -> bool:
    # SQLite and PostgreSQL return numbers as numbers, a spec may hold them as either.
    if found is None or wanted is None:
        return found is None and wanted is None
    return str(found) == str(wanted)


def _ordered(edits: list[MetadataEdit], *, reverse: bool = False) -> list[MetadataEdit]:
    order = KIND_ORDER[::-1] if reverse else KIND_ORDER
    return sorted(edits, key=lambda edit: order.index(edit.kind.value))
