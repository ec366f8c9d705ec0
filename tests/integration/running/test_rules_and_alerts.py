"""Business rules and a failure alert inside a supervised run, with a real SMTP relay."""

from __future__ import annotations

from collections.abc import Iterator
from email import message_from_string
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.alerts.relay import HOST, Mailbox, relay
from tests.integration.running.test_supervisor_sql import supervise, task_statuses

from etl_craft.config.connector import load_connector
from etl_craft.config.rules import TlsMode

PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'checked' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'checked';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'rules', 'BUSINESS_RULES' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'checked';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER, RUN_CONDITION)
SELECT PIPELINE_ID, 'alert', 'EMAIL_ALERT', 'ANY' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'checked';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, x.T FROM (
  SELECT 'rules' AS D, 'load' AS U, 'SUCCESS' AS T
  UNION ALL SELECT 'alert', 'load', 'FAILURE'
  UNION ALL SELECT 'alert', 'rules', 'FAILURE') x
JOIN CFG_TASKS d ON d.TASK_CODE = x.D JOIN CFG_TASKS u ON u.TASK_CODE = x.U;
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
  SELECT 'load' AS T, 'ACTION' AS N, 'CREATE_TABLE' AS V
  UNION ALL SELECT 'load', 'TARGET_OBJECT', 'dm.orders'
  UNION ALL SELECT 'load', 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, 10), (2, -5), (3, 7)) v(order_id, amount)'
  UNION ALL SELECT 'rules', 'TARGET_TABLE', 'dm.orders'
  UNION ALL SELECT 'alert', 'FLAVOUR', 'FAILURE'
  UNION ALL SELECT 'alert', 'RECIPIENTS', 'ops@example.com'
  UNION ALL SELECT 'alert', 'SUBJECT', '{pipeline_code} run {run_id} {status}'
) x ON x.T = k.TASK_CODE;
INSERT INTO CFG_BUSINESS_RULES (TASK_ID, RULE_CODE, RULE_TYPE, TARGET_TABLE, KEY_COLUMNS, RULE_SQL)
SELECT TASK_ID, 'no_negative_amounts', 'INCOMPLETE', 'dm.orders', 'order_id',
       'SELECT order_id FROM dm.orders WHERE amount < 0;'
  FROM CFG_TASKS WHERE TASK_CODE = 'rules';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def mailbox_project(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[ProjectOnDisk, Mailbox]]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    mailbox = Mailbox()
    with relay(mailbox, tls=TlsMode.NONE) as port:
        made = make_project(tmp_path / "etl-craft", url)
        with made.config.open("a") as config:
            config.write(
                f"Email:\n  host: {HOST}\n  port: {port}\n  tls_mode: none\n"
                "  from_address: etl@example.com\n"
            )
        environ = {} if url is None else {"TEST_ENGINE_URL": url}
        made.connector = load_connector(made.config, profile=None, environ=environ)
        made.migrate("0001_checked.sql", PIPELINE)
        yield made, mailbox
        made.engine.dispose()


def test_an_incomplete_rule_fails_its_task_and_the_failure_alert_is_sent(
    mailbox_project: tuple[ProjectOnDisk, Mailbox],
) -> None:
    project, mailbox = mailbox_project
    run_id = project.new_run("checked")
    assert supervise(project, run_id) == "FAILED"
    statuses = task_statuses(project, run_id)
    assert statuses["load"] == ("SUCCESS", 3)
    assert statuses["rules"][0] == "FAILED"
    assert statuses["alert"][0] == "SUCCESS"
    with project.engine.read() as conn:
        flags = execute(
            conn,
            "SELECT KEY_VALUE, RULE_TYPE FROM AUD_BUSINESS_RULE_FLAGS WHERE CLEARED_AT IS NULL",
        ).all()
        error = execute(
            conn,
            "SELECT t.ERROR_MESSAGE FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE k.TASK_CODE = 'rules'",
        ).scalar_one()
    assert [tuple(row) for row in flags] == [('["2"]', "INCOMPLETE")]
    assert "no_negative_amounts" in error
    assert len(mailbox.messages) == 1
    assert mailbox.messages[0].rcpt_tos == ["ops@example.com"]
    assert f"Subject: checked run {run_id} FAILED" in mailbox.text()


def test_the_default_failure_body_names_the_task_that_failed(
    mailbox_project: tuple[ProjectOnDisk, Mailbox],
) -> None:
    project, mailbox = mailbox_project
    run_id = project.new_run("checked")
    assert supervise(project, run_id) == "FAILED"
    assert len(mailbox.messages) == 1
    body = message_from_string(mailbox.text()).get_payload(decode=True)
    assert isinstance(body, bytes)
    lines = body.decode().splitlines()
    assert "Failed tasks: rules" in lines
    assert "Alert task: alert" in lines
    assert any("no_negative_amounts" in line for line in lines)
