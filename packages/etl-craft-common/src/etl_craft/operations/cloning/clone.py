"""etl-craft clone: copy what changed in the AUD_ tables into the warehouse mirror.

Each table is read from its watermark (UPDATED_AT, then its key) in pages; each page is masked,
upserted into the mirror and its watermark moved in one warehouse transaction, so a clone that
stops half-way carries on from its last page. Each clone reads again the rows stamped within
Cloning.overlap_seconds before the watermark: a transaction stamps its rows before it commits,
so rows committed after the last clone read past them are copied now (copying a row again
changes nothing). Rows a purge deleted are deleted from the mirror: each purge batch records
its table and key range in AUD_ACTIONS in the transaction that deletes, and the clone removes
the mirror's rows of that range the Engine DB no longer has.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, ClassVar

from etl_craft.config.connector import Connector
from etl_craft.config.sections import Cloning
from etl_craft.core.errors import CloningError, ConfigurationError, EtlCraftError
from etl_craft.core.time import as_utc, utc_now
from etl_craft.enginedb.clone_reads import changed_rows, clone_lock, kept_ids
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.watermarks import MIRRORED, MIRRORED_TABLES, MirroredTable
from etl_craft.operations.cloning.masking import RowMask, row_mask
from etl_craft.operations.cloning.mirror import Mirror, Watermark
from etl_craft.operations.retention.copies import copy_columns
from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column

log = logging.getLogger(__name__)
COMMAND = "clone"
PURGE = "purge"
# Rows read from the Engine DB per page, and upserted per warehouse transaction.
PAGE_ROWS = 5_000
# Before any row: where a table never cloned starts.
BEFORE_ALL = datetime(1900, 1, 1, tzinfo=UTC)

WarehouseOpener = Callable[[], AbstractContextManager[WarehouseConnection]]


@dataclass(frozen=True)
class ClonedTable:
    table: str
    copied: int  # rows written since the last clone's watermark
    reread: int  # rows within the overlap before it, copied again
    deleted: int  # mirror rows of rows a purge deleted from the Engine DB


@dataclass(frozen=True)
class CloneView:
    schema: ClassVar[str] = "etl-craft/clone/1"
    mirror_schema: str
    skipped: bool  # another clone held the lock past Cloning.lock_wait_seconds
    started_at: datetime
    ended_at: datetime
    tables: tuple[ClonedTable, ...]

    @property
    def copied(self) -> int:
        return sum(table.copied for table in self.tables)

    @property
    def deleted(self) -> int:
        return sum(table.deleted for table in self.tables)


@dataclass(frozen=True)
class PurgedRange:
    table: MirroredTable
    first_id: int
    last_id: int


@dataclass
class _Counts:
    copied: int = 0
    reread: int = 0
    deleted: int = 0


@dataclass
class _Clone:
    engine: EngineDB
    open_warehouse: WarehouseOpener
    cloning: Cloning
    mask: RowMask
    watermarks: dict[str, Watermark]
    # Rows written after the clone started wait for the next: a clone slower than the
    # writers would otherwise chase them and never end.
    until: datetime = field(default_factory=utc_now)
    counts: dict[str, _Counts] = field(default_factory=dict)
    purged: list[PurgedRange] = field(default_factory=list)
    columns: dict[str, tuple[Column, ...]] = field(default_factory=dict)

    @contextmanager
    def _mirror(self) -> Iterator[Mirror]:
        # Opened for each page: a DuckDB warehouse is one writing process at a time, and the
        # task processes of a run queue for its file while a clone holds it.
        with self.open_warehouse() as warehouse:
            yield Mirror(warehouse, self.cloning.schema, self.columns)

    def run(self) -> None:
        for table in MIRRORED_TABLES:
            self.counts[table.name] = _Counts()
            self._copy(table)
        for purged in self.purged:
            self._forget(purged)

    def _copy(self, table: MirroredTable) -> None:
        known = self.watermarks.get(table.name)
        after = self._start(known)
        while True:
            with self.engine.read() as conn:
                rows = changed_rows(conn, table, after, self.until, PAGE_ROWS)
                columns = copy_columns(conn, table.name, self.columns)
            if not rows:
                return
            last = rows[-1]
            after = (last["updated_at"], int(last[table.key.lower()]))
            self._upsert(table, columns, rows, after)
            fresh = sum(1 for row in rows if _past(row, table, known))
            counts = self.counts[table.name]
            counts.copied, counts.reread = counts.copied + fresh, counts.reread + len(rows) - fresh
            if table.name == "AUD_ACTIONS":
                self.purged.extend(_purged_ranges(rows))

    def _start(self, known: Watermark | None) -> tuple[datetime, int]:
        if known is None:
            return BEFORE_ALL, 0
        if self.cloning.overlap_seconds == 0:
            return known.at, known.key
        return known.at - timedelta(seconds=self.cloning.overlap_seconds), 0

    def _upsert(
        self,
        table: MirroredTable,
        columns: tuple[Column, ...],
        rows: list[dict[str, Any]],
        after: tuple[datetime | str, int],
    ) -> None:
        masked = [self.mask(table.name, row) for row in rows]
        key = Column(table.key, "BIGINT")
        with self._mirror() as mirror:
            copies = mirror.copies
            target = copies.target(table.name)
            with mirror.warehouse.mutation(target):
                copies.prepare(table.name, columns)
                copies.replace(target, columns, key, masked)
                mirror.save_watermark(table.name, *after)

    def _forget(self, purged: PurgedRange) -> None:
        """Delete the mirror's rows of a purged range that the Engine DB no longer has."""
        table, key = purged.table, Column(purged.table.key, "BIGINT")
        with self.engine.read() as conn:
            kept = kept_ids(conn, table, purged.first_id, purged.last_id)
        with self._mirror() as mirror:
            target = mirror.copies.target(table.name)
            if not mirror.warehouse.exists(target):
                return
            with mirror.warehouse.mutation(target):
                mark = mirror.warehouse.dialect.placeholder
                mirrored = mirror.warehouse.fetch_all(
                    f"read the keys of {target} a purge may have deleted",
                    f"SELECT {key.name} FROM {target.sql} "
                    f"WHERE {key.name} BETWEEN {mark} AND {mark}",
                    [purged.first_id, purged.last_id],
                )
                gone = sorted(int(row[0]) for row in mirrored if int(row[0]) not in kept)
                if gone:
                    mirror.copies.delete(target, key, gone)
        self.counts[table.name].deleted += len(gone)


