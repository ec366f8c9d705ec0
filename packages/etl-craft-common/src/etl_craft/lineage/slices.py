"""Slices of a shared target: several pipelines each write, and read back, only their own rows.

A task declares its slice with SLICE_COLUMN and SLICE_VALUE (and SLICE_TABLE when the table is
not its TARGET_OBJECT): it writes only the rows whose column holds the value, and its reads of
the table stay within them. The value may be a token of its pipeline (`$$param.CLIENT`,
`$$pipeline_code`), so one template gives each instance its own slice. Two tasks whose slices
of a table differ touch disjoint rows, so neither needs to wait for the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage.sources import name_key
from etl_craft.warehouse.substitution import PARAMETER_PREFIX, substitute


@dataclass(frozen=True)
class Slice:
    table: str  # the table key
    column: str  # lower case: slices compare column names as the warehouse folds them
    value: str | None  # with its pipeline's tokens replaced


def task_slice(task: TaskRow, metadata: ProjectMetadata, dialect: str) -> Slice | None:
    column, value = task.parameter("SLICE_COLUMN"), task.parameter("SLICE_VALUE")
    table = name_key(task.parameter("SLICE_TABLE") or task.parameter("TARGET_OBJECT"), dialect)
    if column is None or table is None:
        return None
    return Slice(table, column.strip().lower(), _resolved(value, task, metadata))


def apart(one: Slice | None, other: Slice | None, table: str) -> bool:
    """Whether two tasks touch disjoint rows of ``table``: their slices of it differ."""
    if one is None or other is None or one.table != table or other.table != table:
        return False
    return one.column == other.column and one.value != other.value


def _resolved(value: str | None, task: TaskRow, metadata: ProjectMetadata) -> str | None:
    if value is None:
        return None
    pipeline = metadata.pipeline_by_id(task.pipeline_id)
    replacements = {"pipeline_code": pipeline.code} | {
        PARAMETER_PREFIX + p.name: p.value or ""
        for p in metadata.pipeline_parameters
        if p.pipeline_id == task.pipeline_id
    }
    return substitute(value, replacements)
