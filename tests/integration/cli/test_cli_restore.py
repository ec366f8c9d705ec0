"""etl-craft restore on an Iceberg warehouse: a table back to the rows an earlier run left."""

from __future__ import annotations

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.warehouse import connect
from tests.integration.cli.conftest import PROJECT_CODE, Site

CONNECTOR = f"""\
Engine:
  path: engine.db
Warehouse:
  type: iceberg
  path: lakehouse.db
  location: lakehouse
Orchestration:
  project: {PROJECT_CODE}
"""
# Each run replaces the table with one row, stamped with its run.
PIPELINE = f"""\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'orders' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{PROJECT_CODE}';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V
  UNION ALL SELECT 'TARGET_OBJECT', 'lnd.orders'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT 1 AS n'
) x ON 1 = 1 WHERE t.TASK_CODE = 'load_orders';
"""


def loaded_by(site: Site) -> list[int]:
    settings = Warehouse(
        type=WarehouseType.ICEBERG,
        url=None,
        path=str(site.project / "lakehouse.db"),
        ledger_schema="etl_craft",
        max_queries=None,
        options={"location": "lakehouse"},
    )
    with connect(settings) as conn:
        found = conn.fetch_all("read", "SELECT PIPELINE_RUN_ID FROM lnd.orders ORDER BY 1")
        return [int(row[0]) for row in found]


def test_restore_gives_an_earlier_runs_rows_and_is_recorded(sqlite_site: Site) -> None:
    (sqlite_site.project / "craft-connector.yml").write_text(CONNECTOR)
    assert sqlite_site.run("init-db").returncode == 0
    sqlite_site.write_migration("0001_orders.sql", PIPELINE)
    assert sqlite_site.run("migrate").returncode == 0
    for _ in range(2):
        done = sqlite_site.run("run", "--pipeline_code", "orders")
        assert done.returncode == 0, done.stderr
    runs = [
        row["id"]
        for row in sqlite_site.query(
            "SELECT PIPELINE_RUN_ID AS id FROM AUD_PIPELINES_RUN_LOG ORDER BY 1"
        )
    ]
    assert loaded_by(sqlite_site) == [runs[1]]

    code, view = sqlite_site.json(
        "restore", "--table", "lnd.orders", "--run", str(runs[0]), "--reason", "bad load"
    )

    assert code == 0, view
    assert view["schema"] == "etl-craft/restore/1"
    assert (view["run_id"], view["rows"]) == (runs[0], 1)
    assert loaded_by(sqlite_site) == [runs[0]]
    [action] = sqlite_site.query(
        "SELECT COMMAND AS command, ARGUMENTS AS arguments FROM AUD_ACTIONS "
        "WHERE COMMAND = 'restore'"
    )
    assert "bad load" in action["arguments"]

    refused = sqlite_site.run("restore", "--table", "lnd.orders", "--run", "999", "--reason", "x")
    assert refused.returncode != 0
    assert "run 999 is not on record" in refused.stderr
