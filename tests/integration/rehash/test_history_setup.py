"""SETUP_TABLE and CREATE_TABLE give a table an SCD2_MERGE writes its validity columns,
and only such a table."""

from __future__ import annotations

from tests.integration.rehash.rehash_site import Site, merge, pipelines_sql, plain

HISTORY = {"valid_from", "valid_to"}


def names(site: Site, target: str) -> set[str]:
    return {name.lower() for name, _ in site.definition(target)}


def test_setup_table_adds_valid_from_and_valid_to_for_an_scd2_target(site: Site) -> None:
    site.project.migrate(
        "0002_history.sql",
        pipelines_sql(
            ("history", "setup", plain("SETUP_TABLE", "dm.history")),
            ("history", "merge", merge("dm.history", "SCD2_MERGE")),
            ("history", "rebuild", plain("CREATE_TABLE", "dm.history_copy")),
            ("copies", "merge", merge("DM.History_Copy", "SCD2_MERGE")),
        ),
    )

    site.run_task("history", "setup")
    site.run_task("history", "merge")
    site.run_task("history", "rebuild")
    site.run_task("customers", "setup")  # written by an SCD1_MERGE only

    assert names(site, "dm.history") >= HISTORY
    assert names(site, "dm.history_copy") >= HISTORY
    versions = site.rows("SELECT id, ACTIVE_FLAG, VALID_TO FROM dm.history ORDER BY id")
    assert versions == [(1, "Y", None), (2, "Y", None), (3, "Y", None)]
    assert not HISTORY & names(site, "dm.customers")
