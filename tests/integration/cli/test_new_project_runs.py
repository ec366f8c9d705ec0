"""The project `etl-craft new` writes runs as it is, twice, and publishes what it landed; its
pipeline is a spec, and the migration it ships is that spec as plan --write compiles it."""

from __future__ import annotations

import json
import subprocess
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from tests.fixtures.processes import ETL_CRAFT, process_env


def etl_craft(folder: Path, *args: str) -> str:
    done = subprocess.run(
        [ETL_CRAFT, *args],
        cwd=folder,
        env=process_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_new_projects_pipeline_succeeds_and_publishes_each_day_once(tmp_path: Path) -> None:
    etl_craft(tmp_path, "new", "shop")
    project = tmp_path / "shop" / "etl-craft"
    etl_craft(project, "init-db")
    etl_craft(project, "migrate")
    plan = json.loads(etl_craft(project, "--format", "json", "plan"))
    assert (plan["pipelines"], plan["changes"], plan["file_name"]) == (["orders"], [], None)
    assert [(e["task"], e["upstream_task"], e["outcome"]) for e in plan["inferred"]] == [
        ("build_daily_orders", "ingest_orders", "stated"),
        ("setup_published_orders", "build_daily_orders", "written"),
        ("publish_daily_orders", "build_daily_orders", "implied"),
    ]

    first = etl_craft(project, "run", "--pipeline_code", "orders", "--run-date", "2026-11-30")
    second = etl_craft(project, "run", "--pipeline_code", "orders", "--run-date", "2026-11-30")

    assert ": SUCCESS" in first.splitlines()[0]
    assert ": SUCCESS" in second.splitlines()[0]
    with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as warehouse:
        landed = warehouse.execute("SELECT order_id, amount FROM lnd.orders ORDER BY 1").fetchall()
        published = warehouse.execute(
            "SELECT order_date, order_count, revenue FROM pub.daily_orders"
        ).fetchall()
    amounts = [Decimal(f"{n * 10}.50") for n in range(1, 7)]
    assert landed == list(zip(range(1, 7), amounts, strict=True))
    assert published == [(date(2026, 11, 30), 6, sum(amounts))]
