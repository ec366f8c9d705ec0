"""A secret etl-craft resolved never reaches an attempt log, TASK_LOG or ERROR_MESSAGE."""

from __future__ import annotations

from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.worker.queueing import migrate

SECRET = "s3ed-Secret-7f3a9c"
# A script that got the secret by itself and lets it out every way it can: its logger, a
# library's logger, print, a warning on stderr and the exception that fails it.
LEAKY = """
import logging
import sys
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    secret = Path(context.input_params["env"]).read_text().split("=", 1)[1].strip()
    context.log.info("connecting with password %s", secret)
    logging.getLogger("vendor.client").warning("retrying token=%s", secret)
    print(f"printed {secret}")
    sys.stderr.write(f"stderr {secret}\\n")
    raise RuntimeError(f"the source refused password {secret}")
"""


def test_a_seeded_secret_is_masked_in_the_attempt_log_task_log_and_error(
    sqlite_project: ProjectOnDisk, processes: Processes
) -> None:
    project = sqlite_project
    env_file = project.root / ".env"
    env_file.write_text(f"SMTP_PASSWORD={SECRET}\n")
    with project.config.open("a") as config:
        config.write(
            "Email:\n  host: localhost\n  from_address: etl@example.com\n"
            "  password_variable: SMTP_PASSWORD\n"
        )
    (project.root / "ingestion_scripts" / "leaky.py").write_text(LEAKY)
    migrate(
        project,
        "leaky",
        "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'leaky' "
        "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';\n"
        "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, 'pull', "
        "'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'leaky';\n"
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) SELECT "
        "TASK_ID, x.N, x.V FROM CFG_TASKS, (SELECT 'SCRIPT' AS N, 'leaky.py' AS V UNION ALL "
        f"SELECT 'INPUT_PARAMS', '{{\"env\": \"{env_file}\"}}') x WHERE TASK_CODE = 'pull';",
    )

    done = processes.run(project, "run", "--pipeline-code", "leaky")

    assert done.code != 0, done.output
    [log] = (project.root / "logs").rglob("*.log")
    written = log.read_text()
    assert "connecting with password ***" in written
    assert "the source refused password ***" in written
    assert SECRET not in written
    [(task_log, error)] = rows(project, "SELECT TASK_LOG, ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS")
    assert "***" in task_log
    assert SECRET not in task_log
    assert SECRET not in error
    [(run_task_log, run_error)] = rows(
        project, "SELECT TASK_LOG, ERROR_MESSAGE FROM AUD_TASK_RUN_LOG"
    )
    assert SECRET not in run_task_log
    assert SECRET not in run_error
