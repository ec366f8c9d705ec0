"""The README's quick start on the embedded default: run twice, each run lands only its batch."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb

from etl_craft.operations.demo.sources import CLIENTS, batch_versions, updated_numbers
from tests.e2e.demo.demo_site import (
    AREA_NAMES,
    PIPELINES,
    Expected,
    quick_start_arguments,
    run_etl_craft,
)

SEGMENTS = {"NEW": "Newly acquired", "RETURNING": "Established", "VIP": "Priority"}
FACT_COLUMNS = (
    "source_system, interaction_id, customer_id, customer_segment, agent_name, "
    "support_area_name, status, rating, handle_seconds"
)


def warehouse(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(folder / "etl-craft" / "data" / "warehouse.duckdb"), True) as conn:
        return conn.execute(sql).fetchall()


def engine(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    path = folder / "etl-craft" / "data" / "engine.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def count(folder: Path, table: str, where: str = "1 = 1") -> int:
    return int(warehouse(folder, f"SELECT COUNT(*) FROM {table} WHERE {where}")[0][0])


def check_layers(folder: Path, expected: Expected) -> None:
    for client in CLIENTS:
        assert count(folder, f"lnd.client_{client}_interactions") == expected.landed(client)
    latest = expected.latest()
    assert count(folder, "prs.interactions") == expected.prs_rows()
    current = warehouse(
        folder,
        "SELECT source_system, interaction_id, COUNT(*) FROM prs.interactions "
        "WHERE ACTIVE_FLAG = 'Y' GROUP BY ALL",
    )
    assert {(s, i): n for s, i, n in current} == dict.fromkeys(latest, 1)  # no duplicates
    facts = warehouse(
        folder,
        f"SELECT {FACT_COLUMNS} FROM dm.customer_support_fact WHERE ACTIVE_FLAG = 'Y'",
    )
    assert {(row[0], row[1]) for row in facts} == set(expected.dm_current())
    assert count(folder, "dm.customer_support_fact") == expected.dm_rows()
    for source_system, interaction_id, customer, segment, agent, *rest in facts:
        version = latest[source_system, interaction_id]
        assert (customer, segment) == (version.customer_id, SEGMENTS[version.customer_type])
        assert agent is not None  # every agent is in the reference data
        assert tuple(rest) == (
            AREA_NAMES[version.support_area],
            version.status,
            version.rating,
            version.handle_seconds,
        )


def check_summary(out: str, batch: int) -> None:
    assert f"Support Insights demo: batch {batch} in " in out
    for pipeline in PIPELINES:
        line = next(line for line in out.splitlines() if line.startswith(pipeline))
        assert " SUCCESS " in line, line
    assert "dm      dm.customer_support_fact" in out
    assert "Next, try:" in out
    assert "etl-craft status --pipeline si_transform --run" in out


def test_the_quick_start_runs_every_pipeline_and_a_second_run_lands_only_the_new_batch(
    tmp_path: Path,
) -> None:
    arguments = quick_start_arguments()
    assert arguments[0] == "demo"
    folder = tmp_path / "etl-craft-demo"  # the command's default, in the folder it runs in

    first = run_etl_craft(*arguments, cwd=tmp_path)

    assert first.returncode == 0, first.stderr
    check_summary(first.stdout, 1)
    assert "si_transform run 5 SUCCESS: 11/11 tasks done" in first.stderr
    check_layers(folder, Expected(batches=1))
    rejected = [v for c in CLIENTS for v in batch_versions(c, 1) if v.breaks]
    assert count(folder, "etl_craft.rejected__pre_dm__interactions") == len(rejected)
    runs = engine(folder, "SELECT STATUS, COUNT(*) FROM AUD_PIPELINES_RUN_LOG GROUP BY STATUS")
    assert runs == [("SUCCESS", 5)]
    attempts = engine(
        folder,
        "SELECT a.ATTEMPT_NUMBER, a.STATUS, a.ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG r ON r.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS t ON t.TASK_ID = r.TASK_ID "
        "WHERE t.TASK_CODE = 'wake_gamma_store' ORDER BY a.ATTEMPT_NUMBER",
    )
    assert [row[:2] for row in attempts] == [(1, "FAILED"), (2, "SUCCESS")]
    assert "is waking up" in attempts[0][2]

    second = run_etl_craft(*arguments, "--format", "json", cwd=tmp_path)

    assert second.returncode == 0, second.stderr
    document = json.loads(second.stdout)
    assert document["schema"] == "etl-craft/demo/1"
    assert document["batch"]["batch"] == 2
    assert [(run["pipeline_code"], run["status"]) for run in document["runs"]] == [
        (pipeline, "SUCCESS") for pipeline in PIPELINES
    ]
    check_layers(folder, Expected(batches=2))
    landed = {
        run["pipeline_code"]: {task["task_code"]: task["rows_written"] for task in run["tasks"]}
        for run in document["runs"]
    }
    assert landed["si_client_alpha"]["land_alpha"] == len(batch_versions("alpha", 2))
    corrected = updated_numbers("alpha", 2)[0]  # rejected in batch 1, corrected in batch 2
    assert warehouse(
        folder,
        "SELECT COUNT(*) FROM dm.customer_support_fact "
        f"WHERE interaction_id = 'ALPHA-{corrected:06d}' AND ACTIVE_FLAG = 'Y'",
    ) == [(1,)]
