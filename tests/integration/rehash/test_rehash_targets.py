"""Hash versions per target and etl-craft rehash, on real DuckDB and PostgreSQL warehouses."""

from __future__ import annotations

import json

import pytest

from etl_craft.core.errors import ExitCode, MetadataError
from etl_craft.warehouse import hash_record
from etl_craft.warehouse.hash_record import Proof
from etl_craft.warehouse.targets import TargetObject
from tests.integration.rehash.rehash_site import (
    SOURCE,
    TARGET,
    Site,
    merge,
    pipelines_sql,
)

CONTENT = "SELECT id, name, amount, seen, HASH_KEY, ROW_ID, UPDATE_DATE FROM {} ORDER BY id"
HASHES = "SELECT id, HASH_KEY FROM {} ORDER BY id"


def load(site: Site, pipeline: str = "customers") -> None:
    site.run_task(pipeline, "setup")
    site.run_task(pipeline, "merge")


def test_a_first_write_records_the_version_and_drop_table_forgets_it(site: Site) -> None:
    site.run_task("customers", "setup")
    assert site.recorded() is None  # an empty table holds no HASH_KEY values yet
    site.run_task("customers", "merge")
    assert site.recorded() == 2
    site.run_task("drop", "drop")
    assert site.recorded() is None


def test_create_table_writes_every_row_anew_so_it_records_the_current_version(
    site: Site,
) -> None:
    load(site)
    site.downgrade()
    site.run_task("rebuild", "create")
    assert site.recorded() == 2


def test_a_merge_into_an_older_version_is_refused_before_touching_the_target(
    site: Site,
) -> None:
    load(site)
    site.downgrade()
    site.sql(f"UPDATE {SOURCE} SET name = 'Bea' WHERE id = 1")
    rows, definition = site.rows(CONTENT.format(TARGET)), site.definition()

    with pytest.raises(MetadataError) as refused:
        site.run_task("customers", "merge")

    message = str(refused.value)
    assert "version 1" in message
    assert "version 2" in message
    assert TARGET in message
    assert f"etl-craft rehash --target {TARGET}" in message
    assert site.rows(CONTENT.format(TARGET)) == rows
    assert site.definition() == definition
    assert site.recorded() == 1


def test_a_preview_of_a_merge_into_an_older_version_shows_the_refusal_and_its_remedy(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)
    site.downgrade()
    rows = site.rows(CONTENT.format(TARGET))

    code, out, _ = site.cli(
        "--format",
        "json",
        "preview",
        "--pipeline_code",
        "customers",
        "--task_code",
        "merge",
        capsys=capsys,
    )

    assert code == ExitCode.METADATA
    view = json.loads(out)
    assert view["refusal"]["kind"] == "METADATA"
    assert f"etl-craft rehash --target {TARGET}" in view["refusal"]["message"]
    assert (view["counts"], view["source_rows"]) == (None, 3)
    assert site.rows(CONTENT.format(TARGET)) == rows
    assert site.recorded() == 1


def test_rehash_dry_run_reports_the_count_and_changes_nothing(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)
    site.downgrade()  # rows 1 and 3; row 2 keeps its version-2 value
    before = site.rows(CONTENT.format(TARGET))

    code, out, _ = site.cli(
        "--format", "json", "rehash", "--target", TARGET, "--dry-run", capsys=capsys
    )

    assert code == 0
    view = json.loads(out)
    assert view["schema"] == "etl-craft/rehash/1"
    assert (view["dry_run"], view["rows_scanned"], view["rows_changed"]) == (True, 3, 2)
    assert (view["version_from"], view["version_to"], view["action_id"]) == (1, 2, None)
    assert site.rows(CONTENT.format(TARGET)) == before
    assert site.recorded() == 1


def test_rehash_computes_what_a_fresh_load_computes_and_the_next_merge_changes_nothing(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)
    load(site, "fresh")
    site.downgrade()

    code, out, _ = site.cli("--format", "json", "rehash", "--target", TARGET, capsys=capsys)

    assert code == 0
    view = json.loads(out)
    assert view["schema"] == "etl-craft/rehash/1"
    assert (view["rows_scanned"], view["rows_changed"]) == (3, 2)
    assert (view["version_from"], view["version_to"]) == (1, 2)
    assert view["merge_tasks"] == ["customers.merge"]
    assert [name.lower() for name in view["compare_columns"]] == ["name", "amount", "seen"]
    assert isinstance(view["action_id"], int)
    assert site.rows(HASHES.format(TARGET)) == site.rows(HASHES.format("dm.fresh"))
    assert site.recorded() == 2
    rehashed = site.rows(CONTENT.format(TARGET))

    counts = site.run_task("customers", "merge")

    assert (counts.updated, counts.inserted) == (0, 0)
    assert site.rows(CONTENT.format(TARGET)) == rehashed


