"""A SQL task whose SELECT the warehouse refuses names the line of the user's own file."""

from __future__ import annotations

from tests.chaos.harness import scalar
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk

# Line 3 names a column the source does not have.
BAD_SELECT = """\
SELECT id,
       label,
       labell AS misspelt
  FROM (VALUES (1, 'a')) v(id, label)
"""


def test_a_binder_error_names_the_line_of_the_sql_file(
    sqlite_project: ProjectOnDisk, processes: Processes
) -> None:
    project = sqlite_project
    (project.root / "sql_files").mkdir()
    (project.root / "sql_files" / "bad.sql").write_text(BAD_SELECT)
    project.migrate(
        "0001_bad.sql",
        """
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'bad' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'load', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'bad';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
          SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V
          UNION ALL SELECT 'TARGET_OBJECT', 'main.labels'
          UNION ALL SELECT 'SOURCE_SQL_FILE', 'bad.sql'
        ) x ON k.TASK_CODE = 'load';
        """,
    )
    done = processes.run(project, "run", "--pipeline_code", "bad")
    assert done.code != 0, done.output
    error = str(scalar(project, "SELECT ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS"))
    assert error.startswith("SOURCE_SQL_FILE sql_files/bad.sql of task load line 3: "), error
    assert 'Referenced column "labell" not found' in error
    assert "fix that line and rerun the task" in error
