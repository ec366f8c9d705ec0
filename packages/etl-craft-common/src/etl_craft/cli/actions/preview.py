"""etl-craft preview: a SQL task's rows and what its action would write; records nothing."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.handlers.sql.spec import Action, DeleteMode
from etl_craft.operations.preview import (
    ActionEffect,
    Cell,
    Preview,
    preview_task,
)

# Text cells longer than this are cut, so that one long value doesn't push the others off screen.
CELL_WIDTH = 40


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        found = preview_task(
            ctx, args.task_code, args.pipeline_code, limit=args.limit, run_date=args.run_date
        )
    finally:
        ctx.close()
    emit(found, args.format, render(found))
    # A run of the task would fail: say so in the exit code too, for scripts and CI.
    return found.refusal.exit_code if found.refusal else 0


def render(found: Preview) -> str:
    source = f", {found.source}" if found.source else ""
    lines = [
        f"{found.pipeline_code}.{found.task_code}: {found.action} into {found.target} "
        f"({found.warehouse}{source}, run date {found.run_date})",
    ]
    if found.source_rows is not None:
        lines += _sample(found)
    if found.duplicate_keys is not None:
        lines.append(_duplicates(found))
    if found.refusal is not None:
        lines.append(f"a run would be refused ({found.refusal.kind}): {found.refusal.message}")
    elif found.effect is not None:
        lines.append(f"a run would {_effect(found, found.effect)}")
    lines.append("nothing was written or recorded: the action's transaction was rolled back")
    return "\n".join(lines)


def _sample(found: Preview) -> list[str]:
    columns = ", ".join(f"{column.name} {column.type}" for column in found.columns)
    shown = len(found.rows)
    lines = [
        f"columns ({len(found.columns)}): {columns}",
        f"rows: {shown} of {found.source_rows} shown (--limit {found.limit})",
    ]
    if not found.rows:
        return lines
    table = [
        tuple(column.name for column in found.columns),
        *(tuple(_text(cell) for cell in row) for row in found.rows),
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(found.columns))]
    return lines + [_line(row, widths) for row in table]


def _line(row: tuple[str, ...], widths: list[int]) -> str:
    cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
    return ("  " + "  ".join(cells)).rstrip()


def _text(cell: Cell) -> str:
    text = "NULL" if cell is None else str(cell).replace("\n", " ")
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 3] + "..."


def _duplicates(found: Preview) -> str:
    dup = found.duplicate_keys
    assert dup is not None
    keys = ", ".join(dup.key_columns)
    if not dup.keys:
        return f"duplicate keys: none (MERGE_KEY {keys})"
    examples = "; ".join(
        ", ".join(f"{name}={_text(v)}" for name, v in zip(dup.key_columns, key, strict=True))
        for key in dup.examples
    )
    return (
        f"duplicate keys: {dup.keys} key(s) of MERGE_KEY {keys} have more than one row, "
        f"{dup.rows} row(s) beyond one per key; for example {examples}"
    )


def _effect(found: Preview, effect: ActionEffect) -> str:
    target, action = found.target, found.action
    after = f"; {target} would hold {effect.target_rows_after} row(s)"
    if action is Action.SCD1_MERGE:
        said = (
            f"insert {effect.inserted} row(s) for new keys, update {effect.updated} changed "
            f"row(s), leave {effect.unchanged_keys} unchanged"
        )
    elif action is Action.SCD2_MERGE:
        said = (
            f"open {effect.new_keys} version(s) for new keys, close {effect.changed_keys} and open "
            f"as many new version(s) for changed keys, leave {effect.unchanged_keys} unchanged"
        )
        if effect.deleted:
            said += f", close {effect.deleted} key(s) the SELECT no longer returns"
    elif action is Action.DELETE_ROWS:
        verb = "flag" if found.delete_mode is DeleteMode.SOFT else "delete"
        said = f"{verb} {effect.deleted} row(s) of {target} whose key the SELECT returns"
    elif action is Action.SETUP_TABLE:
        said = f"create {target}, empty" if effect.creates_table else f"leave {target} as it is"
    elif action is Action.DROP_TABLE:
        if effect.target_rows_before is None:
            return f"do nothing: {target} doesn't exist"
        said, after = f"drop {target} and its {effect.deleted} row(s)", ""
    else:
        said = _writes(found, effect)
    if effect.duplicates:
        said += f", and leave out {effect.duplicates} duplicate row(s)"
    return said + after


def _writes(found: Preview, effect: ActionEffect) -> str:
    """CREATE_TABLE, OVERWRITE_TABLE and APPEND_TABLE."""
    target, deleted = found.target, effect.deleted
    if found.action is Action.CREATE_TABLE:
        replaced = f"replace {target} ({deleted} row(s))" if deleted else f"create {target}"
        return f"{replaced} with {effect.inserted} row(s)"
    removed = f"delete {deleted} row(s) and " if deleted else ""
    return f"{removed}insert {effect.inserted} row(s) into {target}"
