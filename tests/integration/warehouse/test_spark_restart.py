"""A Spark warehouse's tables outlive its Connect server: the Hive catalog (embedded Derby) and
the warehouse folder are kept, and a new server on them finds every table as published."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from etl_craft.handlers.sql import Action
from etl_craft.warehouse.spark import connect_spark
from tests.fixtures.spark import connect_server
from tests.integration.warehouse.helpers import rows, run

pytestmark = pytest.mark.spark

SOURCE = "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(n, label)"


def test_published_tables_survive_a_restart_of_the_connect_server(tmp_path: Path) -> None:
    driver = importlib.import_module("pyspark.sql.connect.session")
    with connect_server(tmp_path) as server:
        with connect_spark(driver, server.remote, None, None) as conn:
            conn.execute("create the schema", "CREATE SCHEMA kept")
            run(conn, Action.SETUP_TABLE, "kept.t", SOURCE)
            run(conn, Action.APPEND_TABLE, "kept.t", SOURCE, task_run_id=5)
            run(conn, Action.SCD1_MERGE, "kept.t", SOURCE.replace("'b'", "'B'"), key=("n",))
    with (
        connect_server(tmp_path) as server,
        connect_spark(driver, server.remote, None, None) as conn,
    ):
        assert rows(conn, "kept.t", "n, label") == [(1, "a"), (2, "B")]
        assert rows(conn, "etl_craft.attempt_ledger", "action") == [
            ("APPEND_TABLE",),
            ("SCD1_MERGE",),
            ("SETUP_TABLE",),
        ]
