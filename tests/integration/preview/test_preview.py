"""etl-craft preview against real warehouses: what it shows is what the next real run does."""

from __future__ import annotations

from typing import Any

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.preview.preview_site import (
    COUNTS,
    RUN_DATE,
    load_targets,
    preview,
    run_pipeline,
)
from tests.integration.rehash.rehash_site import Site


def changed_source(site: Site) -> None:
    """Key 2 changes, key 5 is new and comes twice (the larger amount wins), 1, 3, 4 stay."""
    site.sql(
        "UPDATE src.customers SET name = 'Bea' WHERE id = 2",
        "INSERT INTO src.customers VALUES (5, 'Eve', 5.00), (5, 'Eve', 1.00)",
    )


def counts_of(document: dict[str, Any]) -> dict[str, Any]:
    return {name: document["counts"][name] for name in COUNTS}


def test_scd1_preview_counts_what_the_run_then_records(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)
    changed_source(site)

    code, document, _ = preview(site, capsys, "--pipeline_code", "scd1", "--task_code", "merge")

    assert code == 0
    assert document["schema"] == "etl-craft/preview/1"
    assert (document["action"], document["target"], document["refusal"]) == (
        "SCD1_MERGE",
        "dm.c1",
        None,
    )
    effect = document["effect"]
    assert (effect["inserted"], effect["updated"], effect["closed"], effect["deleted"]) == (
        1,
        1,
        0,
        0,
    )
    assert (effect["new_keys"], effect["changed_keys"], effect["unchanged_keys"]) == (1, 1, 3)
    assert effect["duplicates"] == 1
    assert (effect["target_rows_before"], effect["target_rows_after"]) == (4, 5)
    assert document["duplicate_keys"] == {
        "key_columns": ["id"],
        "keys": 1,
        "rows": 1,
        "examples": [[5]],
    }

    status, recorded = run_pipeline(site, "scd1", "manual:second")

    assert status == "SUCCESS"
    assert {name: recorded["merge"][name] for name in COUNTS} == counts_of(document)
    assert site.rows("SELECT id, name, CAST(amount AS VARCHAR) FROM dm.c1 ORDER BY id") == [
        (1, "Ann", "10.50"),
        (2, "Bea", "20.00"),
        (3, "Cid", None),
        (4, "", "4.00"),
        (5, "Eve", "5.00"),
    ]


def test_scd2_preview_counts_new_changed_and_unchanged_keys_as_the_run_writes_them(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)
    changed_source(site)

    code, document, _ = preview(site, capsys, "--pipeline_code", "scd2", "--task_code", "merge")

    assert code == 0
    effect = document["effect"]
    assert (effect["inserted"], effect["updated"], effect["closed"]) == (2, 0, 1)
    assert (effect["new_keys"], effect["changed_keys"], effect["unchanged_keys"]) == (1, 1, 3)
    assert (effect["duplicates"], effect["target_rows_before"], effect["target_rows_after"]) == (
        1,
        4,
        6,
    )

    status, recorded = run_pipeline(site, "scd2", "manual:second")

    assert status == "SUCCESS"
    assert {name: recorded["merge"][name] for name in COUNTS} == counts_of(document)
    closed = site.rows("SELECT id, name FROM dm.c2 WHERE ACTIVE_FLAG = 'N' ORDER BY id")
    assert closed == [(2, "Bob")]
    current = site.rows("SELECT id, name FROM dm.c2 WHERE ACTIVE_FLAG = 'Y' ORDER BY id")
    assert current == [(1, "Ann"), (2, "Bea"), (3, "Cid"), (4, ""), (5, "Eve")]


def test_scd2_snapshot_preview_closes_a_missing_key_with_a_deletion_version_as_the_run_does(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)
    site.sql("DELETE FROM src.customers WHERE id = 3")

    code, text, _ = preview(
        site, capsys, "--pipeline_code", "snapshot", "--task_code", "snapshot", json_format=False
    )
    assert code == 0
    assert "leave 3 unchanged, close 1 key(s) the SELECT no longer returns" in text
    code, document, _ = preview(
        site, capsys, "--pipeline_code", "snapshot", "--task_code", "snapshot"
    )
    effect = document["effect"]
    assert (effect["inserted"], effect["closed"], effect["deleted"]) == (1, 0, 1)
    assert (effect["new_keys"], effect["changed_keys"], effect["unchanged_keys"]) == (0, 0, 3)

    status, recorded = run_pipeline(site, "snapshot", "manual:second")

    assert status == "SUCCESS"
    assert {name: recorded["snapshot"][name] for name in COUNTS} == counts_of(document)
    versions = site.rows(
        "SELECT ACTIVE_FLAG, DELETE_FLAG, name FROM dm.c2 WHERE id = 3 ORDER BY VALID_FROM"
    )
    assert versions == [("N", "N", "Cid"), ("Y", "Y", "Cid")]


