"""Publication.SNAPSHOT: an attempt's writes to its target become one Iceberg snapshot whose
summary carries the attempt id, the task run id and the attempt's counts.

The fence is checked inside the commit, never left to pyiceberg's commit retry: the target's
snapshots are read, a later attempt of the same task run among them refuses this one, and the
commit asserts the snapshot this attempt read is still the current one (the catalog's
optimistic concurrency), tried once. The counts in the summary are the ledger: ``applied``
finds the snapshot an attempt committed, so a lost attempt is reconciled from the warehouse.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, cast

import pyarrow as pa  # type: ignore[import-untyped]

from etl_craft.core.counts import Counts
from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.dialect import Publication
from etl_craft.warehouse.iceberg.catalog import ensure_namespace
from etl_craft.warehouse.ledger import LedgerEntry
from etl_craft.warehouse.publication import Fence, Publisher
from etl_craft.warehouse.targets import TargetObject

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot

    from etl_craft.warehouse.connection import WarehouseConnection
    from etl_craft.warehouse.iceberg.connection import IcebergConnection

# Snapshot summary properties etl-craft writes.
PREFIX = "etl-craft."
TASK_RUN_ID = f"{PREFIX}task-run-id"
ATTEMPT_ID = f"{PREFIX}attempt-id"
ACTION = f"{PREFIX}action"
COMMITTED_AT = f"{PREFIX}committed-at"
COUNT_PREFIX = f"{PREFIX}count."


@dataclass(frozen=True)
class Stamp:
    """What a fenced commit writes into the snapshot summary, and the fence it checks."""

    fence: Fence
    properties: dict[str, str]
    target: tuple[str, str] | None


class SnapshotPublisher(Publisher):
    @contextmanager
    def publishing(
        self, conn: WarehouseConnection, target: TargetObject | None, fence: Fence
    ) -> Iterator[None]:
        iceberg = _iceberg(conn)
        key = (target.schema.lower(), target.table.lower()) if target is not None else None
        properties = {TASK_RUN_ID: str(fence.task_run_id), ATTEMPT_ID: str(fence.attempt_id)}
        iceberg.stamp = Stamp(fence, properties, key)
        try:
            with conn.mutation(target) if target is not None else conn.transaction():
                yield
        finally:
            iceberg.stamp = None

    def record(self, conn: WarehouseConnection, entry: LedgerEntry, fence: Fence) -> None:
        stamp = _iceberg(conn).stamp
        if stamp is None:
            raise WarehouseError(
                f"attempt {entry.attempt_id} recorded its counts outside its publication; "
                "record them inside publishing(), where its snapshot is committed"
            )
        stamp.properties.update(summary_of(entry))

    def applied(
        self, conn: WarehouseConnection, attempt_id: int, ledger_schema: str
    ) -> Counts | None:
        catalog = _iceberg(conn).catalog
        for namespace in catalog.list_namespaces():
            for identifier in catalog.list_tables(namespace):
                table = catalog.load_table(identifier)
                if identifier == (ledger_schema, LEDGER_TABLE):
                    found = ledger_counts(table, attempt_id)
                else:
                    found = attempt_counts(table, attempt_id)
                if found is not None:
                    return found
        return None


# An attempt whose target has no table after it (dropped, or never there) has no snapshot to
# carry its counts: it is recorded here, committed right after the drop (a drop lost between
# the two is repeated by its retry, to the same end).
LEDGER_TABLE = "attempt_ledger"


def record_in_ledger(catalog: Catalog, ledger_schema: str, properties: dict[str, str]) -> None:
    schema = pa.schema([("attempt_id", pa.int64()), ("summary", pa.string())])
    ensure_namespace(catalog, ledger_schema)
    table = catalog.create_table_if_not_exists((ledger_schema, LEDGER_TABLE), schema=schema)
    row = {"attempt_id": [int(properties[ATTEMPT_ID])], "summary": [json.dumps(properties)]}
    table.append(pa.table(row, schema=schema))


def ledger_counts(table: Table, attempt_id: int) -> Counts | None:
    found = table.scan(row_filter=f"attempt_id = {int(attempt_id)}").to_arrow().to_pylist()
    if not found:
        return None
    return counts_of(json.loads(found[0]["summary"]))


def summary_of(entry: LedgerEntry) -> dict[str, str]:
    counts = {
        f"{COUNT_PREFIX}{item.name}": str(getattr(entry.counts, item.name))
        for item in fields(Counts)
        if getattr(entry.counts, item.name) is not None
    }
    return {ACTION: entry.action, COMMITTED_AT: entry.committed_at.isoformat(), **counts}


def attempt_counts(table: Table, attempt_id: int) -> Counts | None:
    """The counts of the attempt's snapshot of this table, if it committed one."""
    found = attempt_snapshot(table, attempt_id)
    if found is None:
        return None
    summary = found.summary
    assert summary is not None
    return counts_of(summary)


def counts_of(summary: Mapping[str, str]) -> Counts:
    values = {
        item.name: int(text)
        for item in fields(Counts)
        if (text := summary.get(f"{COUNT_PREFIX}{item.name}")) is not None
    }
    return Counts(**values)


def attempt_snapshot(table: Table, attempt_id: int) -> Snapshot | None:
    for snapshot in table.snapshots():
        if snapshot.summary is not None and snapshot.summary.get(ATTEMPT_ID) == str(attempt_id):
            return snapshot
    return None


def _iceberg(conn: WarehouseConnection) -> IcebergConnection:
    if conn.dialect.capabilities.publication is not Publication.SNAPSHOT:
        raise TypeError(f"the snapshot publisher publishes Iceberg connections, not {conn!r}")
    return cast("IcebergConnection", conn)
