"""What the metadata editor shows of one pipeline: its objects' codes and editable fields."""

from __future__ import annotations

from typing import Any

from etl_craft.enginedb.connection import EngineConnection

# One named statement per kind of object, by the kind's name in operations.metadata_edit_kinds.
EDIT_STATEMENTS = {
    "pipeline": "edit_pipelines",
    "pipeline_parameter": "edit_pipeline_parameters",
    "pipeline_dependency": "edit_pipeline_dependencies",
    "task": "edit_tasks",
    "task_parameter": "edit_task_parameters",
    "task_dependency": "edit_task_dependencies",
    "business_rule": "edit_business_rules",
}


def read_editable_rows(
    conn: EngineConnection, project_code: str, pipeline_code: str
) -> dict[str, list[dict[str, Any]]]:
    """Every active object of the pipeline by kind, each a row of lower-case column names."""
    return {
        kind: [
            dict(row)
            for row in conn.all(name, project_code=project_code, pipeline_code=pipeline_code)
        ]
        for kind, name in EDIT_STATEMENTS.items()
    }