def clone(
    engine: EngineDB, open_warehouse: WarehouseOpener, cloning: Cloning, mask: RowMask
) -> CloneView:
    """Copy what changed since the last clone into the mirror; skipped when another clone
    holds the clone lock longer than Cloning.lock_wait_seconds. ``open_warehouse`` opens a
    warehouse connection, closed when its block ends."""
    started = utc_now()
    with clone_lock(engine, cloning.lock_wait_seconds) as taken:
        if not taken:
            return CloneView(cloning.schema, True, started, utc_now(), ())
        try:
            with open_warehouse() as warehouse:
                mirror = Mirror(warehouse, cloning.schema)
                mirror.refuse_engine_schema()
                marks = mirror.watermarks()
            work = _Clone(engine, open_warehouse, cloning, mask, marks)
            work.run()
        except CloningError:
            raise
        except EtlCraftError as error:
            raise CloningError(
                f"the clone into warehouse schema {cloning.schema} stopped: {error}; what it "
                "copied before stays, and the next clone carries on from there"
            ) from error
    tables = tuple(
        ClonedTable(name, counts.copied, counts.reread, counts.deleted)
        for name, counts in work.counts.items()
    )
    return CloneView(cloning.schema, False, started, utc_now(), tables)


def _past(row: dict[str, Any], table: MirroredTable, known: Watermark | None) -> bool:
    if known is None:
        return True
    stamp = as_utc(row["updated_at"])
    assert stamp is not None
    return (stamp, int(row[table.key.lower()])) > (known.at, known.key)


def _purged_ranges(rows: list[dict[str, Any]]) -> list[PurgedRange]:
    found: list[PurgedRange] = []
    for row in rows:
        if row["command"] != PURGE:
            continue
        arguments = json.loads(str(row["arguments"]))
        table = MIRRORED.get(str(arguments.get("table")))
        if table is not None and arguments.get("rows"):
            found.append(PurgedRange(table, int(arguments["first_id"]), int(arguments["last_id"])))
    return found


def clone_project(engine: EngineDB, connector: Connector) -> CloneView:
    """Clone into the project's warehouse as its Cloning section says."""
    cloning = connector.cloning
    if cloning is None:
        raise ConfigurationError(
            f"{connector.path} has no Cloning section, so cloning is off; add one (Cloning: "
            "{schema: aud_mirror}) to mirror the AUD_ tables into the warehouse"
        )
    return clone(
        engine, partial(connect, connector.warehouse), cloning, row_mask(engine, connector)
    )