def test_rehash_rewrites_every_version_of_an_scd2_target(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.project.migrate(
        "0002_history.sql", pipelines_sql(("history", "merge", merge("dm.history", "SCD2_MERGE")))
    )
    site.sql(
        "CREATE SCHEMA IF NOT EXISTS dm",
        "CREATE TABLE dm.history (id INTEGER, name VARCHAR(20), amount DECIMAL(12,2), "
        "seen TIMESTAMP WITH TIME ZONE, ROW_ID BIGINT, HASH_KEY VARCHAR(32), "
        "CREATE_DATE TIMESTAMP WITH TIME ZONE, UPDATE_DATE TIMESTAMP WITH TIME ZONE, "
        "DELETE_FLAG VARCHAR(1), ACTIVE_FLAG VARCHAR(1), "
        "VALID_FROM TIMESTAMP WITH TIME ZONE, VALID_TO TIMESTAMP WITH TIME ZONE)",
    )
    site.run_task("history", "merge")
    site.sql(f"UPDATE {SOURCE} SET amount = 99.90 WHERE id IN (1, 2)")
    site.run_task("history", "merge")
    versions = "SELECT id, ACTIVE_FLAG, HASH_KEY FROM dm.history ORDER BY id, ACTIVE_FLAG"
    written = site.rows(versions)
    assert len(written) == 5
    site.downgrade("dm.history", "1 = 1")

    code, out, _ = site.cli("--format", "json", "rehash", "--target", "dm.history", capsys=capsys)

    assert code == 0
    assert json.loads(out)["rows_changed"] == 5
    assert site.rows(versions) == written
    counts = site.run_task("history", "merge")
    assert (counts.updated, counts.inserted) == (0, 0)


def test_rehash_leaves_out_the_column_that_dates_scd2_versions_as_the_merge_does(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    dated = (
        "SELECT id, name, amount, COALESCE(seen, CAST('2024-01-01 00:00:00+00' AS TIMESTAMP "
        f"WITH TIME ZONE)) AS seen FROM {SOURCE}"
    )
    setup = {"ACTION": "SETUP_TABLE", "TARGET_OBJECT": "dm.dated", "SOURCE_SQL": dated}
    by_time = {"SCD2_VALID_FROM": "COLUMN", "SCD2_VALID_FROM_COLUMN": "seen"}
    history = merge("dm.dated", "SCD2_MERGE", SOURCE_SQL=dated, **by_time)
    site.project.migrate(
        "0002_dated.sql", pipelines_sql(("dated", "setup", setup), ("dated", "merge", history))
    )
    load(site, "dated")
    written = site.rows(HASHES.format("dm.dated"))
    site.downgrade("dm.dated", "1 = 1")

    code, out, _ = site.cli("--format", "json", "rehash", "--target", "dm.dated", capsys=capsys)

    assert code == 0
    assert [name.lower() for name in json.loads(out)["compare_columns"]] == ["name", "amount"]
    assert site.rows(HASHES.format("dm.dated")) == written
    counts = site.run_task("dated", "merge")
    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (0, 0, 3)


def test_rehash_refuses_merging_tasks_that_compare_different_columns(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)
    site.project.migrate(
        "0002_other.sql",
        pipelines_sql(("other", "merge", merge(TARGET, MERGE_COMPARE_COLUMNS="name"))),
    )
    before = site.rows(CONTENT.format(TARGET))

    code, out, err = site.cli("rehash", "--target", TARGET, capsys=capsys)

    assert code == ExitCode.METADATA
    assert "customers.merge (name, amount, seen)" in err.lower()
    assert "other.merge (name)" in err.lower()
    assert "MERGE_COMPARE_COLUMNS" in err
    assert out == ""
    assert site.rows(CONTENT.format(TARGET)) == before


def test_rehash_refuses_a_float_compare_column(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.project.migrate("0002_floats.sql", pipelines_sql(("floats", "merge", merge("dm.floats"))))
    site.sql(
        "CREATE SCHEMA IF NOT EXISTS dm",
        "CREATE TABLE dm.floats (id INTEGER, ratio DOUBLE PRECISION, HASH_KEY VARCHAR(32))",
        "INSERT INTO dm.floats VALUES (1, 0.5, 'x')",
    )

    code, _, err = site.cli("rehash", "--target", "dm.floats", capsys=capsys)

    assert code == ExitCode.SQL_GUARD
    assert "ratio" in err
    assert "floats have no stable text form" in err
    assert site.rows("SELECT id, HASH_KEY FROM dm.floats") == [(1, "x")]


def test_rehash_of_a_target_no_task_merges_into_is_refused(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)

    code, _, err = site.cli("rehash", "--target", "dm.elsewhere", capsys=capsys)

    assert code == ExitCode.METADATA
    assert "no active SCD1_MERGE or SCD2_MERGE task" in err
    assert "dm.elsewhere" in err


def test_rehash_clears_the_warehouse_record_and_the_next_merge_proves_it_again(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load(site)
    ledger = site.project.connector.warehouse.ledger_schema

    def record() -> tuple[str, Proof] | None:
        with site.warehouse() as conn:
            key = hash_record.record_key(conn, TargetObject.parse(TARGET))
            return hash_record.read(conn, ledger, key)

    proven = record()
    assert proven is not None
    assert proven[1] is Proof.PROVEN

    code, _, _ = site.cli("rehash", "--target", TARGET, capsys=capsys)

    # The values now hash the compare columns rehash found, whatever the record said before.
    assert code == 0
    assert record() is None
    counts = site.run_task("customers", "merge")
    assert (counts.updated, counts.inserted) == (0, 0)
    assert record() == proven
