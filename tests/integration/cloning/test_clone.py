"""etl-craft clone: the AUD_ tables mirrored into each warehouse from each Engine DB, row for
row with secrets masked, incrementally, purged rows deleted."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from etl_craft.config.sections import build_retention
from etl_craft.core.redaction import MASK
from etl_craft.core.time import utc_now
from etl_craft.enginedb.watermarks import MIRRORED, MIRRORED_TABLES
from etl_craft.operations.cloning.clone import CloneView, clone
from etl_craft.operations.cloning.masking import row_mask
from etl_craft.operations.interventions.actions import cancel
from etl_craft.operations.retention.purge import PurgeRequest, purge
from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.metadata import TESTER
from tests.fixtures.run_history import SECRET_VALUE, RunHistory
from tests.integration.cloning.mirror_rows import cloning, engine_rows, mirror_rows, reuse


def _clone(history: RunHistory, warehouse: WarehouseConnection, **options: int) -> CloneView:
    engine = history.project.engine
    return clone(engine, reuse(warehouse), cloning(**options), row_mask(engine, None))


def _copied(view: CloneView) -> dict[str, int]:
    return {table.table: table.copied for table in view.tables}


def _assert_mirror_equals_engine(history: RunHistory, warehouse: WarehouseConnection) -> int:
    """Every mirrored table equals its Engine DB table, row for row, except where a value
    holds the secret, which the mirror holds masked; returns how many values were masked."""
    masked = 0
    for table in MIRRORED_TABLES:
        expected = engine_rows(history.project.engine, table)
        found = mirror_rows(warehouse, table)
        assert found.keys() == expected.keys(), table.name
        for key, row in expected.items():
            for column, value in row.items():
                copy = found[key][column]
                assert SECRET_VALUE not in str(copy), (table.name, key, column)
                if isinstance(value, str) and SECRET_VALUE in value:
                    assert MASK in str(copy), (table.name, key, column)
                    masked += 1
                else:
                    assert copy == value, (table.name, key, column)
    return masked


def test_the_mirror_equals_the_aud_tables_after_runs_marks_and_a_purge(
    history: RunHistory, warehouse: WarehouseConnection
) -> None:
    first = _clone(history, warehouse)

    # The secret parameter's insert is in AUD_METADATA_CHANGES, its value masked in the mirror.
    assert _assert_mirror_equals_engine(history, warehouse) >= 1
    assert first.copied == sum(
        len(engine_rows(history.project.engine, table)) for table in MIRRORED_TABLES
    )
    changes = mirror_rows(warehouse, MIRRORED["AUD_METADATA_CHANGES"]).values()
    parameters = [json.loads(row["after_json"]) for row in changes if row["after_json"]]
    secret = [p for p in parameters if p.get("parameter_name") == "SOURCE_PASSWORD"]
    assert [p["parameter_value"] for p in secret] == [MASK]

    # Every ended run is past a one-day retention two days from now.
    retention = replace(build_retention(None), run_history_days=1, batch_rows=2)
    purged = purge(
        history.project.engine, TESTER, PurgeRequest(retention, utc_now() + timedelta(days=2)), None
    )
    assert purged.total_rows > 0
    second = _clone(history, warehouse)

    _assert_mirror_equals_engine(history, warehouse)
    deleted = {table.table: table.deleted for table in second.tables if table.deleted}
    assert deleted == {table.table: table.rows for table in purged.tables if table.rows}
    # The cancelled run stays with its intervention, kept for ever by default.
    runs = mirror_rows(warehouse, MIRRORED["AUD_PIPELINES_RUN_LOG"]).keys()
    assert history.cancelled in runs
    assert not runs & {history.succeeded, history.failed}


# The engines and warehouses in pairs, where the mirror's rows are the same either way.
PAIRS = pytest.mark.parametrize(
    ("history", "warehouse"), [("sqlite", "duckdb"), ("postgresql", "postgresql")], indirect=True
)


@PAIRS
def test_a_second_clone_copies_only_what_changed(
    history: RunHistory, warehouse: WarehouseConnection
) -> None:
    _clone(history, warehouse)
    assert _clone(history, warehouse).copied == 0

    cancel(history.ctx, "solo", history.backfills[0], "not needed after all")
    view = _clone(history, warehouse)

    copied = _copied(view)
    assert copied["AUD_PIPELINES_RUN_LOG"] == 1
    assert copied["AUD_RUN_INTERVENTIONS"] == 1
    assert copied["AUD_TASK_ATTEMPTS"] == copied["AUD_GATE_DECISIONS"] == 0
    assert copied["AUD_METADATA_CHANGES"] == 0
    _assert_mirror_equals_engine(history, warehouse)


@PAIRS
def test_the_overlap_reads_recent_rows_again_and_copies_nothing_twice(
    history: RunHistory, warehouse: WarehouseConnection
) -> None:
    # A day's overlap: the module's history, however long ago this slow suite wrote it, lies
    # within it.
    first = _clone(history, warehouse, overlap_seconds=86_400)
    again = _clone(history, warehouse, overlap_seconds=86_400)

    # Everything was written within the overlap: all read again, none new.
    assert again.copied == 0
    assert sum(table.reread for table in again.tables) == first.copied
    _assert_mirror_equals_engine(history, warehouse)
