"""The metadata editor's read: one pipeline's objects, each with its codes and editable fields.

Forms are filled from it, and a change's ``before`` is taken from it, so what an edit changes
is always measured against the rows as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from etl_craft.core.enums import EditKind
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.metadata_edits import read_editable_rows
from etl_craft.operations.context import OperationContext
from etl_craft.operations.metadata.edit_kinds import SPECS, FieldValue, KindSpec, spec_of


@dataclass(frozen=True)
class EditableObject:
    kind: EditKind
    key: Mapping[str, str]
    fields: Mapping[str, FieldValue]

    @property
    def name(self) -> str:
        """The object's own code after its pipeline's (the pipeline's code for a pipeline)."""
        names = spec_of(self.kind).key_names
        return " → ".join(self.key[n] for n in names[1:]) or self.key["pipeline"]


@dataclass(frozen=True)
class PipelineMetadata:
    schema: ClassVar[str] = "etl-craft/pipeline-metadata/1"
    project: str
    pipeline_code: str
    objects: tuple[EditableObject, ...]

    def of(self, kind: EditKind) -> tuple[EditableObject, ...]:
        return tuple(item for item in self.objects if item.kind is kind)

    def find(self, kind: EditKind, key: Mapping[str, str]) -> EditableObject | None:
        wanted = {name: key.get(name) for name in spec_of(kind).key_names}
        return next((item for item in self.of(kind) if dict(item.key) == wanted), None)


def pipeline_metadata(ctx: OperationContext, pipeline_code: str) -> PipelineMetadata:
    """The active pipeline ``pipeline_code`` and its active objects; NotFoundError without it."""
    with ctx.engine.read() as conn:
        rows = read_editable_rows(conn, ctx.project_code, pipeline_code)
    if not rows[EditKind.PIPELINE.value]:
        raise NotFoundError(
            f"pipeline {pipeline_code!r} is not an active pipeline of project "
            f"{ctx.project_code}; expected one listed by etl-craft list, or add it first"
        )
    objects = tuple(_object(spec, row) for spec in SPECS for row in rows[spec.kind.value])
    return PipelineMetadata(ctx.project_code, pipeline_code, objects)


def _object(spec: KindSpec, row: Mapping[str, Any]) -> EditableObject:
    key = {name: str(row[name]) for name in spec.key_names}
    fields = {f.column: row[f.column.lower()] for f in spec.fields}
    return EditableObject(spec.kind, key, fields)
