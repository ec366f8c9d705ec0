"""One file load attempt: find the files not landed yet, land them in one fenced transaction.

The offset is the TEXT form of a JSON object, each landed file's name mapped to the SHA-256 of
its content: a file lands when its name is new or its content changed. The rows land the way an
ingestion script lands them (ScriptContext.fenced_transaction: this task run's earlier rows are
deleted, then the batch is inserted, committed only while no later attempt has published), and
the offset is stored with the attempt's SUCCESS, so a file that fails leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from etl_craft.core.counts import Counts
from etl_craft.core.errors import EngineDBError, TaskError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.offsets import Offset, OffsetType
from etl_craft.handlers.files.readers import RawFile, read_file
from etl_craft.handlers.files.shaping import Record, inferred_columns, typed_rows
from etl_craft.handlers.files.spec import FileLoadSpec
from etl_craft.handlers.invocation import HandlerResult
from etl_craft.handlers.scripts.contract import ScriptContext
from etl_craft.warehouse import WarehouseConnection
from etl_craft.warehouse.audit import AUDIT_COLUMNS, MANAGED_NAMES
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import create_schema, create_table
from etl_craft.warehouse.targets import TargetObject

# The audit columns a landed row carries, as an ingestion script stamps them.
STAMPS = ("PIPELINE_ID", "PIPELINE_RUN_ID", "TASK_RUN_ID", "CREATE_DATE", "DELETE_FLAG")
_STAMP_COLUMNS = tuple(c for name in STAMPS for c in AUDIT_COLUMNS if c.name == name)
# Rows per INSERT: each column's values travel as one array parameter.
CHUNK = 10_000


@dataclass(frozen=True)
class Found:
    path: Path
    label: str
    digest: str


def load_files(spec: FileLoadSpec, context: ScriptContext, project_root: Path) -> HandlerResult:
    landed = landed_files(context)
    found = [_found(path, spec, project_root) for path in spec.matches(project_root)]
    pending = [f for f in found if landed.get(f.label) != f.digest]
    context.log.info(
        "%d file(s) match %s; %d landed before, %d to land",
        len(found),
        spec.pattern,
        len(found) - len(pending),
        len(pending),
    )
    # With nothing to land the write still runs: it takes away what an earlier attempt of this
    # task run landed from files that have gone since, so the target holds what is recorded.
    rows = _land(spec, context, [_read(f, spec) for f in pending])
    counts = Counts(source=rows, target=rows, inserted=rows, rows_written=rows)
    if not pending:
        return HandlerResult(counts=counts)
    landed |= {f.label: f.digest for f in pending}
    text = json.dumps(landed, sort_keys=True, separators=(",", ":"))
    return HandlerResult(counts=counts, offset=Offset(OffsetType.TEXT, text))


def landed_files(context: ScriptContext) -> dict[str, str]:
    """The files landed before, by name, from the stored offset."""
    if context.offset is None:
        return {}
    try:
        value = json.loads(str(context.offset))
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise EngineDBError(
            f"the stored offset of task {context.task_id} is {str(context.offset)!r:.120}; "
            "expected the JSON object of landed files a file load keeps: delete the "
            "AUD_TASK_OFFSETS row to land every file again"
        )
    return value


def _found(path: Path, spec: FileLoadSpec, project_root: Path) -> Found:
    base = spec.base(project_root)
    label = path.relative_to(base).as_posix() if base == project_root else path.as_posix()
    return Found(path, label, _digest(path))


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read(found: Found, spec: FileLoadSpec) -> RawFile:
    raw = read_file(found.path, found.label, spec)
    # The hash kept must be that of the rows landed, or a file still being written would be
    # recorded whole while only part of it landed.
    if _digest(found.path) != found.digest:
        raise TaskError(
            f"file {found.label} changed while it was read; expected a finished file: it lands "
            "on the next attempt (write landing files under another name and rename them)"
        )
    return raw


def _land(spec: FileLoadSpec, context: ScriptContext, raws: list[RawFile]) -> int:
    target = TargetObject.parse(spec.target)
    with context.fenced_transaction() as conn:
        existing = tuple(c for c in conn.columns(target) if c.key not in MANAGED_NAMES)
        if not existing and not raws:
            return 0
        columns = spec.columns or existing or inferred_columns(raws)
        batch = [row for raw in raws for row in typed_rows(raw, columns, spec.format)]
        if not existing:
            conn.lock_schema(target.schema)
            conn.execute("create the schema", create_schema(target.schema).sql)
            conn.execute(f"create {target}", create_table(target.sql, columns + AUDIT_COLUMNS).sql)
        mark = conn.dialect.placeholder
        conn.execute(
            f"forget rows an earlier attempt landed in {target}",
            f"DELETE FROM {target.sql} WHERE TASK_RUN_ID = {mark}",
            [context.task_run_id],
        )
        _insert(conn, target, columns, batch, context)
    return len(batch)


def _insert(
    conn: WarehouseConnection,
    target: TargetObject,
    columns: tuple[Column, ...],
    batch: list[Record],
    context: ScriptContext,
) -> None:
    """Insert ``batch`` a chunk at a time, each column bound as one array and unnested.

    A parameter per column rather than per value: DuckDB inserts bound VALUES rows a few
    thousand a second, arrays over ten times faster, and PostgreSQL takes them as readily.
    """
    names = [column.name for column in columns] + list(STAMPS)
    mark = conn.dialect.placeholder
    unnested = [f"UNNEST(CAST({mark} AS {column.type}[]))" for column in columns]
    stamped = [f"CAST({mark} AS {column.type})" for column in _STAMP_COLUMNS]
    sql = f"INSERT INTO {target.sql} ({', '.join(names)}) SELECT {', '.join(unnested + stamped)}"
    stamps = [context.pipeline_id, context.pipeline_run_id, context.task_run_id, utc_now(), "N"]
    for start in range(0, len(batch), CHUNK):
        chunk = batch[start : start + CHUNK]
        arrays = [list(values) for values in zip(*chunk, strict=True)]
        conn.execute(f"land rows into {target}", sql, [*arrays, *stamps])
