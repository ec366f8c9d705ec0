"""The stage: the SELECT's rows in a temporary table, checked before the target is touched."""

from __future__ import annotations

from dataclasses import dataclass, replace

from etl_craft.core.errors import MetadataError, SqlGuardError
from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.phases import Phase
from etl_craft.warehouse import statements
from etl_craft.warehouse.audit import MANAGED_NAMES
from etl_craft.warehouse.dialect import Column, IdentifierCase
from etl_craft.warehouse.targets import is_identifier


@dataclass(frozen=True)
class Stage:
    name: str
    columns: tuple[Column, ...]
    rows: int

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.key == name.lower())

    def require(self, parameter: str, names: tuple[str, ...]) -> None:
        keys = {column.key for column in self.columns}
        missing = [name for name in names if name.lower() not in keys]
        if missing:
            returned = ", ".join(column.name for column in self.columns)
            raise SqlGuardError(
                f"{parameter} names {', '.join(missing)}, which the SELECT doesn't return (it "
                f"returns {returned}); return the column(s) or correct {parameter}"
            )


def build_stage(ctx: Context) -> Stage:
    """Run the SELECT into a temporary table and refuse output names etl-craft can't write.

    Where the warehouse describes a SELECT without running it, the names are checked before a
    row is read and the rows are staged in the statement that creates the stage; elsewhere an
    empty stage is created first, checked, then filled."""
    columns = described_columns(ctx)
    if columns is None:
        return fill_stage(ctx, probe_stage(ctx), {})
    name = ctx.scratch_name("stage")
    with ctx.phases.of(Phase.STAGE):
        rows = ctx.run("stage the SELECT", statements.create_stage(name, _select(ctx)))
    return Stage(name, columns, rows)


def described_columns(ctx: Context) -> tuple[Column, ...] | None:
    """The SELECT's columns, checked, as the warehouse describes them without running it; None
    where it can't."""
    with ctx.phases.of(Phase.STAGE):
        columns = ctx.conn.describe_select(_select(ctx))
    if columns is not None:
        refuse_unwritable(ctx, columns)
    return columns


def probe_stage(ctx: Context) -> Stage:
    """An empty stage of the SELECT's columns, checked before a row is read."""
    name = ctx.scratch_name("stage")
    with ctx.phases.of(Phase.STAGE):
        ctx.run("prepare the stage", statements.create_stage(name, _select(ctx), empty=True))
        columns = ctx.conn.stage_columns(name)
    refuse_unwritable(ctx, columns)
    return Stage(name, columns, 0)


def refuse_unwritable(ctx: Context, columns: tuple[Column, ...]) -> None:
    """Refuse output names etl-craft can't write: its own columns', and names needing quotes."""
    _refuse_managed(columns)
    _refuse_quoted(ctx, columns)


def fill_stage(
    ctx: Context, stage: Stage, computed: dict[str, tuple[str, str]], joined: str = ""
) -> Stage:
    """Stage the SELECT's rows, with each ``computed`` column (its type and its expression over
    the SELECT's row as etl_src, and over what ``joined`` brings each row) worked out in the
    same scan."""
    sql = _select(ctx)
    with ctx.phases.of(Phase.STAGE):
        for name, (sql_type, _) in computed.items():
            ctx.run("add a stage column", statements.add_column(stage.name, Column(name, sql_type)))
        expressions = [expression for _, expression in computed.values()]
        statement = statements.fill_stage(stage.name, sql, expressions, joined)
        rows = ctx.run("stage the SELECT", statement)
    return replace(stage, rows=rows)


def _select(ctx: Context) -> str:
    if ctx.select is None:
        raise MetadataError(f"{ctx.spec.action} into {ctx.target} has no SELECT to stage")
    return ctx.select.sql


def _refuse_managed(columns: tuple[Column, ...]) -> None:
    managed = [column.name for column in columns if column.key in MANAGED_NAMES]
    if managed:
        raise SqlGuardError(
            f"the SELECT returns {', '.join(managed)}, which etl-craft writes itself; list the "
            "columns you need instead of *, or alias them"
        )


def _refuse_quoted(ctx: Context, columns: tuple[Column, ...]) -> None:
    folding = ctx.conn.dialect.capabilities.identifier_case
    for column in columns:
        folded = {
            IdentifierCase.LOWER: column.name.lower(),
            IdentifierCase.UPPER: column.name.upper(),
        }
        if not is_identifier(column.name) or (folding and column.name != folded[folding]):
            suggestion = "".join(char if char.isalnum() else "_" for char in column.name).lower()
            suggestion = suggestion.strip("_") or "col"
            raise SqlGuardError(
                f'the SELECT returns a column named "{column.name}", which needs quoting on '
                f"{ctx.conn.dialect.name}; alias it, for example AS {suggestion}"
            )
    seen: set[str] = set()
    for column in columns:
        if column.key in seen:
            raise SqlGuardError(
                f"the SELECT returns the column {column.name} twice; alias one of them"
            )
        seen.add(column.key)


def refuse_null_keys(ctx: Context, stage: Stage) -> None:
    keys = ctx.spec.merge_key
    stage.require("MERGE_KEY", keys)
    refuse_nulls(ctx, ctx.count("count NULL merge keys", statements.null_keys(stage.name, keys)))


def refuse_nulls(ctx: Context, nulls: int) -> None:
    """``nulls`` staged rows have a NULL in a MERGE_KEY column."""
    keys = ctx.spec.merge_key
    if nulls:
        raise SqlGuardError(
            f"the SELECT returns {nulls} row(s) with a NULL in MERGE_KEY ({', '.join(keys)}); a "
            f"{ctx.spec.action} needs every key column set: filter those rows out or COALESCE "
            "the key"
        )


def refuse_ties(ctx: Context, stage: Stage) -> None:
    """Two differing rows of one key that the dedupe order can't tell apart: refuse, never guess."""
    keys, order = ctx.spec.merge_key, ctx.spec.dedupe_order
    stage.require("MERGE_DEDUPE_ORDER", order.columns)
    row_hash = ctx.conn.dialect.change_hash("s", stage.columns, strict=False)
    statement = statements.dedupe_ties(stage.name, keys, order.sql, row_hash)
    rows = ctx.conn.fetch_all(f"look for dedupe ties ({ctx.target})", statement.sql)
    if not rows:
        return
    examples = ", ".join(
        " and ".join(f"{key}={value!r}" for key, value in zip(keys, row, strict=False))
        for row in rows
    )
    count = rows[0][-1]
    if order.sql:
        raise SqlGuardError(
            f"MERGE_DEDUPE_ORDER ({order.sql}) leaves ties between differing rows for {count} "
            f"key(s), for example {examples}; add a column that breaks the tie"
        )
    raise SqlGuardError(
        f"the SELECT returns differing rows for {count} key(s) of MERGE_KEY "
        f"({', '.join(keys)}), for example {examples}; set MERGE_DEDUPE_ORDER to choose one, "
        "or return one row per key"
    )
