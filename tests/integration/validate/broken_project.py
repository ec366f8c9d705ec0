"""A project whose metadata holds one of each error validate must find, and nothing else.

EXPECTED lists the one finding each error yields: (severity, check, pipeline, task).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from etl_craft.enginedb.connection import EngineConnection, EngineDB
from tests.fixtures.metadata import TESTER, execute

ALERT = {"FLAVOUR": "FAILURE", "RECIPIENTS": "ops@example.com"}
PIPELINE = "broken"

EXPECTED = {
    ("FAIL", "code", PIPELINE, "9lives"),
    ("FAIL", "cycle", PIPELINE, None),
    ("FAIL", "cycle", "ring_a", None),
    ("FAIL", "inactive-dependency", PIPELINE, "dep_inactive"),
    ("FAIL", "run-condition", PIPELINE, "quorum"),
    ("FAIL", "sql", PIPELINE, "sql_dml"),
    ("FAIL", "sql", PIPELINE, "sql_multi"),
    ("FAIL", "sql", PIPELINE, "sql_garbled"),
    ("FAIL", "sql", PIPELINE, "sql_escape"),
    ("FAIL", "output-columns", PIPELINE, "sql_managed"),
    ("FAIL", "output-columns", PIPELINE, "sql_quoted"),
    ("FAIL", "required-parameter", PIPELINE, "merge_nokey"),
    ("WARN", "unknown-parameter", PIPELINE, "typo"),
    ("FAIL", "float-compare-column", PIPELINE, "merge_float"),
    ("FAIL", "table-format", PIPELINE, "fmt_a"),
    ("FAIL", "has-data", PIPELINE, "after_alert"),
    ("FAIL", "script", PIPELINE, "bad_script"),
    ("FAIL", "schedule", "bad_cron", None),
    ("FAIL", "timezone", "bad_zone", None),
    ("FAIL", "alert-template", PIPELINE, "bad_alert"),
}


def sql(action: str, target: str, source: str, **more: str) -> dict[str, str]:
    return {"ACTION": action, "TARGET_OBJECT": target, "SOURCE_SQL": source, **more}


@dataclass
class Seeder:
    conn: EngineConnection
    project_id: int

    def pipeline(self, code: str, **columns: str) -> int:
        names = ", ".join(["PROJECT_ID", "PIPELINE_CODE", *columns])
        marks = ", ".join([":project", ":code", *(f":{k}" for k in columns)])
        return int(
            execute(
                self.conn,
                f"INSERT INTO CFG_PIPELINES ({names}) VALUES ({marks}) RETURNING PIPELINE_ID",
                project=self.project_id,
                code=code,
                **columns,
            ).scalar_one()
        )

    def task(
        self,
        pipeline_id: int,
        code: str,
        handler: str,
        parameters: dict[str, str],
        *,
        active: str = "Y",
        required_count: int | None = None,
    ) -> int:
        task_id = int(
            execute(
                self.conn,
                "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER, RUN_CONDITION, "
                "REQUIRED_COUNT, ACTIVE_FLAG) VALUES (:p, :c, :h, :rc, :n, :a) RETURNING TASK_ID",
                p=pipeline_id,
                c=code,
                h=handler,
                rc="ALL" if required_count is None else "N",
                n=required_count,
                a=active,
            ).scalar_one()
        )
        for name, value in parameters.items():
            execute(
                self.conn,
                "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
                "VALUES (:t, :n, :v)",
                t=task_id,
                n=name,
                v=value,
            )
        return task_id

    def depends(self, task_id: int, upstream_id: int, kind: str = "SUCCESS") -> None:
        execute(
            self.conn,
            "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE) "
            "VALUES (:t, :u, :k)",
            t=task_id,
            u=upstream_id,
            k=kind,
        )

    def pipeline_depends(self, pipeline_id: int, upstream_id: int) -> None:
        execute(
            self.conn,
            "INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID) "
            "VALUES (:p, :u)",
            p=pipeline_id,
            u=upstream_id,
        )


def write_files(project: Path) -> None:
    (project / "sql_files").mkdir(parents=True, exist_ok=True)
    (project / "sql_files" / "multi.sql").write_text("SELECT 1 AS a;\nSELECT 2 AS a;\n")
    (project / "ingestion_scripts").mkdir(parents=True, exist_ok=True)
    (project / "ingestion_scripts" / "broken.py").write_text("def run(context:\n    pass\n")


def seed_broken_project(db: EngineDB, project_code: str) -> None:
    with db.transaction(TESTER) as conn:
        project_id = execute(
            conn, "SELECT PROJECT_ID FROM CFG_PROJECTS WHERE PROJECT_CODE = :c", c=project_code
        ).scalar_one()
        seeder = Seeder(conn, int(project_id))
        _seed_graph(seeder)
        _seed_tasks(seeder, _broken_id(seeder))
        _seed_bad_code(conn, seeder)


def _broken_id(seeder: Seeder) -> int:
    return int(
        execute(
            seeder.conn,
            "SELECT PIPELINE_ID FROM CFG_PIPELINES WHERE PIPELINE_CODE = :c AND PROJECT_ID = :p",
            c=PIPELINE,
            p=seeder.project_id,
        ).scalar_one()
    )


def _seed_graph(seeder: Seeder) -> None:
    broken = seeder.pipeline(PIPELINE)
    ok_alert = seeder.task(broken, "ok_alert", "EMAIL_ALERT", ALERT)
    cyc_a = seeder.task(broken, "cyc_a", "EMAIL_ALERT", ALERT)
    cyc_b = seeder.task(broken, "cyc_b", "EMAIL_ALERT", ALERT)
    seeder.depends(cyc_a, cyc_b)
    seeder.depends(cyc_b, cyc_a)
    retired = seeder.task(broken, "retired", "EMAIL_ALERT", ALERT, active="N")
    seeder.depends(seeder.task(broken, "dep_inactive", "EMAIL_ALERT", ALERT), retired)
    seeder.depends(seeder.task(broken, "quorum", "EMAIL_ALERT", ALERT, required_count=2), ok_alert)
    seeder.depends(seeder.task(broken, "after_alert", "EMAIL_ALERT", ALERT), ok_alert, "HAS_DATA")
    ring_a, ring_b = seeder.pipeline("ring_a"), seeder.pipeline("ring_b")
    seeder.pipeline_depends(ring_a, ring_b)
    seeder.pipeline_depends(ring_b, ring_a)
    seeder.pipeline("bad_cron", RUN_SCHEDULE="61 * * * *")
    seeder.pipeline("bad_zone", RUN_SCHEDULE="@daily", SCHEDULE_TIMEZONE="Mars/Olympus")


def _seed_tasks(seeder: Seeder, broken: int) -> None:
    tasks = {
        "sql_dml": sql("APPEND_TABLE", "x.dml", "DELETE FROM x.t"),
        "sql_garbled": sql("APPEND_TABLE", "x.garbled", "SELECT a FROM ("),
        "sql_managed": sql("APPEND_TABLE", "x.managed", "SELECT id, row_id FROM s.t"),
        "sql_quoted": sql("APPEND_TABLE", "x.quoted", 'SELECT id AS "order id" FROM s.t'),
        "merge_nokey": sql("SCD1_MERGE", "x.nokey", "SELECT id FROM s.t"),
        "typo": sql("APPEND_TABLE", "x.typo", "SELECT id FROM s.t", MERGE_KYE="id"),
        "merge_float": sql(
            "SCD1_MERGE",
            "x.float",
            "SELECT id, CAST(amount AS DOUBLE) AS amount FROM s.t",
            MERGE_KEY="id",
            MERGE_COMPARE_COLUMNS="amount",
        ),
        "fmt_a": sql("APPEND_TABLE", "x.shared", "SELECT id FROM s.t", TABLE_FORMAT="ICEBERG"),
        "fmt_b": sql("APPEND_TABLE", "x.shared", "SELECT id FROM s.t"),
        "bad_alert": {**ALERT, "SUBJECT": "{pipeline} failed"},
    }
    for code, parameters in tasks.items():
        handler = "EMAIL_ALERT" if code == "bad_alert" else "SQL"
        seeder.task(broken, code, handler, parameters)
    files = {"sql_multi": "multi.sql", "sql_escape": "../secret.sql"}
    for code, path in files.items():
        seeder.task(
            broken,
            code,
            "SQL",
            {"ACTION": "APPEND_TABLE", "TARGET_OBJECT": f"x.{code}", "SOURCE_SQL_FILE": path},
        )
    seeder.task(broken, "bad_script", "PYTHON", {"SCRIPT": "broken.py"})


def _seed_bad_code(conn: EngineConnection, seeder: Seeder) -> None:
    """A task code the database refuses today, as one migrated without the check could hold."""
    if conn.dialect == "sqlite":
        conn.connection.exec_driver_sql("PRAGMA ignore_check_constraints = ON")
    else:
        conn.connection.exec_driver_sql("ALTER TABLE CFG_TASKS DROP CONSTRAINT CK_CFG_TASKS_CODE")
    try:
        seeder.task(_broken_id(seeder), "9lives", "EMAIL_ALERT", ALERT)
    finally:
        if conn.dialect == "sqlite":
            conn.connection.exec_driver_sql("PRAGMA ignore_check_constraints = OFF")
