"""One SQL file read by several pipelines, each with its own typed parameters, over a real
warehouse; and the ways tests run and read them."""

from __future__ import annotations

from collections.abc import Mapping

from tests.fixtures.metadata import execute
from tests.integration.rehash.rehash_site import Site, pipelines_sql

# Every value a client's pipeline gives its SQL comes from a token.
ORDERS_SQL = """\
-- The orders of one client: which one, and its threshold, come from the pipeline.
SELECT o.id,
       $$param.CLIENT AS client,
       $$pipeline_code AS pipeline_code,
       $$run_key AS run_key,
       $$param.MIN_AMOUNT AS min_amount,
       $$param.CUTOFF AS cutoff,
       $$param.VIP AS vip
  FROM src.orders o
 WHERE o.client = $$param.CLIENT
   AND o.amount >= $$param.MIN_AMOUNT
 ORDER BY o.id;
"""
# A value a pasted string would turn into SQL: a quote ends the literal, the rest runs.
HOSTILE = "O'Brien'; DROP TABLE src.orders; --"
ODD = "back\\slash $$x$$ /* not a comment */ $$param.CLIENT"
CLIENTS = ("acme", HOSTILE, ODD)
TYPES = {"CLIENT": "STRING", "MIN_AMOUNT": "DECIMAL", "CUTOFF": "DATE", "VIP": "BOOLEAN"}


def quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def parameters_sql(pipeline: str, values: Mapping[str, str | None]) -> str:
    """CFG_PIPELINE_PARAMETERS rows of one pipeline, typed by TYPES (STRING for others)."""
    return "\n".join(
        "INSERT INTO CFG_PIPELINE_PARAMETERS (PIPELINE_ID, PARAMETER_NAME, PARAMETER_VALUE, "
        f"PARAMETER_TYPE) SELECT PIPELINE_ID, '{name}', "
        f"{'NULL' if value is None else quoted(value)}, '{TYPES.get(name, 'STRING')}' "
        f"FROM CFG_PIPELINES WHERE PIPELINE_CODE = '{pipeline}';"
        for name, value in values.items()
    )


def client_pipelines_sql(pipelines: Mapping[str, Mapping[str, str | None]]) -> str:
    """One pipeline per entry, its task `load` rebuilding dm.<pipeline> from orders.sql."""
    task = {"ACTION": "CREATE_TABLE", "SOURCE_SQL_FILE": "orders.sql"}
    tasks = [(code, "load", task | {"TARGET_OBJECT": f"dm.{code}"}) for code in pipelines]
    parameters = [parameters_sql(code, values) for code, values in pipelines.items()]
    return "\n".join([pipelines_sql(*tasks), *parameters])


def load_orders(site: Site) -> None:
    site.sql(
        "CREATE SCHEMA src",
        "CREATE SCHEMA dm",
        "CREATE TABLE src.orders (id INTEGER, client VARCHAR(80), amount DECIMAL(12,2))",
        "INSERT INTO src.orders VALUES "
        f"(1, 'acme', 5.00), (2, 'acme', 50.00), (3, {quoted(HOSTILE)}, 70.00), "
        f"(4, {quoted(HOSTILE)}, -9.00), (5, {quoted(ODD)}, 20.00), (6, 'other', 99.00)",
    )


def run(site: Site, pipeline: str, run_key: str) -> tuple[str, dict[str, str | None]]:
    """One real run: its status and each task's recorded error."""
    project = site.project
    run_id = project.new_run(pipeline, run_key)
    status = project.supervisor(poll_seconds=0.3).supervise(run_id).status.value
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT k.TASK_CODE, l.ERROR_MESSAGE FROM AUD_TASK_RUN_LOG l "
            "JOIN CFG_TASKS k ON k.TASK_ID = l.TASK_ID WHERE l.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    return status, {str(row[0]): row[1] for row in rows}