def test_delete_rows_preview_counts_the_rows_the_run_deletes(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)

    code, document, _ = preview(site, capsys, "--task_code", "delete")

    assert code == 0
    assert (document["pipeline_code"], document["delete_mode"]) == ("delete", "HARD")
    assert document["columns"][0]["name"] == "id"
    assert (document["rows"], document["source_rows"]) == ([[3]], 1)
    assert document["effect"]["deleted"] == 1
    assert document["effect"]["target_rows_after"] == 3
    assert document["duplicate_keys"]["keys"] == 0

    status, recorded = run_pipeline(site, "delete", "manual:delete")

    assert status == "SUCCESS"
    assert {name: recorded["delete"][name] for name in COUNTS} == counts_of(document)
    assert site.rows("SELECT id FROM dm.c1 ORDER BY id") == [(1,), (2,), (4,)]


def test_append_preview_shows_the_first_rows_of_the_sql_file_with_its_tokens_replaced(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_pipeline(site, "setup", "manual:setup")[0] == "SUCCESS"

    code, limited, _ = preview(
        site, capsys, "--task_code", "append", "--limit", "2", "--run-date", RUN_DATE
    )
    _, whole, _ = preview(site, capsys, "--task_code", "append", "--run-date", RUN_DATE)

    assert code == 0
    assert limited["source"] == "sql_files/events.sql"
    assert [column["name"] for column in limited["columns"]] == ["id", "name", "amount", "run_day"]
    assert limited["columns"][3]["type"].lower() == "date"
    assert (limited["limit"], limited["source_rows"]) == (2, 4)
    assert limited["rows"] == [[4, "", "4.00", RUN_DATE], [3, "Cid", None, RUN_DATE]]
    assert len(whole["rows"]) == 4
    assert limited["effect"]["inserted"] == 4
    assert limited["duplicate_keys"] is None

    status, recorded = run_pipeline(site, "append", "manual:append")

    assert status == "SUCCESS", recorded
    assert {name: recorded["append"][name] for name in COUNTS} == counts_of(limited)
    written = site.rows(
        "SELECT id, name, CAST(amount AS VARCHAR), CAST(run_day AS VARCHAR) FROM dm.events"
    )
    assert sorted(written, key=lambda row: -row[0]) == [tuple(row) for row in whole["rows"]]


def test_the_text_output_is_a_table_of_the_rows_and_a_sentence_per_action(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)
    changed_source(site)

    code, text, _ = preview(
        site,
        capsys,
        *("--pipeline_code", "scd2", "--task_code", "merge", "--limit", "1"),
        json_format=False,
    )

    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith("scd2.merge: SCD2_MERGE into dm.c2 (")
    assert lines[2] == "rows: 1 of 6 shown (--limit 1)"
    assert lines[3].split() == ["id", "name", "amount"]
    assert lines[4].split() == ["1", "Ann", "10.50"]
    assert "1 key(s) of MERGE_KEY id have more than one row" in text
    assert (
        "a run would open 1 version(s) for new keys, close 1 and open as many new version(s) "
        "for changed keys, leave 3 unchanged, and leave out 1 duplicate row(s); dm.c2 would "
        "hold 6 row(s)"
    ) in text


def test_differing_rows_of_one_key_are_shown_with_the_refusal_the_run_then_fails_with(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    load_targets(site)
    site.sql("INSERT INTO src.customers VALUES (1, 'Ann', 99.00)")

    code, document, _ = preview(site, capsys, "--pipeline_code", "ties", "--task_code", "merge")

    assert code == ExitCode.SQL_GUARD
    assert document["refusal"]["kind"] == "SQL_GUARD"
    assert "MERGE_DEDUPE_ORDER" in document["refusal"]["message"]
    assert (document["counts"], document["effect"]) == (None, None)
    assert document["source_rows"] == 5
    assert document["duplicate_keys"] == {
        "key_columns": ["id"],
        "keys": 1,
        "rows": 1,
        "examples": [[1]],
    }

    status, recorded = run_pipeline(site, "ties", "manual:ties")

    assert status == "FAILED"
    assert document["refusal"]["message"] in recorded["merge"]["error"]


def test_a_task_preview_cannot_show_is_refused_with_its_reason(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = preview(site, capsys, "--task_code", "nothing")
    assert code == ExitCode.NOT_FOUND
    assert "no active task 'nothing'" in err
    assert "append, broken, c1, c2, delete, events, merge, script" in err

    code, _, err = preview(site, capsys, "--task_code", "merge")
    assert code == ExitCode.USAGE
    assert "scd1, scd2, ties" in err
    assert "--pipeline to say which one to preview" in err

    code, _, err = preview(site, capsys, "--pipeline_code", "scripts", "--task_code", "script")
    assert code == ExitCode.USAGE
    assert "task script of pipeline scripts is a PYTHON task" in err

    code, _, err = preview(site, capsys, "--task_code", "append", "--limit", "-1")
    assert code == ExitCode.USAGE
    assert "--limit: -1 is out of range" in err


def test_a_select_the_warehouse_refuses_names_the_task_its_file_and_the_warehouse_message(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_pipeline(site, "setup", "manual:setup")[0] == "SUCCESS"

    code, out, err = preview(site, capsys, "--task_code", "broken")

    assert code == ExitCode.WAREHOUSE
    # No preview document: under --format json the only output is the error's own document.
    assert out is None or out == "" or out["schema"] == "etl-craft/error/1"
    assert "SOURCE_SQL_FILE sql_files/broken.sql of task broken" in err
    assert "no_such_column" in err
