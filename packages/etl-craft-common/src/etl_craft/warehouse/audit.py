"""The columns etl-craft writes itself into every target it creates."""

from __future__ import annotations

from etl_craft.warehouse.dialect import Column, Dialect

TIMESTAMP = "TIMESTAMP WITH TIME ZONE"
HASH_TYPE = "VARCHAR(32)"  # MD5 in hex

AUDIT_COLUMNS = (
    Column("ROW_ID", "BIGINT"),
    Column("HASH_KEY", HASH_TYPE),
    Column("CREATE_DATE", TIMESTAMP),
    Column("CREATED_BY", "VARCHAR(128)"),
    Column("UPDATE_DATE", TIMESTAMP),
    Column("UPDATED_BY", "VARCHAR(128)"),
    Column("DELETE_FLAG", "VARCHAR(1)"),
    Column("ACTIVE_FLAG", "VARCHAR(1)"),
    Column("PIPELINE_ID", "BIGINT"),
    Column("PIPELINE_RUN_ID", "BIGINT"),
    Column("TASK_RUN_ID", "BIGINT"),
)

# SCD2 history: a version is valid from VALID_FROM until VALID_TO (NULL while it is current);
# the current version of a key is the one with ACTIVE_FLAG = 'Y'. PIPELINE_RUN_ID and
# TASK_RUN_ID name the run that opened a version, the CLOSED_ ones the run that closed it.
CLOSING_COLUMNS = (
    Column("CLOSED_PIPELINE_RUN_ID", "BIGINT"),
    Column("CLOSED_TASK_RUN_ID", "BIGINT"),
)
HISTORY_COLUMNS = (
    Column("VALID_FROM", TIMESTAMP),
    Column("VALID_TO", TIMESTAMP),
    *CLOSING_COLUMNS,
)

# Names the stage uses for its own bookkeeping.
STAGE_COLUMNS = (
    "etl_craft_hash",
    "etl_craft_rank",
    "etl_craft_row_hash",
    "etl_craft_valid_from",
    "etl_craft_match",
)


def written_columns(*, history: bool) -> tuple[Column, ...]:
    """The columns etl-craft adds to a target it creates; an SCD2 target keeps its history too."""
    return AUDIT_COLUMNS + (HISTORY_COLUMNS if history else ())


def declared(dialect: Dialect, columns: tuple[Column, ...]) -> tuple[Column, ...]:
    """etl-craft's own columns with their types in the warehouse's spelling."""
    return tuple(Column(column.name, dialect.render_type(column.type)) for column in columns)


MANAGED_NAMES = frozenset(
    [column.key for column in AUDIT_COLUMNS + HISTORY_COLUMNS] + list(STAGE_COLUMNS)
)
