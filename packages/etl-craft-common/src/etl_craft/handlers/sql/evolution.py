"""Schema evolution by ALTER TABLE ADD COLUMN: planned and checked before anything is altered."""

from __future__ import annotations

from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.stage import Stage
from etl_craft.warehouse import statements
from etl_craft.warehouse.dialect import Column


def plan_additions(ctx: Context, stage: Stage, target: tuple[Column, ...]) -> tuple[Column, ...]:
    """The stage's columns the target lacks; refused unless SCHEMA_EVOLUTION allows them."""
    existing = {column.key: column for column in target}
    additions = tuple(column for column in stage.columns if column.key not in existing)
    if additions and not ctx.spec.schema_evolution:
        names = ", ".join(f"{column.name} ({column.type})" for column in additions)
        raise SqlGuardError(
            f"the SELECT returns {names}, which {ctx.target} doesn't have; set "
            "SCHEMA_EVOLUTION=Y to add them, or leave them out of the SELECT"
        )
    if ctx.spec.schema_evolution:
        _refuse_type_changes(ctx, stage, existing)
    return additions


def _refuse_type_changes(ctx: Context, stage: Stage, existing: dict[str, Column]) -> None:
    for column in stage.columns:
        current = existing.get(column.key)
        if current and _normal(current.type) != _normal(column.type):
            raise SqlGuardError(
                f"the SELECT returns {column.name} as {column.type}, but "
                f"{ctx.target}.{current.name} is {current.type}; "
                "SCHEMA_EVOLUTION adds columns and never changes a type: "
                f"CAST it to {current.type} in the SELECT, or change the column yourself"
            )


def _normal(type_text: str) -> str:
    return " ".join(type_text.lower().split())


def add_columns(ctx: Context, additions: tuple[Column, ...]) -> None:
    for column in additions:
        ctx.run(
            f"add column {column.name} {column.type}", statements.add_column(ctx.target, column)
        )


def typed(target: tuple[Column, ...], stage: Stage, names: tuple[str, ...]) -> tuple[Column, ...]:
    """The named columns with the target's declared types where it has them (the stored truth)."""
    existing = {column.key: column for column in target}
    return tuple(
        Column(stage.column(name).name, existing.get(name.lower(), stage.column(name)).type)
        for name in names
    )
